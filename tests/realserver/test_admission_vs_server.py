"""admit() against a real nats-server 2.12.8 holding offline assets written by 2.15.1.

The feature store (``tests/support/scenarios.py``) is written once by 2.15.1, with
``_nats.req.level: "6"`` forged into S_FORGED and C_FORGED on disk, and a copy is opened
by 2.12.8 as a single server. Its assets are then what the captured inventory says, judged
for 2.12.8: S_BATCHED and S_FORGED are offline, H_FORGED is stopped by C_FORGED. Each
request below is sent for real, and the reply must be exactly what admit() predicted from
that inventory: allowed, or the same code, err_code and description.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import msgspec
import pytest

from assetgate.inventory.read import Asset
from assetgate.requests.admission import admit
from assetgate.requests.validate import validate
from tests.support.natsserver import Client, NatsServer
from tests.support.scenarios import REQUEST_TIMEOUT_S, build_feature_store

if TYPE_CHECKING:
    from collections.abc import Iterator

    from assetgate.catalogue.levels import Catalogue

pytestmark = pytest.mark.realserver

TARGET: Final = "2.12.8"

Answer = tuple[bool, dict[str, Any] | None]
"""(allowed, error as {code, err_code, description} or None)."""


@dataclass(frozen=True)
class Opened:
    """The 2.12.8 server on a copy of the feature store, and that store's inventory."""

    client: Client
    records: list[dict[str, Any]]
    assets: list[Asset]

    def stored(self, name: str) -> dict[str, Any]:
        """The stored config of a stream, as captured from 2.15.1 (forged level included)."""
        for record in self.records:
            if record["kind"] == "stream" and record["name"] == name:
                config: dict[str, Any] = record["config"]
                return config
        raise KeyError(name)


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Opened]:
    """Build the store on 2.15.1 once, open a copy with 2.12.8; stop it at the end."""
    base = tmp_path_factory.mktemp("admission")
    records = build_feature_store(base / "store")
    store = base / TARGET / "store"
    shutil.copytree(base / "store", store)
    assets = [
        Asset(
            source=f"feature-store:{index}",
            cluster=record["cluster"],
            account=record["account"],
            kind=record["kind"],
            stream=record["stream"],
            name=record["name"],
            config=json.dumps(record["config"]).encode(),
        )
        for index, record in enumerate(records, start=1)
    ]
    with (
        NatsServer(TARGET, store) as server,
        Client(server.url, timeout=REQUEST_TIMEOUT_S) as client,
    ):
        yield Opened(client=client, records=records, assets=assets)


def _without_unknown(config: dict[str, Any], catalogue: Catalogue) -> dict[str, Any]:
    """The config without the top-level fields 2.12.8 does not know."""
    unknown = validate(
        config, kind="stream", server=TARGET, catalogue=catalogue
    ).unknown_fields
    assert unknown, "the stored config has no field unknown to 2.12.8"
    assert all("." not in path for path in unknown), unknown
    return {key: value for key, value in config.items() if key not in unknown}


def _stream_request(
    opened: Opened, catalogue: Catalogue, case: str
) -> tuple[str, dict[str, Any], dict[str, Any], str]:
    """(subject, request body, config for admit, op) of a stream case."""
    if case == "create-inside-offline-unknown-field":
        body: dict[str, Any] = {"name": "OV_B", "subjects": ["batched.x"]}
        return "$JS.API.STREAM.CREATE.OV_B", body, body, "create"
    if case == "create-inside-offline-forged-level":
        body = {"name": "OV_F", "subjects": ["forged.x"]}
        return "$JS.API.STREAM.CREATE.OV_F", body, body, "create"
    if case == "create-inside-online":
        body = {"name": "OV_P", "subjects": ["plain.x"]}
        return "$JS.API.STREAM.CREATE.OV_P", body, body, "create"
    if case == "update-offline-stream-known-fields":
        body = _without_unknown(opened.stored("S_BATCHED"), catalogue)
        return "$JS.API.STREAM.UPDATE.S_BATCHED", body, body, "update"
    if case == "update-offline-stream-unknown-field":
        body = opened.stored("S_BATCHED")
        return "$JS.API.STREAM.UPDATE.S_BATCHED", body, body, "update"
    if case == "update-forged-level-stream":
        body = opened.stored("S_FORGED")
        return "$JS.API.STREAM.UPDATE.S_FORGED", body, body, "update"
    if case == "create-free":
        body = {"name": "FRESH", "subjects": ["fresh.>"]}
        return "$JS.API.STREAM.CREATE.FRESH", body, body, "create"
    raise AssertionError(case)


def _observed(reply: dict[str, Any]) -> Answer:
    error = reply.get("error")
    if error is None:
        return True, None
    return False, {
        "code": error["code"],
        "err_code": error["err_code"],
        "description": error["description"],
    }


def _predicted(admission: Any) -> Answer:
    error = admission.error
    return admission.allowed, None if error is None else msgspec.to_builtins(error)


@pytest.mark.parametrize(
    ("case", "expected_err_code"),
    [
        # real-server-observations item 7: offline streams keep their subjects
        ("create-inside-offline-unknown-field", 10065),
        ("create-inside-offline-forged-level", 10065),
        ("create-inside-online", 10065),
        # item 6: the offline check (10194) after decoding ...
        ("update-offline-stream-known-fields", 10194),
        # ... which 2.12.8 fails first for a body with the unknown field (10025)
        ("update-offline-stream-unknown-field", 10025),
        ("update-forged-level-stream", 10194),
        ("create-free", None),
    ],
    ids=str,
)
def test_stream_request_matches_admit(
    opened: Opened, catalogue: Catalogue, case: str, expected_err_code: int | None
) -> None:
    """2.12.8 answers each stream create/update exactly as admit() predicted."""
    subject, body, config, op = _stream_request(opened, catalogue, case)
    admission = admit(
        opened.assets,
        config,
        kind="stream",
        target=TARGET,
        op="create" if op == "create" else "update",
        mode="single",
        catalogue=catalogue,
    )
    reply = opened.client.request_json(subject, json.dumps(body).encode())
    observed = _observed(reply)
    err_code = None if observed[1] is None else observed[1]["err_code"]
    assert (_predicted(admission), err_code) == (observed, expected_err_code)


_STOPPED: Final = {
    "code": 500,
    "err_code": 10194,
    "description": 'stream is offline: stopped - unsupported consumer "C_FORGED"',
}


@pytest.mark.parametrize(
    ("stream", "name"),
    [
        ("H_FORGED", "C_NEW"),
        # The offline consumer itself: the server checks its stream first (stopped
        # by that very consumer), so the answer is 10194, not 10195.
        ("H_FORGED", "C_FORGED"),
        # Its supported sibling, not loaded by 2.12.8 (stream not valid).
        ("H_FORGED", "C_SIB"),
    ],
    ids=["new-consumer", "offline-consumer", "detached-consumer"],
)
def test_consumer_create_on_stopped_stream_matches_admit(
    opened: Opened, catalogue: Catalogue, stream: str, name: str
) -> None:
    """A consumer create on the stopped H_FORGED gets 500/10194 with the stopped reason."""
    config = {"durable_name": name, "ack_policy": "explicit"}
    admission = admit(
        opened.assets,
        config,
        kind="consumer",
        target=TARGET,
        stream=stream,
        mode="single",
        catalogue=catalogue,
    )
    body = json.dumps({"stream_name": stream, "config": config}).encode()
    reply = opened.client.request_json(f"$JS.API.CONSUMER.CREATE.{stream}.{name}", body)
    assert (_predicted(admission), _observed(reply)) == (
        (False, _STOPPED),
        (False, _STOPPED),
    )
