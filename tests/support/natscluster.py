"""Run a real nats-server cluster (JetStream, meta group) on loopback for tests.

Typical use::

    with NatsCluster("2.15.1", tmp_path / "c1") as cluster:
        client = Client(cluster.url)
        ...
        cluster.restart_with("2.12.8")  # roll the whole cluster back, same stores

Each node ``n1`` .. ``nN`` gets its own JetStream store under ``base_dir/<node>/store``,
a client port and a cluster (route) port on 127.0.0.1, and routes to every other node,
so the nodes form cluster ``name`` with a JetStream meta group. ``start`` waits (at
most ``READY_TIMEOUT_S``) until every node accepts clients, ``$JS.API.INFO`` answers
without error and ``$JS.API.STREAM.NAMES`` succeeds (a meta leader exists).

Every process started here is stopped by ``stop`` / ``__exit__``, by the ``atexit``
hook of :mod:`tests.support.natsserver` if a test dies halfway, and (on Linux) by the
kernel if the test process is killed. All waits are bounded.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

from tests.support.natsserver import (
    _LIVE,
    STOP_TIMEOUT_S,
    NatsServerError,
    _conf_string,
    _die_with_parent,
    _read_info,
    ensure_binary,
    free_port,
    raw_request,
)

if TYPE_CHECKING:
    from types import TracebackType

    from tests.support.natsserver import Client

__all__ = ["READY_TIMEOUT_S", "ClusterNode", "NatsCluster", "request_placed"]

READY_TIMEOUT_S: Final = 30.0
"""Upper bound for a started cluster to serve the JetStream API (meta leader)."""

_PORT_ATTEMPTS: Final = 3
_LOG_TAIL_CHARS: Final = 3000
_POLL_S: Final = 0.1
_PROBE_TIMEOUT_S: Final = 1.0
# JSClusterNoPeersErrF: "no suitable peers for placement", with "peer offline" while
# the meta leader of a freshly started cluster has not yet heard from every peer
_NO_PEERS: Final = 10005


@dataclass
class ClusterNode:
    """One node of a cluster: its name, store, ports, process and log files."""

    name: str
    store_dir: Path
    client_port: int = 0
    cluster_port: int = 0
    monitor_port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    log_paths: list[Path] = field(default_factory=list)

    @property
    def url(self) -> str:
        """Client URL of the node."""
        return f"nats://127.0.0.1:{self.client_port}"

    def log_text(self) -> str:
        """Return the current process's log ("" if none)."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")


class NatsCluster:
    """``size`` nats-server processes of one release forming one JetStream cluster."""

    def __init__(
        self,
        version: str,
        base_dir: Path,
        *,
        size: int = 3,
        name: str = "C1",
        extra_config: str = "",
        monitor: bool = False,
    ) -> None:
        """Prepare (not start) the cluster; stores go under ``base_dir/<node>/store``.

        ``extra_config`` is appended to every node's config file (accounts, for
        example: unauthenticated clients must still reach a JetStream account for the
        readiness probes, e.g. through ``no_auth_user``); ``monitor`` opens each
        node's HTTP monitoring port (``ClusterNode.monitor_port``).
        """
        if size < 1:
            raise ValueError(f"cluster size must be positive, got {size}")
        self.version = version
        self.name = name
        self.extra_config = extra_config
        self.monitor = monitor
        self.base_dir = Path(base_dir).resolve()
        self.nodes = [
            ClusterNode(f"n{i}", self.base_dir / f"n{i}" / "store")
            for i in range(1, size + 1)
        ]
        self.started_at: dict[str, float] = {}
        """Seconds from spawn to ready, per start (``"<version>#<n>"``)."""

    # -- addresses and logs ------------------------------------------------

    @property
    def url(self) -> str:
        """Client URL of the first node (any node serves the whole cluster)."""
        return self.nodes[0].url

    @property
    def urls(self) -> list[str]:
        """Client URLs of every node."""
        return [node.url for node in self.nodes]

    def running(self) -> bool:
        """Return whether every node process is alive."""
        return all(n.proc is not None and n.proc.poll() is None for n in self.nodes)

    def log_text(self) -> str:
        """Return every log written so far, each headed by ``==> path <==``."""
        parts: list[str] = []
        for node in self.nodes:
            for path in node.log_paths:
                if path.exists():
                    text = path.read_text(encoding="utf-8", errors="replace")
                    parts.append(f"==> {path} <==\n{text}")
        return "\n".join(parts)

    def _log_tails(self) -> str:
        """Return the end of every current log, for error messages."""
        return "\n".join(
            f"--- {n.name} ({n.log_path}):\n{n.log_text()[-_LOG_TAIL_CHARS:]}"
            for n in self.nodes
        )

    # -- config --------------------------------------------------------------

    def config_text(self, node: ClusterNode) -> str:
        """Return the config file of ``node`` for the current ports."""
        routes = ", ".join(
            _conf_string(f"nats-route://127.0.0.1:{other.cluster_port}")
            for other in self.nodes
            if other is not node
        )
        lines = [
            f"server_name: {_conf_string(f'{self.name}-{node.name}')}",
            "host: 127.0.0.1",
            f"port: {node.client_port}",
            "jetstream {",
            f"  store_dir: {_conf_string(str(node.store_dir))}",
            "}",
            "cluster {",
            f"  name: {_conf_string(self.name)}",
            f"  listen: {_conf_string(f'127.0.0.1:{node.cluster_port}')}",
            f"  routes: [{routes}]",
            "}",
        ]
        if self.monitor:
            lines.append(f"http: {_conf_string(f'127.0.0.1:{node.monitor_port}')}")
        if self.extra_config:
            lines.append(self.extra_config)
        return "\n".join(lines) + "\n"

    def _pick_ports(self) -> None:
        """Give every node a client and a cluster port, all distinct."""
        taken: set[int] = set()
        for node in self.nodes:
            for attr in ("client_port", "cluster_port", "monitor_port"):
                port = free_port()
                for _ in range(20):
                    if port not in taken:
                        break
                    port = free_port()
                taken.add(port)
                setattr(node, attr, port)

    # -- lifecycle -----------------------------------------------------------

    def start(self, *, jetstream: bool = True) -> Self:
        """Start every node and wait until the cluster serves JetStream.

        With ``jetstream=False`` it only waits until every node accepts clients (for
        clusters whose meta layer is expected not to come up). The ports are kept
        across restarts; if a port was taken meanwhile, new ones are picked (at most
        three tries). Raises ``NatsServerError`` with the logs' tails if a node exits
        or the cluster is not ready in 30 s.
        """
        if any(node.proc is not None for node in self.nodes):
            raise NatsServerError("cluster already started")
        binary = ensure_binary(self.version)
        if self.nodes[0].client_port == 0:
            self._pick_ports()
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            began = time.monotonic()
            try:
                self._spawn_all(binary)
                self._wait_ready(jetstream=jetstream)
            except NatsServerError:
                logs = " ".join(n.log_text().lower() for n in self.nodes)
                self.stop()
                if "address already in use" not in logs or attempt == _PORT_ATTEMPTS:
                    raise
                self._pick_ports()
            else:
                key = f"{self.version}#{len(self.started_at) + 1}"
                self.started_at[key] = time.monotonic() - began
                return self
        raise AssertionError("unreachable")  # pragma: no cover

    def _spawn_all(self, binary: Path) -> None:
        """Write each node's config and spawn its process."""
        for node in self.nodes:
            node.store_dir.mkdir(parents=True, exist_ok=True)
            stem = f"{node.name}-nats-{self.version}-{node.client_port}"
            config = node.store_dir.parent / f"{stem}.conf"
            node.log_path = node.store_dir.parent / f"{stem}.log"
            if node.log_path.exists():  # same version and port again: keep the old log
                node.log_path = node.log_path.with_suffix(f".{time.time_ns()}.log")
            node.log_paths.append(node.log_path)
            config.write_text(self.config_text(node), encoding="utf-8")
            with node.log_path.open("wb") as log:
                node.proc = subprocess.Popen(
                    [str(binary), "-c", str(config)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
                )
            _LIVE[node.proc.pid] = node.proc

    def _check_alive(self) -> None:
        """Raise if a node process has exited."""
        for node in self.nodes:
            code = None if node.proc is None else node.proc.poll()
            if node.proc is None or code is not None:
                raise NatsServerError(
                    f"nats-server {self.version} node {node.name} exited with {code} "
                    f"during startup; logs:\n{self._log_tails()}"
                )

    def _wait_ready(self, *, jetstream: bool) -> None:
        """Poll (30 s at most) until every node serves INFO and STREAM.NAMES."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        last = "no attempt"
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                self._probe_all(jetstream=jetstream)
            except _NotReadyError as exc:
                last = str(exc)
                time.sleep(_POLL_S)
                continue
            return
        raise NatsServerError(
            f"cluster {self.name} on nats-server {self.version} not ready after "
            f"{READY_TIMEOUT_S:.0f} s ({last}); logs:\n{self._log_tails()}"
        )

    def _probe_all(self, *, jetstream: bool) -> None:
        """Raise ``_NotReadyError`` unless every node is up (and serves the JS API)."""
        for node in self.nodes:
            try:
                info = _read_info(node.client_port, timeout=_PROBE_TIMEOUT_S)
            except OSError as exc:
                raise _NotReadyError(f"{node.name}: {exc!r}") from exc
            if info.get("version") != self.version:
                raise NatsServerError(
                    f"port {node.client_port} answered as nats-server "
                    f"{info.get('version')!r}, expected {self.version}"
                )
            if not jetstream:
                continue
            for subject in ("$JS.API.INFO", "$JS.API.STREAM.NAMES"):
                try:
                    reply = raw_request(
                        node.url, subject, b"", timeout=_PROBE_TIMEOUT_S
                    )
                except (OSError, NatsServerError) as exc:
                    raise _NotReadyError(f"{node.name} {subject}: {exc}") from exc
                if "error" in reply:
                    raise _NotReadyError(f"{node.name} {subject}: {reply['error']}")

    def stop(self) -> dict[str, int | None]:
        """Stop every node: SIGINT to all, up to 5 s each, then SIGKILL. Idempotent.

        Returns:
            The exit code per node name (None for a node never started).
        """
        codes: dict[str, int | None] = {}
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    node.proc.send_signal(signal.SIGINT)
        for node in self.nodes:
            proc, node.proc = node.proc, None
            if proc is None:
                codes[node.name] = None
                continue
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait(timeout=STOP_TIMEOUT_S)
            _LIVE.pop(proc.pid, None)
            codes[node.name] = proc.returncode
        return codes

    def restart_with(self, version: str, *, jetstream: bool = True) -> Self:
        """Stop every node and start the same stores with ``version`` (a rollback).

        ``jetstream`` is passed to :meth:`start`.
        """
        self.stop()
        self.version = version
        return self.start(jetstream=jetstream)

    def __enter__(self) -> Self:
        """Start the cluster."""
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop every node, whatever happened inside the block."""
        self.stop()

    def __repr__(self) -> str:
        """Show name, version, size and state."""
        state = "running" if self.running() else "stopped"
        return (
            f"NatsCluster({self.name!r}, {self.version!r}, {len(self.nodes)}, {state})"
        )


class _NotReadyError(Exception):
    """The cluster answered, but not yet as a ready JetStream cluster would."""


def request_placed(
    client: Client, subject: str, body: dict[str, Any]
) -> dict[str, Any]:
    """A JetStream create request on a cluster, asked again while it cannot be placed yet.

    Every node serving the JetStream API (what :meth:`NatsCluster.start` waits for)
    does not mean that the meta leader already sees every peer: for a few hundred
    milliseconds after start an R3 create can answer 400/10005 ``no suitable peers
    for placement, peer offline``. That answer is retried for up to
    :data:`READY_TIMEOUT_S`; the last reply (an error too) is returned.
    """
    payload = json.dumps(body).encode()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        reply = client.request_json(subject, payload)
        error = reply.get("error")
        placing = (
            isinstance(error, dict)
            and error.get("err_code") == _NO_PEERS
            and "peer offline" in str(error.get("description"))
        )
        if not placing or time.monotonic() >= deadline:
            return reply
        time.sleep(_POLL_S)
