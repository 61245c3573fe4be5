"""The gate's cluster-mode verdicts against real 3-node clusters rolled back from 2.15.1.

For each target release a fresh cluster "C1" of three 2.15.1 nodes creates R1 and R3
streams and consumers with the features relevant to offline handling, its inventory is
captured through STREAM.LIST/CONSUMER.LIST, and the whole cluster is restarted on the
target release with the same stores (a rollback). Then, per asset, STREAM.NAMES /
CONSUMER.NAMES, the ``offline`` maps of STREAM.LIST / CONSUMER.LIST and STREAM.INFO /
CONSUMER.INFO asked on every node are compared with ``check(..., mode="cluster")``:

* predicted ``online`` -> INFO answers on every node and LIST lists it;
* predicted ``offline`` -> INFO 10194/10195 on every node and the LIST ``offline`` map
  give the predicted reason, byte for byte;
* predicted ``unloadable`` or ``detached`` -> not served: INFO gets no answer or "not
  found" and LIST neither lists it nor names it offline.

Each target's asset set leaves out enum values that release cannot parse (its meta
layer would fail to apply them): ``priority_policy: "prioritized"`` on 2.11 and
``ack_policy: "flow_control"`` before 2.14. The one deliberate crash case runs last.
Disagreements are listed in ``KNOWN_DISAGREEMENTS`` and marked ``xfail(strict=True)``.
"""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.live.observed import Observations, compare_observed
from assetgate.live.pull import pull_account
from assetgate.run.check import check
from tests.support import fidelity, scenarios
from tests.support.natscluster import NatsCluster, request_placed
from tests.support.natsserver import Client, NatsServerError, raw_request
from tests.support.scenarios import (
    FEATURE_CONSUMERS,
    NEWEST,
    AssetKey,
    Observation,
    agrees,
    capture_inventory,
    dropped_paths,
    record_asset,
    record_key,
)

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.judge.gate import Verdict
    from assetgate.run.check import Report

pytestmark = pytest.mark.realserver

CLUSTER: Final = "C1"
TARGETS: Final = (
    "2.12.8",
    "2.12.0",
    "2.11.11",
    "2.11.10",
    "2.11.8",
    "2.10.26",
    "2.14.6",
    NEWEST,
)
"""Rollback targets in run order; NEWEST restarts on itself (the control)."""

PULL_TIMEOUT_S: Final = 8.0  # a stopped stream's CONSUMER.LIST waits 4 s
INFO_TIMEOUT_S: Final = 3.0  # offline replies come after 500 ms
LIST_TIMEOUT_S: Final = (
    8.0  # a stopped stream's CONSUMER.LIST waits 4 s for its members
)
NOT_SERVED: Final = frozenset({"missing", "unavailable"})
SETTLE_S: Final = 20.0  # bound for stream/consumer leaders to answer after the rollback
PAGE_LIMIT: Final = 20
WORKERS: Final = 24

R3: Final = {"num_replicas": 3}

BASE_STREAMS: Final[tuple[dict[str, Any], ...]] = (
    {"name": "S_PLAIN", "subjects": ["plain.>"], **R3},
    {"name": "S_PLAIN1", "subjects": ["plain1.>"]},
    {"name": "S_TTL", "subjects": ["ttl.>"], "allow_msg_ttl": True, **R3},
    {"name": "S_COUNTER", "subjects": ["counter.>"], "allow_msg_counter": True, **R3},
    {"name": "S_COUNTER1", "subjects": ["counter1.>"], "allow_msg_counter": True},
    {"name": "S_ATOMIC", "subjects": ["atomic.>"], "allow_atomic": True, **R3},
    {"name": "S_BATCHED", "subjects": ["batched.>"], "allow_batched": True, **R3},
    {"name": "S_BATCHED1", "subjects": ["batched1.>"], "allow_batched": True},
    {"name": "H_PRIO", "subjects": ["hprio.>"], **R3},
    {"name": "H_SRCFLAG", "subjects": ["hsrcflag.>"], **R3},
    {"name": "H_SRCFLAG1", "subjects": ["hsrcflag1.>"]},
)
"""Streams every target gets (R3 unless the name ends in 1)."""

_EXPLICIT: Final = {"ack_policy": "explicit"}

BASE_CONSUMERS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("H_PRIO", {"durable_name": "C_PLAIN", **_EXPLICIT}),
    (
        "H_PRIO",
        {
            "durable_name": "C_PAUSED",
            "pause_until": "2999-01-01T00:00:00Z",
            **_EXPLICIT,
        },
    ),
    (
        "H_PRIO",
        {
            "durable_name": "C_PINNED",
            "priority_groups": ["g"],
            "priority_policy": "pinned_client",
            **_EXPLICIT,
        },
    ),
    # `sourcing: true` with an ack policy every release parses: an unknown field at
    # stored level 0 ("decoding error" on a single server, "config error" in a cluster).
    ("H_SRCFLAG", {"durable_name": "C_SRCFLAG", "sourcing": True, **_EXPLICIT}),
    ("H_SRCFLAG", {"durable_name": "C_SIB", **_EXPLICIT}),
    ("H_SRCFLAG1", {"durable_name": "C_SRCFLAG1", "sourcing": True, **_EXPLICIT}),
    ("H_SRCFLAG1", {"durable_name": "C_SIB1", **_EXPLICIT}),
)

PRIORITIZED: Final = (
    "H_PRIO",
    {
        "durable_name": "C_PRIO",
        "priority_groups": ["g"],
        "priority_policy": "prioritized",
        **_EXPLICIT,
    },
)
"""2.11 cannot parse this enum value: only for targets 2.12+."""

FLOW_STREAMS: Final[tuple[dict[str, Any], ...]] = (
    {"name": "H_SRC", "subjects": ["hsrc.>"], **R3},
    {"name": "H_FLOWACK", "subjects": ["hflowack.>"], **R3},
)
FLOW_CONSUMERS: Final = tuple(
    (stream, config)
    for stream, config in FEATURE_CONSUMERS
    if config["durable_name"] in {"C_FLOWACK", "C_SOURCING"}
)
SOURCING_STREAMS: Final = tuple(
    {**config, **R3} for config in scenarios.SOURCING_STREAMS
)
"""``ack_policy: "flow_control"`` (and so ``sources[].consumer``): targets 2.14+ only."""

CRASH_TARGET: Final = "2.12.8"
CRASH_STREAMS: Final[tuple[dict[str, Any], ...]] = (
    {"name": "S_PLAIN", "subjects": ["plain.>"], **R3},
    *FLOW_STREAMS[1:],
)
CRASH_CONSUMERS: Final = FLOW_CONSUMERS[:1]
"""The deliberate case: a flow-control consumer in the meta layer of a 2.12.8 cluster."""
CRASH_WATCH_S: Final = 10.0
"""How long the crashed cluster is watched for a meta leader (none came in 120 s)."""
UNAVAILABLE: Final = "10008 JetStream system temporarily unavailable"
NO_REPLY: Final = "no reply"

_SIB_STOPPED: Final = (
    '{release} C_SIB: predicted detached (\'stream "H_SRCFLAG" is offline: stopped - '
    'unsupported consumer "C_SRCFLAG"\'), observed CONSUMER.INFO answering with the '
    'config (200) on some or all nodes (others 503/10008 "JetStream system '
    'temporarily unavailable") while CONSUMER.LIST leaves it out (in missing, not '
    "offline); the R3 consumer keeps its own raft group although its R3 stream is "
    'stopped (the R1 sibling C_SIB1 gets 10059 "stream not found", as predicted)'
)
_SIB_STOPPED_GEN1: Final = (
    "{release} C_SIB: predicted detached ('stream \"H_SRCFLAG\" is offline: stopped'), "
    "observed CONSUMER.INFO answering with the config (200) on some nodes (others "
    "503/10008) while CONSUMER.LIST leaves it out (in missing): as on 2.11.11/2.12.8, the "
    "R3 consumer keeps its own raft group although its R3 stream is stopped"
)
KNOWN_DISAGREEMENTS: Final[dict[tuple[str, str], str]] = {
    ("2.12.8", "C_SIB"): _SIB_STOPPED.format(release="2.12.8"),
    ("2.11.11", "C_SIB"): _SIB_STOPPED.format(release="2.11.11"),
    ("2.12.0", "C_SIB"): _SIB_STOPPED_GEN1.format(release="2.12.0"),
    ("2.11.10", "C_SIB"): _SIB_STOPPED_GEN1.format(release="2.11.10"),
}
"""(release, asset name) -> "<release> <asset>: predicted ... observed ..."."""


def assets_for(
    target: str,
) -> tuple[
    tuple[dict[str, Any], ...],
    tuple[tuple[str, dict[str, Any]], ...],
    tuple[dict[str, Any], ...],
]:
    """Return (streams, consumers, streams created after the consumers) for a target."""
    streams, consumers = BASE_STREAMS, BASE_CONSUMERS
    late: tuple[dict[str, Any], ...] = ()
    major_minor = tuple(int(part) for part in target.split(".")[:2])
    release = tuple(int(part) for part in target.split("."))
    if release < (
        2,
        11,
        9,
    ):  # the R3 sourcing consumer crashes them: test_cluster_outcomes
        consumers = tuple(c for c in consumers if c[1]["durable_name"] != "C_SRCFLAG")
    if major_minor >= (2, 12):
        consumers = (*consumers, PRIORITIZED)
    if major_minor >= (2, 14):
        streams, consumers = (*streams, *FLOW_STREAMS), (*consumers, *FLOW_CONSUMERS)
        late = SOURCING_STREAMS
    return streams, consumers, late


def asset_keys(target: str) -> list[AssetKey]:
    """Return (kind, stream, name) of every asset created for ``target``, sorted."""
    streams, consumers, late = assets_for(target)
    keys = [("stream", c["name"], c["name"]) for c in (*streams, *late)]
    keys.extend(("consumer", s, c["durable_name"]) for s, c in consumers)
    return sorted(keys)


# --------------------------------------------------------------------------
# Building and observing


def _create(
    url: str,
    streams: tuple[dict[str, Any], ...],
    consumers: tuple[tuple[str, dict[str, Any]], ...],
    late: tuple[dict[str, Any], ...] = (),
) -> None:
    """Create streams, then consumers, then the late streams; raise on any error."""
    requests: list[tuple[str, dict[str, Any]]] = [
        (f"$JS.API.STREAM.CREATE.{c['name']}", c) for c in streams
    ]
    requests.extend(
        (
            f"$JS.API.CONSUMER.CREATE.{s}.{c['durable_name']}",
            {"stream_name": s, "config": c},
        )
        for s, c in consumers
    )
    requests.extend((f"$JS.API.STREAM.CREATE.{c['name']}", c) for c in late)
    with Client(url, timeout=10.0) as client:
        for subject, body in requests:
            reply = request_placed(client, subject, body)
            if "error" in reply:
                raise NatsServerError(f"{subject} {body} failed: {reply['error']}")


def _ask(url: str, subject: str, timeout: float, body: bytes = b"") -> dict[str, Any]:
    """One API request; a missing answer becomes ``{"no_reply": "<why>"}``."""
    try:
        return raw_request(url, subject, body, timeout=timeout)
    except (OSError, NatsServerError) as exc:
        return {"no_reply": f"{type(exc).__name__}: {exc}"}


def _paged(
    url: str, subject: str, items: str
) -> tuple[list[Any], dict[str, str], set[str]]:
    """Page through a NAMES/LIST endpoint; return items, ``offline`` and ``missing``."""
    found: list[Any] = []
    offline: dict[str, str] = {}
    missing: set[str] = set()
    for _ in range(PAGE_LIMIT):
        body = json.dumps({"offset": len(found)}).encode()
        reply = _ask(url, subject, LIST_TIMEOUT_S, body)
        if "error" in reply or "no_reply" in reply:
            raise NatsServerError(f"{subject}: {reply}")
        page = reply.get(items) or []
        found.extend(page)
        offline.update(reply.get("offline") or {})
        missing.update(str(name) for name in reply.get("missing") or ())
        if not page or len(found) >= int(reply.get("total", 0)):
            return found, offline, missing
    raise NatsServerError(f"{subject}: more than {PAGE_LIMIT} pages")


def _info_word(reply: dict[str, Any]) -> str:
    """Summarise an INFO reply: ``ok``, ``offline: <reason>``, ``<code> <text>``."""
    if "no_reply" in reply:
        return NO_REPLY
    error = reply.get("error")
    if not isinstance(error, dict):
        return "ok"
    code, text = int(error.get("err_code", 0)), str(error.get("description", ""))
    for offline_code, prefix in (
        (10194, "stream is offline: "),
        (10195, "consumer is offline: "),
    ):
        if code == offline_code and text.startswith(prefix):
            return "offline: " + text.removeprefix(prefix)
    return f"{code} {text}"


_NOT_SERVED: Final = re.compile(r"no reply|1001[4]|10059 ")


class Snapshot:
    """What the cluster says about every asset, from every node, at one moment."""

    def __init__(self, cluster: NatsCluster, keys: list[AssetKey]) -> None:
        """Ask NAMES and LIST on the first node and INFO on every node, in parallel."""
        url = cluster.url
        names, _, _ = _paged(url, "$JS.API.STREAM.NAMES", "streams")
        listed, self.stream_offline, self.stream_missing = _paged(
            url, "$JS.API.STREAM.LIST", "streams"
        )
        self.streams = {str(n) for n in names}
        self.stream_configs = {str(e["config"]["name"]): e["config"] for e in listed}
        self.consumers: dict[str, set[str]] = {}
        self.consumer_configs: dict[tuple[str, str], dict[str, Any]] = {}
        self.consumer_offline: dict[str, dict[str, str]] = {}
        self.consumer_missing: dict[str, set[str]] = {}
        self.list_errors: dict[str, str] = {}

        def per_stream(stream: str) -> None:
            try:
                cnames, _, _ = _paged(
                    url, f"$JS.API.CONSUMER.NAMES.{stream}", "consumers"
                )
                centries, coff, cmiss = _paged(
                    url, f"$JS.API.CONSUMER.LIST.{stream}", "consumers"
                )
            except NatsServerError as exc:
                self.list_errors[stream] = str(exc)
                cnames, centries, coff, cmiss = [], [], {}, set()
            self.consumers[stream] = {str(n) for n in cnames}
            self.consumer_offline[stream] = coff
            self.consumer_missing[stream] = cmiss
            for entry in centries:
                self.consumer_configs[(stream, str(entry["name"]))] = entry["config"]

        items = [(key, node_url) for key in keys for node_url in cluster.urls]
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            list(pool.map(per_stream, sorted(self.streams)))
            words = list(pool.map(_info_of, items))
        self.info: dict[AssetKey, list[str]] = {key: [] for key in keys}
        for (key, _), word in zip(items, words, strict=True):
            self.info[key].append(word)

    def settled(self, key: AssetKey) -> bool:
        """Whether INFO answers on every node and LIST lists it or names it offline.

        A consumer whose stream is offline on every node is never waited for: it
        may not be served at all.
        """
        kind, stream, name = key
        if kind == "consumer" and all(
            w.startswith("offline: ")
            for w in self.info.get(("stream", stream, stream), ["-"])
        ):
            return True
        if kind == "stream":
            listed = stream in self.stream_configs or stream in self.stream_offline
        else:
            listed = (stream, name) in self.consumer_configs or name in (
                self.consumer_offline.get(stream, {})
            )
        return listed and all(
            w == "ok" or w.startswith("offline: ") for w in self.info[key]
        )

    def observe(self, record: dict[str, Any]) -> Observation:
        """Turn the snapshot into one asset's (state, detail)."""
        key = record_key(record)
        kind, stream, name = key
        words = sorted(set(self.info[key]))
        if kind == "stream":
            named = stream in self.streams
            offline = self.stream_offline.get(stream)
            seen = self.stream_configs.get(stream)
            absent = stream in self.stream_missing
        else:
            named = name in self.consumers.get(stream, set())
            offline = self.consumer_offline.get(stream, {}).get(name)
            seen = self.consumer_configs.get((stream, name))
            absent = name in self.consumer_missing.get(stream, set())
        if offline is not None:
            listing = f"offline {offline!r}"
        else:
            listing = "listed" if seen is not None else "not listed"
        if absent:
            listing += ", in missing"
        detail = f"INFO {words}; LIST {listing}; NAMES {'yes' if named else 'no'}"
        if len(words) != 1:
            return "inconsistent", detail
        word = words[0]
        if word == "ok" and seen is not None and offline is None:
            dropped = dropped_paths(record["config"], seen)
            return ("degraded", ", ".join(dropped)) if dropped else ("online", None)
        if word.startswith("offline: ") and offline == word.removeprefix("offline: "):
            return "offline", offline
        if _NOT_SERVED.match(word) and seen is None and offline is None:
            return "missing", detail
        return "inconsistent", detail


def observe_cluster(
    cluster: NatsCluster, inventory: list[dict[str, Any]]
) -> tuple[dict[AssetKey, Observation], Snapshot, float]:
    """Snapshot until every asset answers INFO or ``SETTLE_S`` passes; observe each."""
    keys = [record_key(r) for r in inventory]
    began = time.monotonic()
    deadline = began + SETTLE_S
    snap = Snapshot(cluster, keys)
    while not all(snap.settled(k) for k in keys) and time.monotonic() < deadline:
        time.sleep(0.5)
        snap = Snapshot(cluster, keys)
    observed = {record_key(r): snap.observe(r) for r in inventory}
    return observed, snap, time.monotonic() - began


_LOG_FACTS: Final = re.compile(
    r"panic|\[ERR\]|\[FTL\]|unsupported|unmarshal|Did not receive|apply|offline",
    re.IGNORECASE,
)


def log_facts(cluster: NatsCluster) -> list[str]:
    """Return the log lines about versions, errors and offline handling (all nodes)."""
    return [
        line
        for line in cluster.log_text().splitlines()
        if line.startswith("==> ") or _LOG_FACTS.search(line)
    ]


# --------------------------------------------------------------------------
# Fixtures and cases


class Rollback:
    """One cluster built on the newest release and rolled back to ``target``."""

    def __init__(self, base: Path, target: str, catalogue: Catalogue) -> None:
        """Build, capture, roll back, observe and stop; everything is kept for tests."""
        self.target = target
        self.timings: dict[str, float] = {}
        streams, consumers, late = assets_for(target)
        with NatsCluster(NEWEST, base / target, name=CLUSTER) as cluster:
            began = time.monotonic()
            _create(cluster.url, streams, consumers, late)
            self.inventory = capture_inventory(cluster.url, cluster=CLUSTER)
            self.timings["create+capture"] = time.monotonic() - began
            began = time.monotonic()
            cluster.restart_with(target)
            self.timings["rollback"] = time.monotonic() - began
            self.observed, self.snapshot, self.timings["observe"] = observe_cluster(
                cluster, self.inventory
            )
            self.pulled = pull_account(cluster.url, timeout=PULL_TIMEOUT_S)
            self.running = cluster.running()
            self.codes = cluster.stop()
            self.timings.update(cluster.started_at)
            self.logs = log_facts(cluster)
        report = _report(self.inventory, target, catalogue, "cluster")
        self.report = report
        self.predicted = _by_key(report)
        self.clusters = report.clusters


class Crash:
    """The deliberate crash: a flow-control consumer, cluster rolled back to 2.12.8."""

    def __init__(self, base: Path, catalogue: Catalogue) -> None:
        """Build on the newest release, roll back without waiting for JetStream, watch."""
        self.timings: dict[str, float] = {}
        with NatsCluster(NEWEST, base / "crash", name=CLUSTER) as cluster:
            _create(cluster.url, CRASH_STREAMS, CRASH_CONSUMERS)
            self.inventory = capture_inventory(cluster.url, cluster=CLUSTER)
            began = time.monotonic()
            cluster.restart_with(CRASH_TARGET, jetstream=False)
            self.timings["rollback (clients)"] = time.monotonic() - began
            self.api_info = self._watch(cluster)
            keys = [record_key(r) for r in self.inventory]
            items = [(key, url) for key in keys for url in cluster.urls]
            with ThreadPoolExecutor(max_workers=WORKERS) as pool:
                words = list(pool.map(_info_of, items))
            self.info: dict[AssetKey, list[str]] = {key: [] for key in keys}
            for (key, _), word in zip(items, words, strict=True):
                self.info[key].append(word)
            self.pulled = pull_account(cluster.url, timeout=PULL_TIMEOUT_S)
            self.running = cluster.running()
            self.codes = cluster.stop()
            self.logs = log_facts(cluster)
        report = _report(self.inventory, CRASH_TARGET, catalogue, "crash")
        self.report = report
        self.predicted = _by_key(report)
        self.clusters = report.clusters

    @staticmethod
    def _watch(cluster: NatsCluster) -> list[str]:
        """Poll ``$JS.API.INFO`` on every node for ``CRASH_WATCH_S``; the last words."""
        deadline = time.monotonic() + CRASH_WATCH_S
        words = ["not asked"] * len(cluster.urls)
        while time.monotonic() < deadline:
            words = [
                _info_word(_ask(url, "$JS.API.INFO", INFO_TIMEOUT_S))
                for url in cluster.urls
            ]
            if "ok" in words:
                break
            time.sleep(0.5)
        return words

    def observed(self, key: AssetKey) -> Observation:
        """``unavailable`` if no node serves it (503/10008 or no reply), else words."""
        words = sorted(set(self.info[key]))
        if set(words) <= {UNAVAILABLE, NO_REPLY}:
            return "unavailable", f"INFO {words}"
        return "inconsistent", f"INFO {words}"


def _info_of(item: tuple[AssetKey, str]) -> str:
    """INFO of one asset asked on one node, summarised by ``_info_word``."""
    (kind, stream, name), node_url = item
    subject = (
        f"$JS.API.STREAM.INFO.{stream}"
        if kind == "stream"
        else f"$JS.API.CONSUMER.INFO.{stream}.{name}"
    )
    return _info_word(_ask(node_url, subject, INFO_TIMEOUT_S))


def _report(
    inventory: list[dict[str, Any]], target: str, catalogue: Catalogue, label: str
) -> Report:
    """Run ``check(..., mode="cluster")`` over captured records."""
    assets = [
        record_asset(record, f"{label}-{target}:{index}")
        for index, record in enumerate(inventory, start=1)
    ]
    report = check(assets, target=target, mode="cluster", catalogue=catalogue)
    assert (report.summary.errors, report.summary.ignored) == (0, 0)
    return report


def _by_key(report: Report) -> dict[AssetKey, Verdict]:
    """The report's verdicts by (kind, stream, name)."""
    return {(str(v.kind), v.stream, v.name): v for v in report.assets}


class Rollbacks:
    """Rollbacks built lazily, once per target, for the module."""

    def __init__(self, factory: pytest.TempPathFactory, catalogue: Catalogue) -> None:
        """Remember where stores go and which catalogue judges."""
        self._base = factory.mktemp("cluster")
        self._catalogue = catalogue
        self._done: dict[str, Rollback] = {}
        self._failed: dict[str, Exception] = {}
        self._crash: Crash | None = None

    def get(self, target: str) -> Rollback:
        """Return the rollback to ``target``, running it the first time (once only).

        A rollback that failed is not run again for the next test: each of them
        fails at once with the first error.
        """
        if target in self._failed:
            raise self._failed[target]
        if target not in self._done:
            try:
                self._done[target] = Rollback(self._base, target, self._catalogue)
            except Exception as exc:
                self._failed[target] = exc
                raise
        return self._done[target]

    def crash(self) -> Crash:
        """Return the deliberate crash case, running it the first time."""
        if self._crash is None:
            self._crash = Crash(self._base, self._catalogue)
        return self._crash


@pytest.fixture(scope="module")
def rollbacks(
    tmp_path_factory: pytest.TempPathFactory, catalogue: Catalogue
) -> Rollbacks:
    """One cluster rollback per target for the module (every node always stopped)."""
    return Rollbacks(tmp_path_factory, catalogue)


def _cases() -> list[Any]:
    """Return one pytest param per (target, asset), xfail-marked if known to differ."""
    cases: list[Any] = []
    for target in TARGETS:
        for key in asset_keys(target):
            why = KNOWN_DISAGREEMENTS.get((target, key[2]))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            cases.append(
                pytest.param(target, key, marks=marks, id=f"{target}-{key[2]}")
            )
    return cases


@pytest.mark.parametrize("target", TARGETS)
def test_rollback_keeps_the_cluster_serving(rollbacks: Rollbacks, target: str) -> None:
    """After the rollback every node runs, inventories match, no node panics."""
    rollback = rollbacks.get(target)
    assert sorted(record_key(r) for r in rollback.inventory) == asset_keys(target)
    assert rollback.running
    assert not [line for line in rollback.logs if "panic" in line.lower()]
    assert [(c.cluster, c.outcome) for c in rollback.clusters] == [(CLUSTER, "ok")]


@pytest.mark.parametrize(("target", "key"), _cases())
def test_cluster_prediction_matches_real_cluster(
    rollbacks: Rollbacks, target: str, key: AssetKey
) -> None:
    """A cluster rolled back to the target does to each asset what the gate predicts."""
    rollback = rollbacks.get(target)
    fidelity.assert_agrees(
        scenario="2.15.1 3-node cluster rolled back (INFO)",
        release=target,
        mode="cluster",
        key=key,
        verdict=rollback.predicted[key],
        seen=rollback.observed.get(key, ("missing", "not observed")),
        known=KNOWN_DISAGREEMENTS.get((target, key[2])),
        not_served=NOT_SERVED,
    )


# The deliberate crash runs last: nothing after it depends on its cluster.

CRASH_KEYS: Final = sorted(
    [("stream", c["name"], c["name"]) for c in CRASH_STREAMS]
    + [("consumer", s, c["durable_name"]) for s, c in CRASH_CONSUMERS]
)


def test_flow_control_consumer_stops_the_2_12_meta_layer(rollbacks: Rollbacks) -> None:
    """A 2.12.8 cluster cannot apply a flow_control consumer: no meta leader, 503s."""
    crash = rollbacks.crash()
    assert crash.running
    assert crash.api_info  # every node asked; each answers 503/10008 or not at all
    assert set(crash.api_info) <= {UNAVAILABLE, NO_REPLY}
    wanted = 'Error applying JetStream cluster entries: can not unmarshal "\\"flow_control\\""'
    assert sum(wanted in line for line in crash.logs) >= 3  # once per node at least
    assert not [line for line in crash.logs if "panic" in line.lower()]
    # the gate predicted it: the cluster's outcome, in the log's own words
    (outcome,) = crash.clusters
    assert (outcome.outcome, outcome.reason) == ("meta_unavailable", wanted)
    assert outcome.assets == (f"{CLUSTER}/$G/H_FLOWACK/C_FLOWACK",)


def _crash_cases() -> list[Any]:
    """One param per asset of the crash case, xfail-marked if known to differ."""
    cases: list[Any] = []
    for key in CRASH_KEYS:
        why = KNOWN_DISAGREEMENTS.get(("crash-2.12.8", key[2]))
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        cases.append(pytest.param(key, marks=marks, id=f"crash-2.12.8-{key[2]}"))
    return cases


@pytest.mark.parametrize("key", _crash_cases())
def test_crash_prediction_matches_real_cluster(
    rollbacks: Rollbacks, key: AssetKey
) -> None:
    """Each asset of the crashed 2.12.8 cluster against the gate's cluster verdict."""
    crash = rollbacks.crash()
    verdict = crash.predicted[key]
    seen = crash.observed(key)
    predicted = (verdict.state, verdict.reason)
    assert agrees(verdict, seen, not_served=NOT_SERVED), (
        f"crash {CRASH_TARGET} {key[0]} {key[1]}/{key[2]}: predicted {predicted!r}, "
        f"observed {seen!r}"
    )


def _pull_compare(
    scenario: str,
    release: str,
    inventory: list[dict[str, Any]],
    report: Report,
    pulled: Any,
) -> list[str]:
    """Compare a pull of the rolled-back cluster with the report; record; disagreements."""
    assets = [record_asset(r, f"{scenario}:{i}") for i, r in enumerate(inventory, 1)]
    comparisons = compare_observed(
        report, assets, Observations.from_records(pulled.records)
    )
    known: dict[str, str] = {}
    for (where, name), why in KNOWN_DISAGREEMENTS.items():
        for kind, stream, asset in asset_keys(release) if where == release else ():
            if asset == name:
                ident = f"{CLUSTER}/$G/{stream}"
                known[ident if kind == "stream" else f"{ident}/{asset}"] = why
    fidelity.record(
        scenario=scenario,
        release=release,
        mode="cluster",
        comparisons=comparisons,
        known=known,
    )
    return [
        f"{release} {c.asset}: predicted {c.predicted_state} {c.predicted_reason!r}, "
        f"observed {c.observed_state} {c.observed_reason!r}"
        for c in comparisons
        if c.agree is not True and c.asset not in known
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_pull_of_rolled_back_cluster_agrees(rollbacks: Rollbacks, target: str) -> None:
    """``pull`` of the rolled-back cluster and ``--compare-observed`` agree (known aside)."""
    rollback = rollbacks.get(target)
    differ = _pull_compare(
        "2.15.1 3-node cluster rolled back (pull)",
        target,
        rollback.inventory,
        rollback.report,
        rollback.pulled,
    )
    assert differ == []


def test_pull_of_down_cluster_observes_it_unavailable(rollbacks: Rollbacks) -> None:
    """``pull`` of the crashed 2.12.8 cluster records it unavailable, as predicted."""
    crash = rollbacks.crash()
    (record,) = [r for r in crash.pulled.records if r["kind"] == "cluster"]
    assert (record["observed_state"], record["observed_reason"]) == (
        "unavailable",
        "JetStream system temporarily unavailable",
    )
    differ = _pull_compare(
        "2.15.1 cluster, flow_control consumer, rolled back (outcome)",
        CRASH_TARGET,
        crash.inventory,
        crash.report,
        crash.pulled,
    )
    assert differ == []
