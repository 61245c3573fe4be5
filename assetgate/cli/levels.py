"""``assetgate levels``: its flags; print or check the level catalogue."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from assetgate.catalogue.levels import build_catalogue, checksum_text, describe
from assetgate.cli.common import (
    TEXT_OR_JSON,
    ExitCode,
    HelpFormatter,
    Subparsers,
    UsageError,
    catalogue,
    write_output,
)
from assetgate.report.common import pretty_json

if TYPE_CHECKING:
    import argparse

__all__ = ["add_parser", "run"]

_LIST_INLINE: Final = 12  # longer lists (the baseline's) are summarised by count


def add_parser(sub: Subparsers) -> None:
    """Register ``levels`` and its flags."""
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
        choices=TEXT_OR_JSON,
        default="text",
    )
    lev.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write the listing here instead of stdout",
    )
    lev.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``assetgate levels``: list the catalogue, verify it or write its checksums."""
    if args.write_checksums:
        if not args.levels:
            msg = "--write-checksums needs --levels DIR (the packaged catalogue is read-only)"
            raise UsageError(msg)
        folder = Path(args.levels)
        files = {p.name: p.read_bytes() for p in folder.glob("*.toml")}
        (folder / "CHECKSUMS").write_text(checksum_text(files), encoding="utf-8")
        build_catalogue(files, checksum_text(files), source=str(folder))
        print(f"wrote {folder / 'CHECKSUMS'} for {len(files)} files", file=sys.stderr)
        return ExitCode.OK
    cat = catalogue(args)
    if args.verify:
        print(
            f"catalogue {cat.source}: {len(cat.lines)} release lines, digest {cat.digest}"
        )
        return ExitCode.OK
    summary = describe(cat.lines)
    if args.format == "json":
        payload = {"digest": cat.digest, "lines": summary}
        write_output(args, pretty_json(payload))
        return ExitCode.OK
    out = [f"level catalogue {cat.source} (digest {cat.digest[:12]})", ""]
    for line in cat.lines:
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
    write_output(args, "\n".join(out))
    return ExitCode.OK
