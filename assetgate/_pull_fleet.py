"""``assetgate pull`` from every server: ``$SYS.REQ.SERVER.PING.JSZ`` and ``/jsz``.

Every server answers with the streams and consumers it hosts; replicas are merged so
that each asset appears once, with the servers hosting it and the lowest of their
versions (the one that decides in a mixed cluster).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from assetgate._pull_common import (
    BACKOFF_S,
    RETRIES,
    Auth,
    PullError,
    PullResult,
    Where,
    connect,
    make_record,
    redact,
    server_record,
)
from assetgate.version import parse_version

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
    """One server's /jsz answer, with who it is."""

    name: str
    cluster: str
    version: str
    jsz: dict[str, Any]


def _version_key(text: str) -> tuple[tuple[int, ...], str]:
    """Order versions by release (unparsable ones last)."""
    try:
        return parse_version(text).release.release, text
    except ValueError:
        return (1 << 30,), text


def _merge(views: Sequence[_ServerJsz], result: PullResult) -> None:
    """One record per asset, from every server's /jsz (replicas merged)."""
    merged: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
    hosts: dict[tuple[str, str, str, str, str], list[_ServerJsz]] = {}
    for view in views:
        result.servers.append(
            {"name": view.name, "cluster": view.cluster, "version": view.version}
        )
        meta = (view.jsz.get("meta_cluster") or {}).get("name") or view.cluster
        for account in view.jsz.get("account_details") or ():
            account_name = str(account.get("id") or account.get("name") or "$G")
            for detail in account.get("stream_detail") or ():
                cluster = str((detail.get("cluster") or {}).get("name") or meta or "")
                stream = str(detail.get("name") or "")
                where = Where(cluster, account_name, view.version)
                items = [("stream", stream, detail)]
                items += [
                    ("consumer", str(c.get("name") or ""), c)
                    for c in detail.get("consumer_detail") or ()
                ]
                for kind, name, item in items:
                    key = (cluster, account_name, kind, stream, name)
                    hosts.setdefault(key, []).append(view)
                    if key not in merged:
                        merged[key] = make_record(
                            where,
                            kind,
                            stream,
                            name,
                            config=item.get("config"),
                            created=item.get("created"),
                        )
    result.records.extend(
        server_record(view.name, view.cluster, view.version) for view in views
    )
    for key in sorted(merged, key=lambda k: (k[0], k[1], k[3], k[2] != "stream", k[4])):
        record = merged[key]
        servers = sorted(hosts[key], key=lambda v: v.name)
        record["server_version"] = min((v.version for v in servers), key=_version_key)
        record["servers"] = [v.name for v in servers]
        if record["config"] is None:
            record["observed_state"] = "missing"
            record["observed_reason"] = "no config in /jsz (ask with config=true)"
        result.records.append(record)


async def _pull_system(
    url: str, auth: Auth, request_s: float, wait: float, expect: int | None
) -> PullResult:
    nc = await connect(url, auth, request_s)
    replies: list[dict[str, Any]] = []
    done = asyncio.Event()

    async def on_reply(msg: Msg) -> None:
        replies.append(json.loads(msg.data))
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
    finally:
        await nc.close()
    result = PullResult()
    views: list[_ServerJsz] = []
    for reply in replies:
        server = reply.get("server") or {}
        name = str(server.get("name") or "")
        if isinstance(reply.get("error"), dict):
            error = reply["error"]
            result.problems.append(
                f"server {name!r}: {error.get('code')} {error.get('description')}"
            )
            continue
        views.append(
            _ServerJsz(
                name=name,
                cluster=str(server.get("cluster") or ""),
                version=str(server.get("ver") or ""),
                jsz=reply.get("data") or {},
            )
        )
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


def _get_json(
    url: str, timeout: float, context: ssl.SSLContext | None
) -> dict[str, Any]:
    last = ""
    for attempt in range(RETRIES + 1):
        if attempt:
            time.sleep(BACKOFF_S * 2 ** (attempt - 1))
        try:
            # http(s) only: pull_monitor checks the scheme
            opened = urllib.request.urlopen(url, timeout=timeout, context=context)  # noqa: S310
            with opened as response:
                data: dict[str, Any] = json.loads(response.read())
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
        varz = _get_json(f"{base}/varz", timeout, context)
        jsz = _get_json(f"{base}/jsz?{_JSZ_QUERY}", timeout, context)
        views.append(
            _ServerJsz(
                name=str(varz.get("server_name") or ""),
                cluster=str((varz.get("cluster") or {}).get("name") or ""),
                version=str(varz.get("version") or ""),
                jsz=jsz,
            )
        )
    result = PullResult()
    _merge(sorted(views, key=lambda v: v.name), result)
    return result
