"""``check``'s load-time config checks against real servers that start on a store.

Assets are created through the API of one release (which accepts them), the server is
stopped, and another release starts on a copy of the store. That release re-runs its
config checks on every stored asset. For each asset the prediction of
``assetgate.check`` (single mode) must match what the server did:

* predicted ``unloadable`` by a check -> missing from STREAM/CONSUMER.NAMES, and the
  server's log has ``Error recreating stream "X": <reason>`` or
  ``Error adding consumer ... <reason>`` with the predicted reason, byte for byte;
* predicted ``detached`` -> missing;
* predicted ``online`` -> loaded;
* the report's ``health`` section -> ``/healthz`` (it names one failure at a time: the
  observed one must be predicted, and an empty section means 200).
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import pytest

import assetgate
from tests.support import fidelity
from tests.support.natsserver import Client, NatsServer
from tests.support.scenarios import (
    _create,
    capture_inventory,
    observe,
    record_key,
    write_jsonl,
)

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.realserver

_S: Final = 1_000_000_000
_SETTLE_S: Final = 20.0


class Transition(NamedTuple):
    """Assets created on ``first``; the store then started by ``second``."""

    first: str
    second: str
    streams: tuple[dict[str, Any], ...]
    consumers: tuple[tuple[str, dict[str, Any]], ...]


TRANSITIONS: Final[dict[str, Transition]] = {
    # 2.10.28/2.11.2: a subject that can match the JetStream API needs no_ack
    "api-overlap-2.10.26-2.11.11": Transition(
        "2.10.26",
        "2.11.11",
        (
            {"name": "LW", "subjects": ["*.orders"]},
            {"name": "NRG", "subjects": ["$NRG.x"]},
            {"name": "OK", "subjects": ["okay.x.y"]},
        ),
        (("LW", {"durable_name": "LWC", "ack_policy": "explicit"}),),
    ),
    # 2.12.0: priority groups or a pinned TTL without a policy; negative ack_wait/backoff
    "priority-2.11.11-2.12.8": Transition(
        "2.11.11",
        "2.12.8",
        ({"name": "PG", "subjects": ["pg.>"]},),
        (
            (
                "PG",
                {
                    "durable_name": "PGC",
                    "ack_policy": "explicit",
                    "priority_groups": ["g1"],
                },
            ),
            (
                "PG",
                {
                    "durable_name": "PTC",
                    "ack_policy": "explicit",
                    "priority_timeout": 5 * _S,
                },
            ),
            ("PG", {"durable_name": "AWC", "ack_policy": "explicit", "ack_wait": -1}),
            (
                "PG",
                {
                    "durable_name": "BOC",
                    "ack_policy": "explicit",
                    "backoff": [-1],
                    "max_deliver": 5,
                },
            ),
            ("PG", {"durable_name": "FINE", "ack_policy": "explicit"}),
        ),
    ),
    # 2.11.7: priority groups are for pull consumers
    "push-priority-2.11.6-2.11.11": Transition(
        "2.11.6",
        "2.11.11",
        ({"name": "PP", "subjects": ["pp.>"]},),
        (
            (
                "PP",
                {
                    "durable_name": "PUSHPG",
                    "ack_policy": "explicit",
                    "deliver_subject": "dlv.pushpg",
                    "priority_policy": "overflow",
                    "priority_groups": ["g1"],
                },
            ),
        ),
    ),
    # 2.14.2: counters without schedules; schedules without discard new
    "schedules-2.14.0-2.14.6": Transition(
        "2.14.0",
        "2.14.6",
        (
            {
                "name": "CNTSCH",
                "subjects": ["cs.>"],
                "allow_msg_counter": True,
                "allow_msg_schedules": True,
            },
            {
                "name": "SCHNEW",
                "subjects": ["sn.>"],
                "allow_msg_schedules": True,
                "discard": "new",
            },
        ),
        (),
    ),
    # 2.12.5: the filter checks of a source apply to external sources too
    "external-source-filters-2.11.11-2.12.8": Transition(
        "2.11.11",
        "2.12.8",
        (
            {
                "name": "EXTF",
                "sources": [
                    {
                        "name": "HUB",
                        "external": {"api": "$JS.hub.API"},
                        "filter_subject": "a.>",
                        "subject_transforms": [{"src": "b.>", "dest": "c.>"}],
                    }
                ],
            },
            {
                "name": "EXTOK",
                "sources": [
                    {
                        "name": "HUB",
                        "external": {"api": "$JS.hub.API"},
                        "subject_transforms": [{"src": "b.>", "dest": "c.>"}],
                    }
                ],
            },
        ),
        (),
    ),
    # downgrade: 2.10 refuses an empty transform source (2.11.0 lets it pass)
    "empty-transform-source-2.11.11-2.10.26": Transition(
        "2.11.11",
        "2.10.26",
        (
            {
                "name": "ESRC",
                "sources": [
                    {"name": "A", "subject_transforms": [{"src": "", "dest": "z.>"}]}
                ],
            },
            {
                "name": "EMIR",
                "mirror": {
                    "name": "A",
                    "subject_transforms": [{"src": "", "dest": "z.>"}],
                },
            },
            {"name": "EFINE", "subjects": ["efine.>"]},
        ),
        (),
    ),
    # downgrade: 2.12.5+ test filter overlap as subsets, 2.10.14-2.12.4 with SubjectsCollide
    "filters-2.12.8-2.11.11": Transition(
        "2.12.8",
        "2.11.11",
        ({"name": "FS", "subjects": ["a.>"]},),
        (
            (
                "FS",
                {
                    "durable_name": "PART",
                    "ack_policy": "explicit",
                    "filter_subjects": ["a.*.x", "a.b.*"],
                },
            ),
        ),
    ),
}


# /healthz answers these while a node's meta layer is still starting or catching up
# (monitor.go, healthz): they say nothing about the assets, so the test waits them out
_META_STARTING: Final = frozenset(
    {
        "JetStream is still recovering meta layer",
        "JetStream has not established contact with a meta leader",
        "JetStream is not current with the meta leader",
    }
)


def _healthz(port: int | None, *, until_failing: bool = False) -> dict[str, Any]:
    """The /healthz answer (200 or 503) of the server monitored on ``port``, as JSON.

    While the node's meta layer is still starting (``_META_STARTING``), or, with
    ``until_failing``, while it answers ``ok`` (a node that has not yet tried to
    recover an asset of its cluster's assignments), it asks again, for at most
    ``_SETTLE_S``; the last answer is returned either way.
    """
    url = f"http://127.0.0.1:{port}/healthz"
    deadline = time.monotonic() + _SETTLE_S
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5.0) as reply:
                answer: dict[str, Any] = json.loads(reply.read())
        except urllib.error.HTTPError as exc:
            answer = json.loads(exc.read())
        settling = answer.get("error") in _META_STARTING or (
            until_failing and answer.get("status") == "ok"
        )
        if not settling or time.monotonic() >= deadline:
            return answer
        time.sleep(0.25)


def _log_reason(log: str, kind: str, stream: str, name: str) -> str | None:
    """The reason the server logged for not recovering an asset, if it did."""
    for line in log.splitlines():
        if kind == "stream":
            marker = f'Error recreating stream "{stream}": '
        elif f"Error adding consumer '$G > {stream} > {name}': " in line:
            marker = f"Error adding consumer '$G > {stream} > {name}': "
        else:
            marker = f'Error adding consumer "{name}": '
        if marker in line:
            return line.split(marker, 1)[1].strip()
    return None


@pytest.mark.parametrize("transition", list(TRANSITIONS), ids=list(TRANSITIONS))
def test_load_prediction_matches_server(tmp_path: Path, transition: str) -> None:
    """Each asset's state, reason and /healthz after the other release starts."""
    spec = TRANSITIONS[transition]
    store = tmp_path / "store"
    with NatsServer(spec.first, store) as first:
        with Client(first.url, timeout=5.0) as client:
            _create(client, spec.streams, spec.consumers)
        inventory = capture_inventory(first.url)
    created = {record_key(r) for r in inventory}
    wanted = {("stream", s["name"], s["name"]) for s in spec.streams} | {
        ("consumer", stream, c["durable_name"]) for stream, c in spec.consumers
    }
    assert created == wanted, f"{spec.first} refused some creates"
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    write_jsonl(inventory, tmp_path / "inventory.jsonl")
    report = assetgate.check(
        [tmp_path / "inventory.jsonl"], target=spec.second, mode="single"
    )
    with NatsServer(spec.second, copy, monitor=True) as second:
        observed = observe(second, inventory)
        health = _healthz(second.monitor_port)
        log = second.log_text()
    scenario = f"{spec.first} store started by the release: load-time checks (log+INFO)"
    for verdict in report.assets:
        key = (verdict.kind, verdict.stream, verdict.name)
        state, _ = observed[key]
        logged = _log_reason(log, verdict.kind, verdict.stream, verdict.name)
        seen = ("unloadable", logged) if logged is not None else observed[key]
        agree = (
            seen == ("unloadable", verdict.reason)
            if verdict.state == "unloadable"
            else (verdict.state == "detached" and state == "missing")
            or (verdict.state == state == "online" and logged is None)
        )
        fidelity.record_one(
            scenario=scenario,
            release=spec.second,
            mode="single",
            verdict=verdict,
            seen=seen,
            agree=agree,
        )
        if verdict.state == "unloadable":
            assert (key, state, logged) == (key, "missing", verdict.reason)
        elif verdict.state == "detached":
            assert (key, state) == (key, "missing")
        else:
            assert (key, verdict.state, state, logged) == (
                key,
                "online",
                "online",
                None,
            )
    predicted = [h.error for h in report.health]
    if predicted:
        observed_health = (health.get("status"), health.get("error") in predicted)
        assert observed_health == ("unavailable", True), health
    else:
        assert health.get("status") == "ok", health


CLUSTER_TRANSITIONS: Final[dict[str, Transition]] = {
    "api-overlap-2.10.26-2.11.11-R3": Transition(
        "2.10.26",
        "2.11.11",
        (
            {"name": "LW", "subjects": ["*.orders"], "num_replicas": 3},
            {"name": "OK", "subjects": ["okay.x.y"], "num_replicas": 3},
        ),
        (("LW", {"durable_name": "LWC", "ack_policy": "explicit", "num_replicas": 3}),),
    ),
    "priority-2.11.11-2.12.8-R3": Transition(
        "2.11.11",
        "2.12.8",
        ({"name": "PG", "subjects": ["pg.>"], "num_replicas": 3},),
        (
            (
                "PG",
                {
                    "durable_name": "PGC",
                    "ack_policy": "explicit",
                    "priority_groups": ["g1"],
                },
            ),
            ("PG", {"durable_name": "FINE", "ack_policy": "explicit"}),
        ),
    ),
}
CLUSTER: Final = "LC"
_DETACHED_INFO: Final = (
    "the consumer of a stream that no node recovered still answers CONSUMER.INFO "
    "with its config (200, from the meta layer's assignment) while STREAM.INFO "
    "answers 404/10059 and /healthz fails; it serves nothing"
)


@pytest.mark.parametrize(
    "transition", list(CLUSTER_TRANSITIONS), ids=list(CLUSTER_TRANSITIONS)
)
def test_cluster_load_prediction_matches_servers(
    tmp_path: Path, transition: str
) -> None:
    """On a 3-node cluster every node refuses the asset, and /healthz fails on each."""
    from tests.support.natscluster import NatsCluster, request_placed

    spec = TRANSITIONS.get(transition) or CLUSTER_TRANSITIONS[transition]
    with NatsCluster(spec.first, tmp_path / "c", name=CLUSTER, monitor=True) as cluster:
        with Client(cluster.url, timeout=5.0) as client:
            for config in spec.streams:
                subject = f"$JS.API.STREAM.CREATE.{config['name']}"
                assert "error" not in request_placed(
                    client, subject, config, cluster=cluster
                )
            for stream, config in spec.consumers:
                name = config["durable_name"]
                subject = f"$JS.API.CONSUMER.CREATE.{stream}.{name}"
                body = {"stream_name": stream, "config": config}
                assert "error" not in request_placed(
                    client, subject, body, cluster=cluster
                )
        inventory = capture_inventory(cluster.url, cluster=CLUSTER)
        write_jsonl(inventory, tmp_path / "inventory.jsonl")
        cluster.restart_with(spec.second)
        info = {record_key(r): _info(cluster.url, r) for r in inventory}
        # every node is to fail /healthz here: one seen before it tried the asset
        # answers ok (a CI run saw n1 do so once), so each is asked until it fails
        health = {
            n.name: _healthz(n.monitor_port, until_failing=True) for n in cluster.nodes
        }
        logs = {n.name: n.log_text() for n in cluster.nodes}
    report = assetgate.check(
        [tmp_path / "inventory.jsonl"], target=spec.second, mode="cluster"
    )
    assert [c.outcome for c in report.clusters] == ["ok"]
    scenario = f"{spec.first} 3-node cluster restarted on the release: load-time checks (log+INFO)"
    for verdict in report.assets:
        key = (verdict.kind, verdict.stream, verdict.name)
        code = info[key]
        logged = {
            _log_reason(log, verdict.kind, verdict.stream, verdict.name)
            for log in logs.values()
        }
        reason = (
            next(iter(logged)) if len(logged) == 1 else repr(sorted(map(str, logged)))
        )
        fidelity.record_one(
            scenario=scenario,
            release=spec.second,
            mode="cluster",
            verdict=verdict,
            seen=("unloadable", reason)
            if reason is not None
            else ("served", f"INFO {code}"),
            agree=(verdict.state == "unloadable") == (reason is not None)
            and verdict.state != "detached",
            known=_DETACHED_INFO if verdict.state == "detached" else None,
        )
        if verdict.state == "unloadable":
            # every node refuses it; a stream's INFO answers 404, a consumer's INFO
            # still answers from the meta layer's assignment (200)
            expected_code = 10059 if verdict.kind == "stream" else 200
            assert (key, logged, code) == (key, {verdict.reason}, expected_code)
        elif verdict.state == "detached":
            # the consumer of a stream no node runs: INFO still answers (assignment)
            assert (key, logged, code) == (key, {None}, 200)
        else:
            assert (key, verdict.state, logged, code) == (key, "online", {None}, 200)
    predicted = {h.error for h in report.health}
    for node, answer in health.items():
        assert (node, answer.get("status"), answer.get("error") in predicted) == (
            node,
            "unavailable",
            True,
        ), answer


def _info(url: str, record: dict[str, Any]) -> int:
    """200, or the error code of an asset's INFO reply."""
    from tests.support.natsserver import raw_request

    kind, stream, name = record_key(record)
    subject = f"$JS.API.STREAM.INFO.{stream}"
    if kind == "consumer":
        subject = f"$JS.API.CONSUMER.INFO.{stream}.{name}"
    deadline = time.monotonic() + _SETTLE_S
    while True:  # right after a restart a request can go unanswered for a while
        try:
            reply = raw_request(url, subject, b"", timeout=2.0)
        except TimeoutError:
            if time.monotonic() >= deadline:
                raise
            continue
        error = reply.get("error")
        return 200 if error is None else int(error["err_code"])


@pytest.mark.parametrize("version", ["2.10.26", "2.12.8", "2.15.1"])
def test_cluster_store_on_standalone_server(tmp_path: Path, version: str) -> None:
    """A replicated stream's store started by a standalone server: 10074 on load."""
    from tests.support.natscluster import NatsCluster, request_placed

    config = {"name": "RS3", "subjects": ["rs3.>"], "num_replicas": 3}
    with NatsCluster(version, tmp_path / "c", name=CLUSTER) as cluster:
        with Client(cluster.url, timeout=5.0) as client:
            subject = "$JS.API.STREAM.CREATE.RS3"
            assert "error" not in request_placed(
                client, subject, config, cluster=cluster
            )
        inventory = capture_inventory(cluster.url, cluster=CLUSTER)
        store = cluster.node("n1").store_dir
        cluster.stop()
        shutil.copytree(store, tmp_path / "single")
    write_jsonl(inventory, tmp_path / "inventory.jsonl")
    report = assetgate.check(
        [tmp_path / "inventory.jsonl"], target=version, mode="single"
    )
    with NatsServer(version, tmp_path / "single", monitor=True) as server:
        health = _healthz(server.monitor_port)
        logged = _log_reason(server.log_text(), "stream", "RS3", "RS3")
    (verdict,) = report.assets
    assert (verdict.state, verdict.reason, verdict.check) == (
        "unloadable",
        logged,
        "stream.replicas_standalone",
    )
    assert (health.get("error"), [h.error for h in report.health]) == (
        "JetStream stream '$G > RS3' could not be recovered",
        ["JetStream stream '$G > RS3' could not be recovered"],
    )
