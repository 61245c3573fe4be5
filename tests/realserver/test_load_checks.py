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
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import pytest

import assetgate
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


def _healthz(server: NatsServer) -> dict[str, Any]:
    """The server's /healthz answer (200 or 503), as JSON."""
    url = f"http://127.0.0.1:{server.monitor_port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=5.0) as reply:
            answer: dict[str, Any] = json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        answer = json.loads(exc.read())
    return answer


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
        health = _healthz(second)
        log = second.log_text()
    for verdict in report.assets:
        key = (verdict.kind, verdict.stream, verdict.name)
        state, _ = observed[key]
        logged = _log_reason(log, verdict.kind, verdict.stream, verdict.name)
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
