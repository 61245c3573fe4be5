"""Tests for whole-cluster outcomes: catalogue facts, check's clusters section, states."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.catalogue.levels import load_catalogue
from assetgate.errors import CatalogueError
from assetgate.inventory.read import Asset
from assetgate.judge.outcomes import ClusterOutcome
from assetgate.report.formats import render
from assetgate.run.check import check, finding_rules

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.wire import AssetKind

FLOW_ERROR: Final = 'can not unmarshal "\\"flow_control\\""'
META_REASON: Final = f"Error applying JetStream cluster entries: {FLOW_ERROR}"
NOT_AVAILABLE: Final = "JetStream system temporarily unavailable"


def _asset(cluster: str, stream: str, name: str | None = None, **config: Any) -> Asset:
    kind: AssetKind = "stream" if name is None else "consumer"
    body: dict[str, Any] = {"name": stream, "subjects": [f"{stream.lower()}.>"]}
    if name is not None:
        body = {"durable_name": name, "ack_policy": "explicit", **config}
    else:
        body.update(config)
    return Asset(
        source=f"t:{cluster}/{stream}/{name or ''}",
        cluster=cluster,
        kind=kind,
        stream=stream,
        name=name or stream,
        config=json.dumps(body).encode(),
    )


def _fleet() -> list[Asset]:
    """C1 holds a flow_control consumer (2.14+); C2 only plain assets."""
    return [
        _asset("C1", "S_PLAIN"),
        _asset("C1", "H_FLOW"),
        _asset(
            "C1",
            "H_FLOW",
            "C_FLOW",
            ack_policy="flow_control",
            deliver_subject="push.flow",
        ),
        _asset("C1", "H_FLOW", "C_OK"),
        _asset("C2", "ORDERS"),
        _asset("C2", "ORDERS", "ship"),
    ]


@pytest.mark.parametrize(
    ("version", "outcome"),
    [
        ("2.10.26", "meta_state_lost"),
        ("2.11.8", "meta_state_lost"),
        ("2.11.9", "meta_state_lost"),
        ("2.11.10", "crash"),
        ("2.11.11", "crash"),
        ("2.12.0", "meta_state_lost"),
        ("2.12.1", "crash"),
        ("2.12.4", "crash"),
        ("2.12.5", "meta_state_lost"),
        ("2.12.6", "meta_unavailable"),
        ("2.12.8", "meta_unavailable"),
        ("2.15.1", "meta_unavailable"),
    ],
)
def test_catalogue_records_the_outcome_per_patch(
    catalogue: Catalogue, version: str, outcome: str
) -> None:
    """levels/ says per patch release what an unparsable consumer does to a cluster."""
    rules = catalogue.server(version).cluster_outcomes
    (rule,) = [r for r in rules if r.id == "meta.unparsable_entry"]
    assert (rule.id, rule.when, rule.kinds, rule.outcome) == (
        "meta.unparsable_entry",
        "unloadable",
        ("consumer",),
        outcome,
    )


def test_flow_control_consumer_takes_the_cluster_down_on_2_12_8(
    catalogue: Catalogue,
) -> None:
    """A 2.12.8 cluster with a flow_control consumer is meta_unavailable, in its words."""
    report = check(_fleet(), target="2.12.8", catalogue=catalogue)
    assert report.clusters == [
        ClusterOutcome(
            cluster="C1",
            target="2.12.8",
            outcome="meta_unavailable",
            reason=META_REASON,
            assets=("C1/$G/H_FLOW/C_FLOW",),
            facts=("meta.unparsable_entry",),
        ),
        ClusterOutcome(cluster="C2", target="2.12.8", outcome="ok"),
    ]


def test_every_asset_of_a_down_cluster_is_unavailable(catalogue: Catalogue) -> None:
    """Assets of the down cluster are unavailable, keeping their own verdict; others not."""
    report = check(_fleet(), target="2.12.8", catalogue=catalogue)
    states = {
        (v.cluster, v.name): (v.state, v.reason, v.own_state, v.own_reason)
        for v in report.assets
    }
    assert states == {
        ("C1", "S_PLAIN"): ("unavailable", NOT_AVAILABLE, "online", None),
        ("C1", "H_FLOW"): ("unavailable", NOT_AVAILABLE, "online", None),
        ("C1", "C_FLOW"): ("unavailable", NOT_AVAILABLE, "unloadable", FLOW_ERROR),
        ("C1", "C_OK"): ("unavailable", NOT_AVAILABLE, "online", None),
        ("C2", "ORDERS"): ("online", None, None, None),
        ("C2", "ship"): ("online", None, None, None),
    }
    assert (report.summary.unavailable, report.summary.online) == (4, 2)


def test_single_mode_has_no_cluster_outcomes(catalogue: Catalogue) -> None:
    """A single server only loses the unparsable consumer (observed): no clusters section."""
    report = check(_fleet(), target="2.12.8", mode="single", catalogue=catalogue)
    assert report.clusters == []
    assert report.summary.unavailable == 0
    assert report.summary.unloadable == 1


def test_target_that_parses_the_value_keeps_the_cluster_up(
    catalogue: Catalogue,
) -> None:
    """On 2.14.6 (flow_control known) every cluster is ok and nothing is unavailable."""
    report = check(_fleet(), target="2.14.6", catalogue=catalogue)
    assert [c.outcome for c in report.clusters] == ["ok", "ok"]
    assert report.summary.unavailable == 0


def test_per_cluster_targets_judge_each_cluster_on_its_own(
    catalogue: Catalogue,
) -> None:
    """C1 on 2.14.6 stays up while the same assets would take it down on 2.12.8."""
    report = check(
        _fleet(), target={"C1": "2.14.6", "C2": "2.12.8"}, catalogue=catalogue
    )
    assert [(c.cluster, c.target, c.outcome) for c in report.clusters] == [
        ("C1", "2.14.6", "ok"),
        ("C2", "2.12.8", "ok"),
    ]


def test_unavailable_fails_by_default_and_can_be_accepted(
    catalogue: Catalogue,
) -> None:
    """``unavailable`` and the outcome are findings; both can be accepted explicitly."""
    report = check(_fleet(), target="2.12.8", catalogue=catalogue)
    found = finding_rules(report, ["unavailable"])
    assert found == [
        "meta_unavailable: C1",
        "unavailable: C1/$G/H_FLOW",
        "unavailable: C1/$G/H_FLOW/C_FLOW",
        "unavailable: C1/$G/H_FLOW/C_OK",
        "unavailable: C1/$G/S_PLAIN",
    ]
    accepted = check(
        _fleet(),
        target="2.12.8",
        accept=["unavailable:C1/*", "meta_unavailable:C1"],
        catalogue=catalogue,
    )
    assert finding_rules(accepted, ["unavailable"]) == []


@pytest.mark.parametrize("fmt", ["text", "markdown", "sarif", "junit", "json"])
def test_every_format_names_the_down_cluster_and_its_reason(
    catalogue: Catalogue, fmt: str
) -> None:
    """Each report format carries the cluster, its outcome, the reason and the cause."""
    report = check(_fleet(), target="2.12.8", catalogue=catalogue)
    text = render(report, fmt).replace("\\", "")  # Markdown escapes "_"
    assert "meta_unavailable" in text
    assert "H_FLOW/C_FLOW" in text
    assert "Error applying JetStream cluster entries" in text


def test_text_verdict_line_leads_with_the_down_cluster(catalogue: Catalogue) -> None:
    """The text report's last line says which cluster goes down before counting assets."""
    report = check(_fleet(), target="2.12.8", catalogue=catalogue)
    last = render(report, "text").splitlines()[-1]
    assert last.startswith("verdict: 1 cluster down: C1 (meta_unavailable); ")


_ENDS_FACT = """
[[cluster_outcomes]]
id = "meta.unparsable_entry"
when = "unloadable"
kinds = ["consumer"]
outcome = "ok"
reason = ""
note = "Synthetic: a release that skips unparsable meta entries."
"""


def test_later_file_ends_a_fact_by_id(
    levels_copy: Path, rechecksum: Callable[[Path], None]
) -> None:
    """A later entry with the same id and outcome "ok" ends the fact (data only)."""
    path = levels_copy / "2.15.toml"
    path.write_text(path.read_text(encoding="utf-8") + _ENDS_FACT, encoding="utf-8")
    rechecksum(levels_copy)
    cat = load_catalogue(levels_copy)
    assert cat.server("2.14.6").cluster_outcomes
    assert cat.server("2.15.1").cluster_outcomes == ()


def test_outcome_from_outside_its_line_is_refused(
    levels_copy: Path, rechecksum: Callable[[Path], None]
) -> None:
    """A ``from`` patch of another release line is a catalogue problem."""
    path = levels_copy / "2.15.toml"
    text = _ENDS_FACT.replace('outcome = "ok"', 'from = "2.14.0"\noutcome = "ok"')
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    rechecksum(levels_copy)
    with pytest.raises(CatalogueError) as info:
        load_catalogue(levels_copy)
    assert info.value.problems == [
        "2.15.toml: cluster outcome 'meta.unparsable_entry': from '2.14.0' is not in this line"
    ]


@pytest.mark.parametrize(
    ("version", "replicas", "outcome"),
    [
        ("2.10.26", 3, "crash"),
        ("2.11.8", 3, "crash"),
        ("2.11.8", 1, "ok"),
        ("2.11.9", 3, "ok"),
        ("2.12.8", 3, "ok"),
    ],
)
def test_replicated_sourcing_consumer_crashes_lenient_lines(
    catalogue: Catalogue, version: str, replicas: int, outcome: str
) -> None:
    """An R3 ``sourcing`` consumer panics 2.10-2.11.8 clusters (raft op 18); R1 does not."""
    stream = _asset("C1", "H", num_replicas=replicas)
    consumer = _asset("C1", "H", "C", sourcing=True)
    report = check([stream, consumer], target=version, catalogue=catalogue)
    (cluster,) = report.clusters
    assert cluster.outcome == outcome
    if outcome == "crash":
        assert (
            cluster.reason == "panic: JetStream Cluster Unknown group entry op type: 18"
        )
        assert cluster.assets == ("C1/$G/H/C",)
        assert cluster.facts == ("raft.sourcing_consumer_op",)
