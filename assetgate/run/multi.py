"""One inventory judged against many releases at once: :func:`~assetgate.run.matrix.check_matrix`'s engine.

Each record is read, hashed and accounted for once, and each asset is judged against
every release with a memo (:func:`~assetgate.judge.gate.judge`): the decode once per release
line, the config checks once per set of checks. A verdict that equals the previous
release's is kept as the same object, so what follows can tell in one comparison where
nothing changed: a stream is settled with its consumers again only where one of them
changed. An account's overlaps are looked for once, among every stream it keeps on some
release; each release takes those of the streams it keeps. Every step is the
single-target pipeline's own function (``settle``, ``find_overlaps``,
``cluster_outcomes``, ``apply_acceptances``, ``finding_rules``), so each release's
result equals :func:`~assetgate.run.check.check`'s.

Size: over the ~400-line guide because one engine: decoding and judging shared across
releases and the light per-release tally only make sense together.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Final, NamedTuple

import msgspec

from assetgate.inventory.read import Asset
from assetgate.judge.gate import STATES, Judged, bind_many, settle
from assetgate.judge.outcomes import judge_clusters, mark_unavailable
from assetgate.judge.rules import failing_set, rules_failing
from assetgate.judge.subjects import KEEP_SUBJECTS, find_overlaps
from assetgate.run.check import count_findings, counted, iter_records
from assetgate.run.collect import (
    DEFAULT_CLUSTER,
    AccountKey,
    CatalogueInfo,
    Collector,
    Collision,
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

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable, Sequence

    from assetgate.catalogue.levels import Catalogue, ServerProfile
    from assetgate.inventory.read import Ignored, RecordError
    from assetgate.judge.gate import Mode, Verdict
    from assetgate.judge.outcomes import ClusterOutcome
    from assetgate.run.progress import Progress

__all__ = ["Release", "judge_releases"]

StreamKey = tuple[str, str, str]
Kept = list[tuple[str, tuple[str, ...]]]
# an overlap, with per release whether each of its two streams keeps its subjects
Found = tuple[Collision, list[bool], list[bool]]


class Release(NamedTuple):
    """What one release does with the inventory.

    ``report`` is light: its ``assets`` are only the verdicts that are not online or
    carry a drift flag (settled, cluster outcomes and acceptances applied); its
    summary counts every asset. ``counts`` holds the states per cluster.
    """

    report: Report
    counts: dict[str, Counter[str]]
    failing: int


_BATCH: Final = 4096  # records read before they are judged


def judge_releases(
    items: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
    profiles: Sequence[ServerProfile],
    mode: Mode,
    cat: Catalogue,
    *,
    rules: list[tuple[str, str]],
    fail_on: tuple[str, ...],
    light: bool = False,
    progress: Progress | None = None,
) -> Iterator[Release]:
    """Judge the inventory once for all ``profiles``; yield each one's result in order.

    ``light``: of the assets a cluster outcome makes unavailable, a report lists only
    those with a drift flag (they are counted all the same, and fail the run); for
    the matrix, which folds the others into the cluster's finding. Without effect
    when ``rules`` accept something (an acceptance may name any of them).
    """
    judged = _Judged(cat, light=light and not rules, releases=len(profiles))
    phase = f"reading and judging against {len(profiles)} releases"
    judge = bind_many(profiles, mode, cat)
    records = counted(iter_records(items), progress, phase)
    # read a batch, then judge it: each keeps its own code and data warm (about 2 %
    # of a 300k matrix, averaged over nine runs each)
    while batch := list(itertools.islice(records, _BATCH)):
        for record in batch:
            judged.add(record, judge)
    settled: _Settled | None = None
    for index, profile in enumerate(profiles):
        if progress is not None:
            progress(
                f"settling release {index + 1} of {len(profiles)}", judged.book.records
            )
        settled = _Settled(judged, index, profile, settled)
        yield _release(
            judged, settled, profile, mode=mode, cat=cat, rules=rules, fail_on=fail_on
        )


class _Judged:
    """Every asset judged against every release; the records accounted for."""

    def __init__(self, cat: Catalogue, *, light: bool, releases: int) -> None:
        self.releases = releases
        self.book = Collector({}, "single", cat)
        self.streams: dict[StreamKey, list[Judged]] = {}
        self.duplicates: list[list[Judged]] = []
        self.consumers: defaultdict[StreamKey, list[list[Judged]]] = defaultdict(list)
        # per stream key: where its stream's or a consumer's judgement changes (a bit
        # per release, as judge_many answers)
        self.changes: dict[StreamKey, int] = {}
        self.stream_changes: dict[StreamKey, int] = {}  # the stream's own
        # the consumers judged differently on some release, or offline on the first
        self.unsteady: list[tuple[StreamKey, list[Judged]]] = []
        self.tally = _Tally(light=light)
        self._overlaps: dict[
            tuple[tuple[str, str], tuple[tuple[str, tuple[str, ...]], ...]],
            list[tuple[str, str, str, str]],
        ] = {}

    def add(
        self,
        record: Asset | RecordError | Ignored,
        judge: Callable[[Asset], tuple[list[Judged], int]],
    ) -> None:
        """Account for ``record``; an asset is judged by ``judge`` (``bind_many``)."""
        if not isinstance(record, Asset):
            self.book.add(record)
            return
        self.book.records += 1
        self.book.hashes.append(asset_hash(record))
        per, changed = judge(record)  # one object per answer
        key = (record.cluster, record.account, record.stream)
        if record.kind == "stream":
            if key in self.streams:
                self.duplicates.append(per)
                return  # not in the key's entry: a duplicate is looked at on its own
            self.streams[key] = per
            self.stream_changes[key] = changed
        else:
            self.consumers[key].append(per)
            if changed != 1 or per[0].verdict.state == "offline":
                self.unsteady.append((key, per))  # may be offline somewhere
        self.changes[key] = self.changes.get(key, 0) | changed

    @functools.cached_property
    def keys(self) -> list[StreamKey]:
        """Streams and orphaned consumers' streams, in report order."""
        orphans = [key for key in self.consumers if key not in self.streams]
        return sorted([*self.streams, *orphans])

    @functools.cached_property
    def stream_keys(self) -> list[StreamKey]:
        """The streams' keys, sorted."""
        streams = self.streams
        return [key for key in self.keys if key in streams]

    @functools.cached_property
    def keys_by_account(self) -> dict[tuple[str, str], list[StreamKey]]:
        """The streams' keys per account, sorted."""
        out: dict[tuple[str, str], list[StreamKey]] = {}
        for key in self.stream_keys:
            out.setdefault((key[0], key[1]), []).append(key)
        return out

    @functools.cached_property
    def layout(self) -> list[_Entry]:
        """Per stream key, in report order: its judgements and where they change."""
        out: list[_Entry] = []
        for key in self.keys:
            row = self.streams.get(key)
            # name order, input order among equal names: as settle_key (run.collect)
            members = sorted(self.consumers.get(key, ()), key=_first_name)
            out.append(_Entry(key, row, members, self.changes[key]))
        return out

    @functools.cached_property
    def changed_at(self) -> dict[int, list[int]]:
        """Per release: the positions in :attr:`layout` whose judgements change on it."""
        out: defaultdict[int, list[int]] = defaultdict(list)
        for position, entry in enumerate(self.layout):
            for index in _set_bits(entry.changes):
                out[index].append(position)
        return out

    def stopping(self, index: int) -> set[int]:
        """The positions in :attr:`layout` with a consumer offline on release ``index``.

        Only there does settling word something with the release's offline wording
        (the stream it stops), so a change of wording changes nothing else. A
        consumer judged alike on every release and not offline on the first is not
        offline on any.
        """
        position_of = self.position_of
        return {
            position_of[key]
            for key, row in self.unsteady
            if row[index].verdict.state == "offline"
        }

    @functools.cached_property
    def clusters(self) -> list[str]:
        """The clusters of the assets."""
        return sorted({key[0] for key in self.keys})

    @functools.cached_property
    def position_of(self) -> dict[StreamKey, int]:
        """Each stream key's position in :attr:`layout`."""
        return {entry.key: position for position, entry in enumerate(self.layout)}

    @functools.cached_property
    def collisions(self) -> dict[AccountKey, list[Found] | None]:
        """Per account: its overlaps on any release, with where their streams keep subjects.

        :func:`find_overlaps` over every stream the account keeps on some release, in
        key order. A row names a pair and depends only on the two streams' subjects
        and order, and each release keeps a subsequence of these streams in the same
        order, so a release's overlaps are the rows whose two streams it keeps. None
        for an account with a stream whose subjects differ between the releases that
        keep it: it is looked for release by release.
        """
        # what decides a stream listed twice is its last record (as kept_by_account)
        last = {_stream_key(row): row for row in self.duplicates}
        everywhere = [True] * self.releases
        out: dict[AccountKey, list[Found] | None] = {}
        for account, keys in self.keys_by_account.items():
            union: Kept = []
            keeps: dict[str, list[bool]] = {}
            for key in keys:
                row = self.streams[key]
                if key in last:
                    kept = [j.verdict.state in KEEP_SUBJECTS for j in last[key]]
                    found = itertools.compress(row, kept)
                else:  # one test per run of one judgement (the set bits of its changes)
                    firsts = [row[i] for i in _set_bits(self.stream_changes[key])]
                    flags = [j.verdict.state in KEEP_SUBJECTS for j in firsts]
                    if False in flags:  # kept on some releases only: say which
                        kept = [j.verdict.state in KEEP_SUBJECTS for j in row]
                    else:
                        kept = everywhere
                    found = itertools.compress(firsts, flags)
                if True not in kept:
                    continue
                subjects = {j.subjects for j in found}
                if len(subjects) > 1:
                    break
                union.append((key[2], subjects.pop()))
                keeps[key[2]] = kept
            else:
                out[account] = [
                    (found, keeps[found[0]], keeps[found[2]])
                    for found in find_overlaps(union)
                ]
                continue
            out[account] = None
        return out

    def overlaps(
        self, account: tuple[str, str], streams: list[tuple[str, tuple[str, ...]]]
    ) -> list[tuple[str, str, str, str]]:
        """:func:`find_overlaps` of an account's kept streams, once per set of them."""
        key = (account, tuple(streams))
        found = self._overlaps.get(key)
        if found is None:
            found = self._overlaps[key] = find_overlaps(streams)
        return found

    def found(self, index: int) -> dict[AccountKey, list[Collision]]:
        """Release ``index``'s overlaps per account: those of the streams it keeps."""
        out: dict[AccountKey, list[Collision]] = {}
        at = _At(self.streams, index)
        duplicates = [row[index] for row in self.duplicates]
        for account, rows in self.collisions.items():
            if rows is None:  # subjects differ between releases: this one's own
                kept = kept_by_account(self.keys_by_account[account], at, duplicates)
                if account in kept:
                    out[account] = self.overlaps(account, kept[account])
            else:
                out[account] = [found for found, a, b in rows if a[index] and b[index]]
        return out

    @functools.cached_property
    def digest(self) -> str:
        """The inventory's digest (order-independent)."""
        return inventory_digest(self.book.hashes)


def _set_bits(mask: int) -> list[int]:
    """The positions of the bits set in ``mask``, lowest first."""
    out: list[int] = []
    while mask:
        lowest = mask & -mask
        out.append(lowest.bit_length() - 1)
        mask ^= lowest
    return out


class _Entry(NamedTuple):
    """A stream key's judgements per release: the stream's, its consumers' (by name)."""

    key: StreamKey
    row: list[Judged] | None
    members: list[list[Judged]]
    changes: int  # bit i: a judgement changes on release i (release 0 counts)


def _settle(entry: _Entry, index: int, profile: ServerProfile) -> list[Verdict]:
    """:func:`settle` of ``entry`` on release ``index``."""
    stream = None if entry.row is None else entry.row[index]
    return settle(stream, [c[index] for c in entry.members], profile)


def _first_name(row: list[Judged]) -> str:
    return row[0].verdict.name


def _stream_key(row: list[Judged]) -> StreamKey:
    verdict = row[0].verdict
    return (verdict.cluster, verdict.account, verdict.stream)


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
        self.words: dict[str, str] | None = words
        layout = judged.layout
        if previous is None:
            self.outs = [_settle(entry, index, profile) for entry in layout]
        else:  # settled again only where something changed since the previous release
            self.outs = outs = previous.outs.copy()
            if previous.words == words:
                moved: Iterable[int] = judged.changed_at.get(index, ())
            else:  # and where a consumer stops its stream (the new words say it)
                moved = {*judged.changed_at.get(index, ()), *judged.stopping(index)}
            for position in moved:
                outs[position] = _settle(layout[position], index, profile)
        duplicates = [row[index] for row in judged.duplicates]
        self.duplicates = duplicates
        # the verdicts in report order, in parts: one per stream key, one per duplicate
        self.parts = [*self.outs, *([j.verdict] for j in duplicates)]
        self.position_of = judged.position_of
        self.found = judged.found(index)


class _States(Mapping[StreamKey, str]):
    """Each stream's state on one release, as the overlaps see it.

    The last record's state when a stream is listed twice. Looked up only for the
    streams an overlap names.
    """

    def __init__(self, settled: _Settled) -> None:
        self.settled = settled
        self.twice = {
            (j.verdict.cluster, j.verdict.account, j.verdict.name): j.verdict.state
            for j in settled.duplicates
        }

    def __getitem__(self, key: StreamKey) -> str:
        state = self.twice.get(key)
        if state is not None:
            return state
        position = self.settled.position_of.get(key)
        if position is not None:
            verdicts = self.settled.outs[position]
            if verdicts and verdicts[0].kind == "stream":
                return verdicts[0].state
        raise KeyError(key)

    def __iter__(self) -> Iterator[StreamKey]:
        raise NotImplementedError  # looked up only

    def __len__(self) -> int:
        raise NotImplementedError  # looked up only


class _Part(NamedTuple):
    """What one release makes of one part of the verdicts, given its cluster's fate."""

    shown: list[Verdict]
    counts: tuple[tuple[str, str, int], ...]
    failing: int


class _Span:
    """A run of consecutive parts of one cluster, and what the last release made of it."""

    def __init__(self, cluster: str, start: int) -> None:
        self.cluster = cluster
        self.start = start
        self.end = start
        self.size = 0  # its verdicts
        self.moved: list[int] = []  # the positions whose part is new on this release
        # the fate (its cluster's down reason) the result below was made for
        self.fate: tuple[str | None] | None = None
        # the fate the parts' own results (_Tally.parts) hold for; None: they are stale
        self.parts_fate: tuple[str | None] | None = None
        self.shown: list[Verdict] = []
        self.counts: Counter[str] = Counter()
        self.failing = 0
        self.candidates: list[Verdict] | None = None
        self.drifting: list[Verdict] | None = None


class _Tally:
    """The verdicts of each release, counted run of parts by run of parts.

    A part is a stream key's verdicts or a duplicate's; a span is a run of parts of
    one cluster. A span none of whose parts is new since the release before, in a
    cluster whose fate is the same, is not looked at again: its counts carry over.
    Otherwise only its new parts are, while the fate stays; in light mode, a down
    cluster's span is counted as a whole (every asset unavailable, the drifting ones
    listed), so that a fate switching does not walk its parts one by one.
    """

    def __init__(self, *, light: bool) -> None:
        """``light``: see :func:`judge_releases`."""
        self.light = light
        # the marked (unavailable) verdicts of objects that releases share
        self.marked: dict[tuple[int, str], tuple[Verdict, Verdict]] = {}
        self.failing_of: dict[tuple[str, str | None, str | None], int] = {}
        self.seen: list[list[Verdict]] = []  # the parts of the release taken in
        self.spans: list[_Span] = []
        self.span_of: list[_Span] = []  # per position
        self.parts: list[_Part | None] = []  # per position, for its span's parts_fate
        # per position: its part's verdicts that are not online, that drift
        self.not_online: list[list[Verdict]] = []
        self.drifting: list[list[Verdict]] = []
        self.counts: dict[str, Counter[str]] = {}
        self.failing = 0
        self.assets = 0

    def take(self, parts: list[list[Verdict]]) -> None:
        """Take in a release's parts, and which of them are new since the release before."""
        if len(parts) != len(self.seen):  # the first release
            self._split(parts)
            moved: Iterable[int] = range(len(parts))
        else:
            moved = itertools.compress(
                range(len(parts)), map(operator.is_not, parts, self.seen)
            )
        span_of = self.span_of
        not_online = self.not_online
        drifting = self.drifting
        for position in moved:
            span = span_of[position]
            span.moved.append(position)
            span.candidates = span.drifting = None
            part = parts[position]
            not_online[position] = [v for v in part if v.state != "online"]
            drifting[position] = [v for v in part if v.drift is not None]
        self.seen = parts

    def _split(self, parts: list[list[Verdict]]) -> None:
        """Cut the parts into spans, one per run of parts of one cluster.

        Every part holds a verdict: a stream key's has its stream's or a consumer's.
        """
        self.spans = []
        self.span_of = []
        self.parts = [None] * len(parts)
        self.not_online = [[] for _ in parts]
        self.drifting = [[] for _ in parts]
        self.counts = {}
        self.failing = 0
        self.assets = sum(map(len, parts))
        span: _Span | None = None
        for position, part in enumerate(parts):
            cluster = part[0].cluster
            if span is None or cluster != span.cluster:
                span = _Span(cluster, position)
                self.spans.append(span)
                self.counts.setdefault(cluster, Counter())
            span.end = position + 1
            span.size += len(part)
            self.span_of.append(span)

    def candidates(self) -> list[Verdict]:
        """The verdicts taken in that are not online (only they can bring a cluster down)."""
        out: list[Verdict] = []
        for span in self.spans:
            if span.candidates is None:
                span.candidates = _joined(self.not_online[span.start : span.end])
            out.extend(span.candidates)
        return out

    def release(
        self, down: Mapping[str, str], wanted: frozenset[str]
    ) -> tuple[list[Verdict], dict[str, Counter[str]], int]:
        """The shown verdicts, the counts per cluster and state, the failing ones."""
        shown: list[Verdict] = []
        for span in self.spans:
            reason = down.get(span.cluster) if down else None
            if span.moved or span.fate != (reason,):
                per = self.counts[span.cluster]
                per.subtract(span.counts)
                self.failing -= span.failing
                if reason is not None and self.light:
                    self._down(span, reason, wanted)
                else:
                    self._by_part(span, reason, wanted)
                per.update(span.counts)
                self.failing += span.failing
                span.fate = (reason,)
                span.moved = []
            shown.extend(span.shown)
        out = {
            cluster: Counter({state: n for state, n in per.items() if n})
            for cluster, per in self.counts.items()
        }
        return shown, out, self.failing

    def _down(self, span: _Span, reason: str, wanted: frozenset[str]) -> None:
        """Light mode, ``span``'s cluster down: all unavailable, the drifting listed."""
        if span.drifting is None:
            span.drifting = _joined(self.drifting[span.start : span.end])
        span.shown = mark_unavailable(span.drifting, reason, self.marked)
        span.counts = Counter({"unavailable": span.size})
        span.failing = self.failing_of_verdicts(span.shown, wanted)
        quiet = span.size - len(span.shown)  # unavailable assets counted, not listed
        if quiet:
            span.failing += quiet * self._fails("unavailable", None, None, wanted)
        span.parts_fate = None  # the parts' own results are not kept up to date

    def _by_part(self, span: _Span, reason: str | None, wanted: frozenset[str]) -> None:
        """``span`` part by part: again only its new parts, where its fate is the same."""
        known = self.parts
        moved: Iterable[int] = span.moved
        if span.parts_fate != (reason,):
            moved = range(span.start, span.end)
            span.counts = Counter()
            span.failing = 0
            known[span.start : span.end] = [None] * (span.end - span.start)
        counts = span.counts
        for position in moved:
            old = known[position]
            if old is not None:
                span.failing -= old.failing
                for _, state, n in old.counts:
                    counts[state] -= n
            new = known[position] = self._part(self.seen[position], reason, wanted)
            span.failing += new.failing
            for _, state, n in new.counts:
                counts[state] += n
        span.parts_fate = (reason,)
        span.shown = [
            v
            for new in known[span.start : span.end]
            if new is not None and new.shown
            for v in new.shown
        ]

    def _part(
        self, part: list[Verdict], reason: str | None, wanted: frozenset[str]
    ) -> _Part:
        """What a release makes of ``part`` (``reason``: its cluster is down)."""
        if reason is None:
            shown = [v for v in part if v.state != "online" or v.drift is not None]
            counts = _state_counts(part)
        else:
            verdicts = mark_unavailable(part, reason, self.marked)
            shown = [v for v in verdicts if v.state != "online" or v.drift is not None]
            counts = _state_counts(verdicts)
        failing = self.failing_of_verdicts(shown, wanted)
        return _Part(shown, counts, failing)

    def failing_of_verdicts(
        self, verdicts: list[Verdict], wanted: frozenset[str]
    ) -> int:
        """How many findings of ``verdicts`` fail the run."""
        fails = self._fails
        return sum(fails(v.state, v.drift, v.accepted, wanted) for v in verdicts)

    def _fails(
        self,
        state: str,
        drift: str | None,
        accepted: str | None,
        wanted: frozenset[str],
    ) -> int:
        """How many findings fail the run for a verdict of this state, drift and acceptance.

        That is all :func:`rules_failing` reads; ``wanted`` is the same for a whole
        run, so the answer is kept per (state, drift, acceptance).
        """
        key = (state, drift, accepted)
        found = self.failing_of.get(key)
        if found is None:
            found = self.failing_of[key] = len(
                rules_failing(state, drift, accepted, wanted)
            )
        return found


def _joined(lists: list[list[Verdict]]) -> list[Verdict]:
    """``lists`` end to end."""
    return [v for verdicts in lists for v in verdicts]


def _state_counts(verdicts: list[Verdict]) -> tuple[tuple[str, str, int], ...]:
    """(cluster, state, count) of a part's verdicts (one cluster; mostly one state)."""
    if not verdicts:
        return ()
    cluster = verdicts[0].cluster
    states = [v.state for v in verdicts]
    if states.count(states[0]) == len(states):
        return ((cluster, states[0], len(states)),)
    return tuple((cluster, state, n) for state, n in Counter(states).items())


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
    tally = judged.tally
    tally.take(settled.parts)
    clusters: list[ClusterOutcome] = []
    down: dict[str, str] = {}
    if mode == "cluster":
        # only a verdict that is not online can match a rule
        candidates = tally.candidates()
        clusters, down = judge_clusters(candidates, profile_of, names=judged.clusters)
    wanted = failing_set(fail_on)
    shown, counts, failing = tally.release(down, wanted)
    overlaps = overlap_entries(settled.found, _States(settled))
    book = judged.book
    marked = apply_acceptances(
        shown, overlaps, rules, clusters, errors=book.errors, ignored=book.ignored
    )
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
            assets=tally.assets,
            errors=len(book.errors),
            ignored=len(book.ignored),
            overlaps=len(marked.overlaps),
            accepted=marked.covered,
            **{state: total[state] for state in STATES},
        ),
        clusters=marked.clusters,
        assets=marked.verdicts,
        overlaps=marked.overlaps,
        errors=marked.errors,
        ignored=marked.ignored,
        accepted=marked.accepted,
    )
    if rules:  # an acceptance changes what fails: the assets' findings again
        failing = tally.failing_of_verdicts(report.assets, wanted)
    # the assets' findings are counted above; the others here
    failing += count_findings(msgspec.structs.replace(report, assets=[]), fail_on)
    if "online" in fail_on:  # the light report leaves online assets out
        failing += total["online"]
    return Release(report=report, counts=counts, failing=failing)
