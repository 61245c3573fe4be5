"""The pre-upgrade check: classify a whole inventory for a target version.

:func:`check` reads inventories (paths or records), judges every asset as the target
would load it, settles streams with their consumers, finds subject overlaps per account
(offline streams keep their subjects, unloadable ones do not), applies the operator's
explicit acceptances and returns a :class:`Report`, which the report formats render.
Every input record is accounted for: ``records == assets + errors + ignored``.

Size: over the ~400-line guide because the public entry of ``check``, its inputs and
targets, what fails a run and prepared plans; the report model is in
:mod:`assetgate.run.collect`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from typing import TYPE_CHECKING, Final, TypeAlias, TypeVar

import msgspec

from assetgate.catalogue.levels import (
    BUILD_LOCK,
    Catalogue,
    ServerProfile,
    load_catalogue,
)
from assetgate.inventory.read import (
    Asset,
    Ignored,
    RecordError,
    read_inventory,
    read_inventory_with,
)
from assetgate.judge.gate import Mode, asset_id
from assetgate.judge.rules import (
    ALWAYS_FAIL,
    DEFAULT_FAIL_ON,
    NO_ASSETS,
    failing_rules,
    failing_set,
)
from assetgate.run.bulk import without_cyclic_gc
from assetgate.run.collect import (
    DEFAULT_CLUSTER,
    Acceptance,
    CatalogueInfo,
    Collector,
    ErrorEntry,
    Hashed,
    InventoryInfo,
    LineJudge,
    Overlap,
    Parts,
    Report,
    Summary,
    TargetInfo,
    apply_acceptances,
    assemble,
    asset_hash,
    inventory_digest,
    parse_accept,
)
from assetgate.run.parallel import JudgePool, split_files
from assetgate.run.progress import EVERY, Progress
from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    from collections.abc import (
        Callable,
        Iterable,
        Iterator,
        Mapping,
        Sequence,
    )

    from assetgate.judge.gate import Verdict
    from assetgate.judge.outcomes import ClusterOutcome

    _Finding: TypeAlias = Callable[[], tuple[str, str]]

_R = TypeVar("_R")

__all__ = [
    "ALWAYS_FAIL",
    "DEFAULT_CLUSTER",
    "DEFAULT_FAIL_ON",
    "Acceptance",
    "CatalogueInfo",
    "Collector",
    "ErrorEntry",
    "InventoryInfo",
    "Overlap",
    "Parts",
    "Plan",
    "Report",
    "Summary",
    "TargetInfo",
    "apply_acceptances",
    "assemble",
    "asset_finding",
    "asset_hash",
    "asset_id",
    "check",
    "cluster_finding",
    "compare_plans",
    "count_findings",
    "counted",
    "fails",
    "finding_rules",
    "first_failing",
    "inventory_digest",
    "iter_records",
    "make_plan",
    "nothing_to_judge",
    "observed_targets",
    "overlap_finding",
    "parse_accept",
    "parse_targets",
    "plan_digest",
    "record_finding",
]

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
    progress: Progress | None = None,
) -> Report:
    """Classify an inventory for a target nats-server version.

    The work runs with the cyclic garbage collector off (:mod:`assetgate.run.bulk`);
    it is on again afterwards if it was before.

    Args:
        inventory: inventory files (any format :mod:`assetgate.inventory.read` reads) or
            records already read.
        target: the version, or a mapping cluster -> version with ``"*"`` as the
            default (a rolling upgrade is judged against its lowest version).
        mode: ``"single"`` or ``"cluster"``: the offline wording differs.
        accept: ``RULE:ASSET`` exceptions: RULE is a state, a drift flag, ``overlap``
            or ``*``; ASSET a glob over ``cluster/account/stream[/consumer]``.
        catalogue: the level catalogue (default: the packaged one).
        workers: processes judging JSON Lines files in parallel (``None``: one per
            core; 1: this process only).
        progress: called now and then with the phase and the records so far (the
            command line draws it on a terminal).

    Raises:
        InvalidServerVersion, UnknownServerVersion: a target is not a known release.
        ValueError: a malformed acceptance.
    """
    cat = catalogue if catalogue is not None else load_catalogue()
    targets = {DEFAULT_CLUSTER: target} if isinstance(target, str) else dict(target)
    warm = (id(cat), tuple(sorted(targets.values())), mode)
    # the first run for these targets builds (and first uses) their Struct types and
    # decoders; msgspec's first use of nested Struct types is not thread-safe
    cold = warm not in _WARM
    with BUILD_LOCK if cold else contextlib.nullcontext(), without_cyclic_gc():
        report = _check(
            inventory, targets, mode, accept, cat, workers=workers, progress=progress
        )
        if cold:
            _WARM.add(warm)
    return report


_WARM: set[tuple[int, tuple[str, ...], str]] = set()


def _check(
    inventory: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
    targets: dict[str, str],
    mode: Mode,
    accept: Sequence[str],
    cat: Catalogue,
    *,
    workers: int | None,
    progress: Progress | None,
) -> Report:
    profiles = {cluster: cat.server(version) for cluster, version in targets.items()}
    rules = [parse_accept(item) for item in accept]
    collector = Collector(profiles, mode, cat)
    count = _usable_cores() if workers is None else max(workers, 1)
    items = list(inventory)
    paths = [os.fspath(i) for i in items if isinstance(i, str | os.PathLike)]
    plans = split_files(paths, count) if count > 1 and len(paths) == len(items) else []
    if not any(ranges for _, ranges in plans):  # nothing worth a worker process
        _add_all(collector, items, progress)
        if progress is not None:
            progress(_SETTLING, collector.records)
        return collector.report(targets, rules)
    with JudgePool(profiles=profiles, mode=mode, catalogue=cat, workers=count) as pool:
        for path, judged in pool.judge_files(plans):
            if judged is None:  # not split: read here, in input order
                _add_all(collector, [path], None)
            for item in judged or ():
                if isinstance(item, tuple):
                    collector.add_judged(*item)
                else:
                    collector.add(item)
            if progress is not None:
                progress(_JUDGING, collector.records)
        if progress is not None:
            progress(_SETTLING, collector.records)
        # the workers find overlaps while this process settles
        found = pool.find_overlaps(collector.kept_streams())
        verdicts = collector.verdicts()
        return collector.report(targets, rules, verdicts=verdicts, found=found())


def _add_all(
    collector: Collector,
    inventory: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
    progress: Progress | None,
) -> None:
    """Read, judge and add every record, in input order, in this process.

    A plain line of a file is read and judged in one pass (:class:`LineJudge`); its
    consumers take the replica count of a stream already added.
    """
    judge_line = LineJudge(
        collector.profiles, collector.mode, collector.cat, collector.streams
    )
    found = _records(inventory, lambda paths: read_inventory_with(paths, judge_line))
    for record in counted(found, progress, _JUDGING):
        if isinstance(record, Hashed):
            collector.add_judged(record.digest, record.judged)
        else:
            collector.add(record)


_JUDGING: Final = "reading and judging"
_SETTLING: Final = "settling streams and finding overlaps"


def counted(
    records: Iterable[_R], progress: Progress | None, phase: str
) -> Iterator[_R]:
    """``records``, with ``progress(phase, n)`` every :data:`EVERY` of them."""
    if progress is None:
        yield from records
        return
    for count, record in enumerate(records, 1):
        if not count % EVERY:
            progress(phase, count)
        yield record


def _usable_cores() -> int:
    """The cores this process may run on (CPU affinity, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def iter_records(
    inventory: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
) -> Iterator[Asset | RecordError | Ignored]:
    """Records given directly pass through; paths are read with the inventory reader."""
    return _records(inventory, read_inventory)


def _records(
    inventory: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
    read: Callable[[list[str | os.PathLike[str]]], Iterator[_R]],
) -> Iterator[Asset | RecordError | Ignored | _R]:
    """Records given directly, as they come; then what ``read`` reads of the paths."""
    paths: list[str | os.PathLike[str]] = []
    for item in inventory:
        if isinstance(item, Asset | RecordError | Ignored):
            yield item
        else:
            paths.append(item)
    if paths:
        yield from read(paths)


def finding_rules(report: Report, fail_on: Iterable[str]) -> list[str]:
    """The findings that fail the run (accepted ones excluded).

    Those of ``fail_on``, plus, always: the states of :data:`ALWAYS_FAIL`, every
    whole-cluster outcome but ``ok`` (``crash: east``), and ``no-assets`` when the
    inventory holds no asset to judge.
    """
    return [describe()[0] for describe in _failing(report, fail_on)]


def count_findings(report: Report, fail_on: Iterable[str]) -> int:
    """How many findings fail the run: ``len(finding_rules(...))`` without the words."""
    return sum(1 for _ in _failing(report, fail_on))


def first_failing(report: Report, fail_on: Iterable[str]) -> tuple[str, str] | None:
    """The first finding that fails the run, with the server's words for it.

    The words are a cluster's reason or an asset's (``""`` when it has none); ``None``
    when nothing fails.
    """
    first = next(_failing(report, fail_on), None)
    return None if first is None else first()


def fails(report: Report, fail_on: Iterable[str]) -> bool:
    """Whether anything fails the run (:func:`finding_rules` without building it)."""
    return next(_failing(report, fail_on), None) is not None


def _failing(report: Report, fail_on: Iterable[str]) -> Iterator[_Finding]:
    """Each finding that fails the run, as a function that words it and its reason."""
    wanted = failing_set(fail_on)
    for cluster in report.clusters:
        if cluster.outcome != "ok" and cluster.accepted is None:
            yield functools.partial(cluster_finding, cluster)
    if report.summary.assets == 0:
        yield functools.partial(nothing_to_judge, report.summary)
    for verdict in report.assets:
        state, drift = verdict.state, verdict.drift
        if state not in wanted and (drift is None or drift not in wanted):
            continue
        for rule in failing_rules(verdict, wanted):
            yield functools.partial(asset_finding, rule, verdict)
    if "record-error" in wanted:
        for error in report.errors:
            if error.accepted is None:
                yield functools.partial(record_finding, "record-error", error.source)
    if "overlap" in wanted:
        for overlap in report.overlaps:
            if overlap.accepted is None:
                yield functools.partial(overlap_finding, overlap)
    if "ignored" in wanted:
        for item in report.ignored:
            if item.accepted is None:
                yield functools.partial(record_finding, "ignored", item.source)


# How each kind of finding is worded, with the server's words for it ("" for none):
# check's summary and the scan's aggregates both word findings with these.


def cluster_finding(cluster: ClusterOutcome) -> tuple[str, str]:
    """``crash: east`` and the cluster's reason."""
    name = shown_cluster(cluster.cluster)
    return f"{cluster.outcome}: {name}", cluster.reason or ""


def asset_finding(rule: str, verdict: Verdict) -> tuple[str, str]:
    """``offline: east/ACC/S1`` and the asset's reason."""
    return f"{rule}: {asset_id(verdict)}", verdict.reason or ""


def record_finding(rule: str, source: str) -> tuple[str, str]:
    """``record-error: inv.jsonl:3`` (or ``ignored: ...``)."""
    return f"{rule}: {source}", ""


def overlap_finding(overlap: Overlap) -> tuple[str, str]:
    """``overlap: east/ACC S1 ~ S2``."""
    first, second = overlap.streams
    return f"overlap: {overlap.cluster}/{overlap.account} {first} ~ {second}", ""


def nothing_to_judge(summary: Summary) -> tuple[str, str]:
    """The ``no-assets`` finding of an inventory with no asset to judge."""
    return (
        f"{NO_ASSETS}: no stream or consumer to judge in {summary.records} records "
        f"({summary.errors} record errors, {summary.ignored} ignored)"
    ), ""


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
    plan = Plan(
        format=PLAN_FORMAT,
        digest="",
        catalogue=report.catalogue.digest,
        inventory=report.inventory.digest,
        target=report.target,
        verdicts=verdicts,
    )
    return msgspec.structs.replace(plan, digest=plan_digest(plan))


def plan_digest(plan: Plan) -> str:
    """The digest of everything a plan's verdicts depend on (its ``digest`` aside)."""
    body = msgspec.json.encode(
        [plan.catalogue, plan.inventory, plan.target, plan.verdicts],
        order="deterministic",
    )
    return hashlib.sha256(body).hexdigest()


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
