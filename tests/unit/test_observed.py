"""Tests for predicted-vs-observed comparison and the offline parts of ``pull``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.inventory.read import Asset, Ignored, RecordError, read_inventory_bytes
from assetgate.live.fleet import _merge, _ServerJsz
from assetgate.live.observed import (
    Observations,
    compare_observed,
    read_observations,
    render_comparison,
)
from assetgate.live.pull import PullResult, redact
from assetgate.run.check import check, observed_targets

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue

COUNTER_OFFLINE: Final = 'unsupported - config error: unknown field "allow_msg_counter"'


def _asset(name: str, **config: Any) -> Asset:
    body = {"name": name, "subjects": [f"{name.lower()}.>"], **config}
    return Asset(
        source=f"t:{name}",
        cluster="C1",
        kind="stream",
        stream=name,
        name=name,
        config=json.dumps(body).encode(),
    )


def _seen(
    name: str, state: str = "online", reason: str | None = None, **config: Any
) -> dict[str, Any]:
    body = None if state != "online" else {"name": name, **config}
    return {
        "cluster": "C1",
        "account": "$G",
        "kind": "stream",
        "stream": name,
        "name": name,
        "config": body,
        "observed_state": state,
        "observed_reason": reason,
    }


SERVER: Final = {"kind": "server", "cluster": "C1", "name": "n1", "account": None}


def test_comparison_rules(catalogue: Catalogue) -> None:
    """Online, offline with the exact reason, unloadable absent; not-observed clusters."""
    assets = [
        _asset("PLAIN"),
        _asset("CNT", allow_msg_counter=True),
        _asset("WRONG", allow_msg_counter=True),
    ]
    report = check(assets, target="2.11.11", catalogue=catalogue)
    seen = Observations.from_records(
        [
            SERVER,
            _seen("PLAIN", subjects=["plain.>"]),
            _seen("CNT", "offline", COUNTER_OFFLINE),
            _seen("WRONG", "offline", "some other reason"),
        ]
    )
    result = {
        c.asset: (c.observed_state, c.agree)
        for c in compare_observed(report, assets, seen)
    }
    assert result == {
        "C1/$G/CNT": ("offline", True),
        "C1/$G/PLAIN": ("online", True),
        "C1/$G/WRONG": ("offline", False),
    }


def test_dropped_fields_are_degraded_and_unlooked_clusters_not_observed(
    catalogue: Catalogue,
) -> None:
    """A field missing from the served config is degraded; other clusters are unseen."""
    ttl = _asset("TTL", allow_msg_ttl=True)
    other = Asset(
        source="t:x",
        cluster="C2",
        kind="stream",
        stream="X",
        name="X",
        config=b'{"name":"X"}',
    )
    report = check([ttl, other], target="2.10.26", catalogue=catalogue)
    seen = Observations.from_records([SERVER, _seen("TTL", subjects=["ttl.>"])])
    result = {
        c.asset: (c.observed_state, c.observed_reason, c.agree)
        for c in compare_observed(report, [ttl, other], seen)
    }
    assert result == {
        "C1/$G/TTL": ("degraded", "allow_msg_ttl", True),
        "C2/$G/X": ("not observed", None, None),
    }


def test_cluster_observed_unavailable_agrees_with_unavailable(
    catalogue: Catalogue,
) -> None:
    """A ``kind: cluster`` unavailable record matches the whole-cluster prediction."""
    flow = Asset(
        source="t:c",
        cluster="C1",
        kind="consumer",
        stream="PLAIN",
        name="F",
        config=b'{"durable_name":"F","ack_policy":"flow_control","deliver_subject":"d"}',
    )
    assets = [_asset("PLAIN"), flow]
    report = check(assets, target="2.12.8", catalogue=catalogue)
    down = {
        "kind": "cluster",
        "cluster": "C1",
        "observed_state": "unavailable",
        "observed_reason": "JetStream system temporarily unavailable",
    }
    comparisons = compare_observed(report, assets, Observations.from_records([down]))
    assert [(c.predicted_state, c.agree) for c in comparisons] == [
        ("unavailable", True)
    ] * 2


def test_read_observations_reports_bad_lines(tmp_path: Path) -> None:
    """Malformed observation lines are named with file and line, the rest is read."""
    path = tmp_path / "obs.jsonl"
    path.write_text(
        json.dumps(SERVER) + "\n{bad\n" + json.dumps(_seen("A")) + "\n",
        encoding="utf-8",
    )
    seen = read_observations([path])
    assert len(seen.assets) == 1
    assert seen.errors[0].startswith(f"{path}:2: ")


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_render_comparison_counts(catalogue: Catalogue, fmt: str) -> None:
    """Every format states how many observed assets agree."""
    assets = [_asset("PLAIN")]
    report = check(assets, target="2.12.8", catalogue=catalogue)
    seen = Observations.from_records([SERVER, _seen("PLAIN", subjects=["plain.>"])])
    text = render_comparison(compare_observed(report, assets, seen), fmt)
    assert ("1 of 1 observed assets agree" in text) or ('"agree": 1' in text)


def test_pull_records_read_as_inventory_without_losing_any() -> None:
    """Pull output as an inventory: offline records without config are named errors."""
    lines = [SERVER, _seen("A", subjects=["a.>"]), _seen("B", "offline", "why")]
    data = "".join(json.dumps(r) + "\n" for r in lines).encode()
    entries = list(read_inventory_bytes(data, "pulled.jsonl"))
    kinds = [type(e).__name__ for e in entries]
    assert kinds == ["Ignored", "Asset", "RecordError"]
    assert isinstance(entries[0], Ignored)
    error = entries[2]
    assert isinstance(error, RecordError)
    assert error.message.startswith(
        "stream 'B' was observed offline (why); the server gave no config"
    )


def test_redact_removes_user_information() -> None:
    """URLs never carry credentials into messages."""
    assert redact("nats://u:secret@h:4222") == "nats://h:4222"
    assert redact("nats://h:4222") == "nats://h:4222"


def test_merge_keeps_one_record_per_asset_and_the_lowest_version() -> None:
    """Replicas reported by several servers become one record listing its hosts."""

    def jsz(config: dict[str, Any]) -> bytes:
        document = {
            "meta_cluster": {"name": "C1"},
            "account_details": [
                {
                    "id": "APP",
                    "stream_detail": [
                        {"name": "S", "config": config, "consumer_detail": []}
                    ],
                }
            ],
        }
        return json.dumps(document).encode()

    views = [
        _ServerJsz(name="n2", cluster="C1", version="2.12.8", data=jsz({"name": "S"})),
        _ServerJsz(name="n1", cluster="C1", version="2.11.11", data=jsz({"name": "S"})),
    ]
    result = PullResult()
    _merge(views, result)
    (record,) = [r for r in result.records if r["kind"] == "stream"]
    assert (record["servers"], record["server_version"], record["account"]) == (
        ["n1", "n2"],
        "2.11.11",
        "APP",
    )


def test_observed_targets_take_each_clusters_lowest_version(
    catalogue: Catalogue,
) -> None:
    """--target observed: per cluster, the lowest server_version among its records."""

    def at(cluster: str, version: str | None) -> Asset:
        return Asset(
            source="t",
            cluster=cluster,
            kind="stream",
            stream="S",
            name="S",
            config=b'{"name":"S"}',
            server_version=version,
        )

    records = [at("A", "2.12.8"), at("A", "2.11.11"), at("B", "2.15.1")]
    assert observed_targets(records, catalogue) == {"A": "2.11.11", "B": "2.15.1"}
    with pytest.raises(ValueError, match="no server_version recorded for cluster"):
        observed_targets([at("C", None)], catalogue)
