"""Whole-cluster outcomes against real 3-node clusters: the ``clusters`` facts of levels/.

Per case a fresh 2.15.1 cluster "C1" holds a plain R3 stream ``S_PLAIN``, an R3 stream
``H`` and one R3 consumer on ``H`` whose enum value the target cannot parse
(``ack_policy: "flow_control"`` or ``priority_policy: "prioritized"``); the whole
cluster is then restarted on the target with the same stores. What the cluster does
as a whole is observed (bounded, ``WATCH_S``) and compared with ``check``'s
``clusters`` section:

* ``crash``: every node exits, or some do (their logs hold the predicted panic) and
  the others never get a meta leader (2.11.8 with the sourcing consumer: one node of
  three sometimes survives, leaderless, because the others died first);
* ``meta_state_lost``: a meta leader answers, ``STREAM.NAMES`` stays empty and the log
  holds the predicted "Detected orphaned stream" line (the stream data is deleted);
* ``meta_unavailable``: ``$JS.API.INFO`` keeps answering 503/10008 and the log holds
  the predicted "Error applying JetStream cluster entries" line;
* ``ok``: the streams are listed (an R1 ``sourcing`` consumer has no raft group, so
  2.10.26 only drops the field).

The 2.12.8 ``meta_unavailable`` case lives in ``test_cluster_fidelity.py``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.judge.gate import asset_id
from assetgate.live.common import PullError
from assetgate.live.observed import Comparison, Observations, compare_observed
from assetgate.live.pull import pull_account
from assetgate.run.check import check
from tests.support import fidelity
from tests.support.natscluster import ClusterNode, NatsCluster, request_placed
from tests.support.natsserver import Client, NatsServerError, raw_request
from tests.support.scenarios import NEWEST, capture_inventory, record_asset

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.run.check import Report

pytestmark = pytest.mark.realserver

CLUSTER: Final = "C1"
WATCH_S: Final = 15.0
ORPHANS_S: Final = 45.0  # the orphan cleanup runs 30 s after start (observed)
EMPTY_FOR_S: Final = 3.0  # an empty STREAM.NAMES must stay empty this long
EXIT_S: Final = 5.0  # a node that closed a pull's connection has exited by then
POISONS: Final[dict[str, dict[str, Any]]] = {
    "flow_control": {
        "durable_name": "C",
        "deliver_subject": "push.c",
        "ack_policy": "flow_control",
        "num_replicas": 3,
    },
    "prioritized": {
        "durable_name": "C",
        "ack_policy": "explicit",
        "priority_groups": ["g"],
        "priority_policy": "prioritized",
        "num_replicas": 3,
    },
    # an R3 consumer with sourcing: true carries raft op 18 in its group (2.14+)
    "sourcing": {"durable_name": "C", "ack_policy": "explicit", "sourcing": True},
    "sourcing_r1": {
        "durable_name": "C",
        "ack_policy": "explicit",
        "sourcing": True,
        "num_replicas": 1,
    },
}
CASES: Final = (
    ("2.10.26", "flow_control"),
    ("2.11.8", "prioritized"),
    ("2.11.10", "prioritized"),
    ("2.11.11", "flow_control"),
    ("2.12.0", "flow_control"),
    ("2.12.1", "flow_control"),
    ("2.11.8", "sourcing"),
    ("2.10.26", "sourcing_r1"),
)


def _ask(url: str, subject: str) -> dict[str, Any]:
    try:
        return raw_request(url, subject, b"", timeout=2.0)
    except (OSError, NatsServerError) as exc:
        return {"no_reply": type(exc).__name__}


def _exits(node: ClusterNode, within: float) -> bool:
    """Whether ``node``'s process has exited, or does within ``within`` seconds."""
    deadline = time.monotonic() + within
    while node.proc is not None and node.proc.poll() is None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def _watch(cluster: NatsCluster) -> str:
    """The observed outcome within ``WATCH_S`` (see the module docstring)."""
    deadline = time.monotonic() + WATCH_S
    empty_since: float | None = None
    while time.monotonic() < deadline:
        if all(
            node.proc is None or node.proc.poll() is not None for node in cluster.nodes
        ):
            return "crash"
        live = [
            n.url for n in cluster.nodes if n.proc is not None and n.proc.poll() is None
        ]
        info = _ask(live[0], "$JS.API.INFO")
        if "error" not in info and "no_reply" not in info:
            names = _ask(live[0], "$JS.API.STREAM.NAMES")
            if names.get("streams"):
                return "ok"
            empty_since = empty_since or time.monotonic()
            if time.monotonic() - empty_since >= EMPTY_FOR_S:
                return "meta_state_lost"
        time.sleep(0.5)
    # nodes that panicked leave the others without a meta leader: the cluster is down
    if any(node.proc is None or node.proc.poll() is not None for node in cluster.nodes):
        return "crash"
    return "meta_unavailable"


class Outcome:
    """One case: build on the newest release, roll back, watch, pull, predict."""

    def __init__(
        self, base: Path, target: str, poison: str, catalogue: Catalogue
    ) -> None:
        """Run the case; every node is stopped before this returns."""
        with NatsCluster(NEWEST, base, name=CLUSTER) as cluster:
            with Client(cluster.url, timeout=10.0) as client:
                for name in ("S_PLAIN", "H"):
                    config = {
                        "name": name,
                        "subjects": [f"{name.lower()}.>"],
                        "num_replicas": 3,
                    }
                    reply = request_placed(
                        client,
                        f"$JS.API.STREAM.CREATE.{name}",
                        config,
                        cluster=cluster,
                    )
                    assert "error" not in reply, reply
                body = {"stream_name": "H", "config": POISONS[poison]}
                reply = request_placed(
                    client, "$JS.API.CONSUMER.CREATE.H.C", body, cluster=cluster
                )
                assert "error" not in reply, reply
            self.inventory = capture_inventory(cluster.url, cluster=CLUSTER)
            self.assets = [
                record_asset(r, f"outcome-{target}:{i}")
                for i, r in enumerate(self.inventory, 1)
            ]
            self.report: Report = check(
                self.assets, target=target, mode="cluster", catalogue=catalogue
            )
            began = time.monotonic()
            try:
                cluster.restart_with(target, jetstream=False)
                self.observed = _watch(cluster)
            except NatsServerError:  # the nodes died while starting
                self.observed = "crash"
            if self.observed == "meta_state_lost":  # wait for the deletion's log line
                while "Detected orphaned stream" not in cluster.log_text():
                    if time.monotonic() - began > ORPHANS_S:
                        break
                    time.sleep(1.0)
            self.pulled = None
            live = [n for n in cluster.nodes if n.proc and n.proc.poll() is None]
            if self.observed != "crash" and live:
                try:
                    self.pulled = pull_account(live[0].url, timeout=3.0)
                except PullError:
                    # a node that panics after the watch (a loaded machine) closes
                    # the connection as it exits: a crash seen late, not an answer
                    if not _exits(live[0], EXIT_S):
                        raise
                    self.observed = "crash"
            cluster.stop()
            self.logs = cluster.log_text()


@pytest.mark.parametrize(
    ("target", "poison"), CASES, ids=[f"{t}-{p}" for t, p in CASES]
)
def test_whole_cluster_outcome_matches_real_cluster(
    tmp_path: Path, catalogue: Catalogue, target: str, poison: str
) -> None:
    """The target does to the whole cluster what levels/ predicts, in the log's words."""
    case = Outcome(tmp_path, target, poison, catalogue)
    (predicted,) = case.report.clusters
    causes = () if predicted.outcome == "ok" else (f"{CLUSTER}/$G/H/C",)
    assert (predicted.cluster, predicted.assets) == (CLUSTER, causes)
    assert case.observed == predicted.outcome, (
        f"{target} {poison}: predicted {predicted.outcome} ({predicted.reason}), "
        f"observed {case.observed}"
    )
    reason = predicted.reason or ""
    words = reason.split(" (in ")  # a panic: its first line, then the function
    for part in words:
        assert part.rstrip(")") in case.logs, f"{target}: {part!r} not in the logs"
    if case.pulled is not None:
        seen = Observations.from_records(case.pulled.records)
        comparisons = compare_observed(case.report, case.assets, seen)
    else:  # nothing answers: every asset is unavailable as predicted
        comparisons = [
            Comparison(
                asset=asset_id(v),
                predicted_state=v.state,
                predicted_reason=v.reason,
                observed_state="unavailable",
                observed_reason="no reply: every node exited",
                agree=v.state == "unavailable",
            )
            for v in case.report.assets
        ]
    fidelity.record(
        scenario=f"2.15.1 cluster, {poison} consumer, rolled back (outcome)",
        release=target,
        mode="cluster",
        comparisons=comparisons,
    )
    assert [c.asset for c in comparisons if c.agree is not True] == []
