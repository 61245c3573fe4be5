"""Run a real nats-server cluster (JetStream, meta group) on loopback for tests.

Typical use::

    with NatsCluster("2.15.1", tmp_path / "c1") as cluster:
        client = Client(cluster.url)
        ...
        cluster.restart_with("2.12.8")  # roll the whole cluster back, same stores

Rolling upgrades and rollbacks, one node at a time (each node keeps its store, ports
and config; ``ClusterNode.version`` tells which release it runs)::

    with NatsCluster("2.12.8", tmp_path / "c", extra_config=ACCOUNTS, monitor=True,
                     system_user=("sys", "pw")) as cluster:
        cluster.restart_node("n3", "2.11.11", settle_s=3.0)
        cluster.move_meta_leader("n3")
        cluster.meta_leader(), cluster.healthz("n1"), cluster.exit_code("n3")

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

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self
from urllib.parse import quote

import nats.errors

from tests.support.natsserver import (
    Client,
    NatsServerError,
    _conf_string,
    _read_info,
    ensure_binary,
    free_port,
    interrupt,
    raw_request,
    reap,
    spawn,
)

if TYPE_CHECKING:
    import subprocess
    from types import TracebackType

__all__ = [
    "READY_TIMEOUT_S",
    "ClusterNode",
    "NatsCluster",
    "NodeRestart",
    "request_placed",
]

READY_TIMEOUT_S: Final = 30.0
"""Upper bound for a started cluster to serve the JetStream API (meta leader)."""

_PORT_ATTEMPTS: Final = 3
_LOG_TAIL_CHARS: Final = 3000
_POLL_S: Final = 0.1
_PROBE_TIMEOUT_S: Final = 1.0
# JSClusterNoPeersErrF: "no suitable peers for placement", with "peer offline" while
# the meta leader of a freshly started cluster has not yet heard from every peer
_NO_PEERS: Final = 10005
_HTTP_TIMEOUT_S: Final = 2.0
_PANIC_MARK: Final = "panic:"


@dataclass(frozen=True)
class NodeRestart:
    """What :meth:`NatsCluster.restart_node` saw.

    ``exit_code`` is the old process's exit code (None if there was none running);
    ``ready`` tells whether the new process answered INFO with ``new_version``
    within the wait; ``new_exit_code`` is the new process's exit code if it has
    already exited (a panic at startup, say), else None; ``panic`` is the first log
    line of the new process containing ``panic:`` (None if none).
    """

    name: str
    old_version: str
    new_version: str
    exit_code: int | None
    ready: bool
    ready_s: float
    new_exit_code: int | None
    panic: str | None


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
    version: str = ""
    """Release the node runs (or ran last); the cluster's version until restarted."""
    last_exit: int | None = None
    """Exit code of the node's last process once it was stopped (None before)."""
    server_name: str = ""
    """The node's ``server_name``: ``<cluster>-<node>``, set by the cluster."""

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
        system_user: tuple[str, str] | None = None,
        jetstream_config: str = "",
    ) -> None:
        """Prepare (not start) the cluster; stores go under ``base_dir/<node>/store``.

        ``extra_config`` is appended to every node's config file (accounts, for
        example: unauthenticated clients must still reach a JetStream account for the
        readiness probes, e.g. through ``no_auth_user``); ``monitor`` opens each
        node's HTTP monitoring port (``ClusterNode.monitor_port``). ``system_user``
        is the (user, password) of a user of the system account that
        ``extra_config`` defines, for :meth:`system_request` and
        :meth:`move_meta_leader`. ``jetstream_config`` is added to every node's
        ``jetstream { ... }`` block (``max_file_store: 1024``, say).
        """
        if size < 1:
            raise ValueError(f"cluster size must be positive, got {size}")
        self.version = version
        self.name = name
        self.extra_config = extra_config
        self.monitor = monitor
        self.system_user = system_user
        self.jetstream_config = jetstream_config
        self.base_dir = Path(base_dir).resolve()
        self.nodes = [
            ClusterNode(
                f"n{i}",
                self.base_dir / f"n{i}" / "store",
                version=version,
                server_name=f"{name}-n{i}",
            )
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
            f"server_name: {_conf_string(node.server_name)}",
            "host: 127.0.0.1",
            f"port: {node.client_port}",
            "jetstream {",
            f"  store_dir: {_conf_string(str(node.store_dir))}",
            *([f"  {self.jetstream_config}"] if self.jetstream_config else []),
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
            self._spawn_node(node, binary, self.version)

    def _spawn_node(self, node: ClusterNode, binary: Path, version: str) -> None:
        """Write ``node``'s config and spawn its process with ``binary``."""
        node.store_dir.mkdir(parents=True, exist_ok=True)
        node.version = version
        stem = f"{node.name}-nats-{version}-{node.client_port}"
        config = node.store_dir.parent / f"{stem}.conf"
        node.log_path = node.store_dir.parent / f"{stem}.log"
        if node.log_path.exists():  # same version and port again: keep the old log
            node.log_path = node.log_path.with_suffix(f".{time.time_ns()}.log")
        node.log_paths.append(node.log_path)
        config.write_text(self.config_text(node), encoding="utf-8")
        node.proc = spawn(binary, config, node.log_path)

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
            if info.get("version") != node.version:
                raise NatsServerError(
                    f"port {node.client_port} answered as nats-server "
                    f"{info.get('version')!r}, expected {node.version}"
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
        for node in self.nodes:  # all at once: they shut down in parallel
            if node.proc is not None:
                interrupt(node.proc)
        return {node.name: self._reap_node(node) for node in self.nodes}

    def restart_with(self, version: str, *, jetstream: bool = True) -> Self:
        """Stop every node and start the same stores with ``version`` (a rollback).

        ``jetstream`` is passed to :meth:`start`.
        """
        self.stop()
        self.version = version
        return self.start(jetstream=jetstream)

    # -- one node at a time (rolling upgrades and rollbacks) -----------------

    def node(self, name: str) -> ClusterNode:
        """Return the node called ``name`` (``"n2"``) or serving as ``"C1-n2"``."""
        for node in self.nodes:
            if name in {node.name, node.server_name}:
                return node
        raise KeyError(f"cluster {self.name} has no node {name!r}")

    def node_alive(self, name: str) -> bool:
        """Return whether the process of node ``name`` is running."""
        proc = self.node(name).proc
        return proc is not None and proc.poll() is None

    def exit_code(self, name: str) -> int | None:
        """Return the exit code of node ``name``'s last process; None while it runs.

        Also None for a node never started.
        """
        node = self.node(name)
        if node.proc is None:
            return node.last_exit
        return node.proc.poll()

    def stop_node(self, name: str) -> int | None:
        """Stop one node: SIGINT, up to 5 s, then SIGKILL; return its exit code.

        A process that had already exited (a panic, say) gives its own exit code;
        None if the node had no process.
        """
        node = self.node(name)
        if node.proc is not None:
            interrupt(node.proc)
        return self._reap_node(node)

    @staticmethod
    def _reap_node(node: ClusterNode) -> int | None:
        """Wait for the node's interrupted process; record and return its exit code."""
        proc, node.proc = node.proc, None
        if proc is None:
            return None
        node.last_exit = reap(proc)
        return node.last_exit

    def restart_node(
        self,
        name: str,
        version: str,
        *,
        wait_s: float = READY_TIMEOUT_S,
        settle_s: float = 0.0,
    ) -> NodeRestart:
        """Stop node ``name`` and start it again with ``version``'s binary.

        The node keeps its store, ports and config. This waits at most ``wait_s``
        until the node's client port answers INFO as ``version``, then watches the
        process for ``settle_s`` more; it does not ask for the JetStream API (the
        node may be unable to serve it). A new process that exits meanwhile (a panic
        at startup, say) is reported in the result, not raised; the binary is
        installed before the old process is stopped.

        Raises:
            NatsServerError: the new process could not bind its ports, or another
                release answered on the node's client port.
        """
        node = self.node(name)
        binary = ensure_binary(version)
        old_version = node.version
        old_code = self.stop_node(name)
        self._spawn_node(node, binary, version)
        began = time.monotonic()
        ready = self._wait_node_info(node, version, began + wait_s)
        ready_s = time.monotonic() - began
        if ready:
            settle_end = time.monotonic() + settle_s
            while time.monotonic() < settle_end and self.node_alive(name):
                time.sleep(_POLL_S)
        new_code = self.exit_code(name)
        text = node.log_text()
        if new_code is not None and "address already in use" in text.lower():
            raise NatsServerError(
                f"node {name} ({version}) could not bind its ports:\n"
                f"{text[-_LOG_TAIL_CHARS:]}"
            )
        panic = next((ln for ln in text.splitlines() if _PANIC_MARK in ln), None)
        return NodeRestart(
            name=node.name,
            old_version=old_version,
            new_version=version,
            exit_code=old_code,
            ready=ready,
            ready_s=ready_s,
            new_exit_code=new_code,
            panic=panic,
        )

    def _wait_node_info(self, node: ClusterNode, version: str, deadline: float) -> bool:
        """Poll until ``node`` answers INFO as ``version``; False if it exits or times out."""
        while time.monotonic() < deadline:
            if not self.node_alive(node.name):
                return False
            try:
                info = _read_info(node.client_port, timeout=_PROBE_TIMEOUT_S)
            except OSError:
                time.sleep(_POLL_S)
                continue
            if info.get("version") != version:
                raise NatsServerError(
                    f"port {node.client_port} of node {node.name} answered as "
                    f"nats-server {info.get('version')!r}, expected {version}"
                )
            return True
        return False

    # -- monitoring (needs ``monitor=True``) ---------------------------------

    def monitor_get(
        self, name: str, path: str, *, timeout: float = _HTTP_TIMEOUT_S
    ) -> tuple[int, Any]:
        """GET ``path`` (e.g. ``"/jsz?acc=APP"``) from node ``name``'s monitor port.

        Returns the HTTP status and the body decoded as JSON (the text if it is not
        JSON); error statuses (503 from ``/healthz``) are returned, not raised.

        Raises:
            NatsServerError: the cluster has no monitor ports, or the node did not
                answer within ``timeout``.
        """
        if not self.monitor:
            raise NatsServerError(f"cluster {self.name} was made without monitor=True")
        node = self.node(name)
        url = f"http://127.0.0.1:{node.monitor_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as reply:
                status: int = reply.status
                body: bytes = reply.read()
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()
        except OSError as exc:
            raise NatsServerError(f"GET {url} from node {name}: {exc!r}") from exc
        try:
            value: Any = json.loads(body)
        except ValueError:
            value = body.decode("utf-8", errors="replace")
        return status, value

    def healthz(self, name: str, query: str = "") -> tuple[int, Any]:
        """Return the HTTP status and JSON of node ``name``'s ``/healthz[?query]``."""
        return self.monitor_get(name, "/healthz" + (f"?{query}" if query else ""))

    def meta_leaders(self) -> dict[str, str | None]:
        """Ask every live node's ``/jsz`` whom it sees as meta leader.

        Maps node name to the server name it reports (None: no leader, or no
        answer).
        """
        seen: dict[str, str | None] = {}
        for node in self.nodes:
            if self.node_alive(node.name):
                seen[node.name] = self._jsz_leader(node.name)
        return seen

    def meta_leader(self, via: str | None = None) -> str | None:
        """Return the meta leader's server name (``"C1-n2"``), or None if none known.

        Asks ``via``'s ``/jsz`` (``meta_cluster.leader``), or each live node's in
        turn until one names a leader. Each request is bounded by 2 s.
        """
        names = [via] if via is not None else [n.name for n in self.nodes]
        for name in names:
            if via is None and not self.node_alive(name):
                continue
            leader = self._jsz_leader(name)
            if leader:
                return leader
        return None

    def _jsz_leader(self, name: str) -> str | None:
        """Return the leader in node ``name``'s ``/jsz`` meta_cluster, or None."""
        try:
            status, jsz = self.monitor_get(name, "/jsz")
        except NatsServerError:
            return None
        if status != 200 or not isinstance(jsz, dict):
            return None
        meta = jsz.get("meta_cluster")
        leader = meta.get("leader") if isinstance(meta, dict) else None
        return leader if isinstance(leader, str) and leader else None

    # -- system account requests -----------------------------------------------

    def system_request(
        self,
        subject: str,
        body: dict[str, Any] | bytes = b"",
        *,
        via: str | None = None,
        timeout: float = _HTTP_TIMEOUT_S,
    ) -> dict[str, Any]:
        """Send one request as ``system_user`` through node ``via`` (default: first live).

        Raises:
            NatsServerError: no ``system_user``, no live node, or no reply.
        """
        if self.system_user is None:
            raise NatsServerError(f"cluster {self.name} was made without system_user")
        if via is None:
            live = [n.name for n in self.nodes if self.node_alive(n.name)]
            if not live:
                raise NatsServerError(f"cluster {self.name} has no live node")
            via = live[0]
        node = self.node(via)
        user, password = self.system_user
        url = (
            f"nats://{quote(user, safe='')}:{quote(password, safe='')}"
            f"@127.0.0.1:{node.client_port}"
        )
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            with Client(url, timeout=timeout, connect_timeout=timeout) as client:
                return client.request_json(subject, payload)
        except (OSError, nats.errors.Error) as exc:
            raise NatsServerError(f"{subject} via {via}: {exc!r}") from exc

    def move_meta_leader(
        self, to_name: str, *, timeout_s: float = READY_TIMEOUT_S
    ) -> list[dict[str, Any]]:
        """Make node ``to_name`` (``"n2"`` or ``"C1-n2"``) the meta leader.

        Sends ``$JS.API.META.LEADER.STEPDOWN`` with ``{"placement": {"preferred":
        <server name>}}`` as ``system_user`` and asks again (for at most
        ``timeout_s``) until :meth:`meta_leader` and the node itself name the node
        as leader. Returns every reply received (empty if the node already led); a
        request that got no reply is listed as ``{"exception": ...}``.

        Raises:
            NatsServerError: the node is not running, or is not leader in time.
        """
        target = self.node(to_name)
        if not self.node_alive(target.name):
            raise NatsServerError(f"node {target.name} is not running")
        body = {"placement": {"preferred": target.server_name}}
        deadline = time.monotonic() + timeout_s
        replies: list[dict[str, Any]] = []
        while True:
            leader = self.meta_leader()
            if (
                leader == target.server_name
                and self.meta_leader(via=target.name) == target.server_name
            ):
                return replies
            if time.monotonic() >= deadline:
                raise NatsServerError(
                    f"meta leader is {leader!r}, not {target.server_name}, after "
                    f"{timeout_s:.0f} s; stepdown replies: {replies}"
                )
            if leader is None:
                time.sleep(_POLL_S * 5)
                continue
            via = next(
                (
                    n.name
                    for n in self.nodes
                    if n.server_name == leader and self.node_alive(n.name)
                ),
                target.name,
            )
            try:
                replies.append(
                    self.system_request(
                        "$JS.API.META.LEADER.STEPDOWN", body, via=via, timeout=5.0
                    )
                )
            except NatsServerError as exc:
                replies.append({"exception": str(exc)})
            self._wait_leader_change(leader, min(deadline, time.monotonic() + 10.0))

    def _wait_leader_change(self, old: str, deadline: float) -> None:
        """Poll until a meta leader other than ``old`` is seen, or ``deadline``."""
        while time.monotonic() < deadline:
            leader = self.meta_leader()
            if leader is not None and leader != old:
                return
            time.sleep(_POLL_S * 2)

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
    client: Client,
    subject: str,
    body: dict[str, Any],
    *,
    cluster: NatsCluster | None = None,
) -> dict[str, Any]:
    """A JetStream create request on a cluster, asked again while it cannot be placed yet.

    Every node serving the JetStream API (what :meth:`NatsCluster.start` waits for)
    does not mean that the meta leader already sees every peer: for a few hundred
    milliseconds after start an R3 create can answer 400/10005 ``no suitable peers
    for placement``, with ``, peer offline`` or (seen once on 2.12.8 right after
    start) without it. That answer is retried for up to :data:`READY_TIMEOUT_S`; the
    last reply (an error too) is returned, unless ``cluster`` is given: then a cluster
    that still cannot place it raises, with every node's log tail (a fresh 2.10.26
    cluster answered 10005 for the whole 30 s once in CI; the logs say why next time).
    """
    payload = json.dumps(body).encode()
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        reply = client.request_json(subject, payload)
        error = reply.get("error")
        placing = isinstance(error, dict) and error.get("err_code") == _NO_PEERS
        if not placing:
            return reply
        if time.monotonic() >= deadline:
            if cluster is None:
                return reply
            raise NatsServerError(
                f"{subject}: still {error} after {READY_TIMEOUT_S:.0f} s on "
                f"nats-server {cluster.version}; logs:\n{cluster._log_tails()}"
            )
        time.sleep(_POLL_S)
