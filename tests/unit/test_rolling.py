"""Tests for ``check --rolling``: the steps of a node-by-node change of a cluster."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.catalogue.levels import load_catalogue
from assetgate.cli.main import main
from assetgate.errors import CatalogueError
from assetgate.inventory.read import Asset
from assetgate.run.check import check
from assetgate.run.rolling import (
    Rolling,
    RollingCluster,
    check_rolling,
    parse_rolling,
    rolling_failures,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.wire import AssetKind

COUNTER_REASON: Final = 'unsupported - config error: unknown field "allow_msg_counter"'
PANIC: Final = (
    "panic: runtime error: invalid memory address or nil pointer dereference "
    "(in (*jetStream).processClusterCreateConsumer)"
)
FLOW: Final = (
    'Error applying JetStream cluster entries: can not unmarshal "\\"flow_control\\""'
)


def _asset(cluster: str, stream: str, name: str | None = None, **config: Any) -> Asset:
    kind: AssetKind = "stream" if name is None else "consumer"
    body: dict[str, Any] = {"name": stream, "subjects": [f"{stream.lower()}.>"]}
    if name is not None:
        body = {"durable_name": name, "ack_policy": "explicit"}
    body.update(config)
    return Asset(
        source=f"t:{cluster}/{stream}/{name or ''}",
        cluster=cluster,
        account="APP",
        kind=kind,
        stream=stream,
        name=name or stream,
        config=json.dumps(body).encode(),
    )


def _plain(cluster: str) -> list[Asset]:
    return [
        _asset(cluster, "ORD", num_replicas=3),
        _asset(cluster, "ORD", "C1"),
    ]


def _counter(cluster: str = "C1", replicas: int = 3) -> list[Asset]:
    return [
        *_plain(cluster),
        _asset(
            cluster,
            "CNT",
            num_replicas=replicas,
            allow_msg_counter=True,
            allow_direct=True,
            metadata={"_nats.req.level": "2"},
        ),
    ]


def _prioritized(cluster: str = "C2") -> list[Asset]:
    return [
        _asset(cluster, "PRI", num_replicas=3),
        _asset(
            cluster,
            "PRI",
            "PC",
            priority_policy="prioritized",
            priority_groups=["g"],
        ),
    ]


def _flow(cluster: str = "C3") -> list[Asset]:
    return [
        *_plain(cluster),
        _asset(cluster, "FC", num_replicas=3),
        _asset(cluster, "FC", "FCC", ack_policy="flow_control", deliver_subject="fcd"),
    ]


def _states(cluster: RollingCluster) -> list[tuple[str, str]]:
    return [(s.leader_newer, s.leader_older) for s in cluster.steps]


def _one(rolling: Rolling) -> RollingCluster:
    (cluster,) = rolling.clusters
    return cluster


def test_end_steps_are_the_single_release_reports(catalogue: Catalogue) -> None:
    """Step 0 and the last step carry check()'s own states and outcome for each end."""
    records = [*_counter(), *_prioritized(), *_flow()]
    rolling = check_rolling(records, start="2.12.8", end="2.11.11", catalogue=catalogue)
    for step, release in ((0, "2.12.8"), (3, "2.11.11")):
        report = check(records, target=release, catalogue=catalogue)
        for cluster in rolling.clusters:
            outcome = next(o for o in report.clusters if o.cluster == cluster.cluster)
            states = {
                v.state for v in report.assets if v.cluster == cluster.cluster
            } - {"online"}
            shown = cluster.steps[step]
            assert shown.releases == (release,) * 3
            if outcome.outcome != "ok":
                assert shown.effects[0][1].reason == outcome.reason
            assert (shown.state == "ok") == (outcome.outcome == "ok" and not states)


def test_counter_stream_rollback_serves_until_the_older_nodes_are_a_majority(
    catalogue: Catalogue,
) -> None:
    """R3 counter stream, 2.12.8 -> 2.11.11: one old node degrades it, two stop it."""
    rolling = check_rolling(
        _counter(), start="2.12.8", end="2.11.11", catalogue=catalogue
    )
    cluster = _one(rolling)
    assert rolling.direction == "rollback"
    assert _states(cluster) == [
        ("ok", "ok"),
        ("degraded", "degraded"),
        ("offline", "offline"),
        ("offline", "offline"),
    ]
    (leader, effect) = cluster.steps[1].effects[0]
    assert leader is None  # the same whoever leads
    assert effect.reason == COUNTER_REASON
    assert effect.assets == ("C1/APP/CNT",)
    assert cluster.first_wrong == 1
    assert not cluster.keep_leader_newer


def test_an_r1_asset_may_sit_on_the_first_older_node(catalogue: Catalogue) -> None:
    """Placement is unknown: an R1 counter stream is offline from the first step."""
    rolling = check_rolling(
        _counter(replicas=1), start="2.12.8", end="2.11.11", catalogue=catalogue
    )
    step = _one(rolling).steps[1]
    assert step.state == "offline"
    assert "one replica" in step.effects[0][1].what


def test_prioritized_consumer_rollback_loses_quorum_at_the_second_node(
    catalogue: Catalogue,
) -> None:
    """2.11.11 nodes exit on a prioritized consumer: 2 of 3 keep quorum, 1 of 3 not."""
    rolling = check_rolling(
        _prioritized(), start="2.12.8", end="2.11.11", catalogue=catalogue
    )
    cluster = _one(rolling)
    assert _states(cluster) == [
        ("ok", "ok"),
        ("degraded", "degraded"),
        ("unavailable", "unavailable"),
        ("unavailable", "unavailable"),
    ]
    step1, step2 = cluster.steps[1].effects[0][1], cluster.steps[2].effects[0][1]
    assert step1.reason == step2.reason == PANIC
    assert (
        step1.what == "the 1 node(s) on 2.11.11 exit; the other 2 keep the meta quorum"
    )
    assert "not a meta quorum" in step2.what
    assert step1.facts == ("meta.unparsable_entry",)


def test_five_nodes_keep_quorum_for_two_steps(catalogue: Catalogue) -> None:
    """With 5 nodes the meta quorum is 3: the exiting nodes take it at step 3."""
    rolling = check_rolling(
        _prioritized(), start="2.12.8", end="2.11.11", nodes=5, catalogue=catalogue
    )
    assert [s.state for s in _one(rolling).steps] == [
        "ok",
        "degraded",
        "degraded",
        "unavailable",
        "unavailable",
        "unavailable",
    ]


def test_flow_control_rollback_depends_on_the_meta_leader(catalogue: Catalogue) -> None:
    """2.15.1 -> 2.12.8: stale old nodes; an old meta leader loses the meta state for good."""
    rolling = check_rolling(_flow(), start="2.15.1", end="2.12.8", catalogue=catalogue)
    cluster = _one(rolling)
    assert _states(cluster) == [
        ("ok", "ok"),
        ("degraded", "lost"),
        ("offline", "lost"),  # the consumer's replicas: 2 of 3 on stale nodes
        ("lost", "lost"),  # only 2.12.8 nodes are left to lead
    ]
    assert cluster.keep_leader_newer
    newer = [e for leader, e in cluster.steps[1].effects if leader == "newer"]
    assert [e.state for e in newer] == ["degraded", "degraded"]
    assert newer[0].reason == FLOW
    assert "fall behind the meta leader" in newer[0].what
    assert sorted(newer[1].assets) == [
        "C3/APP/FC",
        "C3/APP/FC/FCC",
        "C3/APP/ORD",
        "C3/APP/ORD/C1",
    ]
    step2 = [e for leader, e in cluster.steps[2].effects if leader == "newer"]
    assert [e.state for e in step2] == ["degraded", "offline"]
    assert step2[1].assets == newer[1].assets  # a stale node runs no replica at all
    older = [e for leader, e in cluster.steps[1].effects if leader == "older"]
    assert [e.what for e in older] == [
        "a node on 2.12.8 leads the meta layer: meta_state_lost"
    ]
    last = [e.what for _, e in cluster.steps[3].effects]
    assert last == [
        "meta_unavailable on 2.12.8",
        (
            "the last newer node leaves: if the nodes on 2.12.8 elect a meta leader among "
            "themselves, meta_state_lost"
        ),
    ]


def test_upgrade_of_assets_the_older_release_wrote_is_clean(
    catalogue: Catalogue,
) -> None:
    """2.11.11 -> 2.12.8 with plain assets: every step ok, nothing fails."""
    rolling = check_rolling(
        _plain("C1"), start="2.11.11", end="2.12.8", catalogue=catalogue
    )
    assert rolling.direction == "upgrade"
    assert _one(rolling).first_wrong is None
    assert [s.older for s in _one(rolling).steps] == [3, 2, 1, 0]
    assert rolling_failures(rolling) == []


def test_upgrade_counts_older_nodes_down_from_all(catalogue: Catalogue) -> None:
    """An upgrade over a counter stream: offline while 2.11.11 holds the majority."""
    rolling = check_rolling(
        _counter(), start="2.11.11", end="2.12.8", catalogue=catalogue
    )
    assert [s.state for s in _one(rolling).steps] == [
        "offline",
        "offline",
        "degraded",
        "ok",
    ]
    assert _one(rolling).first_wrong == 0


def test_neither_release_applying_an_entry_keeps_the_cluster_down(
    catalogue: Catalogue,
) -> None:
    """A flow_control consumer on 2.12.8 <-> 2.11.11: down on both, down in between."""
    rolling = check_rolling(_flow(), start="2.12.8", end="2.11.11", catalogue=catalogue)
    assert all(s.state == "unavailable" for s in _one(rolling).steps)


def test_acceptance_covers_a_cluster_and_is_recorded(catalogue: Catalogue) -> None:
    """``rolling:GLOB`` keeps a cluster from failing; an unmatched one is reported."""
    records = [*_plain("C0"), *_counter()]
    rolling = check_rolling(
        records,
        start="2.12.8",
        end="2.11.11",
        accept=["rolling:C1", "rolling:nope*"],
        catalogue=catalogue,
    )
    assert rolling_failures(rolling) == []
    assert [c.accepted for c in rolling.clusters] == [None, "rolling:C1"]
    assert [(a.asset, a.matched) for a in rolling.accepted] == [
        ("C1", ("C1",)),
        ("nope*", ()),
    ]
    with pytest.raises(ValueError, match="use rolling:CLUSTER"):
        check_rolling(records, start="2.12.8", end="2.11.11", accept=["offline:*"])


def test_no_asset_fails(catalogue: Catalogue) -> None:
    """An inventory with nothing to judge is a failure, not a clean change."""
    rolling = check_rolling([], start="2.12.8", end="2.11.11", catalogue=catalogue)
    assert rolling_failures(rolling) == [""]


def test_parse_rolling_names_both_releases(catalogue: Catalogue) -> None:
    """``FROM..TO``: two known, different releases; anything else is a ValueError."""
    assert parse_rolling(" 2.12.8..2.11.11 ", catalogue) == ("2.12.8", "2.11.11")
    for bad in ("2.12.8", "2.12.8..", "..2.11.11", "2.12.8..2.12.8", "1..2..3"):
        with pytest.raises(ValueError, match="invalid rolling change"):
            parse_rolling(bad, catalogue)


def test_cli_rolling_text_and_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Text names each step and the first wrong one; 1 on findings, 0 when clean."""
    path = tmp_path / "inv.jsonl"
    lines = [
        json.dumps(
            {
                "cluster": a.cluster,
                "account": a.account,
                "kind": a.kind,
                "stream": a.stream,
                "config": json.loads(a.config),
            }
        )
        for a in _flow()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["check", str(path), "--rolling", "2.15.1..2.12.8"]) == 1
    out = capsys.readouterr().out
    assert "step 1  2x 2.15.1 + 1x 2.12.8" in out
    assert "degraded (leader kept on newer) / lost (leader moved to older)" in out
    assert "first step that goes wrong: step 1 (lost); keep the meta leader" in out
    assert out.splitlines()[-1] == (
        "verdict: FAIL - 1 cluster(s) go wrong during the change: C3"
    )
    assert main(["check", str(path), "--rolling", "2.15.0..2.15.1"]) == 0
    assert (
        capsys.readouterr().out.splitlines()[-1].startswith("verdict: ok - every step")
    )
    assert (
        main(["check", str(path), "--rolling", "2.15.1..2.12.8", "--format", "json"])
        == 1
    )
    data = json.loads(capsys.readouterr().out)
    assert data["clusters"][0]["first_wrong"] == 1
    assert [s["leader_older"] for s in data["clusters"][0]["steps"]] == ["ok"] + [
        "lost"
    ] * 3
    assert (
        main(
            ["check", str(path), "--rolling", "2.15.1..2.12.8", "--format", "markdown"]
        )
        == 1
    )
    assert "| 1 | 2x 2.15.1 + 1x 2.12.8 | degraded | lost |" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rolling", "2.12.8..2.12.8"], "FROM and TO are the same release"),
        (
            ["--rolling", "2.12.8..2.11.11", "--target", "2.12.8"],
            "does not go with --target",
        ),
        (
            ["--rolling", "2.12.8..2.11.11", "--mode", "single"],
            "does not take --mode single",
        ),
        (
            ["--rolling", "2.12.8..2.11.11", "--format", "sarif"],
            "prints text, json, markdown",
        ),
        (
            ["--rolling", "2.12.8..2.11.11", "--fail-on", "offline"],
            "does not take --fail-on",
        ),
        (["--rolling", "9.9.9..2.11.11"], "9.9.9"),
        (["--target", "2.12.8", "--nodes", "3"], "--nodes goes with --rolling"),
    ],
)
def test_cli_rolling_usage_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    """Contradicting flags and bad ranges are usage errors (exit 2), not tracebacks."""
    path = tmp_path / "inv.jsonl"
    path.write_text('{"kind":"stream","config":{"name":"S","subjects":["s"]}}\n')
    assert main(["check", str(path), *extra]) == 2
    assert message in capsys.readouterr().err


def test_catalogue_requires_the_mixed_facts(
    levels_copy: Path, rechecksum: Callable[[Path], None]
) -> None:
    """A cluster outcome without ``mixed``, or ``mixed_leader`` without stale, is refused."""
    fact = (
        '\n[[cluster_outcomes]]\nid = "meta.synthetic"\nwhen = "unloadable"\n'
        'kinds = ["consumer"]\noutcome = "crash"\nreason = "panic"\n'
        'asset_reason = "no reply"\n'
    )
    _refused(levels_copy, rechecksum, fact, r"mixed .* goes with every outcome")
    more = 'mixed = "exits"\nmixed_leader = "meta_state_lost"\n'
    _refused(levels_copy, rechecksum, more, 'mixed_leader goes with mixed = "stale"')


def test_a_stale_fact_needs_its_healthz_words(
    levels_copy: Path, rechecksum: Callable[[Path], None]
) -> None:
    """``mixed = "stale"`` without ``mixed_health`` (the server's /healthz words) is refused."""
    fact = (
        '\n[[cluster_outcomes]]\nid = "meta.synthetic"\nwhen = "unloadable"\n'
        'kinds = ["consumer"]\noutcome = "meta_unavailable"\nreason = "r"\n'
        'asset_reason = "a"\nmixed = "stale"\nmixed_leader = "meta_state_lost"\n'
    )
    _refused(levels_copy, rechecksum, fact, 'mixed_health goes with mixed = "stale"')


def _refused(
    levels: Path, rechecksum: Callable[[Path], None], text: str, match: str
) -> None:
    """Append ``text`` to the 2.15 line of ``levels``: loading it fails with ``match``."""
    path = levels / "2.15.toml"
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")
    rechecksum(levels)
    with pytest.raises(CatalogueError, match=match):
        load_catalogue(levels)


def test_stale_nodes_are_described_in_the_catalogue_words(catalogue: Catalogue) -> None:
    """The stale nodes' /healthz words come from levels/ (mixed_health)."""
    (rule,) = catalogue.server("2.12.8").cluster_outcomes
    rolling = check_rolling(_flow(), start="2.15.1", end="2.12.8", catalogue=catalogue)
    stale = _one(rolling).steps[1].effects[0][1]
    assert f"(their /healthz: {rule.mixed_health})" in stale.what
