"""The ``assetgate`` command line: the global flags, the commands, and the exit codes.

Each command is a module of this package (``add_parser`` and ``run``); this one lists
them in :data:`COMMANDS` and turns what they raise into one line and an exit code.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Final

from assetgate import __version__
from assetgate.cli import check, levels, pull, scan, schema, validate
from assetgate.cli.common import (
    ExitCode,
    HelpFormatter,
    UsageError,
    check_outputs,
)
from assetgate.cli.logconfig import configure_logging
from assetgate.errors import AssetgateError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["COMMANDS", "ExitCode", "build_parser", "main"]

COMMANDS: Final = (validate, check, scan, pull, schema, levels)
"""The commands, in ``--help`` order: each registers itself with ``add_parser``."""

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
    for command in COMMANDS:
        command.add_parser(sub)
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
        check_outputs(args)
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    except (UsageError, AssetgateError) as exc:  # a CatalogueError too
        print(f"assetgate: error: {exc}", file=sys.stderr)
        return ExitCode.USAGE
