"""What the commands share: exit codes, the usage error, help layout, output, ``--fail-on``.

Each command is one module of this package with ``add_parser(subparsers)``, which
registers its flags and its ``run(args) -> int``; :mod:`assetgate.cli.main` only
lists them and turns errors into exit codes.
"""

from __future__ import annotations

import argparse
import enum
import os
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias, get_args

from assetgate.judge.rules import (
    ALWAYS_FAIL,
    DEFAULT_FAIL_ON,
    FAIL_ON_NAMES,
    NO_ASSETS,
    canonical,
)
from assetgate.run.bulk import without_cyclic_gc
from assetgate.wire import Mode

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assetgate.catalogue.levels import Catalogue
    from assetgate.judge.accept import Acceptance
    from assetgate.run.aggregate import AcceptanceCount

__all__ = [
    "FLOOR_ABOVE",
    "MODES",
    "TEXT_OR_JSON",
    "ExitCode",
    "HelpFormatter",
    "Subparsers",
    "UsageError",
    "add_rule_flags",
    "catalogue",
    "check_outputs",
    "fail_on_help",
    "floor_above",
    "parse_fail_on",
    "warn_unmatched",
    "without_cyclic_gc",
    "write_output",
]

Subparsers: TypeAlias = Any
"""``ArgumentParser.add_subparsers()``'s result (argparse's type for it is private)."""

MODES: Final = get_args(Mode)
"""``--mode``'s choices: single server or clustered."""

TEXT_OR_JSON: Final = ("text", "json")
"""The ``--format`` choices of ``validate`` and ``levels``."""


class ExitCode(enum.IntEnum):
    """Process exit codes."""

    OK = 0
    FINDINGS = 1
    USAGE = 2
    INTERNAL = 3


class UsageError(Exception):
    """The caller's mistake (bad flags, an unknown version, unreadable input): exit 2."""


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


def catalogue(args: argparse.Namespace) -> Catalogue:
    """The catalogue of ``--levels``, or the packaged one."""
    from assetgate.catalogue.levels import (
        load_catalogue,  # the command's, not --version's
    )

    return load_catalogue(args.levels) if args.levels else load_catalogue()


def write_output(args: argparse.Namespace, text: str) -> None:
    """Write a command's report to ``--output``, or to standard output."""
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


_OUTPUT_OPTIONS: Final = ("output", "plan_out")


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that cannot be written before any work starts."""
    for option in _OUTPUT_OPTIONS:
        value = getattr(args, option, None)
        if not value or value == "-":
            continue
        path = Path(value)
        flag = "--" + option.replace("_", "-")
        if path.is_dir():
            msg = f"{flag}: {value!r} is a directory"
            raise UsageError(msg)
        parent = path.parent if str(path.parent) else Path()
        if not parent.is_dir():
            msg = f"{flag}: the directory of {value!r} does not exist"
            raise UsageError(msg)
        if not os.access(parent, os.W_OK) or (
            path.exists() and not os.access(path, os.W_OK)
        ):
            msg = f"{flag}: {value!r} is not writable"
            raise UsageError(msg)


# --- --fail-on (check and scan) -------------------------------------------------------

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
    from assetgate.run.matrix import version_text  # loaded by the commands that use it

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
    from assetgate.run.matrix import version_text  # loaded by the commands that use it

    floors = [item for item in fail_on if item.startswith(FLOOR_ABOVE)]
    rest = tuple(item for item in fail_on if not item.startswith(FLOOR_ABOVE))
    if len(floors) > 1:
        msg = "--fail-on: give floor-above= once"
        raise UsageError(msg)
    return rest, version_text(floors[0].removeprefix(FLOOR_ABOVE)) if floors else None


def add_rule_flags(parser: argparse.ArgumentParser, *, matrix: bool) -> None:
    """Add ``--fail-on`` and ``--accept`` (``matrix``: with ``floor-above=``)."""
    parser.add_argument(
        "--fail-on", metavar="RULE,...", help=fail_on_help(matrix=matrix)
    )
    parser.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="RULE:ASSET",
        help="an audited exception recorded in the report: RULE is a state, a drift flag, "
        "overlap, a cluster outcome (crash, meta_state_lost, meta_unavailable: ASSET is a "
        "glob over cluster names), record-error or ignored (ASSET: a glob over the "
        "record's FILE:LINE) or *; ASSET a glob over cluster/account/stream[/consumer] "
        "(repeatable; one that matches nothing is warned about)",
    )


def warn_unmatched(accepted: Iterable[Acceptance | AcceptanceCount]) -> None:
    """Warn on stderr about each ``--accept`` that matched nothing."""
    for acceptance in accepted:
        if not acceptance.matched:
            print(
                f"assetgate: warning: --accept {acceptance.rule}:{acceptance.asset} "
                "matched nothing",
                file=sys.stderr,
            )
