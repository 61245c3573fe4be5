"""``assetgate check``: read inventories, classify, render, pick the exit code."""

from __future__ import annotations

import argparse
import contextlib
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from assetgate.inventory.inputs import InputError, expand_inputs
from assetgate.inventory.read import Asset
from assetgate.judge.rules import (
    ALWAYS_FAIL,
    DEFAULT_FAIL_ON,
    FAIL_ON_NAMES,
    NO_ASSETS,
    canonical,
)
from assetgate.live.observed import (
    Observations,
    compare_observed,
    read_observations,
    render_comparison,
)
from assetgate.live.pulled import PulledServers, mode_notes, pulled_mode
from assetgate.report.matrix import render_matrix
from assetgate.report.render import ReportFormat, render
from assetgate.report.rolling import ROLLING_FORMATS, render_rolling
from assetgate.run.check import (
    OBSERVED_TARGET,
    Plan,
    check,
    compare_plans,
    finding_rules,
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
    version_text,
)
from assetgate.run.progress import terminal_progress
from assetgate.run.rolling import check_rolling, parse_rolling, rolling_failures
from assetgate.wire import DECODE_FAILURES

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from assetgate.catalogue.levels import Catalogue
    from assetgate.judge.accept import Acceptance
    from assetgate.judge.gate import Mode
    from assetgate.run.check import Report

__all__ = [
    "DEFAULT_FAIL_ON",
    "HelpFormatter",
    "UsageError",
    "fail_on_help",
    "parse_fail_on",
    "run_check",
]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Wraps prose to the terminal; keeps indented lines (examples) as written.

    ``RawDescriptionHelpFormatter`` left long descriptions to the terminal, which broke
    words (``degrade d``).
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = []
        for line in text.splitlines():
            if not line.strip() or line.startswith("  "):
                lines.append(indent + line)
            else:
                lines.append(
                    textwrap.fill(
                        line, width, initial_indent=indent, subsequent_indent=indent
                    )
                )
        return "\n".join(lines)

    def _split_lines(self, text: str, width: int) -> list[str]:
        """An option's help, wrapped without breaking a name at its hyphen."""
        return textwrap.wrap(
            " ".join(text.split()),
            width,
            break_on_hyphens=False,
            break_long_words=False,
        )


class UsageError(Exception):
    """A usage problem (exit 2)."""


FLOOR_ABOVE: Final = "floor-above="


def fail_on_help(*, matrix: bool) -> str:
    """The help of ``--fail-on``, from the rule table (``matrix``: with ``floor-above``)."""
    floor = (
        "; with --target all or A..B also floor-above=VERSION: a cluster whose lowest "
        "lossless release is above VERSION, or that loses an asset on it"
        if matrix
        else ""
    )
    return (
        f"rules that make the exit status 1, comma-separated (default: "
        f"{', '.join(DEFAULT_FAIL_ON)}; none: only what always does). These always do "
        f"unless --accept names them: {', '.join(ALWAYS_FAIL)}, and {NO_ASSETS} (an "
        f"inventory with no asset). Rules: {', '.join(FAIL_ON_NAMES)} (errors and "
        f"overlaps are older spellings of record-error and overlap){floor}"
    )


def parse_fail_on(text: str | None) -> tuple[str, ...]:
    """The ``--fail-on`` list (default: :data:`DEFAULT_FAIL_ON`), as rule names.

    The older spellings ``errors`` and ``overlaps`` are read as ``record-error`` and
    ``overlap``. ``floor-above=VERSION`` items are kept as written (see
    :func:`floor_above`).
    """
    if text is None:
        return DEFAULT_FAIL_ON
    items = tuple(canonical(item.strip()) for item in text.split(",") if item.strip())
    for item in items:
        if item.startswith(FLOOR_ABOVE):
            try:
                version_text(item.removeprefix(FLOOR_ABOVE))
            except ValueError as exc:
                raise UsageError(f"--fail-on {item}: {exc}") from None
    unknown = [
        item
        for item in items
        if item not in FAIL_ON_NAMES
        and item != "none"
        and not item.startswith(FLOOR_ABOVE)
    ]
    if unknown:
        choices = ", ".join(FAIL_ON_NAMES)
        msg = (
            f"--fail-on: unknown {', '.join(map(repr, unknown))} (choose from "
            f"{choices}, floor-above=VERSION, or none)"
        )
        raise UsageError(msg)
    return tuple(item for item in items if item != "none")


def floor_above(fail_on: tuple[str, ...]) -> tuple[tuple[str, ...], str | None]:
    """``fail_on`` without its ``floor-above=`` item, and that item's release."""
    floors = [item for item in fail_on if item.startswith(FLOOR_ABOVE)]
    rest = tuple(item for item in fail_on if not item.startswith(FLOOR_ABOVE))
    if len(floors) > 1:
        msg = "--fail-on: give floor-above= once"
        raise UsageError(msg)
    return rest, version_text(floors[0].removeprefix(FLOOR_ABOVE)) if floors else None


def run_check(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """Run ``assetgate check``; return the exit code (0 clean, 1 findings, 2 usage)."""
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
    _emit(args, render(report, ReportFormat(args.format), fail_on=folding))
    if args.plan_out:
        encoded = msgspec.json.encode(make_plan(report), order="deterministic")
        Path(args.plan_out).write_bytes(msgspec.json.format(encoded, indent=2) + b"\n")
    _warn_unmatched(report.accepted)
    return 1 if finding_rules(report, fail_on) else 0


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
    if args.format == "github":
        msg = "--format github takes one target (a matrix prints sarif or junit for CI)"
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
    _emit(args, render_matrix(matrix, args.format))
    _warn_unmatched(matrix.accepted)
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
    if args.format not in ROLLING_FORMATS:
        msg = f"--rolling prints {', '.join(ROLLING_FORMATS)}, not {args.format}"
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
    _emit(args, render_rolling(rolling, args.format))
    _warn_unmatched(rolling.accepted)
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


def _warn_unmatched(accepted: Iterable[Acceptance]) -> None:
    """Warn on stderr about each ``--accept`` that matched nothing."""
    for acceptance in accepted:
        if not acceptance.matched:
            print(
                f"assetgate: warning: --accept {acceptance.rule}:{acceptance.asset} "
                "matched nothing",
                file=sys.stderr,
            )


def _emit(args: argparse.Namespace, text: str) -> None:
    """Write a report to ``--output`` or stdout."""
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _compare(args: argparse.Namespace, report: Report, assets: list[Asset]) -> int:
    """``--compare-observed``: predicted vs observed; exit 1 on any disagreement."""
    paths = [path for path in args.compare_observed if path]
    missing = [path for path in paths if not Path(path).exists()]
    if missing:
        msg = f"observations not found: {', '.join(map(repr, missing))}"
        raise UsageError(msg)
    seen = read_observations(paths) if paths else Observations.from_assets(assets)
    for error in seen.errors:
        print(f"assetgate: observation skipped: {error}", file=sys.stderr)
    comparisons = compare_observed(report, assets, seen)
    _emit(args, render_comparison(comparisons, args.format))
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
        _emit(args, msgspec.json.format(msgspec.json.encode(payload)).decode() + "\n")
        return 1 if changes else 0
    if args.format not in {"text", "markdown"}:
        msg = "--verify-plan prints text, json or markdown"
        raise UsageError(msg)
    bullet = "- " if args.format == "markdown" else "  "
    if not changes:
        head = (
            f"plan {old.digest[:12]}: no verdict changed ({len(new.verdicts)} assets)"
        )
        _emit(args, head + "\n")
        return 0
    lines = [f"plan {old.digest[:12]}: {len(changes)} verdict(s) changed"]
    lines += [f"{bullet}{change}" for change in changes]
    _emit(args, "\n".join(lines) + "\n")
    return 1
