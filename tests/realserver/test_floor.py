"""The rollback floor ``check --target all`` names, tried on real servers.

A store is written by nats-server 2.15.1 with assets of several eras. The matrix
(single mode) names the lowest release where nothing is lost. Copies of the store are
then started by that release and by the release just below it: at the floor every
asset must be served as it was created, below it something must not be.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.run.matrix import check_matrix
from tests.support.natsserver import Client, NatsServer
from tests.support.scenarios import _create, capture_inventory, observe, write_jsonl

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.realserver

WRITER: Final = "2.15.1"
STREAMS: Final[tuple[dict[str, Any], ...]] = (
    {"name": "PLAIN", "subjects": ["plain.>"]},
    {"name": "TTL", "subjects": ["ttl.>"], "allow_msg_ttl": True},
    {"name": "CNT", "subjects": ["cnt.>"], "allow_msg_counter": True},
)
CONSUMERS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    (
        "PLAIN",
        {
            "durable_name": "GRP",
            "ack_policy": "explicit",
            "priority_groups": ["g1"],
            "priority_policy": "overflow",
        },
    ),
)


def test_nothing_is_lost_at_the_floor_and_something_below_it(tmp_path: Path) -> None:
    """At the named lossless floor every asset is online; one release below, one is not."""
    store = tmp_path / "store"
    with NatsServer(WRITER, store) as first:
        with Client(first.url, timeout=5.0) as client:
            _create(client, STREAMS, CONSUMERS)
        inventory = capture_inventory(first.url)
    assert len(inventory) == len(STREAMS) + len(CONSUMERS)
    write_jsonl(inventory, tmp_path / "inventory.jsonl")
    matrix = check_matrix([tmp_path / "inventory.jsonl"], mode="single")
    floor = matrix.floor.lossless
    releases = [row.release for row in matrix.releases]
    assert (
        floor == "2.12.0"
    )  # the counter stream: allow_msg_counter is known from 2.12.0
    below = releases[releases.index(floor) - 1]
    assert matrix.floor.pinned_by == ["/$G/CNT"]
    seen: dict[str, dict[tuple[str, str, str], tuple[str, str | None]]] = {}
    for release in (floor, below):
        copy = tmp_path / f"copy-{release}"
        shutil.copytree(store, copy)
        with NatsServer(release, copy) as server:
            seen[release] = observe(server, inventory)
    assert {key: state for key, (state, _) in seen[floor].items()} == dict.fromkeys(
        seen[floor], "online"
    )
    lost = {key: obs for key, obs in seen[below].items() if obs[0] != "online"}
    assert set(lost) == {("stream", "CNT", "CNT")}, seen[below]
    pin = next(p for p in matrix.floor.pins if p.floor == "lossless")
    assert (pin.release, pin.state, pin.reason) == (
        below,
        *lost["stream", "CNT", "CNT"],
    )
