"""The ``assetgate`` command line: the global flags, the commands, and the exit codes.

Each command is a module of this package (``add_parser`` and ``run``); this one lists
them in :data:`COMMANDS` and turns what they raise into one line and an exit code. Only
the module of the command given is imported (all of them for ``--help``), and none for
``--version``, so that a command loads only what it uses.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Final

from assetgate import __version__
from assetgate.cli.common import (
    ExitCode,
    HelpFormatter,
    UsageError,
    check_outputs,
)
from assetgate.errors import AssetgateError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType

__all__ = ["COMMANDS", "ExitCode", "build_parser", "main"]

COMMANDS: Final = ("validate", "check", "scan", "pull", "schema", "levels")
"""The commands, in ``--help`` order: the module ``assetgate.cli.NAME`` of each
registers it with ``add_parser``."""
_GLOBAL_VALUES: Final = frozenset({"--levels"})  # global flags that take a value

_EPILOG_MAIN = """\
examples:
  assetgate check fixtures/inventories/demo.jsonl --target 2.11.11
  assetgate validate stream.json --kind stream --server 2.11.11
  echo '{"name":"S","allow_batched":true}' | assetgate validate - --kind stream --server 2.12.8
  assetgate levels --verify
"""


def command_module(name: str) -> ModuleType:
    """The module of command ``name`` (``assetgate.cli.NAME``)."""
    return importlib.import_module(f"assetgate.cli.{name}")


def _chosen(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (the first word that is one, after global flags)."""
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in _GLOBAL_VALUES:
            skip = True
        elif not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``assetgate`` command.

    With ``argv``, only what parsing it needs: the command it names, or, for
    ``--version`` alone, no command module; without, every command.
    """
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
    chosen = None if argv is None else _chosen(argv)
    bare_version = argv is not None and chosen is None and "--version" in argv
    for name in COMMANDS:
        if bare_version or (chosen is not None and name != chosen):
            sub.add_parser(name)  # named, so argparse can still say which exist
        else:
            command_module(name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    from assetgate.cli.logconfig import configure_logging  # not needed for --version

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
