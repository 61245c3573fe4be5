"""`assetgate pull` names connection problems in one line, exit 2, and never a secret."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import pytest

from assetgate.cli import main

if TYPE_CHECKING:
    from pathlib import Path


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("server", "extra", "message"),
    [
        (
            "refused",
            [],
            "cannot connect to nats://127.0.0.1:{port}: connection refused",
        ),
        (
            "nats://u:hunter2@127.0.0.1:99999",
            [],
            "invalid server URL: 'nats://127.0.0.1:99999' (Port out of range 0-65535)",
        ),
        ("nats://[::1", [], "invalid server URL: 'nats://[::1' (Invalid IPv6 URL)"),
        (
            "refused",
            ["--tls-ca", "/nonexistent/ca.pem"],
            "cannot read the TLS files: [Errno 2] No such file or directory",
        ),
    ],
    ids=["refused", "bad-port", "broken-ipv6", "missing-ca"],
)
def test_connection_problems_are_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    server: str,
    extra: list[str],
    message: str,
) -> None:
    """Each problem exits 2 with one line naming it, and no password in it."""
    port = _closed_port()
    url = f"nats://127.0.0.1:{port}" if server == "refused" else server
    code = main(["pull", "--server", url, *extra, "-o", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err
    assert (code, err, "hunter2" in err) == (
        2,
        f"assetgate: error: {message.format(port=port)}\n",
        False,
    )


def test_monitor_user_information_becomes_a_basic_auth_header() -> None:
    """The URL loses ``user:pw@``; the request carries it as HTTP basic auth."""
    import base64

    from assetgate._pull_fleet import _request

    request = _request("http://probe:p%40ss@[::1]:8222/varz")
    assert request.full_url == "http://[::1]:8222/varz"
    token = base64.b64encode(b"probe:p@ss").decode()
    assert request.get_header("Authorization") == f"Basic {token}"
    assert _request("http://h:8222/jsz").get_header("Authorization") is None
