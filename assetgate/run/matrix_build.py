"""How a matrix run's result is put together from one light report per release.

:class:`Builder` takes in what each release does (:class:`~assetgate.run.multi.Release`)
and builds the rows, the floors per cluster and for the inventory, and the findings
with the releases they apply to, their codes and their fixes (:mod:`assetgate.judge.fixes`).

Size: over the ~400-line guide because one intake: the rows, the floors and the
findings are read off the same per-release pass, and splitting them would walk each
release's verdicts once per part.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING

import msgspec
from packaging.version import Version

from assetgate.judge.fixes import (
    Fix,
    cluster_code,
    finding_code,
    fixes_for,
    outcome_fixes,
    overlap_fixes,
)
from assetgate.judge.gate import STATES, Mode, Verdict, asset_id
from assetgate.run.collect import Acceptance, Report
from assetgate.run.matrix_model import (
    LOST,
    NOT_LOSSLESS,
    Floor,
    Matrix,
    MatrixCell,
    MatrixFinding,
    MatrixRow,
    Pin,
    Summary,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from assetgate.catalogue.levels import Catalogue, ServerProfile
    from assetgate.judge.outcomes import ClusterOutcome
    from assetgate.run.multi import Release

__all__ = ["Builder"]


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


class Builder:
    """Takes in one report per release; builds the rows, floors and findings."""

    def __init__(
        self, rows: list[str], mode: Mode, cat: Catalogue, *, cap: str | None = None
    ) -> None:
        """A builder for the releases ``rows``, in ``mode``, over ``cat``."""
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
        # per release: the verdicts listed, and the (cluster, state) pairs of those
        # not online on their own (what pins a floor)
        self.shown: dict[str, tuple[Verdict, ...]] = {}
        self.lost: dict[str, frozenset[tuple[str, str]]] = {}
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
        down = {name for name, c in outcomes.items() if c.outcome != "ok"}
        if down:
            self.down[release] = down
        self._take_verdicts(release, report.assets, profile)
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

    def _take_verdicts(
        self, release: str, verdicts: Sequence[Verdict], profile: ServerProfile
    ) -> None:
        """Take in the verdicts ``release`` lists: each one's findings, made if new."""
        self.shown[release] = tuple(verdicts)
        stopped = _stopping_consumers(verdicts)
        groups = self.groups
        lost: set[tuple[str, str]] = set()
        for verdict in verdicts:
            # an asset its cluster's outcome makes unavailable is counted in the row;
            # the cluster's own finding names the cause and the fix
            if verdict.state == "unavailable" and verdict.drift is None:
                continue
            ident = asset_id(verdict)
            occurrence = verdict.source
            if _is_lost_alone(verdict):
                self.lossy[(ident, occurrence)].add(release)
                lost.add((verdict.cluster, verdict.state))
                stopped_by = (
                    stopped.get((verdict.cluster, verdict.account, verdict.stream))
                    if stopped and verdict.kind == "stream"
                    else None
                )
                key: FindingKey = (
                    ident,
                    occurrence,
                    verdict.state,
                    verdict.reason,
                    verdict.check,
                )
                group = groups.get(key)
                if group is None:
                    code = finding_code(
                        verdict, profile, stopped=stopped_by is not None
                    )
                    group = self._group(key, code, verdict)
                group.releases.append(release)
                if stopped_by is not None:
                    group.stopped_by = stopped_by
            if verdict.drift is not None:
                key = (ident, occurrence, verdict.drift, None, None)
                group = groups.get(key)
                if group is None:
                    group = self._group(key, cluster_code(verdict.drift), verdict)
                group.releases.append(release)
        self.lost[release] = frozenset(lost)

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

    def _lost_clusters(
        self, release: str, cluster: str | None, states: frozenset[str]
    ) -> list[str]:
        """The clusters (``cluster`` or all) with an asset in ``states`` on its own."""
        return sorted(
            {
                name
                for name, state in self.lost[release]
                if state in states and (cluster is None or name == cluster)
            }
        )

    def _down_outcomes(self, release: str, cluster: str | None) -> list[ClusterOutcome]:
        """The outcomes that take ``cluster`` (or any cluster) down on ``release``."""
        return [
            outcome
            for name, outcome in sorted(self.outcomes[release].items())
            if outcome.outcome != "ok" and (cluster is None or name == cluster)
        ]

    def _is_free(
        self, release: str, cluster: str | None, states: frozenset[str]
    ) -> bool:
        """Whether ``release`` is free of ``states`` (for one cluster or all)."""
        return not self._lost_clusters(
            release, cluster, states
        ) and not self._down_outcomes(release, cluster)

    def _pins(
        self, release: str, cluster: str | None, states: frozenset[str], floor: str
    ) -> list[Pin]:
        """What keeps ``release`` from being free of ``states`` (for one cluster or all)."""
        # an unavailable asset is pinned by what takes its cluster down (below)
        per_cluster: dict[str, list[Pin]] = {
            name: [] for name in self._lost_clusters(release, cluster, states)
        }
        for verdict in self.shown[release]:
            pins = per_cluster.get(verdict.cluster)
            if pins is not None and verdict.state in states and _is_lost_alone(verdict):
                pins.append(
                    Pin(
                        asset=asset_id(verdict),
                        floor=floor,
                        release=release,
                        state=verdict.state,
                        reason=verdict.reason,
                    )
                )
        out = [pin for pins in per_cluster.values() for pin in pins]
        for outcome in self._down_outcomes(release, cluster):
            out.extend(
                Pin(
                    asset=ident,
                    floor=floor,
                    release=release,
                    state=outcome.outcome,
                    reason=outcome.reason,
                )
                for ident in outcome.assets or (outcome.cluster,)
            )
        return out

    def _floor(self, cluster: str | None) -> Floor:
        lossless, lossless_pins = self._lowest(cluster, NOT_LOSSLESS, "lossless")
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
            if self._is_free(release, cluster, states):
                below = self.rows[index - 1] if index else None
                pins = [] if below is None else self._pins(below, cluster, states, name)
                return release, pins
        return None, self._pins(self.rows[-1], cluster, states, name)

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


def _is_lost_alone(verdict: Verdict) -> bool:
    """Whether the asset is not online on its own (not by its cluster's outcome)."""
    return verdict.state not in {"online", "unavailable"}


def _stopping_consumers(verdicts: Sequence[Verdict]) -> dict[tuple[str, str, str], str]:
    """Per offline stream, the first offline consumer in name order (it stops it)."""
    offline = [v for v in verdicts if v.state == "offline"]
    offline_streams = {
        (v.cluster, v.account, v.stream) for v in offline if v.kind == "stream"
    }
    first: dict[tuple[str, str, str], str] = {}
    for verdict in offline:
        key = (verdict.cluster, verdict.account, verdict.stream)
        if verdict.kind == "consumer" and key in offline_streams:
            held = first.get(key)
            if held is None or verdict.name < held:
                first[key] = verdict.name
    return {key: f"{key[0]}/{key[1]}/{key[2]}/{name}" for key, name in first.items()}
