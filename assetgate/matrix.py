"""Every release at once: the matrix, the rollback floors, findings with their fixes.

:func:`check_matrix` judges an inventory against every release the catalogue
distinguishes (:meth:`~assetgate.levels.Catalogue.releases`), or a range of them, with
the very pipeline of :func:`~assetgate.check.check`, so each row equals the report of a
single-target run. Releases that treat stored assets alike (the same release line,
switches, load-time checks and, in cluster mode, cluster outcomes) are judged once.

From the rows come, per cluster and for the whole inventory, the two floors: the lowest
release where nothing is lost, and the lowest where assets at most go offline (rolling
forward brings them back), with the assets that pin each floor. Each finding names the
releases it applies to, carries a stable code and the fixes of :mod:`assetgate.fixes`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Final

import msgspec
from packaging.version import InvalidVersion, Version

from assetgate._collect import (
    Acceptance,
    CatalogueInfo,
    ErrorEntry,
    InventoryInfo,
    Report,
    parse_accept,
)
from assetgate._multi import Release, judge_releases
from assetgate.fixes import (
    Fix,
    cluster_code,
    finding_code,
    fixes_for,
    outcome_fixes,
    overlap_fixes,
)
from assetgate.gate import STATES, Mode, Verdict, asset_id
from assetgate.inventory import Ignored  # noqa: TC001 - msgspec resolves it at runtime
from assetgate.levels import load_catalogue

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Sequence

    from assetgate.inventory import Asset, RecordError
    from assetgate.levels import Catalogue, ServerProfile
    from assetgate.outcomes import ClusterOutcome

__all__ = [
    "ALL_RELEASES",
    "Floor",
    "Matrix",
    "MatrixCell",
    "MatrixFinding",
    "MatrixRow",
    "Pin",
    "check_matrix",
    "is_release_set",
    "matrix_failures",
    "select_releases",
]

ALL_RELEASES: Final = "all"
LOST: Final = frozenset({"degraded", "unloadable", "detached", "unavailable"})
"""States that lose an asset (or what it stores) until something is changed."""
_NOT_LOSSLESS: Final = LOST | {"offline"}


class MatrixCell(msgspec.Struct, frozen=True, kw_only=True):
    """One cluster on one release: the count of each state and the cluster outcome."""

    cluster: str
    outcome: str
    online: int
    offline: int
    degraded: int
    unloadable: int
    detached: int
    unavailable: int


class MatrixRow(msgspec.Struct, frozen=True, kw_only=True):
    """One release (``release`` to ``through``: the patches that behave alike).

    ``through`` is ``None`` when later patches of the line are not known to differ;
    ``failing`` counts the findings that fail a single-target run on it.
    """

    release: str
    through: str | None
    api_level: int | None
    clusters: list[MatrixCell]
    overlaps: int
    failing: int


class Pin(msgspec.Struct, frozen=True, kw_only=True):
    """An asset that keeps a floor where it is: what it does on the release below."""

    asset: str
    floor: str
    release: str
    state: str
    reason: str | None


class Floor(msgspec.Struct, frozen=True, kw_only=True):
    """The rollback floors of a cluster (``cluster`` ``None``: the whole inventory).

    Attributes:
        lossless: the lowest judged release where every asset is online and the
            cluster outcome is ok; ``None`` when none is.
        offline_only: the lowest judged release where assets at most go offline.
        pinned_by: the assets that keep ``lossless`` up: those not online on the
            judged release just below it (on the newest one when it is ``None``).
        pins: what each pinning asset does there, for both floors.
    """

    cluster: str | None
    lossless: str | None
    offline_only: str | None
    pinned_by: list[str]
    pins: list[Pin]


class MatrixFinding(msgspec.Struct, frozen=True, kw_only=True):
    """One finding and the releases it applies to.

    ``rule`` is what ``--fail-on`` and ``--accept`` name (a state, a drift flag, a
    cluster outcome or ``overlap``); ``asset`` an asset id, a cluster name (outcomes)
    or ``cluster/account A ~ B`` (overlaps). The assets a cluster outcome makes
    ``unavailable`` are not findings of their own: the rows count them and the
    cluster's finding names the cause.
    """

    code: str
    rule: str
    asset: str
    cluster: str
    reason: str | None
    check: str | None
    releases: list[str]
    fixes: list[Fix]
    accepted: str | None = None


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """Counts that do not depend on the release: ``records == assets + errors + ignored``."""

    records: int
    assets: int
    errors: int
    ignored: int
    releases: int


class Matrix(msgspec.Struct, frozen=True, kw_only=True):
    """The result of :func:`check_matrix`; ``check --target all --format json``."""

    mode: Mode
    catalogue: CatalogueInfo
    inventory: InventoryInfo
    summary: Summary
    releases: list[MatrixRow]
    floor: Floor
    floors: list[Floor]
    findings: list[MatrixFinding]
    errors: list[ErrorEntry]
    ignored: list[Ignored]
    accepted: list[Acceptance]


def is_release_set(text: str) -> bool:
    """``all`` or a range ``A..B`` (either end may be left out) rather than a version."""
    return text.strip() == ALL_RELEASES or ".." in text


def select_releases(text: str, catalogue: Catalogue) -> list[str]:
    """The releases of ``all`` or ``A..B``, oldest first.

    A range holds every release the catalogue distinguishes from A to B, and A itself
    (standing for its range) when the catalogue does not name it.

    Raises:
        ValueError: a malformed range, or one that holds no release.
        InvalidServerVersion, UnknownServerVersion: an end is not a known release.
    """
    known = list(catalogue.releases())
    spec = text.strip()
    if spec == ALL_RELEASES:
        return known
    low_text, sep, high_text = spec.partition("..")
    if not sep or ".." in high_text:
        msg = f"invalid release range: {text!r} (use all, A..B, A.. or ..B)"
        raise ValueError(msg)
    low = catalogue.server(low_text).version.text if low_text.strip() else None
    high = catalogue.server(high_text).version.text if high_text.strip() else None
    if low is not None and high is not None and Version(low) > Version(high):
        msg = f"invalid release range: {text!r} ({low} is above {high})"
        raise ValueError(msg)
    chosen = [
        release
        for release in known
        if (low is None or Version(release) >= Version(low))
        and (high is None or Version(release) <= Version(high))
    ]
    if low is not None and low not in chosen:
        chosen.insert(0, low)
    return chosen


def check_matrix(
    inventory: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
    *,
    releases: str | Sequence[str] = ALL_RELEASES,
    mode: Mode = "cluster",
    accept: Sequence[str] = (),
    fail_on: Iterable[str] = (),
    catalogue: Catalogue | None = None,
) -> Matrix:
    """Judge an inventory against many releases at once.

    Args:
        inventory: as for :func:`~assetgate.check.check`.
        releases: ``"all"``, a range ``"A..B"`` or the versions themselves.
        mode: ``"single"`` or ``"cluster"``.
        accept: ``RULE:ASSET`` exceptions, applied on every release.
        fail_on: what else fails a single-target run (each row's ``failing``).
        catalogue: the level catalogue (default: the packaged one).

    The judging runs in this process (no ``workers`` yet).

    Raises:
        ValueError: a malformed range or acceptance.
        InvalidServerVersion, UnknownServerVersion: a release the catalogue lacks.
    """
    cat = catalogue if catalogue is not None else load_catalogue()
    if isinstance(releases, str):
        rows = select_releases(releases, cat)
    else:
        rows = sorted({cat.server(r).version.text for r in releases}, key=Version)
    if not rows:
        msg = "no release to judge"
        raise ValueError(msg)
    high = releases.partition("..")[2].strip() if isinstance(releases, str) else ""
    cap = cat.server(high).version.text if high else None
    rules = [parse_accept(item) for item in accept]
    # releases that treat stored assets alike are judged once
    groups: dict[bytes, list[str]] = defaultdict(list)
    for release in rows:
        groups[_behaviour(cat.server(release), mode)].append(release)
    ordered = sorted(groups.values(), key=lambda members: Version(members[0]))
    builder = _Builder(rows, mode, cat, cap=cap)
    results = judge_releases(
        inventory,
        [cat.server(members[0]) for members in ordered],
        mode,
        cat,
        rules=rules,
        fail_on=tuple(fail_on),
    )
    for members, result in zip(ordered, results, strict=True):
        for release in members:
            builder.add(release, result)
    return builder.build()


def matrix_failures(matrix: Matrix, floor_above: str | None = None) -> list[str]:
    """What fails a matrix run: each release's findings, then the floor rule.

    A release fails as a single-target run on it would (``failing``). With
    ``floor_above``, each cluster whose lossless floor is above that release, or
    none, fails too, and so does the release itself when it loses something (a floor
    below it would not help a rollback to it).
    """
    found = [
        f"{row.release}: {row.failing} finding(s)"
        for row in matrix.releases
        if row.failing
    ]
    if floor_above is None:
        return found
    limit = Version(floor_above)
    for floor in matrix.floors:
        name = floor.cluster or "(unnamed cluster)"
        if floor.lossless is None:
            found.append(f"floor-above={floor_above}: {name} has no lossless release")
        elif Version(floor.lossless) > limit:
            found.append(
                f"floor-above={floor_above}: {name}'s lowest lossless release is "
                f"{floor.lossless}"
            )
    row = _row_of(matrix.releases, floor_above)
    if row is not None:
        for cell in row.clusters:
            lost = sum(getattr(cell, state) for state in _NOT_LOSSLESS)
            if lost or cell.outcome != "ok":
                found.append(
                    f"floor-above={floor_above}: {cell.cluster or '(unnamed cluster)'} "
                    f"loses {lost} asset(s) on {floor_above} (outcome {cell.outcome})"
                )
    return found


def _row_of(rows: Sequence[MatrixRow], release: str) -> MatrixRow | None:
    """The row whose patch range holds ``release``."""
    held = None
    for row in rows:
        if Version(row.release) <= Version(release):
            held = row
    if (
        held is not None
        and held.through is not None
        and Version(release) > Version(held.through)
    ):
        return None
    return held


def _behaviour(profile: ServerProfile, mode: Mode) -> bytes:
    """What decides how a release treats stored assets (releases alike are judged once)."""
    return msgspec.json.encode(
        (
            profile.line.fingerprint,
            profile.switches,
            [c for c in profile.checks if set(c.on) - {"create"}],
            profile.cluster_outcomes if mode == "cluster" else (),
        )
    )


FindingKey = tuple[
    str, str, str, str | None, str | None
]  # asset, source, rule, reason, check


class _Group:
    """A finding across releases: its first verdict and where it applies."""

    __slots__ = (
        "accepted",
        "cluster",
        "code",
        "outcome",
        "overlap",
        "releases",
        "stopped_by",
        "verdict",
    )

    def __init__(self, code: str, cluster: str, verdict: Verdict | None) -> None:
        self.code = code
        self.cluster = cluster
        self.verdict = verdict
        self.releases: list[str] = []
        self.accepted: str | None = None
        self.stopped_by: str | None = None
        self.outcome: ClusterOutcome | None = None
        self.overlap: list[Fix] = []


class _Builder:
    """Takes in one report per release; builds the rows, floors and findings."""

    def __init__(
        self, rows: list[str], mode: Mode, cat: Catalogue, *, cap: str | None = None
    ) -> None:
        self.rows = rows
        self.cap = cap
        self.mode = mode
        self.cat = cat
        self.row_of: dict[str, MatrixRow] = {}
        self.groups: dict[FindingKey, _Group] = {}
        # per asset (id, source): the releases where it is not online on its own;
        # per release: the clusters that are down (every asset unavailable)
        self.lossy: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
        self.down: dict[str, set[str]] = {}
        self.clusters: set[str] = set()
        # per release and cluster: (asset, state, reason) of what is not online
        self.not_online: dict[str, dict[str, list[tuple[str, str, str | None]]]] = {}
        self.outcomes: dict[str, dict[str, ClusterOutcome]] = {}
        self.first: Report | None = None
        self.accepted: dict[tuple[str, str], set[str]] = {}

    def add(self, release: str, result: Release) -> None:
        """Take in what ``release`` does (judged by a release that behaves alike).

        ``result.report`` lists only the verdicts that are not online or drift.
        """
        report, counts, failing = result
        if self.first is None:
            self.first = report
        profile = self.cat.server(release)
        outcomes = {c.cluster: c for c in report.clusters}
        self.outcomes[release] = outcomes
        self.clusters.update(counts)
        lost: defaultdict[str, list[tuple[str, str, str | None]]] = defaultdict(list)
        stopped = _stopping_consumers(report.assets)
        down = {name for name, c in outcomes.items() if c.outcome != "ok"}
        if down:
            self.down[release] = down
        for verdict in report.assets:
            # an asset its cluster's outcome makes unavailable is counted in the row;
            # the cluster's own finding names the cause and the fix
            if verdict.state == "unavailable" and verdict.drift is None:
                continue
            ident = asset_id(verdict)
            occurrence = verdict.source
            if verdict.state not in {"online", "unavailable"}:
                self.lossy[(ident, occurrence)].add(release)
                lost[verdict.cluster].append((ident, verdict.state, verdict.reason))
                stream_key = (verdict.cluster, verdict.account, verdict.stream)
                stopped_by = (
                    stopped.get(stream_key) if verdict.kind == "stream" else None
                )
                code = finding_code(verdict, profile, stopped=stopped_by is not None)
                group = self._group(
                    (ident, occurrence, verdict.state, verdict.reason, verdict.check),
                    code,
                    verdict,
                )
                group.releases.append(release)
                if stopped_by is not None:
                    group.stopped_by = stopped_by
            if verdict.drift is not None:
                group = self._group(
                    (ident, occurrence, verdict.drift, None, None),
                    cluster_code(verdict.drift),
                    verdict,
                )
                group.releases.append(release)
        for outcome in report.clusters:
            self.clusters.add(outcome.cluster)
            if outcome.outcome == "ok":
                continue
            name = outcome.cluster
            group = self._group(
                (name, "", outcome.outcome, outcome.reason, None),
                cluster_code(outcome.outcome),
                None,
                cluster=name,
            )
            group.releases.append(release)
            group.accepted = outcome.accepted
            if group.outcome is None:
                group.outcome = outcome
        for overlap in report.overlaps:
            name = (
                f"{overlap.cluster}/{overlap.account} "
                f"{overlap.streams[0]} ~ {overlap.streams[1]}"
            )
            group = self._group(
                (name, "", "overlap", " ~ ".join(overlap.subjects), None),
                cluster_code("overlap"),
                None,
                cluster=overlap.cluster,
            )
            group.releases.append(release)
            group.accepted = overlap.accepted
            group.overlap = overlap_fixes(overlap.streams, overlap.subjects)
        for acceptance in report.accepted:
            matched = self.accepted.setdefault(
                (acceptance.rule, acceptance.asset), set()
            )
            matched.update(acceptance.matched)
        self.not_online[release] = dict(lost)
        cells = [
            MatrixCell(
                cluster=cluster,
                outcome=outcomes[cluster].outcome if cluster in outcomes else "ok",
                **{state: counts.get(cluster, Counter())[state] for state in STATES},
            )
            for cluster in sorted(set(counts) | set(outcomes))
        ]
        self.row_of[release] = MatrixRow(
            release=release,
            through=None,
            api_level=profile.api_level,
            clusters=cells,
            overlaps=len(report.overlaps),
            failing=failing,
        )

    def _group(
        self,
        key: FindingKey,
        code: str,
        verdict: Verdict | None,
        *,
        cluster: str | None = None,
    ) -> _Group:
        group = self.groups.get(key)
        if group is None:
            where = (
                cluster if cluster is not None else (verdict.cluster if verdict else "")
            )
            group = self.groups[key] = _Group(code, where, verdict)
            if verdict is not None:
                group.accepted = verdict.accepted
        return group

    def build(self) -> Matrix:
        """The matrix of everything taken in."""
        first = self.first
        if first is None:
            msg = "no release was judged"
            raise ValueError(msg)
        rows = [
            msgspec.structs.replace(self.row_of[r], through=self._through(i))
            for i, r in enumerate(self.rows)
        ]
        floors = [self._floor(c) for c in sorted(self.clusters)]
        summary = first.summary
        return Matrix(
            mode=self.mode,
            catalogue=first.catalogue,
            inventory=first.inventory,
            summary=Summary(
                records=summary.records,
                assets=summary.assets,
                errors=summary.errors,
                ignored=summary.ignored,
                releases=len(rows),
            ),
            releases=rows,
            floor=self._floor(None),
            floors=floors,
            findings=self._findings(),
            errors=first.errors,
            ignored=first.ignored,
            accepted=[
                Acceptance(rule=rule, asset=pattern, matched=tuple(sorted(matched)))
                for (rule, pattern), matched in sorted(self.accepted.items())
            ],
        )

    def _through(self, index: int) -> str | None:
        """The last patch that behaves like row ``index`` (``None``: open-ended)."""
        release = Version(self.rows[index])
        known = [Version(r) for r in self.cat.releases()]
        following = [v for v in known if v > release]
        if index + 1 < len(self.rows):
            following.append(Version(self.rows[index + 1]))
        nxt = min(following, default=None)
        last: str | None = None
        if nxt is not None and nxt.release[:2] == release.release[:2]:
            last = f"{nxt.major}.{nxt.minor}.{nxt.micro - 1}"
        if self.cap is not None and index == len(self.rows) - 1:
            cap = Version(self.cap)
            if cap.release[:2] == release.release[:2] and (
                last is None or Version(last) > cap
            ):
                last = self.cap
        return last

    def _lossy(
        self, release: str, cluster: str | None, states: frozenset[str]
    ) -> list[Pin]:
        """What keeps ``release`` from being free of ``states`` (for one cluster or all)."""
        pins: list[Pin] = []
        lost = self.not_online[release]
        for name in sorted(lost) if cluster is None else [cluster]:
            # an unavailable asset is pinned by what takes its cluster down (below)
            pins.extend(
                Pin(asset=ident, floor="", release=release, state=state, reason=reason)
                for ident, state, reason in lost.get(name, ())
                if state in states
            )
        for name, outcome in sorted(self.outcomes[release].items()):
            if outcome.outcome != "ok" and (cluster is None or name == cluster):
                pins.extend(
                    Pin(
                        asset=ident,
                        floor="",
                        release=release,
                        state=outcome.outcome,
                        reason=outcome.reason,
                    )
                    for ident in outcome.assets or (name,)
                )
        return pins

    def _floor(self, cluster: str | None) -> Floor:
        lossless, lossless_pins = self._lowest(cluster, _NOT_LOSSLESS, "lossless")
        offline_only, offline_pins = self._lowest(cluster, LOST, "offline_only")
        return Floor(
            cluster=cluster,
            lossless=lossless,
            offline_only=offline_only,
            pinned_by=sorted({pin.asset for pin in lossless_pins}),
            pins=lossless_pins + offline_pins,
        )

    def _lowest(
        self, cluster: str | None, states: frozenset[str], name: str
    ) -> tuple[str | None, list[Pin]]:
        """The lowest release free of ``states``, and what pins it there."""
        for index, release in enumerate(self.rows):
            if not self._lossy(release, cluster, states):
                below = self.rows[index - 1] if index else None
                pins = [] if below is None else self._lossy(below, cluster, states)
                return release, [msgspec.structs.replace(p, floor=name) for p in pins]
        newest = self._lossy(self.rows[-1], cluster, states)
        return None, [msgspec.structs.replace(p, floor=name) for p in newest]

    def _findings(self) -> list[MatrixFinding]:
        out: list[MatrixFinding] = []
        order = {release: index for index, release in enumerate(self.rows)}
        for (ident, occurrence, rule, reason, check_id), group in self.groups.items():
            releases = sorted(group.releases, key=order.__getitem__)
            fixes: tuple[Fix, ...] = ()
            profile = self.cat.server(releases[0])
            if group.verdict is not None:
                above, below = self._nearest_online(
                    (ident, occurrence),
                    group.cluster,
                    order[releases[0]],
                    order[releases[-1]],
                )
                fixes = fixes_for(
                    group.verdict,
                    profile,
                    self.cat,
                    rule=rule,
                    stopped_by=group.stopped_by,
                    outcome=group.outcome,
                    online_above=above,
                    online_below=below,
                )
            elif group.outcome is not None:
                fixes = tuple(outcome_fixes(group.outcome, releases[0]))
            else:
                fixes = tuple(group.overlap)
            out.append(
                MatrixFinding(
                    code=group.code,
                    rule=rule,
                    asset=ident,
                    cluster=group.cluster,
                    reason=reason,
                    check=check_id,
                    releases=releases,
                    fixes=list(fixes),
                    accepted=group.accepted,
                )
            )
        out.sort(key=lambda f: (f.asset, order[f.releases[0]], f.code))
        return out

    def _nearest_online(
        self, key: tuple[str, str], cluster: str, low: int, high: int
    ) -> tuple[str | None, str | None]:
        """The nearest releases above ``high`` and below ``low`` where it is online."""
        lossy = self.lossy.get(key, set())

        def online(release: str) -> bool:
            return release not in lossy and cluster not in self.down.get(release, ())

        above = next((r for r in self.rows[high + 1 :] if online(r)), None)
        below = next((r for r in reversed(self.rows[:low]) if online(r)), None)
        return above, below


def _stopping_consumers(verdicts: Sequence[Verdict]) -> dict[tuple[str, str, str], str]:
    """Per offline stream, the first offline consumer in name order (it stops it)."""
    offline_streams = {
        (v.cluster, v.account, v.stream)
        for v in verdicts
        if v.kind == "stream" and v.state == "offline"
    }
    first: dict[tuple[str, str, str], str] = {}
    for verdict in verdicts:
        key = (verdict.cluster, verdict.account, verdict.stream)
        if (
            verdict.kind == "consumer"
            and verdict.state == "offline"
            and key in offline_streams
        ):
            held = first.get(key)
            if held is None or verdict.name < held:
                first[key] = verdict.name
    return {key: f"{key[0]}/{key[1]}/{key[2]}/{name}" for key, name in first.items()}


def version_text(text: str) -> str:
    """``text`` as a release, or ``ValueError`` (for ``floor-above=``)."""
    try:
        return str(Version(text.strip().lstrip("v")))
    except InvalidVersion:
        msg = f"not a release: {text!r}"
        raise ValueError(msg) from None
