"""How a check's report is put together: its model and the collector.

:class:`Collector` judges records as they arrive and settles each stream with its
consumers at the end; :func:`assemble` turns the settled :class:`Parts` into the
:class:`Report`: whole-cluster outcomes, the operator's acceptances
(:mod:`assetgate.judge.accept`), the counts. :mod:`assetgate.check` is the public face of
all of this. Over 400 lines because the report model and the collector that fills it
change together.
"""

from __future__ import annotations

import functools
import hashlib
from collections import defaultdict
from typing import TYPE_CHECKING, Final, NamedTuple

import msgspec

from assetgate.inventory.read import (
    Asset,
    Ignored,
    RecordError,
    canonical_head,
    plain_names,
    read_records,
)
from assetgate.judge.accept import Acceptance, apply_acceptances, parse_accept
from assetgate.judge.gate import (
    STATES,
    Judged,
    Mode,
    Verdict,
    judge,
    plan_for,
    settle,
    untargeted,
)
from assetgate.judge.outcomes import (
    ClusterOutcome,
    HealthFailure,
    cluster_outcomes,
    health_failures,
)
from assetgate.judge.subjects import KEEP_SUBJECTS, find_overlaps
from assetgate.wire import DEFAULT_ACCOUNT

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from assetgate.catalogue.levels import Catalogue, ServerProfile
    from assetgate.inventory.read import InventoryEntry
    from assetgate.judge.gate import JudgePlan

AccountKey = tuple[str, str]  # (cluster, account)
StreamKey = tuple[str, str, str]  # (cluster, account, stream)
Collision = tuple[str, str, str, str]  # stream, its subject, other stream, its subject

__all__ = [
    "DEFAULT_CLUSTER",
    "Acceptance",
    "CatalogueInfo",
    "Collector",
    "ErrorEntry",
    "InventoryInfo",
    "LineJudge",
    "Overlap",
    "Parts",
    "Report",
    "Summary",
    "TargetInfo",
    "apply_acceptances",
    "assemble",
    "asset_hash",
    "inventory_digest",
    "kept_by_account",
    "overlap_entries",
    "parse_accept",
    "profile_for",
    "target_info",
    "target_profile",
]

DEFAULT_CLUSTER: Final = "*"


def profile_for(
    profiles: Mapping[str, ServerProfile], cluster: str
) -> ServerProfile | None:
    """The target of a cluster: its own, else the default (``"*"``), else ``None``."""
    return profiles.get(cluster) or profiles.get(DEFAULT_CLUSTER)


def target_profile(
    profiles: Mapping[str, ServerProfile], cluster: str
) -> ServerProfile:
    """:func:`profile_for` of a cluster that has a target (a judged asset's cluster)."""
    found = profile_for(profiles, cluster)
    if found is None:
        msg = f"no target version for cluster {cluster!r}"
        raise KeyError(msg)
    return found


class Hashed(NamedTuple):
    """An asset judged, with the hash its verdict depends on (:func:`asset_hash`)."""

    digest: bytes
    judged: Judged


def judge_record(
    record: InventoryEntry,
    profiles: Mapping[str, ServerProfile],
    mode: Mode,
    cat: Catalogue,
) -> RecordError | Ignored | Hashed:
    """One record as every runner judges it.

    Errors and ignored records pass through; an asset is judged against its cluster's
    target (an error when no target covers it) and hashed.
    """
    if isinstance(record, RecordError | Ignored):
        return record
    profile = profile_for(profiles, record.cluster)
    if profile is None:
        return untargeted(record)
    return Hashed(asset_hash(record), judge(record, profile, mode, cat))


class LineJudge:
    """One inventory line read, judged and hashed, as every runner does it.

    A plain canonical record (:func:`~assetgate.inventory.read.canonical_head`) whose
    config decodes on msgspec's fast path and is plainly fine (the ``finish`` of
    :func:`~assetgate.judge.gate.plan_for`) is judged in one pass, its names taken
    from the decoded config. Any other line is read by :func:`read_records` and each
    of its records judged by :func:`judge_record`, and a differential test holds the
    one pass to that.

    ``streams``: the streams judged so far, by key (the first record of each). A
    consumer of one of them takes its stream's replica count at once when it has none,
    as settling would give it; a runner that sees only part of the input passes none.
    """

    def __init__(
        self,
        profiles: Mapping[str, ServerProfile],
        mode: Mode,
        cat: Catalogue,
        streams: Mapping[StreamKey, Judged] | None = None,
    ) -> None:
        """A line judge against ``profiles`` (one per cluster, ``"*"`` the default)."""
        self.profiles, self.mode, self.cat = profiles, mode, cat
        self.streams: Mapping[StreamKey, Judged] = {} if streams is None else streams
        self._plans: dict[tuple[str, str], JudgePlan | None] = {}

    def __call__(
        self, data: bytes, source: str
    ) -> Sequence[RecordError | Ignored | Hashed]:
        """The judged records of one line's JSON (``data``, from ``line_data``)."""
        found = self.plain(data, source)
        if found is not None:
            return (found,)
        profiles, mode, cat = self.profiles, self.mode, self.cat
        return [
            judge_record(record, profiles, mode, cat)
            for record in read_records(data, source)
        ]

    def plain(self, data: bytes, source: str) -> Hashed | None:
        """A plain line judged in one pass, or ``None``: the general path decides."""
        head = canonical_head(data)
        if head is None:
            return None
        cluster, kind = head.cluster, head.kind
        try:
            plan = self._plans[(cluster, kind)]
        except KeyError:
            profile = profile_for(self.profiles, cluster)
            plan = self._plans[(cluster, kind)] = (
                None
                if profile is None
                else plan_for(profile, self.cat, kind, self.mode)
            )
        if plan is None:
            return None  # no target: the general path says so
        config = bytes(head.config)
        decoded = plan.decode(config)
        if decoded is None:
            return None
        named = plain_names(
            head, decoded.name, "" if kind == "stream" else decoded.durable_name
        )
        if named is None:
            return None
        stream, name = named
        account = head.account or DEFAULT_ACCOUNT
        inherited = None
        if kind == "consumer":
            owner = self.streams.get((cluster, account, stream))
            inherited = None if owner is None else owner.verdict.replicas
        judged = plan.finish(decoded, source, cluster, account, stream, name, inherited)
        if judged is None:
            return None
        return Hashed(_hash(cluster, account, kind, stream, name, config), judged)


class KeySettled(NamedTuple):
    """One stream key settled (:func:`settle_key`)."""

    verdicts: list[Verdict]
    """The stream's verdict first (when there is a stream), then its consumers'."""
    order: list[int]
    """The consumers' input positions, in the order their verdicts follow."""
    state: str | None
    """The stream's state as overlaps see it: its last record's when it is listed
    twice (a duplicate is not settled), else its settled one; ``None``: no stream."""


def settle_key(
    streams: Sequence[Judged], consumers: Sequence[Judged], profile: ServerProfile
) -> KeySettled:
    """One (cluster, account, stream) key settled, as every runner settles it.

    ``streams`` and ``consumers`` come in input order. The first stream record is the
    stream; later ones are duplicates, whose verdicts stay as judged. Consumers are
    settled in name order, input order among equal names.
    """
    if not consumers and len(streams) == 1:  # a stream alone: nothing to settle
        verdict = streams[0].verdict
        return KeySettled([verdict], [], verdict.state)
    order = list(range(len(consumers)))
    ordered = consumers
    if len(consumers) > 1:  # a stable sort: input order among equal names
        order.sort(key=[judged.verdict.name for judged in consumers].__getitem__)
        ordered = [consumers[index] for index in order]
    stream = streams[0] if streams else None
    verdicts = settle(stream, ordered, profile)
    state = None
    if stream is not None:
        state = streams[-1].verdict.state if len(streams) > 1 else verdicts[0].state
    return KeySettled(verdicts, order, state)


class TargetInfo(msgspec.Struct, frozen=True, kw_only=True):
    """The target a report judges against.

    ``version`` is the default target, or the lowest of the per-cluster ones;
    ``clusters`` the per-cluster versions; ``default`` the version for clusters not
    named (``None`` when every cluster is named).
    """

    version: str
    api_level: int | None
    mode: Mode
    clusters: dict[str, str] = msgspec.field(default_factory=dict)
    default: str | None = None


class CatalogueInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Which level catalogue the report used."""

    digest: str


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """Counts: ``records == assets + errors + ignored``; one count per state."""

    records: int
    assets: int
    online: int
    offline: int
    degraded: int
    unloadable: int
    detached: int
    unavailable: int
    errors: int
    ignored: int
    overlaps: int
    accepted: int


class Overlap(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Two streams of one account whose subjects overlap on the target.

    ``offline`` names the side(s) that are offline: they keep their subjects, so the
    overlap holds although the stream does not serve.
    """

    cluster: str
    account: str
    streams: tuple[str, str]
    subjects: tuple[str, str]
    offline: tuple[str, ...] = ()
    accepted: str | None = None


class ErrorEntry(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A record that could not be read (KIP-467: the culprit is named)."""

    source: str
    message: str
    retriable: bool
    accepted: str | None = None


class InventoryInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A digest of the inventory content the verdicts depend on (order-independent)."""

    digest: str


REPORT_FORMAT: Final = "assetgate-report/1"
"""The ``format`` of a report (JSON Schema: ``assetgate schema report``)."""


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """The result of :func:`check`; ``check --format json`` serialises exactly this."""

    format: str = REPORT_FORMAT
    target: TargetInfo
    catalogue: CatalogueInfo
    inventory: InventoryInfo
    summary: Summary
    clusters: list[ClusterOutcome]
    health: list[HealthFailure] = msgspec.field(default_factory=list)
    assets: list[Verdict]
    overlaps: list[Overlap]
    errors: list[ErrorEntry]
    ignored: list[Ignored]
    accepted: list[Acceptance]


class Collector:
    """Judges records as they arrive; settles streams and consumers at the end.

    Used by :func:`check` and by the admission check, which also needs the subjects
    each stream claims.
    """

    def __init__(
        self,
        profiles: dict[str, ServerProfile],
        mode: Mode,
        cat: Catalogue,
        *,
        keep_configs: bool = False,
    ) -> None:
        """A collector judging against ``profiles`` (one per cluster, ``"*"`` the default)."""
        self.profiles = profiles
        self.keep_configs = keep_configs
        self.configs: dict[tuple[str, str, str], bytes] = {}
        self.mode = mode
        self.cat = cat
        self.streams: dict[tuple[str, str, str], Judged] = {}
        self.duplicates: list[Judged] = []
        self.consumers: defaultdict[tuple[str, str, str], list[Judged]] = defaultdict(
            list
        )
        self.errors: list[ErrorEntry] = []
        self.ignored: list[Ignored] = []
        self.records = 0
        self.hashes: list[bytes] = []
        self._sorted_streams: list[tuple[str, str, str]] = []

    def profile(self, cluster: str) -> ServerProfile:
        """The target profile of a cluster (every judged asset's cluster has one)."""
        return target_profile(self.profiles, cluster)

    def add(
        self, record: Asset | RecordError | Ignored, *, counted: bool = False
    ) -> None:
        """Account for one record; judge it if it is an asset."""
        if not counted:
            self.records += 1
        found = judge_record(record, self.profiles, self.mode, self.cat)
        if isinstance(found, RecordError):
            self.errors.append(
                ErrorEntry(
                    source=found.source,
                    message=found.message,
                    retriable=found.retriable,
                )
            )
        elif isinstance(found, Ignored):
            self.ignored.append(found)
        else:
            config = record.config if isinstance(record, Asset) else None
            self.add_judged(found.digest, found.judged, config=config, counted=True)

    def add_judged(
        self,
        digest: bytes,
        judged: Judged,
        *,
        config: bytes | None = None,
        counted: bool = False,
    ) -> None:
        """Account for an asset judged elsewhere (a worker process)."""
        if not counted:
            self.records += 1
        self.hashes.append(digest)
        verdict = judged.verdict
        key = (verdict.cluster, verdict.account, verdict.stream)
        if verdict.kind == "stream":
            if key in self.streams:
                self.duplicates.append(judged)
            else:
                self.streams[key] = judged
                if self.keep_configs and config is not None:
                    self.configs[key] = config
        else:
            self.consumers[key].append(judged)

    def settled(self) -> list[Verdict]:
        """Streams settled with their consumers, in key order (duplicates left out)."""
        verdicts: list[Verdict] = []
        streams, consumers = self.streams, self.consumers
        # consumers without their stream are few: sorting them into the sorted stream
        # keys is close to linear (Timsort merges the runs)
        orphans = [key for key in consumers if key not in streams]
        profiles: dict[str, ServerProfile] = {}  # looked up once per cluster
        for key in sorted(self.stream_keys() + orphans):
            stream = streams.get(key)
            profile = profiles.get(key[0])
            if profile is None:
                profile = profiles[key[0]] = self.profile(key[0])
            settled = settle_key(
                () if stream is None else (stream,), consumers.get(key, ()), profile
            )
            verdicts.extend(settled.verdicts)
        return verdicts

    def stream_keys(self) -> list[tuple[str, str, str]]:
        """The keys of the streams added so far, sorted (sorted once, then reused)."""
        if len(self._sorted_streams) != len(self.streams):
            self._sorted_streams = sorted(self.streams)
        return self._sorted_streams

    def verdicts(self) -> list[Verdict]:
        """Every asset's verdict: :meth:`settled`, then duplicates in input order."""
        return self.settled() + [j.verdict for j in self.duplicates]

    def report(
        self,
        targets: dict[str, str],
        rules: list[tuple[str, str]],
        *,
        verdicts: list[Verdict] | None = None,
        found: Mapping[AccountKey, list[Collision]] | None = None,
    ) -> Report:
        """The report of everything added so far.

        ``verdicts`` (from :meth:`verdicts`) and ``found`` (the collisions of each
        group of :meth:`kept_streams`) may come precomputed, by other processes.
        """
        if verdicts is None:
            verdicts = self.verdicts()
        return assemble(
            Parts(
                records=self.records,
                verdicts=verdicts,
                overlaps=self.overlaps(verdicts, found),
                errors=self.errors,
                ignored=self.ignored,
                hashes=self.hashes,
            ),
            self.profiles,
            self.mode,
            self.cat,
            targets=targets,
            rules=rules,
        )

    def kept_streams(self) -> dict[AccountKey, list[tuple[str, tuple[str, ...]]]]:
        """Per account, in key order: the streams that keep their subjects.

        Offline streams keep them, unloadable ones do not. Settling only turns an
        online or degraded stream offline, so the judged state decides (the last
        record's, when a stream is listed twice), before settling.
        """
        return kept_by_account(self.stream_keys(), self.streams, self.duplicates)

    def overlaps(
        self,
        verdicts: list[Verdict],
        found: Mapping[AccountKey, list[Collision]] | None = None,
    ) -> list[Overlap]:
        """Overlaps between streams of one account that keep their subjects.

        ``found``: the collisions of each account of :meth:`kept_streams` with two
        streams or more, when found elsewhere.
        """
        if found is None:
            found = {
                account: find_overlaps(streams)
                for account, streams in self.kept_streams().items()
            }
        # the states of the streams an overlap names, not of every stream: few
        named = {name for rows in found.values() for row in rows for name in row[::2]}
        states = {
            (v.cluster, v.account, v.name): v.state
            for v in (verdicts if named else ())
            if v.name in named and v.kind == "stream"
        }
        return overlap_entries(found, states)


def kept_by_account(
    keys: Iterable[tuple[str, str, str]],
    streams: Mapping[tuple[str, str, str], Judged],
    duplicates: Iterable[Judged],
) -> dict[AccountKey, list[tuple[str, tuple[str, ...]]]]:
    """Per account, in the order of ``keys``: the streams that keep their subjects.

    Offline streams keep them, unloadable ones do not. Settling only turns an online
    or degraded stream offline, so the judged state decides (the last record's, when a
    stream is listed twice in ``duplicates``), before settling.
    """
    last: dict[tuple[str, str, str], str] = {}
    for judged in duplicates:
        verdict = judged.verdict
        last[(verdict.cluster, verdict.account, verdict.stream)] = verdict.state
    by_account: dict[AccountKey, list[tuple[str, tuple[str, ...]]]] = {}
    account: AccountKey = ("", "")
    kept: list[tuple[str, tuple[str, ...]]] | None = None
    for key in keys:
        judged = streams[key]
        state = last.get(key, judged.verdict.state) if last else judged.verdict.state
        if state in KEEP_SUBJECTS:
            # keys come grouped by account (sorted): look its list up once per run
            if kept is None or key[1] != account[1] or key[0] != account[0]:
                account = (key[0], key[1])
                kept = by_account.get(account)
                if kept is None:
                    kept = by_account[account] = []
            kept.append((key[2], judged.subjects))
    return by_account


def overlap_entries(
    found: Mapping[AccountKey, list[Collision]],
    states: Mapping[tuple[str, str, str], str],
) -> list[Overlap]:
    """The overlaps of the collisions found per account, by account.

    ``states`` holds each stream's state, by (cluster, account, name): a side that is
    ``offline`` is named in the overlap (it keeps its subjects without serving).
    """
    out: list[Overlap] = []
    for (cluster, account), collisions in sorted(found.items()):
        for a, subject_a, b, subject_b in collisions:
            offline = tuple(
                name
                for name in (a, b)
                if states.get((cluster, account, name)) == "offline"
            )
            out.append(
                Overlap(
                    cluster=cluster,
                    account=account,
                    streams=(a, b),
                    subjects=(subject_a, subject_b),
                    offline=offline,
                )
            )
    return out


class Parts(msgspec.Struct, kw_only=True):
    """What a report is assembled from: settled verdicts, overlaps and the rest.

    ``verdicts`` in report order (streams by key, each before its consumers, then
    duplicate stream records in input order); ``overlaps`` by account.
    """

    records: int
    verdicts: list[Verdict]
    overlaps: list[Overlap]
    errors: list[ErrorEntry]
    ignored: list[Ignored]
    hashes: list[bytes]


def target_info(
    profiles: Mapping[str, ServerProfile], targets: Mapping[str, str], mode: Mode
) -> TargetInfo:
    """A report's target: the default, else the lowest version (a rolling upgrade's weakest)."""
    head = profiles.get(DEFAULT_CLUSTER) or min(
        profiles.values(), key=lambda p: (p.version.release, p.version.text)
    )
    return TargetInfo(
        version=head.version.text,
        api_level=head.api_level,
        mode=mode,
        clusters={c: v for c, v in targets.items() if c != DEFAULT_CLUSTER},
        default=targets.get(DEFAULT_CLUSTER),
    )


def assemble(
    parts: Parts,
    profiles: dict[str, ServerProfile],
    mode: Mode,
    cat: Catalogue,
    *,
    targets: dict[str, str],
    rules: list[tuple[str, str]],
) -> Report:
    """The report: whole-cluster outcomes, acceptances and counts over the parts."""
    verdicts, overlaps = parts.verdicts, parts.overlaps
    clusters: list[ClusterOutcome] = []
    if mode == "cluster":
        verdicts, clusters = cluster_outcomes(
            verdicts, functools.partial(target_profile, profiles)
        )
    health = health_failures(
        verdicts, mode, functools.partial(target_profile, profiles)
    )
    marked = apply_acceptances(
        verdicts, overlaps, rules, clusters, errors=parts.errors, ignored=parts.ignored
    )
    verdicts, overlaps, accepted, clusters, errors, ignored = marked
    counts = dict.fromkeys(STATES, 0)
    for verdict in verdicts:
        counts[verdict.state] += 1
    return Report(
        target=target_info(profiles, targets, mode),
        catalogue=CatalogueInfo(digest=cat.digest),
        inventory=InventoryInfo(digest=inventory_digest(parts.hashes)),
        summary=Summary(
            records=parts.records,
            assets=len(verdicts),
            errors=len(parts.errors),
            ignored=len(parts.ignored),
            overlaps=len(overlaps),
            accepted=marked.covered,
            **counts,
        ),
        clusters=clusters,
        health=health,
        assets=verdicts,
        overlaps=overlaps,
        errors=errors,
        ignored=ignored,
        accepted=accepted,
    )


def asset_hash(asset: Asset) -> bytes:
    """What a verdict depends on: where the asset lives, what it is, its stored config."""
    return _hash(
        asset.cluster, asset.account, asset.kind, asset.stream, asset.name, asset.config
    )


def _hash(  # noqa: PLR0917 - the parts of an asset, read without making one
    cluster: str, account: str, kind: str, stream: str, name: str, config: bytes
) -> bytes:
    head = f"{cluster}\x00{account}\x00{kind}\x00{stream}\x00{name}\x00"
    return hashlib.sha256(head.encode() + config).digest()


def inventory_digest(hashes: list[bytes]) -> str:
    """The order-independent digest of the per-asset hashes (``Report.inventory``)."""
    return hashlib.sha256(b"".join(sorted(hashes))).hexdigest()
