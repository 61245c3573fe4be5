"""``assetgate schema``: its flags; print the JSON Schema of a JSON output."""

from __future__ import annotations

from typing import TYPE_CHECKING

from assetgate.cli.common import ExitCode, HelpFormatter, Subparsers, write_output
from assetgate.report.schema import SCHEMAS, json_schema

if TYPE_CHECKING:
    import argparse

__all__ = ["add_parser", "run"]


def add_parser(sub: Subparsers) -> None:
    """Register ``schema`` and its flags."""
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
    sch.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print (or write) the JSON Schema of one JSON output."""
    write_output(args, json_schema(args.name))
    return ExitCode.OK
