"""Whole-cluster outcomes: stored assets that take a cluster's JetStream down.

In a cluster every asset is also an entry of the JetStream meta layer. When the target
cannot even leniently decode one of them (an enum value it does not know), real
clusters do not lose just that asset: every node fails to apply the meta entries, no
meta leader is elected and every JetStream API request is refused. The facts (which
verdict causes which outcome on which release line, in the server's words) are data in
``levels/`` (``[[cluster_outcomes]]``); this module applies them to the verdicts of a
cluster-mode check. Pure: no I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import msgspec

from assetgate.judge.gate import asset_id

# msgspec reads the Struct annotations at runtime
from assetgate.wire import OUTCOMES, Outcome

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from assetgate.catalogue.levels import ClusterOutcomeRule, ServerProfile
    from assetgate.judge.gate import Verdict

__all__ = [
    "OUTCOMES",
    "ClusterOutcome",
    "HealthFailure",
    "causes",
    "cluster_outcomes",
    "health_failures",
    "mark_down",
]


_SEVERITY: Final = {outcome: rank for rank, outcome in enumerate(OUTCOMES)}


class ClusterOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What the target does with one cluster as a whole.

    Attributes:
        cluster: the cluster's name ("" when the inventory does not name it).
        target: the server version the cluster was judged against.
        outcome: ``ok``, ``meta_unavailable`` (no meta leader: every JetStream API
            request answers 503), ``meta_state_lost`` (serves, lists no assets) or
            ``crash`` (nodes panic and exit; any survivor gets no meta leader).
        reason: the server's own words for it (its log line), ``None`` when ok.
        assets: the assets that cause it (``cluster/account/stream[/consumer]``).
        facts: the catalogue facts (``[[cluster_outcomes]]`` ids) that apply.
        accepted: the operator's acceptance covering the outcome (``RULE:CLUSTER``).
    """

    cluster: str
    target: str
    outcome: Outcome
    reason: str | None = None
    assets: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    accepted: str | None = None


def _matches(rule: ClusterOutcomeRule, verdict: Verdict) -> bool:
    if verdict.kind not in rule.kinds:
        return False
    if rule.replicated and (verdict.replicas or 1) < 2:  # noqa: PLR2004 - a raft group
        return False
    if rule.when == "dropped":
        return rule.field in verdict.dropped_fields
    # a config check the target refuses is not an entry the meta layer cannot parse
    return verdict.state == rule.when and verdict.check is None


def cluster_outcomes(
    verdicts: Sequence[Verdict], profile_of: Callable[[str], ServerProfile]
) -> tuple[list[Verdict], list[ClusterOutcome]]:
    """Judge every cluster of a cluster-mode report; mark the assets of a down one.

    Returns the verdicts (those of a cluster whose outcome is not ``ok`` get the state
    ``unavailable``, their own verdict kept in ``own_state``/``own_reason``) and one
    outcome per cluster, in cluster name order. The reason is the most severe fact's,
    worded with the first causing asset (in report order).
    """
    outcomes, down = judge_clusters(verdicts, profile_of)
    return mark_down(verdicts, down), outcomes


def mark_down(verdicts: Iterable[Verdict], down: Mapping[str, str]) -> list[Verdict]:
    """``verdicts`` with those of a down cluster (``down``: cluster -> reason) marked."""
    if not down:
        return list(verdicts)
    return [
        verdict
        if (reason := down.get(verdict.cluster)) is None
        else _unavailable(verdict, reason)
        for verdict in verdicts
    ]


def causes(
    rules: Sequence[ClusterOutcomeRule], verdict: Verdict
) -> list[ClusterOutcomeRule]:
    """The rules of a cluster's target (``profile.cluster_outcomes``) ``verdict`` triggers."""
    return [rule for rule in rules if _matches(rule, verdict)]


def judge_clusters(
    verdicts: Sequence[Verdict],
    profile_of: Callable[[str], ServerProfile],
    *,
    names: Iterable[str] = (),
) -> tuple[list[ClusterOutcome], dict[str, str]]:
    """The outcome of every cluster, and what each down cluster's assets are answered.

    The first half of :func:`cluster_outcomes`: the outcomes in cluster name order,
    and per cluster whose outcome is not ``ok`` the reason its assets get. The
    clusters are those of ``verdicts`` and ``names`` (clusters whose verdicts are
    left out because none of them can bring a cluster down: all online).
    """
    clusters: dict[str, list[tuple[ClusterOutcomeRule, Verdict]]] = {
        name: [] for name in names
    }
    # per cluster: its rules, and the states that can trigger one (a quick skip)
    rules_of: dict[
        str, tuple[tuple[ClusterOutcomeRule, ...], frozenset[str], bool]
    ] = {}
    for verdict in verdicts:
        known = rules_of.get(verdict.cluster)
        if known is None:  # once per cluster, not per asset
            rules = profile_of(verdict.cluster).cluster_outcomes
            known = rules_of[verdict.cluster] = (
                rules,
                frozenset(r.when for r in rules),
                any(r.when == "dropped" for r in rules),
            )
            clusters.setdefault(verdict.cluster, [])
        rules, states, dropped = known
        if verdict.state not in states and not (dropped and verdict.dropped_fields):
            continue
        clusters[verdict.cluster].extend(
            (candidate, verdict) for candidate in causes(rules, verdict)
        )
    outcomes: list[ClusterOutcome] = []
    down: dict[str, str] = {}
    for cluster in sorted(clusters):
        found = clusters[cluster]
        target = profile_of(cluster).version.text
        if not found:
            outcomes.append(
                ClusterOutcome(cluster=cluster, target=target, outcome="ok")
            )
            continue
        worst_rule, first = max(found, key=lambda c: _SEVERITY[c[0].outcome])
        down[cluster] = worst_rule.asset_reason
        outcomes.append(
            ClusterOutcome(
                cluster=cluster,
                target=target,
                outcome=worst_rule.outcome,
                reason=worst_rule.reason.format(
                    error=first.reason or "",
                    account=first.account,
                    stream=first.stream,
                    name=first.name,
                ),
                assets=tuple(dict.fromkeys(asset_id(v) for _, v in found)),
                facts=tuple(dict.fromkeys(rule.id for rule, _ in found)),
            )
        )
    return outcomes, down


def mark_unavailable(
    verdicts: Sequence[Verdict],
    reason: str,
    marked: dict[tuple[int, str], tuple[Verdict, Verdict]],
) -> list[Verdict]:
    """``verdicts`` of a down cluster, marked unavailable with ``reason``.

    ``marked`` keeps the marked verdicts between calls (by the verdict object and
    the reason), so that reports sharing verdict objects (``check_matrix``'s, one per
    release) share the marked ones too, without making them again.
    """
    out: list[Verdict] = []
    for verdict in verdicts:
        key = (id(verdict), reason)
        found = marked.get(key)
        if found is None or found[0] is not verdict:
            found = marked[key] = (verdict, _unavailable(verdict, reason))
        out.append(found[1])
    return out


def _unavailable(verdict: Verdict, reason: str) -> Verdict:
    """``verdict`` as its cluster's outcome leaves it: unavailable, its own kept."""
    return msgspec.structs.replace(
        verdict,
        state="unavailable",
        reason=reason,
        own_state=verdict.state,
        own_reason=verdict.reason,
        dropped_fields=(),
    )


class HealthFailure(msgspec.Struct, frozen=True, kw_only=True):
    """A server's ``/healthz`` failing because a stored asset was not recovered.

    Attributes:
        cluster: the cluster ("" for a single server or an unnamed cluster).
        target: the server version.
        asset: the asset the server did not recover (``cluster/account/stream[/c]``).
        error: the ``/healthz`` error text, in the server's words (it fails for as
            long as the server runs; it names one such asset at a time).
    """

    cluster: str
    target: str
    asset: str
    error: str


def health_failures(
    verdicts: Sequence[Verdict], mode: str, profile_of: Callable[[str], ServerProfile]
) -> list[HealthFailure]:
    """The ``/healthz`` failures of assets that a config check keeps from loading.

    Only assets whose own verdict is ``unloadable`` by a config check count (a cluster
    that is down as a whole has its own outcome); the wordings are data in
    ``levels/`` (``[health]``, per kind and mode).
    """
    out: list[HealthFailure] = []
    for verdict in verdicts:
        if verdict.check is None or verdict.state != "unloadable":
            continue
        profile = profile_of(verdict.cluster)
        template = profile.line.health.get(f"{verdict.kind}_{mode}")
        if template is None:
            continue
        out.append(
            HealthFailure(
                cluster=verdict.cluster,
                target=profile.version.text,
                asset=asset_id(verdict),
                error=template.format(
                    account=verdict.account, stream=verdict.stream, name=verdict.name
                ),
            )
        )
    return out
