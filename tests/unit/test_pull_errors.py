"""`assetgate pull` names connection problems in one line, exit 2, and never a secret."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from typing import TYPE_CHECKING

import pytest

from assetgate.cli.main import main

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

    from assetgate.live.fleet import _request

    request = _request("http://probe:p%40ss@[::1]:8222/varz")
    assert request.full_url == "http://[::1]:8222/varz"
    token = base64.b64encode(b"probe:p@ss").decode()
    assert request.get_header("Authorization") == f"Basic {token}"
    assert _request("http://h:8222/jsz").get_header("Authorization") is None


class _PongThenClose:
    """A server that sends INFO, answers the client's PING with PONG, then hangs up."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = int(self.sock.getsockname()[1])
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed: the test is over
                return
            # each connection on its own: pull first reads INFO on one of its own
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    @staticmethod
    def _answer(conn: socket.socket) -> None:
        info = {"server_id": "FAKE", "version": "2.12.8", "proto": 1, "headers": True}
        with conn:
            conn.settimeout(5)
            seen = b""
            with contextlib.suppress(OSError):
                conn.sendall(b"INFO " + json.dumps(info).encode() + b"\r\n")
                while b"PING" not in seen:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    seen += chunk
                conn.sendall(b"PONG\r\n")

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("system", [False, True], ids=["account", "system"])
def test_a_server_that_hangs_up_after_pong_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], system: bool
) -> None:
    """A server that accepts the connection and then closes it: exit 2, one line."""
    server = _PongThenClose()
    try:
        url = f"nats://127.0.0.1:{server.port}"
        flags = ["--system"] if system else []
        code = main(["pull", "--server", url, *flags, "-o", str(tmp_path / "o.jsonl")])
    finally:
        server.close()
    err = capsys.readouterr().err
    # nats-py notices the close, or its PING goes unanswered first (flush timeout)
    expected = re.escape(
        f"assetgate: error: {url} closed the connection or stopped answering after "
        "accepting it (ERROR): nothing pulled from it\n"
    ).replace("ERROR", "(ConnectionClosedError|FlushTimeoutError|UnexpectedEOF)")
    assert code == 2
    assert re.fullmatch(expected, err), err
