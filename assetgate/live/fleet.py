"""``assetgate pull`` from every server: ``$SYS.REQ.SERVER.PING.JSZ`` and ``/jsz``.

Every server answers with the streams and consumers it hosts; replicas are merged so
that each asset appears once, with the servers hosting it and the lowest of their
versions (the one that decides in a mixed cluster).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec

from assetgate.inventory.read import Asset, RecordError, read_records
from assetgate.live.common import (
    BACKOFF_S,
    RETRIES,
    Auth,
    PullError,
    PullResult,
    Where,
    connect,
    connection_lost,
    lost,
    make_record,
    redact,
    server_record,
)
from assetgate.version import parse_version
from assetgate.wire import DECODE_FAILURES

if TYPE_CHECKING:
    import ssl
    from collections.abc import Sequence

    from nats.aio.msg import Msg

__all__ = ["pull_monitor", "pull_system"]

_JSZ_OPTIONS: Final = {
    "accounts": True,
    "streams": True,
    "consumer": True,
    "config": True,
    "limit": 100_000,
}
_SERVER_ERROR: Final = 500
_JSZ_QUERY: Final = "accounts=true&streams=true&consumers=true&config=true&limit=100000"


@dataclass(frozen=True)
class _ServerJsz:
    """One server's answer (a ``$SYS`` reply or a ``/jsz`` document), with who it is."""

    name: str
    cluster: str
    version: str
    data: bytes


class _ServerInfo(msgspec.Struct):
    """``ServerInfo`` of a ``$SYS`` reply: who answered (the rest is skipped)."""

    name: str = ""
    cluster: str = ""
    ver: str = ""


class _Reply(msgspec.Struct):
    server: _ServerInfo = msgspec.field(default_factory=_ServerInfo)


_REPLY: Final = msgspec.json.Decoder(_Reply)


def _version_key(text: str) -> tuple[tuple[int, ...], str]:
    """Order versions by release (unparsable ones last)."""
    try:
        return parse_version(text).release.release, text
    except ValueError:
        return (1 << 30,), text


def _merge(views: Sequence[_ServerJsz], result: PullResult) -> None:
    """One record per asset, from every server's answer (replicas merged).

    Each answer is read by the inventory reader (the same rules as for a saved
    ``/jsz`` document or ``$SYS`` reply: account id, the stream's cluster, else the
    meta cluster); what it cannot read becomes a problem named after the server.
    """
    merged: dict[tuple[str, str, str, str, str], Asset] = {}
    hosts: dict[tuple[str, str, str, str, str], list[_ServerJsz]] = {}
    for view in views:
        result.servers.append(
            {"name": view.name, "cluster": view.cluster, "version": view.version}
        )
        for entry in read_records(view.data, view.name or "server"):
            if isinstance(entry, RecordError):
                result.problems.append(f"server {view.name!r}: {entry.message}")
            elif isinstance(entry, Asset):
                key = (
                    entry.cluster,
                    entry.account,
                    entry.kind,
                    entry.stream,
                    entry.name,
                )
                hosts.setdefault(key, []).append(view)
                merged.setdefault(key, entry)
    result.records.extend(
        server_record(view.name, view.cluster, view.version) for view in views
    )
    for ident in sorted(
        merged, key=lambda k: (k[0], k[1], k[3], k[2] != "stream", k[4])
    ):
        asset = merged[ident]
        servers = sorted(hosts[ident], key=lambda v: v.name)
        version = min((v.version for v in servers), key=_version_key)
        record = make_record(
            Where(asset.cluster, asset.account, version),
            asset.kind,
            asset.stream,
            asset.name,
            config=json.loads(asset.config),
            created=asset.created,
        )
        record["servers"] = [v.name for v in servers]
        result.records.append(record)


async def _pull_system(
    url: str, auth: Auth, request_s: float, wait: float, expect: int | None
) -> PullResult:
    nc = await connect(url, auth, request_s)
    replies: list[bytes] = []
    done = asyncio.Event()

    async def on_reply(msg: Msg) -> None:
        replies.append(msg.data)
        if expect is not None and len(replies) >= expect:
            done.set()

    try:
        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox, cb=on_reply)
        await nc.publish(
            "$SYS.REQ.SERVER.PING.JSZ", json.dumps(_JSZ_OPTIONS).encode(), reply=inbox
        )
        await nc.flush(timeout=max(int(request_s), 1))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), timeout=wait)
        await sub.unsubscribe()
    except connection_lost() as exc:
        raise lost(url, exc) from None
    finally:
        with contextlib.suppress(*connection_lost()):
            await nc.close()
    result = PullResult()
    views: list[_ServerJsz] = []
    for data in replies:
        try:
            server = _REPLY.decode(data).server
        except DECODE_FAILURES as exc:
            result.problems.append(f"a server's reply cannot be read: {exc}")
            continue
        views.append(_ServerJsz(server.name, server.cluster, server.ver, data))
    if not views:
        msg = (
            f"no server answered $SYS.REQ.SERVER.PING.JSZ at {redact(url)} within {wait} s "
            "(system-account credentials are needed)"
        )
        raise PullError(msg)
    if expect is not None and len(views) < expect:
        result.problems.append(
            f"{len(views)} of {expect} servers answered within {wait} s"
        )
    _merge(sorted(views, key=lambda v: v.name), result)
    return result


def pull_system(
    url: str,
    auth: Auth | None = None,
    *,
    timeout: float = 5.0,
    wait: float = 3.0,
    expect_servers: int | None = None,
) -> PullResult:
    """Every asset of every server answering ``$SYS.REQ.SERVER.PING.JSZ``.

    Replies are collected for ``wait`` seconds (or until ``expect_servers`` answered).

    Raises:
        PullError: no connection, authorization refused, no server answered.
    """
    auth = auth or Auth()
    return asyncio.run(_pull_system(url, auth, timeout, wait, expect_servers))


def _request(url: str) -> urllib.request.Request:
    """A GET of ``url``; ``user:password@`` in it becomes HTTP basic authentication.

    urllib would take the user information for part of the host name (a DNS error);
    a monitoring port behind an authenticating proxy expects the header.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return urllib.request.Request(url)  # noqa: S310 - http(s) only, checked
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    plain = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    user = urllib.parse.unquote(parts.username)
    password = urllib.parse.unquote(parts.password or "")
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return urllib.request.Request(  # noqa: S310 - http(s) only, checked
        plain, headers={"Authorization": f"Basic {token}"}
    )


def _get(url: str, timeout: float, context: ssl.SSLContext | None) -> bytes:
    last = ""
    request = _request(url)
    for attempt in range(RETRIES + 1):
        if attempt:
            time.sleep(BACKOFF_S * 2 ** (attempt - 1))
        try:
            # http(s) only: pull_monitor checks the scheme
            opened = urllib.request.urlopen(request, timeout=timeout, context=context)  # noqa: S310
            with opened as response:
                data: bytes = response.read()
                return data
        except urllib.error.HTTPError as exc:
            if exc.code < _SERVER_ERROR:
                msg = f"{redact(url)}: HTTP {exc.code} {exc.reason}"
                raise PullError(msg) from None
            last = f"HTTP {exc.code}"
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            last = str(getattr(exc, "reason", exc))
    msg = f"{redact(url)}: {last} (after {RETRIES} retries)"
    raise PullError(msg)


def pull_monitor(
    urls: Sequence[str], auth: Auth | None = None, *, timeout: float = 5.0
) -> PullResult:
    """Every asset of the servers whose monitoring endpoints are given (``/varz``, ``/jsz``).

    Raises:
        PullError: a URL is not http(s), or an endpoint does not answer.
    """
    auth = auth or Auth()
    views: list[_ServerJsz] = []
    context = auth.ssl_context()
    for url in urls:
        base = url.rstrip("/")
        if urllib.parse.urlsplit(base).scheme not in {"http", "https"}:
            msg = f"--monitor needs an http(s) URL, got {redact(url)!r}"
            raise PullError(msg)
        varz = json.loads(_get(f"{base}/varz", timeout, context))
        jsz = _get(f"{base}/jsz?{_JSZ_QUERY}", timeout, context)
        views.append(
            _ServerJsz(
                name=str(varz.get("server_name") or ""),
                cluster=str((varz.get("cluster") or {}).get("name") or ""),
                version=str(varz.get("version") or ""),
                data=jsz,
            )
        )
    result = PullResult()
    _merge(sorted(views, key=lambda v: v.name), result)
    return result
