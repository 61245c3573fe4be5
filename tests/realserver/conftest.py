"""Fixtures for the real-server tests: one nats-server per version, started lazily.

``servers`` hands out one running server (and one kept-open client) per
nats-server version for the whole session. Each gets a fresh store directory
from ``tmp_path_factory``, and every server started here is stopped at the end
of the session, whatever happened in the tests.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from tests.support import fidelity
from tests.support.natsserver import Client, NatsServer

if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclass(frozen=True)
class Running:
    """A started server and a client connected to it."""

    server: NatsServer
    client: Client

    @property
    def version(self) -> str:
        """The nats-server release, e.g. ``"2.12.8"``."""
        return self.server.version

    @property
    def url(self) -> str:
        """The client URL."""
        return self.server.url

    def request(self, subject: str, payload: bytes) -> dict[str, Any]:
        """Send one request on the kept-open connection; return the JSON reply."""
        return self.client.request_json(subject, payload)


class Servers:
    """Start at most one server per version, on demand; stop them all on close."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        """Remember where store directories come from."""
        self._factory = factory
        self._running: dict[str, Running] = {}
        self._stack = contextlib.ExitStack()

    def get(self, version: str) -> Running:
        """Return the running server of ``version``, starting it the first time."""
        running = self._running.get(version)
        if running is None:
            base = self._factory.mktemp(f"nats-{version}")
            server = self._stack.enter_context(NatsServer(version, base / "store"))
            client = self._stack.enter_context(Client(server.url, timeout=5.0))
            running = self._running[version] = Running(server, client)
        return running

    def close(self) -> None:
        """Close every client and stop every server (in reverse start order)."""
        self._running.clear()
        self._stack.close()


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """One nats-server per version for the session, always stopped at the end."""
    registry = Servers(tmp_path_factory)
    try:
        yield registry
    finally:
        registry.close()


@pytest.fixture(scope="session", autouse=True)
def _fresh_fidelity_results() -> None:
    """Results of earlier sessions never mix into docs/fidelity.md."""
    fidelity.clear()
