"""``assetgate scan``: judge inventories of any size with Spark and write a directory.

Flags and the exit code only; the job is :mod:`assetgate.batch.job`, imported when
the command runs, so that the rest of the command line never needs pyspark.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from assetgate.cli.common import (
    MODES,
    HelpFormatter,
    Subparsers,
    UsageError,
    add_rule_flags,
    catalogue,
    parse_fail_on,
    warn_unmatched,
    without_cyclic_gc,
    write_output,
)
from assetgate.cli.logconfig import configure_logging
from assetgate.errors import AssetgateError
from assetgate.live.pulled import mode_notes, pulled_mode
from assetgate.report.formats import FORMATS
from assetgate.report.scan import FULL_REPORT_LINES, REPORTS, SUMMARY_FORMATS
from assetgate.run.check import parse_accept, parse_targets
from assetgate.run.matrix import is_release_set

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from assetgate.catalogue.levels import Catalogue

__all__ = ["add_parser", "add_scan_arguments", "run", "run_scan", "submit_main"]


def add_parser(sub: Subparsers) -> None:
    """Register ``scan`` and its flags."""
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
    scn.set_defaults(run=run)


def add_scan_arguments(
    parser: argparse.ArgumentParser, *, default_master: str | None = "local[*]"
) -> None:
    """Add the flags of ``scan`` (shared by the CLI and the spark-submit entry point)."""
    parser.add_argument(
        "inventory",
        metavar="INPUT",
        nargs="+",
        help="inventory files, directories or globs (local), or URIs Spark reads",
    )
    parser.add_argument(
        "--target",
        action="append",
        required=True,
        metavar="VERSION|CLUSTER=VERSION,...",
        help="target version; per cluster as CLUSTER=VERSION (repeatable)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        help="single server or clustered (default: what the leading server records of "
        "local `assetgate pull` files say, else cluster)",
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="output directory (replaced)"
    )
    parser.add_argument(
        "--master",
        default=default_master,
        help=(
            "Spark master: local[*] (default: an embedded session), spark://HOST:7077,"
            " or sc://HOST:15002 for a Spark Connect server"
        ),
    )
    parser.add_argument(
        "--format",
        choices=list(FORMATS),
        default="text",
    )
    parser.add_argument(
        "--output", "-o", metavar="FILE", help="also write the report here, not stdout"
    )
    parser.add_argument(
        "--report",
        choices=REPORTS,
        default="auto",
        help=(
            "full: check's whole report (the driver holds every verdict); summary: "
            "counts, outcomes and the first findings of each kind (the driver holds "
            f"only aggregates); auto: full up to {FULL_REPORT_LINES:,} input lines"
        ),
    )
    add_rule_flags(parser, matrix=False)
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting for the session (repeatable)",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``assetgate scan``; return the exit code (0 clean, 1 findings, 2 usage)."""
    with without_cyclic_gc():
        return run_scan(args, catalogue(args))


def run_scan(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """:func:`run` with a catalogue (the ``spark-submit`` entry point's)."""
    try:
        from assetgate.batch.job import ScanError, build_session, scan, spark_failure
    except ImportError as exc:
        msg = f"scan needs pyspark: pip install 'assetgate[spark]' ({exc})"
        raise UsageError(msg) from None
    _need_java()
    fail_on = parse_fail_on(args.fail_on)
    if any(is_release_set(target) for target in args.target):
        msg = (
            "scan judges one target; every release at once (--target all or A..B) is "
            "`assetgate check`"
        )
        raise UsageError(msg)
    try:
        targets = parse_targets(args.target)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    conf = _settings(args.conf)
    for version in targets.values():  # an unknown version fails before Spark starts
        catalogue.server(version)
    local = [path for path in args.inventory if "://" not in path]
    missing = [path for path in local if not Path(path).exists()]
    if missing:  # as does a missing local input (a URI is Spark's to read)
        msg = f"inventory not found: {', '.join(map(repr, missing))}"
        raise UsageError(msg)
    for item in args.accept:  # as does a malformed acceptance
        try:
            parse_accept(item)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if args.report == "summary" and args.format not in SUMMARY_FORMATS:
        msg = (
            f"--format {args.format} lists every finding; --report summary gives "
            f"{', '.join(SUMMARY_FORMATS)}"
        )
        raise UsageError(msg)
    mode, notes = mode_notes(args.mode, pulled_mode(args.inventory))
    for note in notes:
        sys.stderr.write(note + "\n")
    with _spark_errors(spark_failure):
        spark = build_session(args.master, conf)
    try:
        with _spark_errors(spark_failure):
            result = scan(
                spark,
                args.inventory,
                args.out,
                targets=targets,
                catalogue=catalogue,
                mode=mode,
                fmt=args.format,
                accept=args.accept,
                fail_on=fail_on,
                report=args.report,
            )
    except ScanError as exc:
        raise UsageError(str(exc)) from None
    finally:
        if args.master is not None:
            with contextlib.suppress(Exception):  # a JVM that is gone cannot stop
                spark.stop()
    write_output(args, result.text)
    warn_unmatched(result.summary.acceptances)
    return 1 if result.summary.failing else 0


def _need_java() -> None:
    """Refuse before Spark starts when no Java can run it."""
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (
        home and Path(home, "bin", "java").exists()
    ):
        msg = "scan needs Java 17 or later: install a JDK or set JAVA_HOME"
        raise UsageError(msg)


def _settings(items: list[str]) -> dict[str, str]:
    """``--conf KEY=VALUE`` items as Spark settings."""
    conf = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            msg = f"--conf: expected KEY=VALUE, got {item!r}"
            raise UsageError(msg)
        conf[key] = value
    return conf


@contextlib.contextmanager
def _spark_errors(
    spark_failure: Callable[[BaseException], str | None],
) -> Iterator[None]:
    """Spark's failures as usage errors (exit 2, one line); anything else unchanged."""
    try:
        yield
    except Exception as exc:
        failure = spark_failure(exc)
        if failure is None:
            raise
        raise UsageError(failure) from None


def submit_main(argv: Sequence[str] | None = None) -> int:
    """``spark-submit`` entry point: the flags of ``assetgate scan``; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m assetgate.batch.job")
    add_scan_arguments(parser, default_master=None)
    parser.add_argument("--levels", metavar="DIR", help="a level catalogue folder")
    args = parser.parse_args(argv)
    configure_logging(json=not sys.stderr.isatty())
    try:
        return run_scan(args, catalogue(args))
    except (UsageError, AssetgateError) as exc:
        print(f"assetgate: error: {exc}", file=sys.stderr)
        return 2
