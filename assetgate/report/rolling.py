"""The formats of a rolling run (``check --rolling FROM..TO``): text, JSON, Markdown.

Text and Markdown show, per cluster, one line per step: the releases of its nodes, the
state with the meta leader kept on a newer node and moved to an older one, and what
happens, in the server's words; then the first step that goes wrong. JSON is the
:class:`~assetgate.run.rolling.Rolling` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import msgspec

from assetgate.report.render import escape_markdown, escape_terminal, fit_markdown

if TYPE_CHECKING:
    from assetgate.run.rolling import (
        Rolling,
        RollingCluster,
        RollingEffect,
        RollingStep,
    )

__all__ = ["ROLLING_FORMATS", "render_rolling"]

ROLLING_FORMATS: Final = ("text", "json", "markdown")
_LEADER: Final = {
    None: "",
    "newer": "leader kept on newer: ",
    "older": "leader moved to older: ",
}


def render_rolling(rolling: Rolling, fmt: str) -> str:
    """``rolling`` in ``fmt``: text, json or markdown."""
    if fmt == "json":
        encoded = msgspec.json.encode(rolling)
        return msgspec.json.format(encoded, indent=2).decode() + "\n"
    if fmt == "markdown":
        return fit_markdown("\n".join(_markdown(rolling)) + "\n", tail=1)
    return "\n".join(_text(rolling)) + "\n"


def _nodes(step: RollingStep) -> str:
    counts: dict[str, int] = {}
    for release in step.releases:
        counts[release] = counts.get(release, 0) + 1
    return " + ".join(f"{n}x {release}" for release, n in counts.items())


def _states(step: RollingStep) -> str:
    if step.leader_newer == step.leader_older:
        return step.state
    return (
        f"{step.leader_newer} (leader kept on newer) / "
        f"{step.leader_older} (leader moved to older)"
    )


def _effect(effect: RollingEffect) -> str:
    text = effect.what
    if effect.reason:
        text += f": {effect.reason}"
    if effect.assumed:
        text += " [assumed, not observed]"
    return text


def _heading(rolling: Rolling) -> str:
    return (
        f"rolling {rolling.direction} from {rolling.start} to {rolling.end}, "
        f"{rolling.nodes} nodes per cluster, one node at a time"
    )


def _conclusion(cluster: RollingCluster, rolling: Rolling) -> str:
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


def _records(rolling: Rolling) -> list[str]:
    return [
        *(f"record error: {e.source}: {e.message}" for e in rolling.record_errors),
        *(f"ignored: {i.source}: {i.reason}" for i in rolling.ignored_records),
    ]


def _verdict(rolling: Rolling) -> str:
    if not rolling.assets:
        return "verdict: FAIL - the inventory holds no asset to judge"
    if rolling.errors:
        return f"verdict: FAIL - {rolling.errors} record(s) could not be read"
    wrong = [c for c in rolling.clusters if c.first_wrong is not None]
    failing = [c for c in wrong if c.accepted is None]
    if failing:
        names = ", ".join(c.cluster or "(unnamed cluster)" for c in failing)
        return f"verdict: FAIL - {len(failing)} cluster(s) go wrong during the change: {names}"
    if wrong:
        return f"verdict: ok - {len(wrong)} cluster(s) go wrong, all accepted"
    return f"verdict: ok - every step of every cluster is ok ({rolling.assets} assets)"


def _text(rolling: Rolling) -> list[str]:
    out = [
        f"assetgate: {_heading(rolling)}",
        (
            f"inventory: {rolling.records} records, {rolling.assets} assets, "
            f"{rolling.errors} errors, {rolling.ignored} ignored"
        ),
    ]
    for cluster in rolling.clusters:
        out.append(f"cluster {escape_terminal(cluster.cluster or '(unnamed cluster)')}")
        for step in cluster.steps:
            out.append(f"  step {step.step}  {_nodes(step):<28} {_states(step)}")
            shown: tuple[str, ...] = ()
            for leader, effect in step.effects:
                out.append(
                    "           " + escape_terminal(_LEADER[leader] + _effect(effect))
                )
                if effect.assets and effect.assets != shown:
                    shown = effect.assets
                    more = len(shown) - 5
                    tail = f" and {more} more" if more > 0 else ""
                    names = escape_terminal(", ".join(shown[:5]))
                    out.append(f"             assets: {names}{tail}")
        out.append("  " + escape_terminal(_conclusion(cluster, rolling)))
    out += [escape_terminal(line) for line in _records(rolling)]
    out.append(escape_terminal(_verdict(rolling)))
    return out


def _markdown(rolling: Rolling) -> list[str]:
    out = [f"# assetgate: {escape_markdown(_heading(rolling))}", ""]
    for cluster in rolling.clusters:
        name = escape_markdown(cluster.cluster or "(unnamed cluster)")
        out += [
            f"## Cluster {name}",
            "",
            "| step | nodes | leader kept on newer | leader moved to older | what happens |",
            "|---:|---|---|---|---|",
        ]
        for step in cluster.steps:
            what = "<br>".join(
                escape_markdown(_LEADER[leader] + _effect(effect))
                for leader, effect in step.effects
            )
            out.append(
                f"| {step.step} | {_nodes(step)} | {step.leader_newer} | "
                f"{step.leader_older} | {what or 'ok'} |"
            )
        out += ["", escape_markdown(_conclusion(cluster, rolling)), ""]
    records = _records(rolling)
    if records:
        out += [f"- {escape_markdown(line)}" for line in records] + [""]
    out.append(f"**{escape_markdown(_verdict(rolling))}**")
    return out
