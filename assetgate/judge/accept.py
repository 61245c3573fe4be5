"""The operator's audited exceptions: ``--accept RULE:ASSET`` (KIP-915's ``--force``).

An acceptance does not hide a finding: it marks the verdicts and overlaps it covers
(``accepted``) and the report lists what each one matched.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeVar

import msgspec

from assetgate.judge.gate import asset_id
from assetgate.judge.rules import FAIL_ON_NAMES

if TYPE_CHECKING:
    from assetgate.inventory.read import Ignored
    from assetgate.judge.gate import Verdict
    from assetgate.judge.outcomes import ClusterOutcome
    from assetgate.run.collect import ErrorEntry, Overlap

__all__ = ["RULES", "Acceptance", "Accepted", "apply_acceptances", "parse_accept"]


class Acceptance(msgspec.Struct, frozen=True, kw_only=True):
    """An explicit, audited exception: ``RULE:ASSET`` and the assets it covered."""

    rule: str
    asset: str
    matched: tuple[str, ...]


RULES: Final = (*FAIL_ON_NAMES, "*")
"""What ``--accept RULE:ASSET`` may name: a state, a drift flag, ``overlap``, a
whole-cluster outcome (its ASSET pattern matches the cluster's name),
``record-error`` or ``ignored`` (its pattern matches the record's source,
``FILE:LINE``) or ``*`` (every finding of an asset, not records)."""


def parse_accept(item: str) -> tuple[str, str]:
    """``RULE:ASSET`` -> (rule, pattern); ``ValueError`` names the allowed rules."""
    rule, sep, pattern = item.partition(":")
    if not sep or rule not in RULES or not pattern:
        allowed = ", ".join(RULES)
        msg = f"invalid acceptance: {item!r} (use RULE:ASSET, RULE one of {allowed})"
        raise ValueError(msg)
    return rule, pattern


class Accepted(NamedTuple):
    """What :func:`apply_acceptances` marked, and what each acceptance matched."""

    verdicts: list[Verdict]
    overlaps: list[Overlap]
    accepted: list[Acceptance]
    clusters: list[ClusterOutcome]
    errors: list[ErrorEntry]
    ignored: list[Ignored]

    @property
    def covered(self) -> int:
        """How many verdicts, overlaps and records an acceptance covers (``accepted``)."""
        groups: tuple[list[Any], ...] = (
            self.verdicts,
            self.overlaps,
            self.errors,
            self.ignored,
        )
        return sum(1 for group in groups for item in group if item.accepted)


def apply_acceptances(
    verdicts: list[Verdict],
    overlaps: list[Overlap],
    rules: list[tuple[str, str]],
    clusters: list[ClusterOutcome] | None = None,
    *,
    errors: list[ErrorEntry] | None = None,
    ignored: list[Ignored] | None = None,
) -> Accepted:
    """Mark what each ``RULE:ASSET`` covers; the first matching rule wins."""
    outcomes = list(clusters or ())
    records = list(errors or ())
    skipped = list(ignored or ())
    if not rules:
        return Accepted(verdicts, overlaps, [], outcomes, records, skipped)
    matched: dict[tuple[str, str], list[str]] = {rule: [] for rule in rules}
    out: list[Verdict] = []
    for verdict in verdicts:
        ident = asset_id(verdict)
        for rule, pattern in rules:
            covers = (
                rule == "*" and (verdict.state != "online" or verdict.drift is not None)
            ) or rule in {verdict.state, verdict.drift}
            if covers and rule != "online" and fnmatch.fnmatchcase(ident, pattern):
                taken = f"{rule}:{pattern}"
                joined = f"{verdict.accepted}; {taken}" if verdict.accepted else taken
                verdict = msgspec.structs.replace(verdict, accepted=joined)  # noqa: PLW2901
                matched[(rule, pattern)].append(ident)
        out.append(verdict)
    kept: list[Overlap] = []
    for overlap in overlaps:
        for rule, pattern in rules:
            idents = [
                f"{overlap.cluster}/{overlap.account}/{name}"
                for name in overlap.streams
            ]
            if rule in {"overlap", "*"} and any(
                fnmatch.fnmatchcase(i, pattern) for i in idents
            ):
                overlap = msgspec.structs.replace(overlap, accepted=f"{rule}:{pattern}")  # noqa: PLW2901
                matched[(rule, pattern)].append(" ~ ".join(idents))
                break
        kept.append(overlap)
    marked: list[ClusterOutcome] = []
    for outcome in outcomes:
        for rule, pattern in rules:
            down = outcome.outcome != "ok"
            covers = down and rule in {outcome.outcome, "*"}
            if covers and fnmatch.fnmatchcase(outcome.cluster, pattern):
                outcome = msgspec.structs.replace(  # noqa: PLW2901
                    outcome, accepted=f"{rule}:{pattern}"
                )
                matched[(rule, pattern)].append(outcome.cluster)
                break
        marked.append(outcome)
    records = _by_source(records, "record-error", rules, matched)
    skipped = _by_source(skipped, "ignored", rules, matched)
    accepted = [
        Acceptance(rule=rule, asset=pattern, matched=tuple(items))
        for (rule, pattern), items in matched.items()
    ]
    return Accepted(out, kept, accepted, marked, records, skipped)


_Record = TypeVar("_Record", "ErrorEntry", "Ignored")


def _by_source(
    records: list[_Record],
    kind: str,
    rules: list[tuple[str, str]],
    matched: dict[tuple[str, str], list[str]],
) -> list[_Record]:
    """Records marked by the first ``kind:GLOB`` whose glob matches their source."""
    out: list[_Record] = []
    for record in records:
        for rule, pattern in rules:
            if rule == kind and fnmatch.fnmatchcase(record.source, pattern):
                record = msgspec.structs.replace(record, accepted=f"{rule}:{pattern}")  # noqa: PLW2901
                matched[(rule, pattern)].append(record.source)
                break
        out.append(record)
    return out
