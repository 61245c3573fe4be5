"""The steps of a rolling upgrade or rollback: a cluster whose nodes run two releases.

A rolling change from release FROM to release TO restarts a cluster's nodes one at a
time, so between the first and the last restart the cluster runs both. Whatever the
older of the two cannot honour is then handled by some nodes and not by others. The
prediction of each step comes from two single-release judgements of the inventory
(FROM and TO, read and judged in one pass as ``check --target A..B`` does) and the catalogue's facts on
clusters of several releases (``mixed`` and ``mixed_leader`` of
``[[cluster_outcomes]]`` in ``levels/``):

* a stored asset that takes a cluster down on the older release (a cluster outcome)
  either makes the older nodes exit (``mixed = "exits"``: they panic, whoever leads)
  or leaves them behind the meta leader (``"stale"``: ``/healthz`` answers
  ``mixed_health``); once a stale node leads the meta layer, the
  cluster suffers ``mixed_leader`` (``meta_state_lost``: every asset gone, for good);
* without a majority of live, current nodes the meta layer has no quorum and the
  JetStream API is unavailable;
* an asset the older release keeps offline, cannot load or loads without some fields
  runs only on the newer nodes' replicas: it keeps serving while they are a majority
  of its replicas (a replicated asset is placed on every node of a 3-node cluster),
  and stops serving, its data kept, when they are not.

Step 0 and the last step are the single-release reports themselves. A step is judged
twice, with the meta leader on a newer node and on an older one (the operator chooses
with ``$JS.API.META.LEADER.STEPDOWN``); a loss of the meta state carries into every
later step. Pure apart from reading the inventory.

Size: over the ~400-line guide because the step model, the mixed-release facts per step
and the two leader placements are one simulation; its formats are in
:mod:`assetgate.report.formats`.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

import msgspec
from packaging.version import Version

from assetgate.catalogue.levels import load_catalogue
from assetgate.inventory.read import Ignored  # noqa: TC001

# msgspec reads the Struct annotations at runtime
from assetgate.judge.accept import Acceptance
from assetgate.judge.gate import asset_id
from assetgate.run.collect import ErrorEntry  # noqa: TC001
from assetgate.run.multi import judge_releases

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Sequence

    from assetgate.catalogue.levels import Catalogue, ClusterOutcomeRule
    from assetgate.inventory.read import Asset, RecordError
    from assetgate.judge.gate import Verdict
    from assetgate.judge.outcomes import ClusterOutcome
    from assetgate.run.check import Report
    from assetgate.wire import Outcome

__all__ = [
    "ACCEPT_RULE",
    "STEP_STATES",
    "Rolling",
    "RollingCluster",
    "RollingEffect",
    "RollingStep",
    "check_rolling",
    "parse_rolling",
    "rolling_failures",
]

StepState = Literal["ok", "degraded", "offline", "unavailable", "lost"]
Leader = Literal["newer", "older"]

STEP_STATES: Final[tuple[StepState, ...]] = (
    "ok",
    "degraded",
    "offline",
    "unavailable",
    "lost",
)
"""How a step leaves a cluster, least severe first: ``degraded`` (every asset
serves, some on fewer nodes or without a feature), ``offline`` (some assets do not
serve; their data is kept and rolling on brings them back), ``unavailable`` (the
cluster's JetStream API does not answer; the stores are kept), ``lost`` (assets are
gone for good)."""

_LEADERS: Final[tuple[Leader, ...]] = ("newer", "older")
_RANK: Final = {state: rank for rank, state in enumerate(STEP_STATES)}
# what a single-release report's states and outcomes mean for a step
_FROM_OUTCOME: Final[dict[str, StepState]] = {
    "ok": "ok",
    "meta_unavailable": "unavailable",
    "crash": "unavailable",
    "meta_state_lost": "lost",
}
_FROM_STATE: Final[dict[str, StepState]] = {
    "online": "ok",
    "offline": "offline",
    "degraded": "lost",  # its unknown fields are dropped for good on a lenient load
    "unloadable": "lost",
    "detached": "lost",
    "unavailable": "unavailable",
}


ROLLING_FORMAT: Final = "assetgate-rolling/1"
"""The ``format`` of a rolling prediction (JSON Schema: ``assetgate schema rolling``)."""


class RollingEffect(msgspec.Struct, frozen=True, kw_only=True):
    """One thing a step does to a cluster, in the server's words where it has them.

    Attributes:
        state: what it makes of the step (:data:`STEP_STATES`).
        what: assetgate's sentence for it.
        reason: the server's own words (log line or offline reason), if known.
        assets: the assets it concerns (``cluster/account/stream[/consumer]``);
            empty when it concerns the whole cluster.
        facts: the catalogue facts (``[[cluster_outcomes]]`` ids) behind it.
        assumed: the catalogue marks the mixed-cluster fact as assumed, not observed.
    """

    state: StepState
    what: str
    reason: str | None = None
    assets: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    assumed: bool = False


class RollingStep(msgspec.Struct, frozen=True, kw_only=True):
    """One step: how many nodes run each release, and what follows.

    Attributes:
        step: 0 (every node on FROM) to ``nodes`` (every node on TO).
        releases: the release of each node, in restart order reversed (the first
            restarted node last), for display.
        newer: nodes on the newer release of the two.
        older: nodes on the older release.
        state: the worst of ``leader_newer`` and ``leader_older``.
        leader_newer: the step's state when the meta leader is kept on a node of the
            newer release while one runs (earlier steps taken the same way).
        leader_older: the same when the meta leader is moved to a node of the older
            release as soon as one runs.
        effects: what happens, per leader placement (``leader`` says which; ``None``
            for both).
    """

    step: int
    releases: tuple[str, ...]
    newer: int
    older: int
    state: StepState
    leader_newer: StepState
    leader_older: StepState
    effects: tuple[tuple[Leader | None, RollingEffect], ...] = ()


class RollingCluster(msgspec.Struct, frozen=True, kw_only=True):
    """Every step of one cluster and the first that goes wrong.

    Attributes:
        cluster: the cluster's name ("" when the inventory does not name it).
        steps: step 0 to the last.
        first_wrong: the first step whose state is not ``ok`` (``None``: none).
        keep_leader_newer: some step is better with the meta leader on a newer node
            than on an older one (move it with a meta leader stepdown).
        accepted: the operator's acceptance covering the cluster (``rolling:GLOB``).
    """

    cluster: str
    steps: tuple[RollingStep, ...]
    first_wrong: int | None
    keep_leader_newer: bool
    accepted: str | None = None


class Rolling(msgspec.Struct, frozen=True, kw_only=True):
    """A rolling change predicted step by step for every cluster of an inventory.

    Attributes:
        start: the release every node runs before the change (FROM).
        end: the release every node runs after it (TO).
        direction: ``upgrade`` (TO is newer) or ``rollback``.
        nodes: nodes per cluster.
        mode: ``cluster`` (``single`` has no steps: one server changes at once).
        clusters: one entry per cluster, by name.
        records, assets, errors, ignored: the inventory's accounting.
        accepted: each ``rolling:GLOB`` acceptance and the clusters it covered.
        record_errors: the records that could not be read (they fail the run: each
            may hide an asset).
        ignored_records: the records that are not assets, with the reason.
    """

    format: str = ROLLING_FORMAT
    start: str
    end: str
    direction: Literal["upgrade", "rollback"]
    nodes: int
    clusters: tuple[RollingCluster, ...]
    records: int
    assets: int
    errors: int
    ignored: int
    accepted: tuple[Acceptance, ...] = ()
    record_errors: tuple[ErrorEntry, ...] = ()
    ignored_records: tuple[Ignored, ...] = ()


ACCEPT_RULE: Final = "rolling"
"""The rule of an acceptance that covers a cluster's rolling change: ``rolling:GLOB``."""


def parse_rolling(text: str, catalogue: Catalogue) -> tuple[str, str]:
    """``"2.12.8..2.11.11"`` -> the two releases (FROM, TO), as the catalogue names them.

    Raises:
        ValueError: not ``FROM..TO`` with two different releases.
        InvalidServerVersion, UnknownServerVersion: an end is not a known release.
    """
    start, sep, end = text.strip().partition("..")
    if not sep or not start.strip() or not end.strip() or ".." in end:
        msg = f"invalid rolling change: {text!r} (use FROM..TO, e.g. 2.12.8..2.11.11)"
        raise ValueError(msg)
    first = catalogue.server(start.strip()).version.text
    last = catalogue.server(end.strip()).version.text
    if first == last:
        msg = f"invalid rolling change: {text!r} (FROM and TO are the same release)"
        raise ValueError(msg)
    return first, last


def check_rolling(
    inventory: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
    *,
    start: str,
    end: str,
    nodes: int = 3,
    accept: Sequence[str] = (),
    catalogue: Catalogue | None = None,
) -> Rolling:
    """Predict every step of a node-by-node change from ``start`` to ``end``.

    Args:
        inventory: inventory files or records already read (as for ``check``).
        start: the release every node runs now.
        end: the release every node runs at the end.
        nodes: nodes per cluster (a meta quorum is ``nodes // 2 + 1``).
        accept: ``rolling:GLOB`` exceptions: the clusters whose names match GLOB do
            not fail (:func:`rolling_failures`); the report records them.
        catalogue: the level catalogue (default: the packaged one).

    Raises:
        ValueError: fewer than two nodes, ``start`` equal to ``end``, or a malformed
            acceptance.
        InvalidServerVersion, UnknownServerVersion: a release is not known.
    """
    cat = catalogue if catalogue is not None else load_catalogue()
    if nodes < 2:  # noqa: PLR2004 - one node has no steps in between
        msg = f"a rolling change needs at least 2 nodes, got {nodes}"
        raise ValueError(msg)
    first = cat.server(start).version.text
    last = cat.server(end).version.text
    if first == last:
        msg = f"a rolling change needs two releases, got {first} twice"
        raise ValueError(msg)
    patterns = [_accept_pattern(item) for item in accept]
    # the inventory read and each asset judged once for both releases, as a matrix
    # run does; the reports list only what is not online (or drifts)
    profiles = [cat.server(first), cat.server(last)]
    start_of, end_of = judge_releases(
        inventory, profiles, "cluster", cat, rules=[], fail_on=()
    )
    before, after = start_of.report, end_of.report
    upgrade = Version(last) > Version(first)
    change = _Change(before, after, nodes, upgrade, cat)
    names = sorted(start_of.counts)
    clusters = tuple(_cluster(name, change) for name in names)
    matched: dict[str, list[str]] = {pattern: [] for pattern in patterns}
    marked: list[RollingCluster] = []
    for cluster in clusters:
        for pattern in patterns:
            if cluster.first_wrong is not None and fnmatch.fnmatchcase(
                cluster.cluster, pattern
            ):
                matched[pattern].append(cluster.cluster)
                cluster = msgspec.structs.replace(  # noqa: PLW2901
                    cluster, accepted=f"{ACCEPT_RULE}:{pattern}"
                )
                break
        marked.append(cluster)
    return Rolling(
        start=first,
        end=last,
        direction="upgrade" if upgrade else "rollback",
        nodes=nodes,
        clusters=tuple(marked),
        records=before.summary.records,
        assets=before.summary.assets,
        errors=before.summary.errors,
        ignored=before.summary.ignored,
        accepted=tuple(
            Acceptance(rule=ACCEPT_RULE, asset=pattern, matched=tuple(found))
            for pattern, found in matched.items()
        ),
        record_errors=tuple(before.errors),
        ignored_records=tuple(before.ignored),
    )


def rolling_failures(rolling: Rolling) -> list[str]:
    """The clusters whose change goes wrong at some step and no acceptance covers.

    An inventory with no asset, or with a record that could not be read, fails too
    (nothing was judged, or an asset may be hidden): ``[""]``.
    """
    if not rolling.assets or rolling.errors:
        return [""]
    return [
        c.cluster
        for c in rolling.clusters
        if c.first_wrong is not None and c.accepted is None
    ]


def _accept_pattern(item: str) -> str:
    rule, sep, pattern = item.partition(":")
    if rule != ACCEPT_RULE or not sep or not pattern:
        msg = (
            f"invalid acceptance for a rolling change: {item!r} (use "
            f"{ACCEPT_RULE}:CLUSTER, CLUSTER a glob over cluster names)"
        )
        raise ValueError(msg)
    return pattern


def _outcome(report: Report, cluster: str) -> ClusterOutcome | None:
    """The cluster's outcome on the report's release; ``None`` when it stays up."""
    return next(
        (o for o in report.clusters if o.cluster == cluster and o.outcome != "ok"),
        None,
    )


def _whole(report: Report, cluster: str) -> tuple[StepState, list[RollingEffect]]:
    """A step on one release: that release's own report of the cluster."""
    effects: list[RollingEffect] = []
    outcome = _outcome(report, cluster)
    if outcome is not None:
        effects.append(
            RollingEffect(
                state=_FROM_OUTCOME[outcome.outcome],
                what=f"{outcome.outcome} on {outcome.target}",
                reason=outcome.reason,
                assets=outcome.assets,
                facts=outcome.facts,
            )
        )
    else:
        by_state: dict[str, list[Verdict]] = {}
        for verdict in report.assets:
            if verdict.cluster == cluster and verdict.state != "online":
                by_state.setdefault(verdict.state, []).append(verdict)
        for state, verdicts in sorted(by_state.items()):
            effects.append(
                RollingEffect(
                    state=_FROM_STATE[state],
                    what=f"{len(verdicts)} asset(s) {state} on {report.target.version}",
                    reason=verdicts[0].reason,
                    assets=tuple(asset_id(v) for v in verdicts),
                )
            )
    return _worst(e.state for e in effects), effects


def _outcome_effects(
    cluster: str,
    report: Report,
    *,
    its_nodes: int,
    nodes: int,
    leads: bool,
    rules: Sequence[ClusterOutcomeRule],
) -> list[RollingEffect]:
    """What nodes on ``report``'s release do with an entry only the others can apply.

    ``its_nodes`` of ``nodes`` run that release; ``leads``: one of them is the meta
    leader.
    """
    outcome = _outcome(report, cluster)
    if outcome is None:
        return []
    quorum = nodes // 2 + 1
    others = nodes - its_nodes
    version = report.target.version
    facts = [r for r in rules if r.id in outcome.facts]
    assumed = _assumed(facts)
    exits = [r for r in facts if r.mixed == "exits"]
    stale = [r for r in facts if r.mixed == "stale"]
    if exits:
        down = others < quorum
        tail = (
            f"; {others} of {nodes} nodes are not a meta quorum: JetStream is "
            "unavailable"
            if down
            else f"; the other {others} keep the meta quorum"
        )
        return [
            RollingEffect(
                state="unavailable" if down else "degraded",
                what=f"the {its_nodes} node(s) on {version} exit{tail}",
                reason=outcome.reason,
                assets=outcome.assets,
                facts=tuple(r.id for r in exits),
                assumed=assumed,
            )
        ]
    if leads:
        worst = _stale_leader(stale)
        return [
            RollingEffect(
                state=_FROM_OUTCOME[worst],
                what=f"a node on {version} leads the meta layer: {worst}",
                reason=outcome.reason,
                assets=outcome.assets,
                facts=tuple(r.id for r in stale),
                assumed=assumed,
            )
        ]
    # a stale node still stores and acknowledges the meta log, so the leader keeps its
    # quorum and the API answers; but it applies none of the cluster's assignments, so
    # it runs no replica: an asset serves while the other nodes hold its majority
    return [
        RollingEffect(
            state="degraded",
            what=(
                f"the {its_nodes} node(s) on {version} cannot apply the meta entries, "
                f"fall behind the meta leader (their /healthz: {stale[0].mixed_health}) "
                "and run no replica"
            ),
            reason=outcome.reason,
            assets=outcome.assets,
            facts=tuple(r.id for r in stale),
            assumed=assumed,
        ),
        *_replica_effects(
            [v for v in report.assets if v.cluster == cluster],
            its_nodes,
            nodes,
            version,
        ),
    ]


def _replica_effects(
    verdicts: Sequence[Verdict], without: int, nodes: int, version: str
) -> list[RollingEffect]:
    """Assets whose replicas on ``without`` nodes (of ``version``) do not run."""
    serving: list[str] = []
    stopped: list[str] = []
    for verdict in verdicts:
        replicas = min(verdict.replicas or 1, nodes)
        (serving if _serves(replicas, without) else stopped).append(asset_id(verdict))
    effects: list[RollingEffect] = []
    if serving:
        effects.append(
            RollingEffect(
                state="degraded",
                what=(
                    f"{len(serving)} asset(s) serve without their replicas on the "
                    f"{version} nodes"
                ),
                assets=tuple(serving),
            )
        )
    if stopped:
        effects.append(
            RollingEffect(
                state="offline",
                what=(
                    f"{len(stopped)} asset(s) do not serve: the {version} nodes hold a "
                    "majority of their replicas (or their one replica)"
                ),
                assets=tuple(stopped),
            )
        )
    return effects


def _last_leader(
    cluster: str, older: Report, rules: Sequence[ClusterOutcomeRule]
) -> list[RollingEffect]:
    """The last step of a rollback: only older nodes are left to lead the meta layer."""
    outcome = _outcome(older, cluster)
    stale = [
        r
        for r in rules
        if outcome is not None and r.id in outcome.facts and r.mixed == "stale"
    ]
    if outcome is None or not stale:
        return []
    worst = _stale_leader(stale)
    return [
        RollingEffect(
            state=_FROM_OUTCOME[worst],
            what=(
                f"the last newer node leaves: if the nodes on {older.target.version} "
                f"elect a meta leader among themselves, {worst}"
            ),
            reason=outcome.reason,
            assets=outcome.assets,
            facts=tuple(r.id for r in stale),
            assumed=_assumed(stale),
        )
    ]


def _stale_leader(stale: Sequence[ClusterOutcomeRule]) -> Outcome:
    """The worst a cluster suffers once a stale node of these facts leads it."""
    return max(
        (r.mixed_leader or "ok" for r in stale), key=lambda o: _RANK[_FROM_OUTCOME[o]]
    )


def _assumed(facts: Sequence[ClusterOutcomeRule]) -> bool:
    """The catalogue marks one of the mixed-cluster facts as assumed, not observed."""
    return any(r.mixed_note.startswith("Assumed") for r in facts)


def _serves(replicas: int, without: int) -> bool:
    """An asset of ``replicas`` still has a majority when ``without`` nodes run none.

    Placement is not known, so the worst is assumed: as many replicas as can sit on
    those nodes (a replicated asset of a cluster its size has one on every node).
    """
    running = replicas - min(replicas, without)
    return running >= replicas // 2 + 1


def _asset_effects(
    cluster: str, older: Report, newer: Report, older_nodes: int, nodes: int
) -> list[RollingEffect]:
    """Assets one of the two releases does not honour: they run on the other's nodes."""
    groups: dict[tuple[StepState, str, str], list[Verdict]] = {}
    # the light reports list what is not online: an asset absent from one is online
    newer_verdicts = {asset_id(v): v for v in newer.assets if v.cluster == cluster}
    older_release, newer_release = older.target.version, newer.target.version
    for mine in older.assets:
        if mine.cluster != cluster:
            continue
        theirs = newer_verdicts.get(asset_id(mine))
        sides = (
            (mine, older_nodes, older_release, newer_release),
            (theirs, nodes - older_nodes, newer_release, older_release),
        )
        faulty = [
            side
            for side in sides
            if side[0] is not None and (side[0].own_state or side[0].state) != "online"
        ]
        if not faulty:
            continue
        verdict, _, release, other = faulty[0]
        assert verdict is not None  # noqa: S101 - filtered above
        replicas = min(mine.replicas or 1, nodes)
        own = verdict.own_state or verdict.state
        if _serves(replicas, sum(side[1] for side in faulty)):
            state: StepState = "degraded"
            words = f"serve from the {other} nodes only"
        elif own == "degraded":  # loaded without some fields: still serves
            state, words = "degraded", "serve without the fields it drops"
        else:
            state = "offline"
            words = (
                f"may not serve (one replica, perhaps on a {release} node)"
                if replicas == 1
                else f"do not serve: {release} nodes hold a majority of their replicas"
            )
        groups.setdefault((state, f"{own} on {release}", words), []).append(verdict)
    return [
        RollingEffect(
            state=state,
            what=f"{len(found)} asset(s) {which} {words}",
            reason=found[0].own_reason or found[0].reason,
            assets=tuple(asset_id(v) for v in found),
        )
        for (state, which, words), found in sorted(groups.items())
    ]


def _down(report: Report, cluster: str) -> bool:
    return _outcome(report, cluster) is not None


def _worst(states: Iterable[StepState]) -> StepState:
    return max(states, key=_RANK.__getitem__, default="ok")


class _Change(NamedTuple):
    """A rolling change: the two single-release reports and the node count."""

    before: Report
    after: Report
    nodes: int
    upgrade: bool
    catalogue: Catalogue

    @property
    def older(self) -> Report:
        return self.before if self.upgrade else self.after

    @property
    def newer(self) -> Report:
        return self.after if self.upgrade else self.before


def _cluster(name: str, change: _Change) -> RollingCluster:
    before, after, nodes, upgrade, cat = change
    older, newer = change.older, change.newer
    first, last = before.target.version, after.target.version
    older_rules = cat.server(older.target.version).cluster_outcomes
    steps: list[RollingStep] = []
    lost: dict[Leader, bool] = {"newer": False, "older": False}
    for step in range(nodes + 1):
        older_nodes = nodes - step if upgrade else step
        releases = (first,) * (nodes - step) + (last,) * step
        effects: list[tuple[Leader | None, RollingEffect]] = []
        by_leader: dict[Leader, StepState] = {}
        if step in {0, nodes}:
            state, found = _whole(before if step == 0 else after, name)
            if step == nodes and not upgrade:
                found += _last_leader(name, older, older_rules)
                state = _worst(e.state for e in found)
            effects.extend((None, e) for e in found)
            by_leader = {"newer": state, "older": state}
        elif _down(newer, name):  # neither release applies the entry
            found = [*_whole(older, name)[1], *_whole(newer, name)[1]]
            effects.extend((None, e) for e in found)
            state = _worst(e.state for e in found)
            by_leader = {"newer": state, "older": state}
        else:
            for leader in _LEADERS:
                found = _outcome_effects(
                    name,
                    older,
                    its_nodes=older_nodes,
                    nodes=nodes,
                    leads=leader == "older",
                    rules=older_rules,
                )
                if not found:
                    found = _asset_effects(name, older, newer, older_nodes, nodes)
                by_leader[leader] = _worst(e.state for e in found)
                effects.extend((leader, e) for e in found)
            effects = _same(effects)
        for leader in _LEADERS:
            if lost[leader]:
                by_leader[leader] = "lost"
            lost[leader] = by_leader[leader] == "lost"
        steps.append(
            RollingStep(
                step=step,
                releases=releases,
                newer=nodes - older_nodes,
                older=older_nodes,
                state=_worst(by_leader.values()),
                leader_newer=by_leader["newer"],
                leader_older=by_leader["older"],
                effects=tuple(effects),
            )
        )
    wrong = [s.step for s in steps if s.state != "ok"]
    better = any(_RANK[s.leader_newer] < _RANK[s.leader_older] for s in steps)
    return RollingCluster(
        cluster=name,
        steps=tuple(steps),
        first_wrong=wrong[0] if wrong else None,
        keep_leader_newer=better,
    )


def _same(
    effects: list[tuple[Leader | None, RollingEffect]],
) -> list[tuple[Leader | None, RollingEffect]]:
    """Effects that do not depend on the leader, once (``None`` for both)."""
    newer = [e for leader, e in effects if leader == "newer"]
    older = [e for leader, e in effects if leader == "older"]
    if newer == older:
        return [(None, e) for e in newer]
    return effects
