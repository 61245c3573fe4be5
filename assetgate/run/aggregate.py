"""What a run adds up to when nobody holds its report: counts, samples, the first finding.

A :class:`Tally` takes a run's final verdicts, overlaps, record errors and ignored
records one at a time, each with its place in ``check``'s report order, and keeps only
what is small: counts per (cluster, account, state), how many findings fail the run
and the first of each kind, a bounded sample of each rule's findings in report order,
and what each ``--accept`` matched. Tallies of parts of a run merge
(:meth:`Partial.merge`) into the tally of the whole, in any order: the scan's executors
tally their partitions and its driver merges them, so that its memory does not grow
with the inventory. :func:`summarize` turns the whole into a :class:`RunSummary`, and
:func:`summary_of_report` makes the same summary from a ``check`` report (its order is
the list order), which is how tests and the scan itself hold the two to each other.

What fails a run and how findings are worded are not restated here: they come from
:func:`assetgate.judge.rules.failing_rules` and the finding words of
:mod:`assetgate.run.check`. Pure: no I/O.
"""

from __future__ import annotations

import bisect
import operator
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

import msgspec

from assetgate.inventory.read import Ignored  # noqa: TC001 (Struct field)
from assetgate.judge.gate import STATES, Verdict, asset_id
from assetgate.judge.outcomes import (  # noqa: TC001 (Struct fields)
    ClusterOutcome,
    HealthFailure,
)
from assetgate.judge.rules import failing_rules, failing_set
from assetgate.report.common import verdict_words
from assetgate.run.check import (
    asset_finding,
    cluster_finding,
    nothing_to_judge,
    overlap_finding,
    record_finding,
)
from assetgate.run.collect import (
    CatalogueInfo,
    ErrorEntry,
    InventoryInfo,
    Overlap,
    Report,
    Summary,
    TargetInfo,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from assetgate.judge.accept import Acceptance

__all__ = [
    "SAMPLE",
    "AcceptanceCount",
    "Finding",
    "Partial",
    "RunSummary",
    "Sampled",
    "Tally",
    "causes_of",
    "summarize",
    "summary_of_report",
]

SAMPLE: Final = 10
"""Findings kept per rule (state or drift flag), and matches per acceptance."""

Order: TypeAlias = tuple[Any, ...]
"""A place in report order; comparable with the others of one run."""

# the kinds of findings, in the order check lists what fails (after cluster outcomes)
_KINDS: Final = ("asset", "record-error", "overlap", "ignored")


class Finding(msgspec.Struct, frozen=True, array_like=True):
    """A finding that fails the run, where it stands in report order, and its words."""

    order: Order
    finding: str
    reason: str


class Sampled(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A verdict kept as a sample of its rule's findings, with its report order."""

    order: Order
    verdict: Verdict


class _Health(msgspec.Struct, frozen=True, array_like=True, gc=False):
    order: Order
    failure: HealthFailure


_Ordered = TypeVar("_Ordered", Sampled, _Health)


class Partial(msgspec.Struct, kw_only=True):
    """The tally of part of a run, as it travels (msgpack) and merges.

    Attributes:
        assets, errors, ignored, overlaps: entries tallied (overlaps: pairs).
        accepted: of those, how many an acceptance covers.
        drift: assets with a level-stamp drift flag.
        failing: findings of these entries that fail the run.
        cells: (cluster, account, state, count).
        first: per kind of entry (``asset``, ``record-error``, ``overlap``,
            ``ignored``), its first finding that fails the run.
        rules: per rule (a state but online, or a drift flag), the assets that
            have it, accepted or not.
        samples: per rule, the first :data:`SAMPLE` of them in report order.
        health: ``/healthz`` failures (assets a config check keeps from loading).
        health_sample: the first :data:`SAMPLE` of them.
        matched: per acceptance (in the order given), how many entries it covers and
            the first :data:`SAMPLE` of their names, sorted.
        causes: per cluster, the settled verdicts that trigger one of its
            ``[[cluster_outcomes]]`` rules (before the outcome marks them): the first
            :data:`SAMPLE` in report order, and the first of each rule (by rule id,
            ``CLUSTER RULE``, a NUL between), so that :func:`judge_clusters` on them gives the
            outcome, reason and facts it gives on all of them.
        cause_counts: per cluster, how many assets trigger such a rule.
    """

    assets: int = 0
    errors: int = 0
    ignored: int = 0
    overlaps: int = 0
    accepted: int = 0
    drift: int = 0
    failing: int = 0
    cells: list[tuple[str, str, str, int]] = msgspec.field(default_factory=list)
    first: dict[str, Finding] = msgspec.field(default_factory=dict)
    rules: dict[str, int] = msgspec.field(default_factory=dict)
    samples: dict[str, list[Sampled]] = msgspec.field(default_factory=dict)
    health: int = 0
    health_sample: list[_Health] = msgspec.field(default_factory=list)
    matched: list[tuple[int, list[str]]] = msgspec.field(default_factory=list)
    causes: dict[str, list[Sampled]] = msgspec.field(default_factory=dict)
    cause_firsts: dict[str, Sampled] = msgspec.field(default_factory=dict)
    cause_counts: dict[str, int] = msgspec.field(default_factory=dict)

    def merge(self, other: Partial) -> Partial:
        """The tally of both parts (of one run: same acceptances)."""
        cells: dict[tuple[str, str, str], int] = {}
        for cluster, account, state, count in (*self.cells, *other.cells):
            key = (cluster, account, state)
            cells[key] = cells.get(key, 0) + count
        none: list[tuple[int, list[str]]] = [(0, [])] * max(
            len(self.matched), len(other.matched)
        )
        matched = [
            (a[0] + b[0], sorted({*a[1], *b[1]})[:SAMPLE])
            for a, b in zip(self.matched or none, other.matched or none, strict=True)
        ]
        return Partial(
            assets=self.assets + other.assets,
            errors=self.errors + other.errors,
            ignored=self.ignored + other.ignored,
            overlaps=self.overlaps + other.overlaps,
            accepted=self.accepted + other.accepted,
            drift=self.drift + other.drift,
            failing=self.failing + other.failing,
            cells=[(*key, count) for key, count in sorted(cells.items())],
            first=_earliest(self.first, other.first),
            rules=_summed(self.rules, other.rules),
            samples=_sampled(self.samples, other.samples),
            health=self.health + other.health,
            health_sample=_first([*self.health_sample, *other.health_sample]),
            matched=matched,
            causes=_sampled(self.causes, other.causes),
            cause_firsts=_earliest(self.cause_firsts, other.cause_firsts),
            cause_counts=_summed(self.cause_counts, other.cause_counts),
        )

    def causing(self) -> list[Verdict]:
        """The kept causing verdicts of every cluster, in report order, each once."""
        return causes_of([self])[0]


def causes_of(parts: Iterable[Partial]) -> tuple[list[Verdict], dict[str, int]]:
    """What :meth:`Partial.merge` of ``parts`` would say of the causes, merging nothing else.

    The kept causing verdicts of every cluster in report order, each once (the input
    of ``judge_clusters``), and how many assets cause each cluster's outcome.
    """
    causes: dict[str, list[Sampled]] = {}
    firsts: dict[str, Sampled] = {}
    counts: dict[str, int] = {}
    for part in parts:
        causes = _sampled(causes, part.causes)
        firsts = _earliest(firsts, part.cause_firsts)
        counts = _summed(counts, part.cause_counts)
    unique = {s.order: s for items in causes.values() for s in items}
    unique.update({s.order: s for s in firsts.values()})
    return [unique[order].verdict for order in sorted(unique)], counts


_ORDER: Final = operator.attrgetter("order")
_K = TypeVar("_K")
_Early = TypeVar("_Early", Finding, Sampled)


def _first(items: list[_Ordered]) -> list[_Ordered]:
    """The first :data:`SAMPLE` of ``items`` in report order."""
    return sorted(items, key=_ORDER)[:SAMPLE]


def _summed(a: dict[_K, int], b: dict[_K, int]) -> dict[_K, int]:
    """Counts by key, added."""
    out = dict(a)
    for key, count in b.items():
        out[key] = out.get(key, 0) + count
    return out


def _earliest(a: dict[str, _Early], b: dict[str, _Early]) -> dict[str, _Early]:
    """Per key, whichever comes first in report order."""
    out = dict(a)
    for key, found in b.items():
        known = out.get(key)
        if known is None or found.order < known.order:
            out[key] = found
    return out


def _sampled(
    a: dict[str, list[Sampled]], b: dict[str, list[Sampled]]
) -> dict[str, list[Sampled]]:
    """Per key, the first :data:`SAMPLE` of both samples."""
    out = {key: list(items) for key, items in a.items()}
    for key, items in b.items():
        out[key] = _first([*out.get(key, ()), *items])
    return out


class Tally:
    """Adds up a run's entries (see the module); :meth:`partial` gives what it holds.

    Args:
        fail_on: what fails the run (``check``'s ``--fail-on``).
        acceptances: how many ``--accept`` rules the run has (their matches are
            given by index, :meth:`add_matched`).
    """

    def __init__(self, fail_on: Iterable[str], acceptances: int = 0) -> None:
        """Start an empty tally."""
        self._wanted = failing_set(fail_on)
        self._out = Partial(matched=[(0, []) for _ in range(acceptances)])
        self._cells: dict[tuple[str, str, str], int] = {}
        self._cause_ids: dict[str, set[str]] = {}
        # (state, drift, accepted) -> the failing rules (a handful of distinct keys)
        self._rules: dict[tuple[str, str | None, str | None], list[str]] = {}

    def add_asset(self, order: Order, verdict: Verdict) -> None:
        """One final verdict (after cluster outcomes and acceptances)."""
        out = self._out
        out.assets += 1
        key = (verdict.cluster, verdict.account, verdict.state)
        self._cells[key] = self._cells.get(key, 0) + 1
        state, drift, accepted = verdict.state, verdict.drift, verdict.accepted
        if accepted is not None:
            out.accepted += 1
        if drift is not None:
            out.drift += 1
            self._sample(drift, order, verdict)
        if state != "online":
            self._sample(state, order, verdict)
        elif drift is None:
            return
        group = (state, drift, accepted)
        rules = self._rules.get(group)
        if rules is None:
            rules = self._rules[group] = failing_rules(verdict, self._wanted)
        if rules:
            out.failing += len(rules)
            self._first("asset", order, asset_finding, rules[0], verdict)

    def add_cause(self, order: Order, verdict: Verdict, rules: Iterable[str]) -> None:
        """A settled verdict that triggers its cluster's outcome rules (their ids).

        Each asset is given once (a duplicated stream record names the same asset:
        it is kept as a cause but counted once, as ``check`` names it once).
        """
        out = self._out
        cluster = verdict.cluster
        ident = asset_id(verdict)
        seen = self._cause_ids.setdefault(cluster, set())
        sampled = Sampled(order, verdict)
        if ident not in seen:  # a later duplicate record of the same stream: once
            seen.add(ident)
            out.cause_counts[cluster] = out.cause_counts.get(cluster, 0) + 1
            _insert(out.causes.setdefault(cluster, []), sampled)
        for rule in rules:
            key = f"{cluster}\x00{rule}"
            known = out.cause_firsts.get(key)
            if known is None or order < known.order:
                out.cause_firsts[key] = sampled

    def add_health(self, order: Order, failure: HealthFailure) -> None:
        """A ``/healthz`` failure, placed as its asset."""
        self._out.health += 1
        _insert(self._out.health_sample, _Health(order, failure))

    def add_error(self, order: Order, error: ErrorEntry) -> None:
        """A record error (its acceptance, if any, already marked)."""
        self._out.errors += 1
        self._record("record-error", order, error.source, error.accepted)

    def add_ignored(self, order: Order, item: Ignored) -> None:
        """An ignored record (its acceptance, if any, already marked)."""
        self._out.ignored += 1
        self._record("ignored", order, item.source, item.accepted)

    def add_overlap(self, order: Order, overlap: Overlap) -> None:
        """One overlapping pair (its acceptance, if any, already marked)."""
        out = self._out
        out.overlaps += 1
        if overlap.accepted is not None:
            out.accepted += 1
        elif "overlap" in self._wanted:
            out.failing += 1
            self._first("overlap", order, overlap_finding, overlap)

    def add_matched(self, acceptances: Sequence[Acceptance]) -> None:
        """What each acceptance matched (``apply_acceptances``' list, in rule order)."""
        for index, acceptance in enumerate(acceptances):
            if acceptance.matched:
                count, names = self._out.matched[index]
                self._out.matched[index] = (
                    count + len(acceptance.matched),
                    sorted({*names, *acceptance.matched})[:SAMPLE],
                )

    def partial(self) -> Partial:
        """What the tally holds, to travel and merge."""
        self._out.cells = [(*key, n) for key, n in sorted(self._cells.items())]
        return self._out

    def _record(
        self, kind: str, order: Order, source: str, accepted: str | None
    ) -> None:
        out = self._out
        if accepted is not None:
            out.accepted += 1
        elif kind in self._wanted:
            out.failing += 1
            self._first(kind, order, record_finding, kind, source)

    def _sample(self, rule: str, order: Order, verdict: Verdict) -> None:
        rules = self._out.rules
        rules[rule] = rules.get(rule, 0) + 1
        items = self._out.samples.get(rule)
        if items is None:
            items = self._out.samples[rule] = []
        _insert(items, Sampled(order, verdict))

    def _first(
        self,
        kind: str,
        order: Order,
        word: Callable[..., tuple[str, str]],
        *args: object,
    ) -> None:
        known = self._out.first.get(kind)
        if known is None or order < known.order:
            self._out.first[kind] = Finding(order, *word(*args))


def _insert(items: list[_Ordered], item: _Ordered) -> None:
    """Keep ``items`` the first :data:`SAMPLE` by order, with ``item`` if it belongs."""
    if len(items) >= SAMPLE and not item.order < items[-1].order:
        return
    bisect.insort(items, item, key=_ORDER)
    del items[SAMPLE:]


class AcceptanceCount(msgspec.Struct, frozen=True, kw_only=True):
    """An ``--accept RULE:ASSET``: how many findings it covers, and the first names."""

    rule: str
    asset: str
    matched: int
    sample: tuple[str, ...] = ()


class RunSummary(msgspec.Struct, frozen=True, kw_only=True):
    """A run in aggregates: the scan's ``summary.json`` (see ``docs/spark.md``).

    Attributes:
        verdict: the text report's verdict line.
        failing: how many findings fail the run.
        main_finding: the first of them, with the server's words (``None``: none).
        outcomes: each cluster's outcome (cluster mode), as ``check``'s ``clusters``,
            naming the first :data:`SAMPLE` assets that cause it.
        causes: per cluster, how many assets cause its outcome.
        summary: ``check``'s counts.
        target, catalogue, inventory: as in ``check``'s report.
        clusters: per cluster, the assets per state.
        accounts: per (cluster, account), the assets per state.
        findings: per rule (a state but online, or a drift flag), how many assets
            have it and the first :data:`SAMPLE` in report order.
        health: how many assets fail ``/healthz``, and the first of those failures.
        acceptances: what each ``--accept`` covered.
    """

    verdict: str
    failing: int
    main_finding: dict[str, str] | None
    outcomes: list[ClusterOutcome]
    causes: dict[str, int]
    summary: Summary
    target: TargetInfo
    catalogue: CatalogueInfo
    inventory: InventoryInfo
    clusters: dict[str, dict[str, int]]
    accounts: list[dict[str, Any]]
    findings: dict[str, dict[str, Any]]
    health: dict[str, Any]
    acceptances: list[AcceptanceCount]


def summarize(
    whole: Partial,
    *,
    outcomes: Sequence[ClusterOutcome],
    causes: Mapping[str, int],
    acceptances: Sequence[tuple[str, str]],
    target: TargetInfo,
    catalogue: CatalogueInfo,
    inventory: InventoryInfo,
) -> RunSummary:
    """The summary of a whole run from its tally and its clusters' outcomes.

    ``outcomes`` already carry their acceptances (and ``whole.matched`` counts the
    clusters those matched), and name at least the first :data:`SAMPLE` assets that
    cause each (``causes``: how many there are); ``acceptances`` are the run's
    ``(rule, pattern)`` pairs.
    """
    states: dict[str, int] = dict.fromkeys(STATES, 0)
    clusters: dict[str, dict[str, int]] = {}
    accounts: dict[tuple[str, str], dict[str, int]] = {}
    for cluster, account, state, count in whole.cells:
        states[state] += count
        clusters.setdefault(cluster, dict.fromkeys(STATES, 0))[state] += count
        accounts.setdefault((cluster, account), dict.fromkeys(STATES, 0))[state] += (
            count
        )
    summary = Summary(
        records=whole.assets + whole.errors + whole.ignored,
        assets=whole.assets,
        errors=whole.errors,
        ignored=whole.ignored,
        overlaps=whole.overlaps,
        accepted=whole.accepted,
        **states,
    )
    failing_clusters = [c for c in outcomes if c.outcome != "ok" and c.accepted is None]
    firsts = [cluster_finding(c) for c in failing_clusters]
    failing = len(failing_clusters) + whole.failing
    if whole.assets == 0:
        failing += 1
        firsts.append(nothing_to_judge(summary))
    firsts += [
        (whole.first[kind].finding, whole.first[kind].reason)
        for kind in _KINDS
        if kind in whole.first
    ]
    return RunSummary(
        verdict=verdict_words(
            [c for c in outcomes if c.outcome != "ok"],
            whole.health,
            summary,
            whole.drift,
        ),
        failing=failing,
        main_finding=(
            {"finding": firsts[0][0], "reason": firsts[0][1]} if firsts else None
        ),
        outcomes=[
            msgspec.structs.replace(c, assets=c.assets[:SAMPLE]) for c in outcomes
        ],
        causes={c.cluster: causes.get(c.cluster, 0) for c in outcomes},
        summary=summary,
        target=target,
        catalogue=catalogue,
        inventory=inventory,
        clusters={c: clusters[c] for c in sorted(clusters)},
        accounts=[
            {"cluster": c, "account": a, **counts_of}
            for (c, a), counts_of in sorted(accounts.items())
        ],
        findings={
            rule: {
                "count": whole.rules[rule],
                "sample": [s.verdict for s in items],
            }
            for rule, items in sorted(whole.samples.items())
        },
        health={
            "count": whole.health,
            "sample": [h.failure for h in whole.health_sample],
        },
        acceptances=[
            AcceptanceCount(
                rule=rule, asset=pattern, matched=count, sample=tuple(names)
            )
            for (rule, pattern), (count, names) in zip(
                acceptances, whole.matched, strict=True
            )
        ],
    )


def summary_of_report(report: Report, fail_on: Iterable[str]) -> RunSummary:
    """The :class:`RunSummary` of a ``check`` report (its lists are in report order)."""
    tally = Tally(fail_on, len(report.accepted))
    for index, verdict in enumerate(report.assets):
        tally.add_asset((index,), verdict)
    for index, failure in enumerate(report.health):
        tally.add_health((index,), failure)
    for index, error in enumerate(report.errors):
        tally.add_error((index,), error)
    for index, item in enumerate(report.ignored):
        tally.add_ignored((index,), item)
    for index, overlap in enumerate(report.overlaps):
        tally.add_overlap((index,), overlap)
    tally.add_matched(report.accepted)
    return summarize(
        tally.partial(),
        outcomes=report.clusters,
        causes={c.cluster: len(c.assets) for c in report.clusters},
        acceptances=[(a.rule, a.asset) for a in report.accepted],
        target=report.target,
        catalogue=report.catalogue,
        inventory=report.inventory,
    )
