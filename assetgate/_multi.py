"""One inventory judged against many releases at once: :func:`~assetgate.matrix.check_matrix`'s engine.

Each record is read, hashed and accounted for once, and each asset is judged against
every release with a memo (:func:`~assetgate.gate.judge`): the decode once per release
line, the config checks once per set of checks. A verdict that equals the previous
release's is kept as the same object, so what follows can tell in one comparison where
nothing changed: a stream is settled with its consumers again only where one of them
changed, an account's overlaps are looked for again only where the streams that keep
their subjects changed. Every step is the single-target pipeline's own function
(``settle``, ``find_overlaps``, ``cluster_outcomes``, ``apply_acceptances``,
``finding_rules``), so each release's result equals :func:`~assetgate.check.check`'s.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple

import msgspec

from assetgate._collect import (
    DEFAULT_CLUSTER,
    CatalogueInfo,
    Collector,
    InventoryInfo,
    Report,
    Summary,
    TargetInfo,
    apply_acceptances,
    asset_hash,
    inventory_digest,
    kept_by_account,
    overlap_entries,
    target_profile,
)
from assetgate.check import count_findings, iter_records
from assetgate.gate import STATES, Judged, judge_many, settle
from assetgate.inventory import Asset
from assetgate.outcomes import cluster_outcomes
from assetgate.subjects import find_overlaps

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Sequence

    from assetgate.gate import Mode, Verdict
    from assetgate.inventory import Ignored, RecordError
    from assetgate.levels import Catalogue, ServerProfile
    from assetgate.outcomes import ClusterOutcome

__all__ = ["Release", "judge_releases"]

StreamKey = tuple[str, str, str]
Kept = dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]]


class Release(NamedTuple):
    """What one release does with the inventory.

    ``report`` is light: its ``assets`` are only the verdicts that are not online or
    carry a drift flag (settled, cluster outcomes and acceptances applied); its
    summary counts every asset. ``counts`` holds the states per cluster.
    """

    report: Report
    counts: dict[str, Counter[str]]
    failing: int


def judge_releases(
    items: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
    profiles: Sequence[ServerProfile],
    mode: Mode,
    cat: Catalogue,
    *,
    rules: list[tuple[str, str]],
    fail_on: tuple[str, ...],
) -> Iterator[Release]:
    """Judge the inventory once for all ``profiles``; yield each one's result in order."""
    judged = _Judged(len(profiles), cat)
    for record in iter_records(items):
        judged.add(record, profiles, mode, cat)
    settled: _Settled | None = None
    for index, profile in enumerate(profiles):
        settled = _Settled(judged, index, profile, settled)
        yield _release(
            judged, settled, profile, mode=mode, cat=cat, rules=rules, fail_on=fail_on
        )


class _Judged:
    """Every asset judged against every release; the records accounted for."""

    def __init__(self, releases: int, cat: Catalogue) -> None:
        self.releases = releases
        self.book = Collector({}, "single", cat)
        self.streams: dict[StreamKey, list[Judged]] = {}
        self.duplicates: list[list[Judged]] = []
        self.consumers: defaultdict[StreamKey, list[list[Judged]]] = defaultdict(list)
        self._overlaps: dict[
            tuple[tuple[str, str], tuple[tuple[str, tuple[str, ...]], ...]],
            list[tuple[str, str, str, str]],
        ] = {}

    def add(
        self,
        record: Asset | RecordError | Ignored,
        profiles: Sequence[ServerProfile],
        mode: Mode,
        cat: Catalogue,
    ) -> None:
        if not isinstance(record, Asset):
            self.book.add(record)
            return
        self.book.records += 1
        self.book.hashes.append(asset_hash(record))
        per: list[Judged] = []
        previous: Judged | None = None
        for current in judge_many(record, profiles, mode, cat):
            if (
                previous is not None
                and current is not previous
                and _alike(previous, current)
            ):
                current = previous  # noqa: PLW2901 - one object per answer
            per.append(current)
            previous = current
        key = (record.cluster, record.account, record.stream)
        if record.kind == "stream":
            if key in self.streams:
                self.duplicates.append(per)
            else:
                self.streams[key] = per
        else:
            self.consumers[key].append(per)

    @functools.cached_property
    def keys(self) -> list[StreamKey]:
        """Streams and orphaned consumers' streams, in report order."""
        orphans = [key for key in self.consumers if key not in self.streams]
        return sorted([*self.streams, *orphans])

    @functools.cached_property
    def stream_keys(self) -> list[StreamKey]:
        """The streams' keys, sorted."""
        return sorted(self.streams)

    @functools.cached_property
    def keys_by_account(self) -> dict[tuple[str, str], list[StreamKey]]:
        """The streams' keys per account, sorted."""
        out: dict[tuple[str, str], list[StreamKey]] = {}
        for key in self.stream_keys:
            out.setdefault((key[0], key[1]), []).append(key)
        return out

    @functools.cached_property
    def twice(self) -> set[tuple[str, str]]:
        """The accounts with a stream listed twice."""
        return {
            (row[0].verdict.cluster, row[0].verdict.account) for row in self.duplicates
        }

    def overlaps(
        self, account: tuple[str, str], streams: list[tuple[str, tuple[str, ...]]]
    ) -> list[tuple[str, str, str, str]]:
        """:func:`find_overlaps` of an account's kept streams, once per set of them."""
        key = (account, tuple(streams))
        found = self._overlaps.get(key)
        if found is None:
            found = self._overlaps[key] = find_overlaps(streams)
        return found

    @functools.cached_property
    def digest(self) -> str:
        """The inventory's digest (order-independent)."""
        return inventory_digest(self.book.hashes)


def _alike(a: Judged, b: Judged) -> bool:
    """The same judgement on two releases (the target's name aside)."""
    return a.subjects == b.subjects and a.verdict == msgspec.structs.replace(
        b.verdict, target=a.verdict.target
    )


class _At(Mapping[StreamKey, Judged]):
    """The streams' judgements on one release, as a mapping."""

    def __init__(self, streams: dict[StreamKey, list[Judged]], index: int) -> None:
        self.streams = streams
        self.index = index

    def __getitem__(self, key: StreamKey) -> Judged:
        return self.streams[key][self.index]

    def __iter__(self) -> Iterator[StreamKey]:
        return iter(self.streams)

    def __len__(self) -> int:
        return len(self.streams)


class _Settled:
    """One release's verdicts in report order; what did not change is reused."""

    def __init__(
        self,
        judged: _Judged,
        index: int,
        profile: ServerProfile,
        previous: _Settled | None,
    ) -> None:
        # settle words a stopped stream with the release's offline wording
        words: dict[str, str] | None = profile.line.offline.get(
            profile.switches.offline
        )
        reuse = previous is not None and previous.words == words
        self.words: dict[str, str] | None = words
        self.by_key: dict[StreamKey, list[Verdict]] = {}
        verdicts: list[Verdict] = []
        consumers_of = judged.consumers
        for key in judged.keys:
            row = judged.streams.get(key)
            members = consumers_of.get(key, ())
            if (
                reuse
                and previous is not None
                and (row is None or row[index] is row[index - 1])
                and all(c[index] is c[index - 1] for c in members)
            ):  # nothing changed since the previous release
                out = previous.by_key[key]
            else:
                stream = None if row is None else row[index]
                consumers = [c[index] for c in members]
                if len(consumers) > 1:
                    consumers.sort(key=_by_name)
                out = settle(stream, consumers, profile)
            self.by_key[key] = out
            verdicts.extend(out)
        duplicates = [row[index] for row in judged.duplicates]
        verdicts.extend(j.verdict for j in duplicates)
        self.verdicts = verdicts
        self.duplicates = duplicates
        # the streams that keep their subjects, again only for accounts where a
        # stream's judgement changed (or one is listed twice)
        at = _At(judged.streams, index)
        self.kept: Kept = {}
        for account, keys in judged.keys_by_account.items():
            unchanged = (
                previous is not None
                and account not in judged.twice
                and all(
                    judged.streams[k][index] is judged.streams[k][index - 1]
                    for k in keys
                )
            )
            if unchanged and previous is not None:
                kept = previous.kept.get(account)
            else:
                kept = kept_by_account(keys, at, duplicates).get(account)
            if kept is not None:
                self.kept[account] = kept
        self.found: dict[tuple[str, str], list[tuple[str, str, str, str]]] = {}
        for account, streams in self.kept.items():
            self.found[account] = judged.overlaps(account, streams)

    def states(self) -> dict[StreamKey, str]:
        """Each stream's state as the overlaps see it (the last record's if listed twice)."""
        out: dict[StreamKey, str] = {
            key: verdicts[0].state
            for key, verdicts in self.by_key.items()
            if verdicts and verdicts[0].kind == "stream"
        }
        for judged in self.duplicates:
            verdict = judged.verdict
            out[(verdict.cluster, verdict.account, verdict.name)] = verdict.state
        return out


def _by_name(judged: Judged) -> str:
    return judged.verdict.name


def _release(
    judged: _Judged,
    settled: _Settled,
    profile: ServerProfile,
    *,
    mode: Mode,
    cat: Catalogue,
    rules: list[tuple[str, str]],
    fail_on: tuple[str, ...],
) -> Release:
    profiles = {DEFAULT_CLUSTER: profile}
    profile_of = functools.partial(target_profile, profiles)
    verdicts = settled.verdicts
    clusters: list[ClusterOutcome] = []
    if mode == "cluster":
        # only a verdict that is not online can match a rule; when a cluster goes
        # down, every one of its assets changes: then all verdicts are passed
        candidates = [v for v in verdicts if v.state != "online"]
        _, clusters = cluster_outcomes(candidates, profile_of)
        if any(c.outcome != "ok" for c in clusters):
            verdicts, clusters = cluster_outcomes(verdicts, profile_of)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for verdict in verdicts:
        counts[verdict.cluster][verdict.state] += 1
    overlaps = overlap_entries(settled.found, settled.states())
    shown = [v for v in verdicts if v.state != "online" or v.drift is not None]
    shown, overlaps, accepted, clusters = apply_acceptances(
        shown, overlaps, rules, clusters
    )
    book = judged.book
    total: Counter[str] = Counter()
    for per in counts.values():
        total.update(per)
    report = Report(
        target=TargetInfo(
            version=profile.version.text,
            api_level=profile.api_level,
            mode=mode,
            default=profile.version.text,
        ),
        catalogue=CatalogueInfo(digest=cat.digest),
        inventory=InventoryInfo(digest=judged.digest),
        summary=Summary(
            records=book.records,
            assets=len(verdicts),
            errors=len(book.errors),
            ignored=len(book.ignored),
            overlaps=len(overlaps),
            accepted=sum(1 for v in shown if v.accepted)
            + sum(1 for o in overlaps if o.accepted),
            **{state: total[state] for state in STATES},
        ),
        clusters=clusters,
        assets=shown,
        overlaps=overlaps,
        errors=book.errors,
        ignored=book.ignored,
        accepted=accepted,
    )
    failing = count_findings(report, fail_on)
    if "online" in fail_on:  # the light report leaves online assets out
        failing += total["online"]
    return Release(report=report, counts=dict(counts), failing=failing)
