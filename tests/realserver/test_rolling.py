"""``check --rolling`` against real clusters rolled node by node (issue #14, part 4).

Each run builds a 3-node cluster on the newer release, creates replicated assets with a
feature the older release lacks, pulls the inventory with ``assetgate pull``, predicts
the steps with :func:`assetgate.run.rolling.check_rolling`, and then restarts the nodes one
at a time on the other release, keeping the meta leader on a newer node or moving it to
an older one. At each step what the prediction says is checked on the cluster in the
ways that do not depend on timing: whether a stream takes a publish (a JetStream
publish is acknowledged only once a majority of its replicas stored it), what the
nodes log, their exit status, and what the API answers. What was
seen beyond this (and what depends on timing) is in ``docs/cluster-observations.md``.
"""

from __future__ import annotations

import contextlib
import time
from functools import partial
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.cli.main import main
from assetgate.run.rolling import Rolling, check_rolling
from tests.support.natscluster import NatsCluster, request_placed
from tests.support.natsserver import Client, system_accounts

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

pytestmark = pytest.mark.realserver

SYS_PASSWORD: Final = "roll-sys-pw"  # noqa: S105 - a test server's password
ACCOUNTS: Final = system_accounts(SYS_PASSWORD)
ORDER: Final = ("n3", "n2", "n1")  # the order the nodes are restarted in
SERVE_S: Final = 20.0  # bound for a stream that should take publishes to take one
REFUSE_S: Final = 4.0  # how long a stream that should not serve is given to ack
WAIT_S: Final = 20.0
COUNTER: Final = {
    "name": "CNT",
    "subjects": ["cnt.>"],
    "num_replicas": 3,
    "allow_msg_counter": True,
}
INCREMENT: Final = {"Nats-Incr": "1"}


def _cluster(version: str, base: Path) -> NatsCluster:
    return NatsCluster(
        version,
        base,
        extra_config=ACCOUNTS,
        monitor=True,
        system_user=("sys", SYS_PASSWORD),
    )


@contextlib.contextmanager
def _flow_rollback(
    tmp_path: Path, newer: str, older: str
) -> Iterator[tuple[NatsCluster, Rolling]]:
    """A ``newer`` cluster with flow_control consumers, pulled, and its rollback predicted."""
    with _cluster(newer, tmp_path / "c") as cluster:
        _create_flow(cluster)
        inventory = _pull(cluster, tmp_path)
        yield cluster, check_rolling([inventory], start=newer, end=older)


def _api(cluster: NatsCluster, subject: str, body: dict[str, Any]) -> None:
    with Client(cluster.url, timeout=10.0) as client:
        reply = request_placed(client, subject, body, cluster=cluster)
    assert "error" not in reply, (subject, reply)


def _publish(
    cluster: NatsCluster,
    subject: str,
    headers: dict[str, str] | None = None,
    *,
    within: float,
) -> bool:
    """Whether a publish to ``subject`` is acknowledged, through any live node, in time."""
    deadline = time.monotonic() + within
    while True:
        for node in cluster.nodes:
            if not cluster.node_alive(node.name):
                continue
            if _acked(node.url, subject, headers):
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)


def _acked(url: str, subject: str, headers: dict[str, str] | None) -> bool:
    try:
        with Client(url, timeout=2.0, connect_timeout=2.0) as client:
            # a counter increment has no payload (400/10170 "message counter has payload")
            ack = client.request_json(
                subject, b"" if headers else b"1", headers=headers
            )
    except Exception:  # noqa: BLE001 - no reply, no responders: not acknowledged
        return False
    return "seq" in ack and "error" not in ack


def _info(cluster: NatsCluster, node: str, subject: str) -> dict[str, Any]:
    try:
        with Client(cluster.node(node).url, timeout=2.0) as client:
            return client.request_json(subject, b"")
    except Exception as exc:  # noqa: BLE001 - no reply is an answer here
        return {"exception": repr(exc)}


def _until(check: Callable[[], bool], within: float = WAIT_S) -> bool:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)
    return True


def _pull(cluster: NatsCluster, tmp_path: Path) -> Path:
    out = tmp_path / "inventory.jsonl"
    assert main(["pull", "--server", cluster.url, "-o", str(out)]) == 0
    return out


def _place_leader(cluster: NatsCluster, release: str) -> None:
    """Move the meta leader to a live node on ``release`` (if one runs)."""
    for node in cluster.nodes:
        if node.version == release and cluster.node_alive(node.name):
            cluster.move_meta_leader(node.name)
            return


def _states(rolling: Rolling, leader: str) -> list[str]:
    (cluster,) = rolling.clusters
    return [
        s.leader_newer if leader == "newer" else s.leader_older for s in cluster.steps
    ]


def _holds_acked(cluster: NatsCluster, stream: str, acked: int) -> bool:
    """Whether ``stream`` holds every acknowledged message.

    It may hold more: a publish the leader proposed without a quorum is not
    acknowledged, but it commits once the quorum is back.
    """
    info = _info(cluster, "n1", f"$JS.API.STREAM.INFO.{stream}")
    state = info.get("state")
    messages = state.get("messages") if isinstance(state, dict) else None
    return isinstance(messages, int) and messages >= acked


def _logged(cluster: NatsCluster, node: str, text: str) -> bool:
    return text in _log(cluster, node)


def _exited(cluster: NatsCluster, node: str) -> bool:
    return cluster.exit_code(node) is not None


def _log(cluster: NatsCluster, node: str) -> str:
    return cluster.node(node).log_text()


@pytest.mark.parametrize("leader", ["newer", "older"])
def test_counter_stream_rollback_and_forward_2_12_8_and_2_11_11(
    tmp_path: Path, leader: str
) -> None:
    """An R3 counter stream serves while 2.12.8 holds its majority, as predicted."""
    newer, older = "2.12.8", "2.11.11"
    with _cluster(newer, tmp_path / "c") as cluster:
        _create_orders(cluster)
        _api(cluster, "$JS.API.STREAM.CREATE.CNT", COUNTER)
        acked = sum(
            _publish(cluster, "cnt.x", INCREMENT, within=SERVE_S) for _ in range(3)
        )
        assert acked == 3
        inventory = _pull(cluster, tmp_path)
        back = check_rolling([inventory], start=newer, end=older)
        forth = check_rolling([inventory], start=older, end=newer)
        assert _states(back, leader) == ["ok", "degraded", "offline", "offline"]
        assert _states(forth, leader) == ["offline", "offline", "degraded", "ok"]
        reason = back.clusters[0].steps[3].effects[0][1].reason
        assert reason == 'unsupported - config error: unknown field "allow_msg_counter"'
        for plan, release in ((back, older), (forth, newer)):
            for step, name in enumerate(ORDER, start=1):
                cluster.restart_node(name, release, settle_s=1.0)
                _place_leader(cluster, older if leader == "older" else newer)
                state = _states(plan, leader)[step]
                assert _publish(cluster, "ord.x", within=SERVE_S), (release, step)
                serves = _publish(
                    cluster,
                    "cnt.x",
                    INCREMENT,
                    within=SERVE_S if state in {"ok", "degraded"} else REFUSE_S,
                )
                assert serves == (state in {"ok", "degraded"}), (release, step, state)
                acked += serves
                if release == older and step == 1:  # the node that cannot run it
                    assert f"Detected unsupported stream 'APP > CNT': {reason}" in _log(
                        cluster, name
                    )
            if release == older:  # every node on 2.11.11: the predicted reason
                info = _info(cluster, "n1", "$JS.API.STREAM.INFO.CNT")
                assert info.get("error") == {
                    "code": 500,
                    "err_code": 10194,
                    "description": f"stream is offline: {reason}",
                }
        # rolled forward again: nothing acknowledged was lost
        assert _until(partial(_holds_acked, cluster, "CNT", acked)), _info(
            cluster, "n1", "$JS.API.STREAM.INFO.CNT"
        )


def test_prioritized_consumer_rollback_2_12_8_to_2_11_11(tmp_path: Path) -> None:
    """2.11.11 nodes exit on a prioritized consumer; the second one takes the quorum."""
    newer, older = "2.12.8", "2.11.11"
    with _cluster(newer, tmp_path / "c") as cluster:
        _stream(cluster, "PRI")
        _consumer(
            cluster,
            "PRI",
            durable_name="PC",
            ack_policy="explicit",
            priority_policy="prioritized",
            priority_groups=["g"],
        )
        assert _publish(cluster, "pri.x", within=SERVE_S)
        inventory = _pull(cluster, tmp_path)
        back = check_rolling([inventory], start=newer, end=older)
        assert [s.state for s in back.clusters[0].steps] == [
            "ok",
            "degraded",
            "unavailable",
            "unavailable",
        ]
        panic = back.clusters[0].steps[1].effects[0][1].reason or ""
        head, _, where = panic.partition(" (in ")
        function = where.rstrip(")").removeprefix("(*jetStream).")
        for step, name in enumerate(ORDER[:2], start=1):
            cluster.restart_node(name, older)
            assert _until(partial(_exited, cluster, name)), name
            assert cluster.exit_code(name) == 2
            log = _log(cluster, name)
            assert head in log
            assert function in log
            # step 1: the two 2.12.8 nodes keep the quorum; step 2: one cannot
            assert _publish(
                cluster, "pri.x", within=SERVE_S if step == 1 else REFUSE_S
            ) == (step == 1)
        cluster.restart_node("n1", older)
        unavailable = {
            "code": 503,
            "err_code": 10008,
            "description": "JetStream system temporarily unavailable",
        }
        assert _until(
            lambda: (
                _info(cluster, "n1", "$JS.API.STREAM.NAMES").get("error") == unavailable
            )
        ), _info(cluster, "n1", "$JS.API.STREAM.NAMES")
        # rolling forward on the same stores brings everything back
        for name in ORDER:
            cluster.restart_node(name, newer)
        assert _until(partial(_holds_acked, cluster, "PRI", 2)), _info(
            cluster, "n1", "$JS.API.STREAM.INFO.PRI"
        )  # the one published before the change, and the one at step 1


def test_flow_control_rollback_2_15_1_to_2_12_8_leader_kept_on_2_15_1(
    tmp_path: Path,
) -> None:
    """2.12.8 nodes fall behind but the API serves; with no 2.15.1 node left, it stops."""
    newer, older = "2.15.1", "2.12.8"
    with _flow_rollback(tmp_path, newer, older) as (cluster, back):
        assert _states(back, "newer") == ["ok", "degraded", "offline", "lost"]
        step1 = [e for who, e in back.clusters[0].steps[1].effects if who == "newer"]
        reason = step1[0].reason or ""
        assert (
            reason
            == 'Error applying JetStream cluster entries: can not unmarshal "\\"flow_control\\""'
        )
        offline = [e for who, e in back.clusters[0].steps[2].effects if who == "newer"]
        assert offline[-1].state == "offline"
        assert len(offline[-1].assets) == 4
        for step, name in enumerate(ORDER, start=1):
            cluster.restart_node(name, older, settle_s=1.0)
            if step < 3:
                _place_leader(cluster, newer)
                assert _until(partial(_logged, cluster, name, reason)), name
                # step 1: 2 of ORD's 3 replicas run; step 2: 1 does, no quorum
                assert _publish(
                    cluster, "ord.x", within=SERVE_S if step == 1 else REFUSE_S
                ) == (step == 1)
            else:  # only 2.12.8 nodes: nothing serves (lost, or no leader at all)
                assert not _publish(cluster, "ord.x", within=REFUSE_S)


def test_flow_control_rollback_2_15_1_to_2_12_8_leader_moved_to_2_12_8(
    tmp_path: Path,
) -> None:
    """A 2.12.8 meta leader over a flow_control consumer: every asset is gone."""
    newer, older = "2.15.1", "2.12.8"
    with _flow_rollback(tmp_path, newer, older) as (cluster, back):
        assert _states(back, "older") == ["ok", "lost", "lost", "lost"]
        cluster.restart_node("n3", older, settle_s=1.0)
        cluster.move_meta_leader("n3")
        gone = {"code": 404, "err_code": 10059, "description": "stream not found"}
        assert _until(
            lambda: _info(cluster, "n3", "$JS.API.STREAM.INFO.ORD").get("error") == gone
        ), _info(cluster, "n3", "$JS.API.STREAM.INFO.ORD")
        names = _info(cluster, "n3", "$JS.API.STREAM.NAMES")
        assert not names.get("streams"), names


def _stream(cluster: NatsCluster, name: str) -> None:
    """An R3 stream on ``<name lower>.>``."""
    config = {"name": name, "subjects": [f"{name.lower()}.>"], "num_replicas": 3}
    _api(cluster, f"$JS.API.STREAM.CREATE.{name}", config)


def _consumer(cluster: NatsCluster, stream: str, **config: object) -> None:
    """A durable consumer of ``stream``."""
    subject = f"$JS.API.CONSUMER.CREATE.{stream}.{config['durable_name']}"
    _api(cluster, subject, {"stream_name": stream, "config": config})


def _create_orders(cluster: NatsCluster) -> None:
    """ORD with a pull consumer: plain assets every release serves."""
    _stream(cluster, "ORD")
    _consumer(cluster, "ORD", durable_name="C1", ack_policy="explicit")


def _create_flow(cluster: NatsCluster) -> None:
    """ORD with a pull consumer, FC with a push consumer acking by flow control."""
    _create_orders(cluster)
    _stream(cluster, "FC")
    _consumer(
        cluster,
        "FC",
        durable_name="FCC",
        ack_policy="flow_control",
        deliver_subject="fcc.deliver",
    )


@pytest.mark.parametrize("leader", ["newer", "older"])
def test_upgrade_2_12_8_to_2_15_1_of_what_2_12_8_wrote(
    tmp_path: Path, leader: str
) -> None:
    """Assets 2.12.8 wrote: every step of the upgrade to 2.15.1 is ok, and serves."""
    older, newer = "2.12.8", "2.15.1"
    with _cluster(older, tmp_path / "c") as cluster:
        _create_orders(cluster)
        _api(cluster, "$JS.API.STREAM.CREATE.CNT", COUNTER)
        inventory = _pull(cluster, tmp_path)
        forth = check_rolling([inventory], start=older, end=newer)
        assert _states(forth, leader) == ["ok"] * 4
        for step, name in enumerate(ORDER, start=1):
            cluster.restart_node(name, newer, settle_s=1.0)
            _place_leader(cluster, newer if leader == "newer" else older)
            assert _publish(cluster, "ord.x", within=SERVE_S), step
            assert _publish(cluster, "cnt.x", INCREMENT, within=SERVE_S), step
            subject = "$JS.API.CONSUMER.INFO.ORD.C1"
            assert _until(partial(_answers, cluster, subject)), _info(
                cluster, "n1", subject
            )


def _answers(cluster: NatsCluster, subject: str) -> bool:
    reply = _info(cluster, "n1", subject)
    return "error" not in reply and "exception" not in reply
