"""The pre-upgrade check: classify a whole inventory for a target version.

:func:`check` reads inventories (paths or records), judges every asset as the target
would load it, settles streams with their consumers, finds subject overlaps per account
(offline streams keep their subjects, unloadable ones do not), applies the operator's
explicit acceptances and returns a :class:`Report`, which the report formats render.
Every input record is accounted for: ``records == assets + errors + ignored``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections import defaultdict
from typing import TYPE_CHECKING, Final

import msgspec

from assetgate._parallel import asset_hash, judge_files
from assetgate.gate import (
    STATES,
    Judged,
    Mode,
    Verdict,
    asset_id,
    judge,
    settle,
    untargeted,
)
from assetgate.inventory import Asset, Ignored, RecordError, read_inventory
from assetgate.levels import Catalogue, ServerProfile, load_catalogue
from assetgate.outcomes import ClusterOutcome, cluster_outcomes
from assetgate.subjects import find_overlaps

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

__all__ = [
    "Acceptance",
    "ErrorEntry",
    "Overlap",
    "Plan",
    "Report",
    "Summary",
    "TargetInfo",
    "accepted_rules",
    "apply_acceptances",
    "asset_id",
    "check",
    "compare_plans",
    "finding_rules",
    "inventory_digest",
    "iter_records",
    "make_plan",
    "observed_targets",
    "parse_accept",
    "parse_targets",
]

DEFAULT_CLUSTER: Final = "*"


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


class Overlap(msgspec.Struct, frozen=True, kw_only=True):
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


class ErrorEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A record that could not be read (KIP-467: the culprit is named)."""

    source: str
    message: str
    retriable: bool


class Acceptance(msgspec.Struct, frozen=True, kw_only=True):
    """An explicit, audited exception: ``RULE:ASSET`` and the assets it covered."""

    rule: str
    asset: str
    matched: tuple[str, ...]


class InventoryInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A digest of the inventory content the verdicts depend on (order-independent)."""

    digest: str


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """The result of :func:`check`; ``check --format json`` serialises exactly this."""

    target: TargetInfo
    catalogue: CatalogueInfo
    inventory: InventoryInfo
    summary: Summary
    clusters: list[ClusterOutcome]
    assets: list[Verdict]
    overlaps: list[Overlap]
    errors: list[ErrorEntry]
    ignored: list[Ignored]
    accepted: list[Acceptance]


OBSERVED_TARGET: Final = "observed"


def observed_targets(
    records: Iterable[Asset | RecordError | Ignored], catalogue: Catalogue
) -> dict[str, str]:
    """Per-cluster targets from the records' ``server_version`` (``--target observed``).

    Each cluster is judged against the lowest version among the servers that reported
    its assets (``assetgate pull`` records them): the version that decides in a rolling
    upgrade. Raises ``ValueError`` when a cluster has no record with a known version.
    """
    lowest: dict[str, ServerProfile] = {}
    unknown: set[str] = set()
    for record in records:
        if not isinstance(record, Asset):
            continue
        if record.server_version is None:
            unknown.add(record.cluster)
            continue
        profile = catalogue.server(record.server_version)
        held = lowest.get(record.cluster)
        if held is None or profile.version.release < held.version.release:
            lowest[record.cluster] = profile
    missing = sorted(unknown - set(lowest))
    if missing:
        names = ", ".join(repr(c) for c in missing)
        msg = f"--target observed: no server_version recorded for cluster(s) {names}"
        raise ValueError(msg)
    if not lowest:
        msg = "--target observed: the inventory has no assets"
        raise ValueError(msg)
    return {cluster: profile.version.text for cluster, profile in lowest.items()}


def parse_targets(values: Sequence[str]) -> dict[str, str]:
    """``["2.11.11", "east=2.12.8,west=2.11.11"]`` -> ``{"*": "2.11.11", "east": ...}``.

    A bare version is the default for clusters not named. Raises ``ValueError`` on a
    malformed item.
    """
    targets: dict[str, str] = {}
    for value in values:
        for item in value.split(","):
            text = item.strip()
            if not text:
                continue
            cluster, sep, version = text.partition("=")
            if not sep:
                cluster, version = DEFAULT_CLUSTER, text
            if not cluster.strip() or not version.strip():
                msg = f"invalid target: {text!r} (use VERSION or CLUSTER=VERSION)"
                raise ValueError(msg)
            targets[cluster.strip()] = version.strip()
    if not targets:
        msg = "no target version given"
        raise ValueError(msg)
    return targets


def check(
    inventory: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
    *,
    target: str | Mapping[str, str],
    mode: Mode = "cluster",
    accept: Sequence[str] = (),
    catalogue: Catalogue | None = None,
    workers: int | None = 1,
) -> Report:
    """Classify an inventory for a target nats-server version.

    Args:
        inventory: inventory files (any format :mod:`assetgate.inventory` reads) or
            records already read.
        target: the version, or a mapping cluster -> version with ``"*"`` as the
            default (a rolling upgrade is judged against its lowest version).
        mode: ``"single"`` or ``"cluster"``: the offline wording differs.
        accept: ``RULE:ASSET`` exceptions: RULE is a state, a drift flag, ``overlap``
            or ``*``; ASSET a glob over ``cluster/account/stream[/consumer]``.
        catalogue: the level catalogue (default: the packaged one).
        workers: processes judging JSON Lines files in parallel (``None``: one per
            core; 1: this process only).

    Raises:
        InvalidServerVersion, UnknownServerVersion: a target is not a known release.
        ValueError: a malformed acceptance.
    """
    cat = catalogue if catalogue is not None else load_catalogue()
    targets = {DEFAULT_CLUSTER: target} if isinstance(target, str) else dict(target)
    profiles = {cluster: cat.server(version) for cluster, version in targets.items()}
    rules = [parse_accept(item) for item in accept]
    collector = Collector(profiles, mode, cat)
    count = _usable_cores() if workers is None else max(workers, 1)
    items = list(inventory)
    paths = [item for item in items if isinstance(item, str | os.PathLike)]
    if count > 1 and paths and len(paths) == len(items):
        for path, judged in judge_files(
            [os.fspath(p) for p in paths],
            profiles=profiles,
            mode=mode,
            catalogue=cat,
            workers=count,
        ):
            if judged is None:  # not split: read here, in input order
                for record in iter_records([path]):
                    collector.add(record)
            for item in judged or ():
                if isinstance(item, tuple):
                    collector.add_judged(*item)
                else:
                    collector.add(item)
        items = []
    for record in iter_records(items):
        collector.add(record)
    return collector.report(targets, rules)


def _usable_cores() -> int:
    """The cores this process may run on (CPU affinity, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def iter_records(
    inventory: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
) -> Iterator[Asset | RecordError | Ignored]:
    """Records given directly pass through; paths are read with the inventory reader."""
    paths: list[str | os.PathLike[str]] = []
    for item in inventory:
        if isinstance(item, Asset | RecordError | Ignored):
            yield item
        else:
            paths.append(item)
    if paths:
        yield from read_inventory(paths)


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

    def profile(self, cluster: str) -> ServerProfile:
        """The target profile of a cluster."""
        return self.profiles.get(cluster) or self.profiles[DEFAULT_CLUSTER]

    def add(
        self, record: Asset | RecordError | Ignored, *, counted: bool = False
    ) -> None:
        """Account for one record; judge it if it is an asset."""
        if not counted:
            self.records += 1
        if isinstance(record, RecordError):
            self.errors.append(
                ErrorEntry(
                    source=record.source,
                    message=record.message,
                    retriable=record.retriable,
                )
            )
            return
        if isinstance(record, Ignored):
            self.ignored.append(record)
            return
        if record.cluster not in self.profiles and DEFAULT_CLUSTER not in self.profiles:
            self.add(untargeted(record), counted=True)
            return
        judged = judge(record, self.profile(record.cluster), self.mode, self.cat)
        self.add_judged(asset_hash(record), judged, config=record.config, counted=True)

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

    def verdicts(self) -> list[Verdict]:
        """Every asset's verdict, streams settled with their consumers, in key order."""
        verdicts: list[Verdict] = []
        for key in sorted(set(self.streams) | set(self.consumers)):
            stream = self.streams.get(key)
            consumers = sorted(
                self.consumers.get(key, ()), key=lambda j: j.verdict.name
            )
            verdicts.extend(settle(stream, consumers, self.profile(key[0])))
        verdicts.extend(j.verdict for j in self.duplicates)
        return verdicts

    def report(self, targets: dict[str, str], rules: list[tuple[str, str]]) -> Report:
        """The report of everything added so far."""
        verdicts = self.verdicts()
        overlaps = self._overlaps(verdicts)
        clusters: list[ClusterOutcome] = []
        if self.mode == "cluster":
            verdicts, clusters = cluster_outcomes(verdicts, self.profile)
        verdicts, overlaps, accepted = apply_acceptances(verdicts, overlaps, rules)
        counts = dict.fromkeys(STATES, 0)
        for verdict in verdicts:
            counts[verdict.state] += 1
        # the default target, else the lowest version (a rolling upgrade's weakest)
        head = self.profiles.get(DEFAULT_CLUSTER) or min(
            self.profiles.values(), key=lambda p: (p.version.release, p.version.text)
        )
        return Report(
            target=TargetInfo(
                version=head.version.text,
                api_level=head.api_level,
                mode=self.mode,
                clusters={c: v for c, v in targets.items() if c != DEFAULT_CLUSTER},
                default=targets.get(DEFAULT_CLUSTER),
            ),
            catalogue=CatalogueInfo(digest=self.cat.digest),
            inventory=InventoryInfo(digest=inventory_digest(self.hashes)),
            summary=Summary(
                records=self.records,
                assets=len(verdicts),
                errors=len(self.errors),
                ignored=len(self.ignored),
                overlaps=len(overlaps),
                accepted=sum(1 for v in verdicts if v.accepted)
                + sum(1 for o in overlaps if o.accepted),
                **counts,
            ),
            clusters=clusters,
            assets=verdicts,
            overlaps=overlaps,
            errors=self.errors,
            ignored=self.ignored,
            accepted=accepted,
        )

    def _overlaps(self, verdicts: list[Verdict]) -> list[Overlap]:
        """Overlaps between streams of one account that keep their subjects."""
        states = {
            (v.cluster, v.account, v.name): v.state
            for v in verdicts
            if v.kind == "stream"
        }
        by_account: defaultdict[tuple[str, str], list[tuple[str, tuple[str, ...]]]] = (
            defaultdict(list)
        )
        for (cluster, account, name), judged in sorted(self.streams.items()):
            if states.get((cluster, account, name)) in {
                "online",
                "degraded",
                "offline",
            }:
                by_account[(cluster, account)].append((name, judged.subjects))
        out: list[Overlap] = []
        for (cluster, account), streams in sorted(by_account.items()):
            for a, subject_a, b, subject_b in find_overlaps(streams):
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


def inventory_digest(hashes: list[bytes]) -> str:
    """The order-independent digest of the per-asset hashes (``Report.inventory``)."""
    total = hashlib.sha256()
    for item in sorted(hashes):
        total.update(item)
    return total.hexdigest()


_RULES: Final = (
    *STATES,
    "stamp_missing",
    "stamp_unparsable",
    "stamp_too_low",
    "stamp_too_high",
    "overlap",
    "*",
)


def parse_accept(item: str) -> tuple[str, str]:
    """``RULE:ASSET`` -> (rule, pattern); ``ValueError`` names the allowed rules."""
    rule, sep, pattern = item.partition(":")
    if not sep or rule not in _RULES or not pattern:
        allowed = ", ".join(_RULES)
        msg = f"invalid acceptance: {item!r} (use RULE:ASSET, RULE one of {allowed})"
        raise ValueError(msg)
    return rule, pattern


def apply_acceptances(
    verdicts: list[Verdict], overlaps: list[Overlap], rules: list[tuple[str, str]]
) -> tuple[list[Verdict], list[Overlap], list[Acceptance]]:
    """Mark what each ``RULE:ASSET`` covers; the first matching rule wins."""
    if not rules:
        return verdicts, overlaps, []
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
    accepted = [
        Acceptance(rule=rule, asset=pattern, matched=tuple(items))
        for (rule, pattern), items in matched.items()
    ]
    return out, kept, accepted


def accepted_rules(accepted: str | None) -> set[str]:
    """The rules of a verdict's acceptances (``RULE:ASSET``, several joined by ``; ``)."""
    if not accepted:
        return set()
    return {part.partition(":")[0] for part in accepted.split("; ")}


def finding_rules(report: Report, fail_on: Iterable[str]) -> list[str]:
    """The findings that reach the ``--fail-on`` threshold (accepted ones excluded)."""
    wanted = set(fail_on)
    found: list[str] = []
    for verdict in report.assets:
        # an acceptance covers the findings of its rule only (``*``: all of them)
        rules = accepted_rules(verdict.accepted)
        if verdict.state in wanted and not rules & {"*", verdict.state}:
            found.append(f"{verdict.state}: {asset_id(verdict)}")
        drift = verdict.drift
        if drift is not None and drift in wanted and not rules & {"*", drift}:
            found.append(f"{drift}: {asset_id(verdict)}")
    if "errors" in wanted:
        found.extend(f"error: {error.source}" for error in report.errors)
    if "overlaps" in wanted:
        found.extend(
            f"overlap: {overlap.cluster}/{overlap.account} "
            f"{overlap.streams[0]} ~ {overlap.streams[1]}"
            for overlap in report.overlaps
            if overlap.accepted is None
        )
    return found


# --- prepared plans (KIP-939's prepared state) -------------------------------------------

PLAN_FORMAT: Final = "assetgate-plan/1"


class PlanVerdict(msgspec.Struct, frozen=True, kw_only=True):
    """One asset's verdict as recorded in a plan."""

    state: str
    reason: str | None
    target: str


class Plan(msgspec.Struct, frozen=True, kw_only=True):
    """Verdicts with a digest of everything they depend on (``check --plan-out``)."""

    format: str
    digest: str
    catalogue: str
    inventory: str
    target: TargetInfo
    verdicts: dict[str, PlanVerdict]


def make_plan(report: Report) -> Plan:
    """The prepared plan of a report."""
    verdicts = {
        asset_id(v): PlanVerdict(state=v.state, reason=v.reason, target=v.target)
        for v in report.assets
    }
    body = msgspec.json.encode(
        [report.catalogue.digest, report.inventory.digest, report.target, verdicts],
        order="deterministic",
    )
    return Plan(
        format=PLAN_FORMAT,
        digest=hashlib.sha256(body).hexdigest(),
        catalogue=report.catalogue.digest,
        inventory=report.inventory.digest,
        target=report.target,
        verdicts=verdicts,
    )


def compare_plans(old: Plan, new: Plan) -> tuple[list[str], list[str]]:
    """(verdict changes, notes): what differs between a stored plan and a fresh one."""
    changes: list[str] = []
    for ident in sorted(set(old.verdicts) | set(new.verdicts)):
        before, after = old.verdicts.get(ident), new.verdicts.get(ident)
        if before == after:
            continue
        if before is None:
            changes.append(f"{ident}: new asset, {_describe(after)}")
        elif after is None:
            changes.append(f"{ident}: gone (was {_describe(before)})")
        else:
            changes.append(f"{ident}: {_describe(before)} -> {_describe(after)}")
    notes: list[str] = []
    if old.catalogue != new.catalogue:
        notes.append(f"catalogue changed: {old.catalogue[:12]} -> {new.catalogue[:12]}")
    if old.inventory != new.inventory:
        notes.append(f"inventory changed: {old.inventory[:12]} -> {new.inventory[:12]}")
    return changes, notes


def _describe(verdict: PlanVerdict | None) -> str:
    if verdict is None:
        return "absent"
    reason = f" ({verdict.reason})" if verdict.reason else ""
    return f"{verdict.state}{reason} on {verdict.target}"
