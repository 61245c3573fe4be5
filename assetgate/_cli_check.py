"""``assetgate check``: read inventories, classify, render, pick the exit code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

import msgspec

from assetgate.check import (
    Plan,
    check,
    compare_plans,
    finding_rules,
    make_plan,
    parse_targets,
)
from assetgate.gate import STATES
from assetgate.report import ReportFormat, render

if TYPE_CHECKING:
    import argparse

    from assetgate.levels import Catalogue

__all__ = [
    "DEFAULT_FAIL_ON",
    "FAIL_ON_CHOICES",
    "UsageError",
    "parse_fail_on",
    "run_check",
]

DEFAULT_FAIL_ON: Final = ("offline", "degraded", "unloadable", "detached", "errors")
FAIL_ON_CHOICES: Final = (
    *STATES,
    "errors",
    "overlaps",
    "stamp_missing",
    "stamp_unparsable",
    "stamp_too_low",
    "stamp_too_high",
)


class UsageError(Exception):
    """A usage problem (exit 2)."""


def parse_fail_on(text: str | None) -> tuple[str, ...]:
    """The ``--fail-on`` list (default: any state but online, and any error)."""
    if text is None:
        return DEFAULT_FAIL_ON
    items = tuple(item.strip() for item in text.split(",") if item.strip())
    unknown = [item for item in items if item not in FAIL_ON_CHOICES and item != "none"]
    if unknown:
        choices = ", ".join(FAIL_ON_CHOICES)
        msg = f"--fail-on: unknown {', '.join(map(repr, unknown))} (choose from {choices}, or none)"
        raise UsageError(msg)
    return tuple(item for item in items if item != "none")


def run_check(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """Run ``assetgate check``; return the exit code (0 clean, 1 findings, 2 usage)."""
    fail_on = parse_fail_on(args.fail_on)
    missing = [path for path in args.inventory if not Path(path).exists()]
    if missing:
        msg = f"inventory not found: {', '.join(map(repr, missing))}"
        raise UsageError(msg)
    plan: Plan | None = None
    if args.verify_plan:
        try:
            plan = msgspec.json.decode(Path(args.verify_plan).read_bytes(), type=Plan)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            msg = f"cannot read plan {args.verify_plan!r}: {exc}"
            raise UsageError(msg) from None
        targets = {"*": plan.target.default} if plan.target.default else {}
        targets.update(plan.target.clusters)
        mode = plan.target.mode
    else:
        if not args.target:
            msg = "--target is required (or --verify-plan PLAN)"
            raise UsageError(msg)
        try:
            targets = parse_targets(args.target)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        mode = args.mode
    try:
        report = check(
            args.inventory,
            target=targets,
            mode=mode,
            accept=args.accept or (),
            catalogue=catalogue,
        )
    except ValueError as exc:
        if type(exc) is ValueError:
            raise UsageError(str(exc)) from None
        raise
    if plan is not None:
        return _verify(plan, make_plan(report))
    text = render(report, ReportFormat(args.format))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.plan_out:
        encoded = msgspec.json.encode(make_plan(report), order="deterministic")
        Path(args.plan_out).write_bytes(msgspec.json.format(encoded, indent=2) + b"\n")
    return 1 if finding_rules(report, fail_on) else 0


def _verify(old: Plan, new: Plan) -> int:
    changes, notes = compare_plans(old, new)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not changes:
        print(
            f"plan {old.digest[:12]}: no verdict changed ({len(new.verdicts)} assets)"
        )
        return 0
    print(f"plan {old.digest[:12]}: {len(changes)} verdict(s) changed")
    for change in changes:
        print(f"  {change}")
    return 1
