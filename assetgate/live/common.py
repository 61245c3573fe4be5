"""Shared parts of ``assetgate pull``: credentials, records, the connection.

Records are canonical inventory records (:mod:`assetgate.inventory.read`) plus what the
server said about each asset; URLs are shown without user information and no
credential reaches a record, a log line or an error message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import structlog

# metadata the server adds to each response (never stored): dropped from configs
from assetgate.judge.metadata import DYNAMIC_KEYS

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from nats.aio.client import Client as NatsClient

__all__ = [
    "BACKOFF_S",
    "DYNAMIC_KEYS",
    "PAGE_LIMIT",
    "PROGRESS_EVERY",
    "RETRIES",
    "Auth",
    "PullError",
    "PullResult",
    "Where",
    "connect",
    "connection_lost",
    "lost",
    "make_record",
    "redact",
    "server_record",
    "strip_dynamic",
    "write_records",
]

log = structlog.get_logger("assetgate.pull")

PAGE_LIMIT: Final = 100_000  # pages of any list (256 entries each): a bound, not a goal
RETRIES: Final = 4
BACKOFF_S: Final = 0.25
PROGRESS_EVERY: Final = 500


class PullError(Exception):
    """The pull cannot run: no connection, authorization refused, no JetStream."""


@dataclass(frozen=True)
class Auth:
    """How to authenticate and secure the connection (all optional)."""

    creds: str | None = None
    user: str | None = None
    password: str | None = None
    token: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None

    def ssl_context(self) -> ssl.SSLContext | None:
        """A TLS context when a CA or client certificate is given, else ``None``.

        Raises:
            PullError: a CA, certificate or key file cannot be read.
        """
        if not (self.tls_ca or self.tls_cert):
            return None
        try:
            context = ssl.create_default_context(cafile=self.tls_ca)
            if self.tls_cert:
                context.load_cert_chain(self.tls_cert, self.tls_key)
        except (OSError, ssl.SSLError) as exc:
            msg = f"cannot read the TLS files: {exc}"
            raise PullError(msg) from None
        return context


@dataclass
class PullResult:
    """Records in canonical form and the problems met on the way (not fatal)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    servers: list[dict[str, str]] = field(default_factory=list)

    @property
    def assets(self) -> int:
        """How many stream and consumer records were pulled."""
        return sum(1 for r in self.records if r["kind"] in {"stream", "consumer"})


def redact(url: str) -> str:
    """A URL without user information (``nats://u:p@h:4222`` -> ``nats://h:4222``)."""
    try:
        parts = urllib.parse.urlsplit(url)
        if not parts.username and not parts.password:
            return url
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
    except ValueError:  # unparsable: keep what precedes a user-information part
        scheme, _, rest = url.rpartition("://")
        return (
            f"{scheme}://{rest.rpartition('@')[2]}"
            if scheme
            else rest.rpartition("@")[2]
        )
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def write_records(records: Iterable[dict[str, Any]], path: Path | None) -> str:
    """The records as JSON Lines; written to ``path`` atomically when given."""
    text = "".join(
        json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records
    )
    if path is not None:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return text


def strip_dynamic(config: object) -> object:
    """``config`` without the per-response ``_nats.ver``/``_nats.level`` metadata."""
    if not isinstance(config, dict):
        return config
    metadata = config.get("metadata")
    if not isinstance(metadata, dict) or not any(k in metadata for k in DYNAMIC_KEYS):
        return config
    kept = {k: v for k, v in metadata.items() if k not in DYNAMIC_KEYS}
    out = dict(config)
    if kept:
        out["metadata"] = kept
    else:
        del out["metadata"]
    return out


def make_record(
    where: Where,
    kind: str,
    stream: str,
    name: str,
    *,
    config: object = None,
    created: object = None,
    state: str = "online",
    reason: str | None = None,
) -> dict[str, Any]:
    """One canonical inventory record of a pulled asset, as a JSON object."""
    record: dict[str, Any] = {
        "cluster": where.cluster,
        "account": where.account,
        "kind": kind,
        "stream": stream,
        "name": name,
        "config": strip_dynamic(config),
        "created": created,
        "observed_state": state,
        "observed_reason": reason,
        "server_version": where.version,
    }
    if where.api_level is not None:
        record["api_level"] = where.api_level
    return record


@dataclass(frozen=True)
class Where:
    """Where records come from: cluster, account, server version and API level."""

    cluster: str
    account: str
    version: str | None
    api_level: int | None = None


_DEFAULT_PORT: Final = 4222
_INFO_LINE_LIMIT: Final = 64 * 1024


async def server_info(url: str, request_s: float) -> dict[str, Any]:
    """The INFO a server sends first, read on a connection that sends nothing.

    A refused connection is named at once (nats-py would wait for its timeout), and
    the INFO tells whether the server requires TLS before any credential is sent.
    """
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or "127.0.0.1"
        port = parts.port or _DEFAULT_PORT
    except ValueError as exc:
        msg = f"invalid server URL: {redact(url)!r} ({exc})"
        raise PullError(msg) from None
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, limit=_INFO_LINE_LIMIT), request_s
        )
    except ConnectionRefusedError:
        msg = f"cannot connect to {redact(url)}: connection refused"
        raise PullError(msg) from None
    except (OSError, TimeoutError, ValueError) as exc:
        msg = f"cannot connect to {redact(url)}: {type(exc).__name__} {exc}".strip()
        raise PullError(msg) from None
    try:
        line = await asyncio.wait_for(reader.readline(), request_s)
    except (OSError, TimeoutError, ValueError) as exc:
        msg = f"cannot connect to {redact(url)}: no INFO from the server ({exc})"
        raise PullError(msg) from None
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer.wait_closed(), 1.0)
    head, _, body = line.partition(b" ")
    try:
        info = json.loads(body) if head == b"INFO" else None
    except ValueError:
        info = None
    if not isinstance(info, dict):
        msg = f"cannot connect to {redact(url)}: not a NATS server (no INFO)"
        raise PullError(msg)
    return info


async def connect(url: str, auth: Auth, request_s: float) -> NatsClient:
    """A nats-py connection to ``url`` with ``auth`` (:class:`PullError` when it fails)."""
    try:
        from nats.aio.client import Client as NatsClient
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        msg = "assetgate pull needs nats-py: pip install 'assetgate[nats]'"
        raise PullError(msg) from exc
    tls = auth.ssl_context()  # unreadable TLS files are named before any connection
    info = await server_info(url, request_s)
    if (tls is not None or urllib.parse.urlsplit(url).scheme == "tls") and not info.get(
        "tls_required"
    ):
        # nats-py upgrades to TLS only when INFO says tls_required: it would send
        # CONNECT, password included, in cleartext (seen on loopback)
        msg = (
            f"TLS was asked for, but {redact(url)} does not require TLS: refusing to "
            "connect (credentials would go out in cleartext)"
        )
        raise PullError(msg)
    errors: list[str] = []

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc))

    options: dict[str, Any] = {
        "servers": [url],
        "connect_timeout": request_s,
        "allow_reconnect": False,
        "max_reconnect_attempts": 0,
        "error_cb": on_error,
        "name": "assetgate-pull",
    }
    given = {
        "user_credentials": auth.creds,
        "user": auth.user,
        "password": auth.password,
        "token": auth.token,
        "tls": tls,
    }
    options.update({key: value for key, value in given.items() if value is not None})
    nc = NatsClient()
    try:
        # bounded: nats-py can wait forever on a TLS handshake that fails
        await asyncio.wait_for(nc.connect(**options), timeout=request_s * 2)
    except Exception as exc:  # noqa: BLE001 - nats-py raises several unrelated types
        with contextlib.suppress(Exception):  # release the half-open socket
            # bounded too: after a failed TLS handshake close() never returns
            await asyncio.wait_for(nc.close(), timeout=1.0)
        text = " ".join([str(exc), *errors]).lower()
        if "authorization" in text or "authentication" in text:
            msg = f"authorization failed at {redact(url)}: check the credentials"
        else:
            msg = f"cannot connect to {redact(url)}: {type(exc).__name__} {exc}".strip()
        raise PullError(msg) from None
    return nc


def connection_lost() -> tuple[type[BaseException], ...]:
    """What nats-py raises when a server closes a connection that was up.

    A flush that times out is one of them: the PONG never comes when the server has
    gone before nats-py noticed.
    """
    from nats.errors import (
        ConnectionClosedError,
        FlushTimeoutError,
        StaleConnectionError,
        UnexpectedEOF,
    )

    return (
        ConnectionClosedError,
        FlushTimeoutError,
        StaleConnectionError,
        UnexpectedEOF,
        ConnectionResetError,
        BrokenPipeError,
    )


def lost(url: str, exc: BaseException) -> PullError:
    """The error of a server that closed the connection after accepting it."""
    msg = (
        f"{redact(url)} closed the connection or stopped answering after accepting "
        f"it ({type(exc).__name__}): nothing pulled from it"
    )
    return PullError(msg)


def server_record(name: str, cluster: str, version: str | None) -> dict[str, Any]:
    """Which server was asked (``account``: the only account looked at, if one)."""
    return {
        "kind": "server",
        "cluster": cluster,
        "name": name,
        "server_version": version,
        "account": None,
    }
