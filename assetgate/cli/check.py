"""``assetgate check``: its flags; read inventories, classify, render, pick the exit code.

Size: over the ~400-line guide because one command with three runs (one target, a
matrix, a rolling change), plans and observed comparisons; each flag is checked where
its run is.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from assetgate.cli.common import (
    MODES,
    HelpFormatter,
    Subparsers,
    UsageError,
    add_rule_flags,
    catalogue,
    floor_above,
    parse_fail_on,
    warn_unmatched,
    without_cyclic_gc,
    write_output,
)
from assetgate.inventory.inputs import InputError, expand_inputs
from assetgate.inventory.read import Asset
from assetgate.live.pulled import PulledServers, mode_notes, pulled_mode
from assetgate.report.common import pretty_json
from assetgate.report.formats import (
    FORMATS,
    matrix_formats,
    render,
    render_matrix,
    render_rolling,
    rolling_formats,
)
from assetgate.run.check import (
    OBSERVED_TARGET,
    Plan,
    check,
    compare_plans,
    fails,
    iter_records,
    make_plan,
    observed_targets,
    parse_targets,
    plan_digest,
)
from assetgate.run.matrix import (
    check_matrix,
    is_release_set,
    matrix_failures,
)
from assetgate.run.progress import terminal_progress
from assetgate.run.rolling import check_rolling, parse_rolling, rolling_failures
from assetgate.wire import DECODE_FAILURES

if TYPE_CHECKING:
    from collections.abc import Iterator

    from assetgate.catalogue.levels import Catalogue
    from assetgate.judge.gate import Mode
    from assetgate.run.check import Report

__all__ = ["add_parser", "run"]


def add_parser(sub: Subparsers) -> None:
    """Register ``check`` and its flags."""
    chk = sub.add_parser(
        "check",
        help="classify a whole inventory for a target version (pre-upgrade runbooks and CI)",
        description=(
            "Predict what the target nats-server version does with every stream and consumer of "
            "an inventory: online, offline (with the server's reason), degraded (fields silently "
            "dropped), unloadable (the asset vanishes), detached (its stream is not loaded) or, "
            "in cluster mode, unavailable (an asset takes the whole cluster's JetStream down: "
            "see the clusters section); subject overlaps per account, offline streams included. Inventories: canonical JSON "
            "Lines, STREAM/CONSUMER INFO and LIST replies, `nats stream info --json`, /jsz. "
            "Exit 0: clean; 1: findings (a lost, hidden or degraded asset, a cluster going down, "
            "no asset at all, or what --fail-on adds); 2: usage error."
        ),
        epilog=(
            "examples:\n"
            "  assetgate check fixtures/inventories/demo.jsonl --target 2.11.11\n"
            "  assetgate check inv.jsonl --target 2.12.8 --mode single --format markdown\n"
            "  assetgate pull --server nats://n1:4222 | assetgate check - --target 2.12.8\n"
            "  assetgate check fleet/ --target 2.12.8      # every .jsonl/.json under fleet/\n"
            "  assetgate check inv.jsonl --target east=2.11.11,west=2.12.8 --format sarif -o r.sarif\n"
            "  assetgate check inv.jsonl --target 2.12.8 --format github   # Actions annotations\n"
            "  assetgate check inv.jsonl --target 2.11.11 --accept 'degraded:*/$G/LEGACY*'\n"
            "  assetgate check inv.jsonl --target 2.11.11 --plan-out plan.json\n"
            "  assetgate check --verify-plan plan.json inv.jsonl\n"
            "  assetgate check big-fleet.jsonl --target 2.12.8 --workers 4 --format json -o r.json\n"
            "  assetgate check inv.jsonl --target all                 # every release, floors, fixes\n"
            "  assetgate check inv.jsonl --target 2.11.9.. --fail-on floor-above=2.11.9\n"
            "  assetgate check inv.jsonl --rolling 2.12.8..2.11.11    # node by node\n"
        ),
        formatter_class=HelpFormatter,
    )
    chk.add_argument(
        "inventory",
        metavar="INVENTORY",
        nargs="+",
        help="inventory files, directories (the .jsonl, .ndjson and .json files under "
        "them, in name order) or - (standard input)",
    )
    chk.add_argument(
        "--target",
        action="append",
        metavar="VERSION|CLUSTER=VERSION,...",
        help="target version; per cluster as CLUSTER=VERSION (repeatable); "
        "in a rolling upgrade use the lowest version among the cluster's servers; "
        "'observed': each cluster at the lowest server_version its records carry "
        "(assetgate pull output); 'all', or a range A..B (A.., ..B): every release "
        "the catalogue distinguishes, with the rollback floors and a fix per finding",
    )
    chk.add_argument(
        "--rolling",
        metavar="FROM..TO",
        help="instead of --target: the steps of a rolling upgrade or rollback from FROM to "
        "TO, one node at a time (cluster mode): per step and cluster what the nodes of each "
        "release do, with the meta leader on a newer and on an older node, and the first "
        "step that goes wrong (text, json or markdown; exit 1 when a step is not ok)",
    )
    chk.add_argument(
        "--nodes",
        type=_nodes,
        metavar="N",
        help="with --rolling: nodes per cluster (default 3)",
    )
    chk.add_argument(
        "--mode",
        choices=MODES,
        help="single server or clustered (default: what the inventory's `assetgate pull` "
        "server records say, single when they name only standalone servers, else cluster; "
        "a --mode they contradict is warned about; with --verify-plan: the plan's)",
    )
    chk.add_argument(
        "--format",
        choices=list(FORMATS),
        default="text",
    )
    chk.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    chk.add_argument(
        "--show",
        choices=["failing", "all"],
        default="failing",
        help="text and markdown: list every finding that fails the run and at most 10 "
        "per state of the others, counting the rest (failing, the default), or list "
        "them all (all); the other formats always list every finding",
    )
    add_rule_flags(chk, matrix=True)
    chk.add_argument(
        "--compare-observed",
        action="append",
        nargs="?",
        const="",
        metavar="OBSERVED",
        help="compare the predictions with what live servers did: an OBSERVED file from "
        "`assetgate pull` after the change (repeatable; without a file: the observed "
        "states the inventory itself carries); prints predicted vs observed per asset "
        "and exits 1 on any disagreement",
    )
    chk.add_argument(
        "--workers",
        type=_workers,
        metavar="N",
        help="processes judging JSON Lines inventories of 8 MiB or more (default: one "
        "per usable core; 1: this process only)",
    )
    chk.add_argument(
        "--plan-out", metavar="FILE", help="write the verdicts as a prepared plan"
    )
    chk.add_argument(
        "--verify-plan",
        metavar="FILE",
        help="re-evaluate a prepared plan; exit 0 only if no verdict changed",
    )
    chk.set_defaults(run=run)


def _workers(text: str) -> int:
    """``--workers``: a positive number of processes."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"invalid process count: {text!r} (use 1 or more)"
        raise argparse.ArgumentTypeError(msg)
    return value


def _nodes(text: str) -> int:
    """``--nodes``: a cluster of two nodes or more."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 2:  # noqa: PLR2004 - one node has no step in between
        msg = f"invalid node count: {text!r} (use 2 or more)"
        raise argparse.ArgumentTypeError(msg)
    return value


def run(args: argparse.Namespace) -> int:
    """Run ``assetgate check``; return the exit code (0 clean, 1 findings, 2 usage)."""
    with without_cyclic_gc():
        return _run(args, catalogue(args))


def _run(args: argparse.Namespace, catalogue: Catalogue) -> int:
    _expand(args)
    if args.rolling is not None or args.nodes is not None:
        return _run_rolling(args, catalogue)
    fail_on, floor = floor_above(parse_fail_on(args.fail_on))
    if args.target and any(is_release_set(t) for t in args.target):
        return _run_matrix(args, catalogue, fail_on, floor)
    _single_target(floor)
    plan: Plan | None = None
    if args.verify_plan:
        try:
            plan = msgspec.json.decode(Path(args.verify_plan).read_bytes(), type=Plan)
        except (OSError, *DECODE_FAILURES) as exc:
            msg = f"cannot read plan {args.verify_plan!r}: {exc}"
            raise UsageError(msg) from None
        targets = {"*": plan.target.default} if plan.target.default else {}
        targets.update(plan.target.clusters)
        mode = plan.target.mode
        _plan_agrees(plan, args, targets)
    else:
        if not args.target:
            msg = "--target is required (or --verify-plan PLAN)"
            raise UsageError(msg)
        mode = _mode(args)
    compare = args.compare_observed is not None
    if compare and args.format not in {"text", "json", "markdown"}:
        msg = "--compare-observed prints text, json or markdown"
        raise UsageError(msg)
    inventory: list[Any] = list(args.inventory)
    observed = plan is None and args.target == [OBSERVED_TARGET]
    if compare or observed:  # read once: versions and configs come from the records
        inventory = list(iter_records(args.inventory))
    if plan is None:
        try:
            targets = (
                observed_targets(inventory, catalogue)
                if observed
                else parse_targets(args.target)
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    with _plain_value_errors_as_usage(), terminal_progress(sys.stderr) as progress:
        report = check(
            inventory,
            target=targets,
            mode=mode,
            accept=args.accept or (),
            catalogue=catalogue,
            workers=args.workers,
            progress=progress,
        )
    if plan is not None:
        return _verify(args, plan, make_plan(report))
    if compare:
        return _compare(args, report, [r for r in inventory if isinstance(r, Asset)])
    folding = None if args.show == "all" else fail_on
    write_output(args, render(report, args.format, fail_on=folding))
    if args.plan_out:
        written = pretty_json(make_plan(report), deterministic=True)
        Path(args.plan_out).write_text(written, encoding="utf-8")
    warn_unmatched(report.accepted)
    return 1 if fails(report, fail_on) else 0


def _expand(args: argparse.Namespace) -> None:
    """Replace ``-`` and directories in ``args.inventory`` by what they stand for."""
    try:
        inputs = expand_inputs(args.inventory, sys.stdin.buffer)
    except InputError as exc:
        raise UsageError(str(exc)) from None
    args.inventory, args.stdin_servers = inputs.items, inputs.stdin_servers


def _pulled(args: argparse.Namespace) -> PulledServers:
    """The pull server records of the inventory's files and of standard input."""
    paths = [item for item in args.inventory if isinstance(item, str)]
    servers: PulledServers = args.stdin_servers
    return pulled_mode(paths) + servers


def _single_target(floor: str | None) -> None:
    """A single-target run has no floor to hold to ``floor-above=``."""
    if floor is not None:
        msg = "--fail-on floor-above= needs --target all or a release range (A..B)"
        raise UsageError(msg)


def _run_matrix(
    args: argparse.Namespace,
    catalogue: Catalogue,
    fail_on: tuple[str, ...],
    floor: str | None,
) -> int:
    """``--target all`` or ``A..B``: every release at once, the floors, the fixes."""
    if len(args.target) != 1 or "=" in args.target[0] or "," in args.target[0]:
        msg = "--target all or A..B stands alone (no per-cluster targets)"
        raise UsageError(msg)
    for flag, given in (
        ("--workers", args.workers not in {None, 1}),
        ("--verify-plan", args.verify_plan),
        ("--plan-out", args.plan_out),
        ("--compare-observed", args.compare_observed is not None),
    ):
        if given:
            msg = f"{flag} takes one target, not {args.target[0]}"
            raise UsageError(msg)
    if args.format not in matrix_formats():
        msg = (
            f"--format {args.format} takes one target (a matrix prints "
            f"{', '.join(matrix_formats())})"
        )
        raise UsageError(msg)
    if floor is not None:
        floor = catalogue.server(floor).version.text  # a release, not a line
    with _plain_value_errors_as_usage(), terminal_progress(sys.stderr) as progress:
        matrix = check_matrix(
            list(args.inventory),
            releases=args.target[0],
            mode=_mode(args),
            accept=args.accept or (),
            fail_on=fail_on,
            catalogue=catalogue,
            progress=progress,
        )
    write_output(args, render_matrix(matrix, args.format))
    warn_unmatched(matrix.accepted)
    return 1 if matrix_failures(matrix, floor) else 0


def _run_rolling(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """``--rolling FROM..TO``: every step of a node-by-node change (cluster mode)."""
    if args.rolling is None:
        msg = "--nodes goes with --rolling"
        raise UsageError(msg)
    for flag, given in (
        ("--target", args.target),
        ("--mode single", args.mode == "single"),
        ("--fail-on", args.fail_on is not None),
        ("--workers", args.workers not in {None, 1}),
        ("--verify-plan", args.verify_plan),
        ("--plan-out", args.plan_out),
        ("--compare-observed", args.compare_observed is not None),
    ):
        if given:
            msg = f"--rolling does not go with {flag} (it names both releases)"
            if flag != "--target":
                msg = f"--rolling does not take {flag}"
            raise UsageError(msg)
    if args.mode is None and _pulled(args).mode == "single":
        msg = (
            "--rolling: the inventory's pull records name only standalone servers, "
            "and a single server has no rolling steps"
        )
        raise UsageError(msg)
    if args.format not in rolling_formats():
        msg = f"--rolling prints {', '.join(rolling_formats())}, not {args.format}"
        raise UsageError(msg)
    with _plain_value_errors_as_usage():
        start, end = parse_rolling(args.rolling, catalogue)
        rolling = check_rolling(
            list(args.inventory),
            start=start,
            end=end,
            nodes=args.nodes or 3,
            accept=args.accept or (),
            catalogue=catalogue,
        )
    write_output(args, render_rolling(rolling, args.format))
    warn_unmatched(rolling.accepted)
    return 1 if rolling_failures(rolling) else 0


def _mode(args: argparse.Namespace) -> Mode:
    """``--mode``, or the mode the inventory's pull records imply (notes on stderr)."""
    mode, notes = mode_notes(args.mode, _pulled(args))
    for note in notes:
        print(note, file=sys.stderr)
    return mode


@contextlib.contextmanager
def _plain_value_errors_as_usage() -> Iterator[None]:
    """A plain ``ValueError`` (a bad range, an acceptance) is the user's: exit 2.

    Its subclasses (the project's own errors) go on to their own handlers.
    """
    try:
        yield
    except ValueError as exc:
        if type(exc) is ValueError:
            raise UsageError(str(exc)) from None
        raise


def _compare(args: argparse.Namespace, report: Report, assets: list[Asset]) -> int:
    """``--compare-observed``: predicted vs observed; exit 1 on any disagreement."""
    from assetgate.live.observed import (  # only this run needs them (start-up)
        Observations,
        compare_observed,
        read_observations,
        render_comparison,
    )

    paths = [path for path in args.compare_observed if path]
    missing = [path for path in paths if not Path(path).exists()]
    if missing:
        msg = f"observations not found: {', '.join(map(repr, missing))}"
        raise UsageError(msg)
    seen = read_observations(paths) if paths else Observations.from_assets(assets)
    for error in seen.errors:
        print(f"assetgate: observation skipped: {error}", file=sys.stderr)
    comparisons = compare_observed(report, assets, seen)
    write_output(args, render_comparison(comparisons, args.format))
    observed = [c for c in comparisons if c.agree is not None]
    if not observed:
        print("assetgate: no asset of the inventory was observed", file=sys.stderr)
        return 1
    return 1 if any(c.agree is False for c in observed) or seen.errors else 0


def _plan_agrees(plan: Plan, args: argparse.Namespace, targets: dict[str, str]) -> None:
    """A plan is used as made: its own digest, its target and mode (usage errors)."""
    if plan_digest(plan) != plan.digest:
        msg = f"plan {args.verify_plan!r}: its digest does not match its content (edited?)"
        raise UsageError(msg)
    if args.target:
        try:
            given = parse_targets(args.target)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if given != targets:
            msg = f"--verify-plan: the plan was made for target {_targets_text(targets)}, not {_targets_text(given)}"
            raise UsageError(msg)
    if args.mode and args.mode != plan.target.mode:
        msg = f"--verify-plan: the plan was made for {plan.target.mode} mode, not {args.mode}"
        raise UsageError(msg)


def _targets_text(targets: dict[str, str]) -> str:
    return ",".join(
        version if cluster == "*" else f"{cluster}={version}"
        for cluster, version in sorted(targets.items())
    )


def _verify(args: argparse.Namespace, old: Plan, new: Plan) -> int:
    changes, notes = compare_plans(old, new)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.format == "json":
        payload = {"plan": old.digest, "assets": len(new.verdicts), "changed": changes}
        write_output(
            args, msgspec.json.format(msgspec.json.encode(payload)).decode() + "\n"
        )
        return 1 if changes else 0
    if args.format not in {"text", "markdown"}:
        msg = "--verify-plan prints text, json or markdown"
        raise UsageError(msg)
    bullet = "- " if args.format == "markdown" else "  "
    if not changes:
        head = (
            f"plan {old.digest[:12]}: no verdict changed ({len(new.verdicts)} assets)"
        )
        write_output(args, head + "\n")
        return 0
    lines = [f"plan {old.digest[:12]}: {len(changes)} verdict(s) changed"]
    lines += [f"{bullet}{change}" for change in changes]
    write_output(args, "\n".join(lines) + "\n")
    return 1
