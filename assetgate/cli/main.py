"""The ``assetgate`` command line: parse flags, read input, call the core, pick the exit code.

Reports go to stdout (or ``--output``); diagnostics and logs go to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import gc
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from assetgate import __version__
from assetgate.catalogue.levels import (
    build_catalogue,
    checksum_text,
    describe,
    load_catalogue,
)
from assetgate.cli.check import HelpFormatter, UsageError, fail_on_help, run_check
from assetgate.cli.logconfig import configure_logging
from assetgate.cli.pull import add_pull_parser, run_pull
from assetgate.cli.scan import add_scan_arguments, run_scan
from assetgate.decoding.goscan import scan
from assetgate.errors import AssetgateError, CatalogueError
from assetgate.report.render import ReportFormat, escape_terminal
from assetgate.report.schema import SCHEMAS, json_schema
from assetgate.requests.admission import Admission, admit
from assetgate.requests.validate import Validation, validate
from assetgate.wire import DEFAULT_ACCOUNT

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from assetgate.catalogue.levels import Catalogue

__all__ = ["ExitCode", "main"]

MAX_INPUT_BYTES: Final = 64 * 1024 * 1024
_LIST_INLINE: Final = 12  # longer lists (the baseline's) are summarised by count


class ExitCode(enum.IntEnum):
    """Process exit codes."""

    OK = 0
    FINDINGS = 1
    USAGE = 2
    INTERNAL = 3


class OutputFormat(enum.StrEnum):
    """Report formats of ``validate``."""

    TEXT = "text"
    JSON = "json"


class _Usage(Exception):
    """A usage problem: bad flags, unknown version, unreadable input."""


_EPILOG_MAIN = """\
examples:
  assetgate check fixtures/inventories/demo.jsonl --target 2.11.11
  assetgate validate stream.json --kind stream --server 2.11.11
  echo '{"name":"S","allow_batched":true}' | assetgate validate - --kind stream --server 2.12.8
  assetgate levels --verify
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``assetgate`` command."""
    parser = argparse.ArgumentParser(
        prog="assetgate",
        description=(
            "Predict what a nats-server release does with JetStream streams and consumers: "
            "accept, load, take offline, degrade or lose them, in the server's own words."
        ),
        epilog=_EPILOG_MAIN,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"assetgate {__version__}"
    )
    parser.add_argument(
        "--levels",
        metavar="DIR",
        help="use this level catalogue instead of the packaged one",
    )
    parser.add_argument(
        "--log-json", action="store_true", help="write logs to stderr as JSON lines"
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help=f"show the traceback of an internal error (otherwise one line, exit "
        f"{int(ExitCode.INTERNAL)})",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    val = sub.add_parser(
        "validate",
        help="would server X accept this create/update request, and what would it store?",
        description=(
            "Decode a stream or consumer config exactly as the given nats-server version decodes "
            "an API request and predict its reply: accepted or the error it sends, the metadata it "
            "stores, unknown and silently dropped fields, and the earliest release that can honour "
            "the config. Exit 0: accepted with nothing dropped; 1: rejected or fields dropped; "
            "2: usage error or unreadable input."
        ),
        epilog=(
            "examples:\n"
            "  assetgate validate stream.json --kind stream --server 2.11.11\n"
            "  assetgate validate consumer.json --kind consumer --server 2.12.8 --format json\n"
            "  assetgate validate new.json --kind stream --server 2.12.8 --op update --existing old.json\n"
        ),
        formatter_class=HelpFormatter,
    )
    val.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        help="config files as JSON (several: one report each); - reads standard input",
    )
    val.add_argument("--kind", required=True, choices=["stream", "consumer"])
    val.add_argument(
        "--server",
        required=True,
        metavar="VERSION",
        help="nats-server version, e.g. 2.12.8",
    )
    val.add_argument("--op", choices=["create", "update"], default="create")
    val.add_argument(
        "--existing",
        metavar="FILE",
        help="the stored config of an asset with that name",
    )
    strictness = val.add_mutually_exclusive_group()
    strictness.add_argument(
        "--strict",
        dest="strict",
        action="store_true",
        default=None,
        help="the server runs with jetstream { strict: true }",
    )
    strictness.add_argument(
        "--no-strict",
        dest="strict",
        action="store_false",
        help="the server runs with jetstream { strict: false }",
    )
    val.add_argument(
        "--api-level-header",
        metavar="VALUE",
        help="simulate a Nats-Required-Api-Level request header",
    )
    val.add_argument(
        "--inventory",
        action="append",
        metavar="FILE",
        help="the assets the server already holds: also predict refusals for subject "
        "overlaps (400/10065) and offline streams or consumers (500/10194, 10195)",
    )
    val.add_argument(
        "--account",
        default=DEFAULT_ACCOUNT,
        help="the account of the request (with --inventory)",
    )
    val.add_argument(
        "--cluster",
        help="the cluster of the request (with --inventory; default: its only cluster)",
    )
    val.add_argument(
        "--stream", help="the stream of a consumer request (with --inventory)"
    )
    val.add_argument(
        "--mode",
        choices=["single", "cluster"],
        default="cluster",
        help="single server or clustered: some config checks differ",
    )
    val.add_argument(
        "--stream-config",
        metavar="FILE",
        help="the stored config of a consumer's stream, for the consumer checks that "
        "need it (without it they are skipped and listed as assumed)",
    )
    val.add_argument(
        "--no-created-version",
        action="store_true",
        help="leave out the created-version metadata",
    )
    val.add_argument(
        "--format",
        type=OutputFormat,
        choices=list(OutputFormat),
        default=OutputFormat.TEXT,
    )
    val.add_argument(
        "--output", "-o", metavar="FILE", help="write the report here instead of stdout"
    )

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
        choices=["single", "cluster"],
        help="single server or clustered (default: what the inventory's `assetgate pull` "
        "server records say, single when they name only standalone servers, else cluster; "
        "a --mode they contradict is warned about; with --verify-plan: the plan's)",
    )
    chk.add_argument(
        "--format",
        choices=list(ReportFormat),
        type=ReportFormat,
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
    chk.add_argument(
        "--fail-on",
        metavar="RULE,...",
        help=fail_on_help(matrix=True),
    )
    chk.add_argument(
        "--accept",
        action="append",
        metavar="RULE:ASSET",
        help="an audited exception recorded in the report: RULE is a state, a drift flag, "
        "overlap, a cluster outcome (crash, meta_state_lost, meta_unavailable: ASSET is a "
        "glob over cluster names), record-error or ignored (ASSET: a glob over the "
        "record's FILE:LINE) or *; ASSET a glob over cluster/account/stream[/consumer] "
        "(repeatable; one that matches nothing is warned about)",
    )
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

    scn = sub.add_parser(
        "scan",
        help="judge inventories of any size with Spark; write Parquet, a summary and the report to DIR",
        description=(
            "Run check's judgement on Spark (embedded local session by default, or a cluster "
            "with --master) and write assets/, errors/, ignored/, overlaps/ (Parquet), "
            "summary.json/.md and the report to DIR, atomically (_SUCCESS written last). "
            "Needs the spark extra (pip install 'assetgate[spark]') and Java 17+. "
            "Exit 0: nothing reaches --fail-on; 1: something does; 2: usage error. "
            "See docs/spark.md."
        ),
        epilog=(
            "examples:\n"
            "  assetgate scan fixtures/inventories/demo.jsonl --target 2.11.11 --out scan-out\n"
            "  assetgate scan 'inv/*.jsonl' --target 2.12.8 --out scan-out "
            "--master spark://HOST:7077 --format sarif\n"
        ),
        formatter_class=HelpFormatter,
    )
    add_scan_arguments(scn)

    add_pull_parser(sub)

    _add_schema_parser(sub)

    lev = sub.add_parser(
        "levels",
        help="print or check the level catalogue",
        description="Print the release lines the catalogue describes, or check it against CHECKSUMS.",
        epilog="examples:\n  assetgate levels\n  assetgate levels --format json\n  assetgate levels --verify\n",
        formatter_class=HelpFormatter,
    )
    lev.add_argument(
        "--verify",
        action="store_true",
        help="check the catalogue; exit 0 if sound, 2 if not",
    )
    lev.add_argument(
        "--write-checksums",
        action="store_true",
        help="rewrite CHECKSUMS for the --levels folder after editing a release file",
    )
    lev.add_argument(
        "--format",
        type=OutputFormat,
        choices=list(OutputFormat),
        default=OutputFormat.TEXT,
    )
    lev.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write the listing here instead of stdout",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    configure_logging(json=bool(args.log_json) or not sys.stderr.isatty())
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("assetgate: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        where = traceback.extract_tb(exc.__traceback__)[-1]
        print(
            f"assetgate: internal error: {type(exc).__name__}: {exc} "
            f"(at {Path(where.filename).name}:{where.lineno}); rerun with --debug for "
            "the traceback",
            file=sys.stderr,
        )
        return ExitCode.INTERNAL


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command; caller mistakes exit 2 with one line."""
    try:
        _check_outputs(args)
        if args.command == "validate":
            return _validate(args)
        if args.command == "check":
            with _without_cyclic_gc():
                return run_check(args, _catalogue(args))
        if args.command == "scan":
            with _without_cyclic_gc():
                return run_scan(args, _catalogue(args))
        if args.command == "pull":
            return run_pull(args)
        if args.command == "schema":
            return _schema(args)
        return _levels(args)
    except (_Usage, UsageError) as exc:
        print(f"assetgate: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except CatalogueError as exc:
        print(f"assetgate: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    except AssetgateError as exc:
        print(f"assetgate: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE


_OUTPUT_OPTIONS: Final = ("output", "plan_out")


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that cannot be written before any work starts."""
    for option in _OUTPUT_OPTIONS:
        value = getattr(args, option, None)
        if not value or value == "-":
            continue
        path = Path(value)
        flag = "--" + option.replace("_", "-")
        if path.is_dir():
            msg = f"{flag}: {value!r} is a directory"
            raise _Usage(msg)
        parent = path.parent if str(path.parent) else Path()
        if not parent.is_dir():
            msg = f"{flag}: the directory of {value!r} does not exist"
            raise _Usage(msg)
        if not os.access(parent, os.W_OK) or (
            path.exists() and not os.access(path, os.W_OK)
        ):
            msg = f"{flag}: {value!r} is not writable"
            raise _Usage(msg)


@contextlib.contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """A bulk run without the cyclic garbage collector (reference counting still frees).

    A check keeps a verdict per asset; the collector finds no cycles among them but
    walks its containers at every full collection: about 12 % of a one-process check
    of 1,000,000 assets. The command owns its process, so it turns the collector off
    for the run (the library leaves this process-wide setting alone).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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


def _add_schema_parser(sub: Any) -> None:
    """``assetgate schema NAME``."""
    sch = sub.add_parser(
        "schema",
        help="print the JSON Schema of a JSON output",
        description="Print the JSON Schema (draft 2020-12) of one of assetgate's JSON "
        "outputs, generated from the types that write it: report (check --format json), "
        "matrix (check --target all), rolling (check --rolling), plan (check --plan-out).",
        epilog="examples:\n  assetgate schema report\n  assetgate schema matrix -o matrix.schema.json\n",
        formatter_class=HelpFormatter,
    )
    sch.add_argument("name", choices=list(SCHEMAS), help="which output")
    sch.add_argument("--output", "-o", metavar="FILE", help="write it here, not stdout")


def _schema(args: argparse.Namespace) -> int:
    text = json_schema(args.name)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return ExitCode.OK


def _catalogue(args: argparse.Namespace) -> Catalogue:
    return load_catalogue(args.levels) if args.levels else load_catalogue()


def _read(path: str) -> bytes:
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        else:
            with Path(path).open("rb") as handle:
                data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        msg = f"cannot read {path!r}: {exc.strerror or exc}"
        raise _Usage(msg) from None
    if len(data) > MAX_INPUT_BYTES:
        msg = f"{path!r} is larger than {MAX_INPUT_BYTES} bytes"
        raise _Usage(msg)
    return data


def _write(args: argparse.Namespace, text: str) -> None:
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _validate(args: argparse.Namespace) -> int:
    catalogue = _catalogue(args)
    catalogue.server(args.server)  # an unknown version is a usage error before reading
    existing = _read(args.existing) if args.existing else None
    stream_config = _read(args.stream_config) if args.stream_config else None
    inputs = [
        (path, _read(path)) for path in args.files
    ]  # unreadable input: exit 2, nothing written
    results: list[tuple[str, Validation]] = []
    admissions: dict[str, Admission] = {}
    for path, config in inputs:
        result = validate(
            config,
            kind=args.kind,
            server=args.server,
            op=args.op,
            existing=existing,
            strict=args.strict,
            api_level_header=args.api_level_header,
            created_version=not args.no_created_version,
            catalogue=catalogue,
            mode=args.mode,
            stream=stream_config,
        )
        results.append((path, result))
        if args.inventory:
            admissions[path] = _admit_or_usage(
                args.inventory,
                config,
                kind=args.kind,
                target=args.server,
                op=args.op,
                account=args.account,
                cluster=args.cluster,
                stream=args.stream,
                mode=args.mode,
                catalogue=catalogue,
            )
    if args.format == OutputFormat.JSON:
        items = [
            {
                "source": path,
                **msgspec.to_builtins(result),
                **(
                    {"admission": _admission_json(admissions[path])}
                    if path in admissions
                    else {}
                ),
            }
            for path, result in results
        ]
        if len(items) == 1:
            del items[0]["source"]
        payload: object = items[0] if len(items) == 1 else items
        _write(
            args,
            msgspec.json.format(msgspec.json.encode(payload).decode(), indent=2) + "\n",
        )
    else:
        _write(
            args,
            "".join(
                render_validation(result, source=path)
                + _render_admission(admissions.get(path))
                for path, result in results
            ),
        )
    unreadable = [path for path, config in inputs if not _is_json(config)]
    if (
        unreadable
    ):  # the server's reply is printed above; the input is the user's mistake
        names = ", ".join(map(repr, unreadable))
        print(f"assetgate: error: not a JSON document: {names}", file=sys.stderr)
        return ExitCode.USAGE
    clean = all(result.clean for _, result in results) and all(
        a.allowed for a in admissions.values()
    )
    return ExitCode.OK if clean else ExitCode.FINDINGS


def _is_json(data: bytes) -> bool:
    """Whether ``data`` is one JSON document as Go's scanner reads it (any content)."""
    return scan(data) is None


def _admit_or_usage(inventory: list[str], config: bytes, **options: Any) -> Admission:
    """:func:`admit`, with its caller mistakes (several clusters) as usage errors."""
    try:
        return admit(inventory, config, **options)
    except ValueError as exc:
        if type(exc) is not ValueError:
            raise
        raise _Usage(str(exc)) from None


def _admission_json(admission: Admission) -> dict[str, object]:
    return {
        "allowed": admission.allowed,
        "error": msgspec.to_builtins(admission.error),
        "conflicts": msgspec.to_builtins(admission.conflicts),
    }


def _render_admission(admission: Admission | None) -> str:
    if admission is None:
        return ""
    if admission.allowed:
        return "  with inventory:   allowed\n"
    error = admission.error
    head = f"{error.code}/{error.err_code} {error.description}" if error else "refused"
    lines = [f"  with inventory:   refused: {head}"]
    lines.extend(
        f"    overlaps {c.stream!r} ({c.subject} ~ {c.requested})"
        + (" [offline]" if c.offline else "")
        for c in admission.conflicts
    )
    return "\n".join(lines) + "\n"


def render_validation(result: Validation, *, source: str) -> str:
    """A terminal-readable report of one validation."""
    server = result.server
    level = "none" if server.api_level is None else str(server.api_level)
    mode = "strict" if server.strict else "lenient"
    lines = [
        f"{source}: {result.kind} {result.op} on nats-server {server.version} (API level {level}, {mode})"
    ]
    if result.accepted:
        verdict = (
            "accepted"
            if not result.dropped_fields
            else "accepted, fields silently dropped"
        )
        lines.append(f"  verdict:          {verdict}")
    elif result.server_crash is not None:
        lines.append(f"  verdict:          the server crashes: {result.server_crash}")
    elif result.no_reply is not None:
        lines.append(f"  verdict:          no reply: {result.no_reply}")
    else:
        error = result.error
        assert error is not None  # noqa: S101 - a rejection always carries the reply
        lines.append(
            f"  verdict:          rejected: {error.code}/{error.err_code} {error.description}"
        )
        if result.check is not None:
            lines.append(f"  config check:     {result.check}")
    if result.unknown_fields:
        lines.append(f"  unknown fields:   {', '.join(result.unknown_fields)}")
    if result.dropped_fields:
        lines.append(f"  dropped fields:   {', '.join(result.dropped_fields)}")
    if result.accepted:
        lines.append(f"  required level:   {result.required_level}")
        lines.append(f"  stored metadata:  {_md(result.stamped_metadata)}")
        lines.append(f"  reply metadata:   {_md(result.response_metadata)}")
        if result.created_metadata:
            lines.append(f"  created version:  {_md(result.created_metadata)}")
    lines.extend(f"  assumed:          {text}" for text in result.assumed)
    lines.append(
        f"  min server:       {result.min_server_version or 'no known release'}"
    )
    # names come from the config: nothing in them may move the cursor or end a line
    return "\n".join(escape_terminal(line) for line in lines) + "\n"


def _md(metadata: dict[str, str] | None) -> str:
    if not metadata:
        return "(none)"
    return ", ".join(f"{key}={value!r}" for key, value in sorted(metadata.items()))


def _levels(args: argparse.Namespace) -> int:
    if args.write_checksums:
        if not args.levels:
            msg = "--write-checksums needs --levels DIR (the packaged catalogue is read-only)"
            raise _Usage(msg)
        folder = Path(args.levels)
        files = {p.name: p.read_bytes() for p in folder.glob("*.toml")}
        (folder / "CHECKSUMS").write_text(checksum_text(files), encoding="utf-8")
        build_catalogue(files, checksum_text(files), source=str(folder))
        print(f"wrote {folder / 'CHECKSUMS'} for {len(files)} files", file=sys.stderr)
        return ExitCode.OK
    catalogue = _catalogue(args)
    if args.verify:
        print(
            f"catalogue {catalogue.source}: {len(catalogue.lines)} release lines, digest {catalogue.digest}"
        )
        return ExitCode.OK
    summary = describe(catalogue.lines)
    if args.format == OutputFormat.JSON:
        payload = {"digest": catalogue.digest, "lines": summary}
        _write(
            args,
            msgspec.json.format(msgspec.json.encode(payload).decode(), indent=2) + "\n",
        )
        return ExitCode.OK
    out = [f"level catalogue {catalogue.source} (digest {catalogue.digest[:12]})", ""]
    for line in catalogue.lines:
        ranges = ", ".join(
            f"{r.first}+ level {r.switches.api_level if r.switches.api_level is not None else '-'}"
            f" offline {r.switches.offline}"
            for r in line.ranges
        )
        out.append(f"{line.line}: {line.note}")
        out.append(f"  versions: {ranges}")
        if line.added_fields:
            out.append(
                f"  fields:   {', '.join(line.added_fields) if len(line.added_fields) < _LIST_INLINE else f'{len(line.added_fields)} (baseline)'}"
            )
        if line.added_values:
            out.append(
                f"  values:   {', '.join(line.added_values) if len(line.added_values) < _LIST_INLINE else f'{len(line.added_values)} (baseline)'}"
            )
        rules = [f"{r.id}->{r.level}" for r in line.rules if r.since == line.first]
        if rules:
            out.append(f"  rules:    {', '.join(rules)}")
        out.append("")
    _write(args, "\n".join(out))
    return ExitCode.OK
