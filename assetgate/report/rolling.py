"""What the formats of a rolling run (``check --rolling FROM..TO``) share.

Per cluster, one line per step: the releases of its nodes, the state with the meta
leader kept on a newer node and moved to an older one, and what happens, in the
server's words; then the first step that goes wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    from assetgate.run.rolling import (
        Rolling,
        RollingCluster,
        RollingEffect,
        RollingStep,
    )

__all__ = [
    "LEADER",
    "conclusion",
    "effect_text",
    "heading",
    "record_lines",
    "rolling_verdict",
    "step_nodes",
    "step_states",
]


LEADER: Final = {
    None: "",
    "newer": "leader kept on newer: ",
    "older": "leader moved to older: ",
}
"""How a step's line starts, by where the meta leader is."""


def step_nodes(step: RollingStep) -> str:
    """A step's nodes: how many run each release."""
    counts: dict[str, int] = {}
    for release in step.releases:
        counts[release] = counts.get(release, 0) + 1
    return " + ".join(f"{n}x {release}" for release, n in counts.items())


def step_states(step: RollingStep) -> str:
    """A step's asset counts per state."""
    if step.leader_newer == step.leader_older:
        return step.state
    return (
        f"{step.leader_newer} (leader kept on newer) / "
        f"{step.leader_older} (leader moved to older)"
    )


def effect_text(effect: RollingEffect) -> str:
    """What happens at a step, in the server's words."""
    text = effect.what
    if effect.reason:
        text += f": {effect.reason}"
    if effect.assumed:
        text += " [assumed, not observed]"
    return text


def heading(rolling: Rolling) -> str:
    """The heading: from which release to which, over how many nodes."""
    return (
        f"rolling {rolling.direction} from {rolling.start} to {rolling.end}, "
        f"{rolling.nodes} nodes per cluster, one node at a time"
    )


def conclusion(cluster: RollingCluster, rolling: Rolling) -> str:
    """A cluster's conclusion: the first step that goes wrong, or none."""
    if cluster.first_wrong is None:
        return "every step is ok"
    step = cluster.steps[cluster.first_wrong]
    text = f"first step that goes wrong: step {step.step} ({step.state})"
    if cluster.first_wrong == 0:
        text += f": the inventory is not clean on {rolling.start} itself"
    if cluster.keep_leader_newer:
        text += (
            "; keep the meta leader on a newer node ($JS.API.META.LEADER.STEPDOWN "
            "with a preferred server) while one runs"
        )
    if cluster.accepted:
        text += f" (accepted: {cluster.accepted})"
    return text


def record_lines(rolling: Rolling) -> list[str]:
    """The record errors and ignored records of the inventory, one line each."""
    return [
        *(f"record error: {e.source}: {e.message}" for e in rolling.record_errors),
        *(f"ignored: {i.source}: {i.reason}" for i in rolling.ignored_records),
    ]


def rolling_verdict(rolling: Rolling) -> str:
    """The rolling run's verdict line."""
    if not rolling.assets:
        return "verdict: FAIL - the inventory holds no asset to judge"
    if rolling.errors:
        return f"verdict: FAIL - {rolling.errors} record(s) could not be read"
    wrong = [c for c in rolling.clusters if c.first_wrong is not None]
    failing = [c for c in wrong if c.accepted is None]
    if failing:
        names = ", ".join(shown_cluster(c.cluster) for c in failing)
        return f"verdict: FAIL - {len(failing)} cluster(s) go wrong during the change: {names}"
    if wrong:
        return f"verdict: ok - {len(wrong)} cluster(s) go wrong, all accepted"
    return f"verdict: ok - every step of every cluster is ok ({rolling.assets} assets)"
