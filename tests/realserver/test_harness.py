"""Smoke tests of the real nats-server harness in tests/support/natsserver.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.support.natsserver import Client, NatsServer, raw_request, request

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.realserver

VERSION = "2.12.8"


def test_info_reports_api_level_3(tmp_path: Path) -> None:
    """nats-server 2.12.8 answers $JS.API.INFO with api.level 3."""
    with NatsServer(VERSION, tmp_path / "store") as server:
        reply = request(server.url, "$JS.API.INFO", b"")
        assert reply["type"] == "io.nats.jetstream.api.v1.account_info_response"
        assert reply["api"]["level"] == 3
        assert server.server_info["version"] == VERSION
    assert not server.running()
    assert "Server is ready" in server.log_text()


def test_client_and_raw_request_agree(tmp_path: Path) -> None:
    """A kept-open Client and the raw socket client get the same INFO reply."""
    with (
        NatsServer(VERSION, tmp_path / "store", strict=True) as server,
        Client(server.url) as client,
    ):
        first = client.request_json("$JS.API.INFO", b"")
        second = client.request_json(
            "$JS.API.INFO", b"", headers={"Nats-Required-Api-Level": "1"}
        )
        raw = raw_request(server.url, "$JS.API.INFO", b"")
        assert first["api"]["level"] == second["api"]["level"] == 3
        assert raw["api"]["level"] == 3
