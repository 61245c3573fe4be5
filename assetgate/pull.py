"""Pull the live inventory of running NATS servers into canonical JSON Lines records.

Three sources, one record shape (the canonical inventory of :mod:`assetgate.inventory`
plus what the server said about each asset):

* **account** (:func:`pull_account`): the JetStream API of the account the credentials
  belong to: ``$JS.API.STREAM.LIST`` and ``$JS.API.CONSUMER.LIST.<stream>``, paged.
  What a page names ``offline`` (with the server's reason) or ``missing`` is recorded as
  the asset's observed state; offline assets come without a config (the server does not
  give one).
* **system** (:func:`pull_system`): ``$SYS.REQ.SERVER.PING.JSZ`` with system-account
  credentials: every server of every cluster answers with the streams and consumers it
  hosts; replicas are merged so each asset appears once, with the servers hosting it.
* **monitor** (:func:`pull_monitor`): the same from each server's monitoring port
  (``/varz`` for name, cluster and version, ``/jsz`` for the assets), no credentials.

Every record carries ``server_version`` (the lowest version among the servers that
report it: the one that decides in a mixed cluster), ``api_level`` where the server
reports one, and ``observed_state`` (``online``, ``offline``, ``missing``). When the
JetStream API stays unavailable (503/10008) after the retries, one ``kind: "cluster"``
record says so (``observed_state: "unavailable"``): the whole-cluster outcome.

Credentials never reach a record, a log line or an error message: URLs are shown
without their user information. nats-py is the optional ``nats`` extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import structlog

from assetgate.version import parse_version

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from nats.aio.client import Client as NatsClient
    from nats.aio.msg import Msg

__all__ = [
    "Auth",
    "PullError",
    "PullResult",
    "pull_account",
    "pull_monitor",
    "pull_system",
    "redact",
    "strip_dynamic",
    "write_records",
]

log = structlog.get_logger("assetgate.pull")

DYNAMIC_KEYS: Final = ("_nats.ver", "_nats.level")
"""Metadata the server adds to each response (not stored): dropped from configs."""
PAGE_LIMIT: Final = 100_000  # pages of any list (256 entries each): a bound, not a goal
RETRIES: Final = 4
BACKOFF_S: Final = 0.25
PROGRESS_EVERY: Final = 500
_UNAVAILABLE: Final = (
    10008  # JSClusterNotAvailErr: "JetStream system temporarily unavailable"
)
_TRANSIENT: Final = frozenset({_UNAVAILABLE, 10118, 10119})
_JSZ_OPTIONS: Final = {
    "accounts": True,
    "streams": True,
    "consumer": True,
    "config": True,
    "limit": 100_000,
}
_SERVER_ERROR: Final = 500
_JSZ_QUERY: Final = "accounts=true&streams=true&consumers=true&config=true&limit=100000"


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
        """A TLS context when a CA or client certificate is given, else ``None``."""
        if not (self.tls_ca or self.tls_cert):
            return None
        context = ssl.create_default_context(cafile=self.tls_ca)
        if self.tls_cert:
            context.load_cert_chain(self.tls_cert, self.tls_key)
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
    parts = urllib.parse.urlsplit(url)
    if not parts.username and not parts.password:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
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


def _record(
    where: _Where,
    kind: str,
    stream: str,
    name: str,
    *,
    config: object = None,
    created: object = None,
    state: str = "online",
    reason: str | None = None,
) -> dict[str, Any]:
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
class _Where:
    cluster: str
    account: str
    version: str | None
    api_level: int | None = None


# --- the JetStream API of one account -------------------------------------------------


class _Unavailable(Exception):
    """The JetStream API kept answering 503/10008 (or nothing) after the retries."""


async def _connect(url: str, auth: Auth, request_s: float) -> NatsClient:
    try:
        from nats.aio.client import Client as NatsClient
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        msg = "assetgate pull needs nats-py: pip install 'assetgate[nats]'"
        raise PullError(msg) from exc
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
        "tls": auth.ssl_context(),
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


async def _request(
    nc: NatsClient, subject: str, body: dict[str, Any] | None, request_s: float
) -> dict[str, Any]:
    """One API request with retries (timeouts, no responders, 503/10008) and backoff."""
    from nats.errors import NoRespondersError
    from nats.errors import TimeoutError as NatsTimeout

    payload = b"" if body is None else json.dumps(body).encode()
    last = "no reply"
    for attempt in range(RETRIES + 1):
        if attempt:
            await asyncio.sleep(BACKOFF_S * 2 ** (attempt - 1))
        try:
            msg = await nc.request(subject, payload, timeout=request_s)
        except (NatsTimeout, NoRespondersError) as exc:
            last = type(exc).__name__
            continue
        reply: dict[str, Any] = json.loads(msg.data)
        error = reply.get("error")
        if isinstance(error, dict) and error.get("err_code") in _TRANSIENT:
            last = f"{error.get('code')} {error.get('err_code')} {error.get('description')}"
            continue
        return reply
    raise _Unavailable(last)


async def _paged(
    nc: NatsClient, subject: str, items: str, request_s: float
) -> tuple[list[Any], dict[str, str], list[str]]:
    found: list[Any] = []
    offline: dict[str, str] = {}
    missing: list[str] = []
    for _ in range(PAGE_LIMIT):
        reply = await _request(nc, subject, {"offset": len(found)}, request_s)
        error = reply.get("error")
        if isinstance(error, dict):
            msg = f"{subject}: {error.get('code')} {error.get('err_code')} {error.get('description')}"
            raise PullError(msg)
        page = reply.get(items) or []
        found.extend(page)
        offline.update(reply.get("offline") or {})
        missing.extend(str(n) for n in reply.get("missing") or ())
        if not page or len(found) >= int(reply.get("total", 0)):
            return found, offline, missing
    msg = f"{subject}: more than {PAGE_LIMIT} pages"
    raise PullError(msg)


def _server_info(nc: NatsClient) -> dict[str, Any]:
    """The INFO protocol message of the connected server (name, cluster, version)."""
    info = getattr(nc, "_server_info", None)  # nats-py keeps it, without a public API
    return dict(info) if isinstance(info, dict) else {}


async def _account_name(nc: NatsClient, given: str | None, request_s: float) -> str:
    if given:
        return given
    try:  # every user may ask which account it is in (nats-server 2.10+)
        msg = await nc.request("$SYS.REQ.USER.INFO", b"", timeout=request_s)
        data = json.loads(msg.data).get("data") or {}
        return str(data.get("account") or "$G")
    except Exception:  # noqa: BLE001 - older servers or no permission: the default
        return "$G"


async def _pull_account(
    url: str, auth: Auth, account: str | None, request_s: float
) -> PullResult:
    nc = await _connect(url, auth, request_s)
    result = PullResult()
    try:
        info = _server_info(nc)
        version = str(info.get("version") or "") or None
        cluster = str(info.get("cluster") or "")
        result.servers.append(
            {
                "name": str(info.get("server_name") or ""),
                "cluster": cluster,
                "version": version or "",
            }
        )
        where = _Where(cluster, await _account_name(nc, account, request_s), version)
        result.records.append(
            _server_record(str(info.get("server_name") or ""), where.cluster, version)
            | {"account": where.account}
        )
        try:
            js = await _request(nc, "$JS.API.INFO", None, request_s)
            error = js.get("error")
            if isinstance(error, dict):
                msg = f"JetStream is not available to this account: {error.get('description')}"
                raise PullError(msg)
            level = (js.get("api") or {}).get("level")
            where = _Where(
                where.cluster,
                where.account,
                version,
                level if isinstance(level, int) else None,
            )
            await _collect_account(nc, where, request_s, result)
        except _Unavailable as exc:
            result.records.append(_unavailable(where, str(exc)))
            result.problems.append(
                f"the JetStream API of {redact(url)} stayed unavailable ({exc})"
            )
    finally:
        await nc.close()
    return result


def _server_record(name: str, cluster: str, version: str | None) -> dict[str, Any]:
    """Which server was asked (``account``: the only account looked at, if one)."""
    return {
        "kind": "server",
        "cluster": cluster,
        "name": name,
        "server_version": version,
        "account": None,
    }


def _unavailable(where: _Where, last: str) -> dict[str, Any]:
    """The whole-cluster observation: no JetStream API answer after the retries."""
    reason = last.split(" ", 2)[2] if last.startswith("503 10008 ") else last
    return {
        "cluster": where.cluster,
        "account": where.account,
        "kind": "cluster",
        "observed_state": "unavailable",
        "observed_reason": reason,
        "server_version": where.version,
    }


async def _collect_account(
    nc: NatsClient, where: _Where, request_s: float, result: PullResult
) -> None:
    """Streams in name order, each followed by its consumers (offline ones too)."""
    streams, offline, missing = await _paged(
        nc, "$JS.API.STREAM.LIST", "streams", request_s
    )
    found: dict[str, dict[str, Any]] = {
        str(r["name"]): r
        for r in (
            *(
                _record(where, "stream", n, n, state="offline", reason=why)
                for n, why in offline.items()
            ),
            *(
                _record(where, "stream", n, n, state="missing")
                for n in missing
                if n not in offline
            ),
        )
    }
    for entry in streams:
        name = str(entry["config"]["name"])
        found[name] = _record(
            where,
            "stream",
            name,
            name,
            config=entry["config"],
            created=entry.get("created"),
        )
    consumers = 0
    for index, name in enumerate(sorted(found), start=1):
        result.records.append(found[name])
        if found[name]["observed_state"] == "missing":
            continue  # the server did not answer for it in time: nothing to list
        # an offline stream still lists its consumers' offline reasons
        subject = f"$JS.API.CONSUMER.LIST.{name}"
        try:
            items, coff, cmiss = await _paged(nc, subject, "consumers", request_s)
        except PullError as exc:
            result.problems.append(str(exc))
            continue
        listed = {
            str(item["name"]): _record(
                where,
                "consumer",
                name,
                str(item["name"]),
                config=item["config"],
                created=item.get("created"),
            )
            for item in items
        }
        for cname, reason in coff.items():
            listed[cname] = _record(
                where, "consumer", name, cname, state="offline", reason=reason
            )
        for cname in cmiss:
            listed.setdefault(
                cname, _record(where, "consumer", name, cname, state="missing")
            )
        result.records.extend(listed[cname] for cname in sorted(listed))
        consumers += len(listed)
        if index % PROGRESS_EVERY == 0:
            log.info("pull_progress", streams=index, of=len(found), consumers=consumers)


def pull_account(
    url: str, auth: Auth = Auth(), *, account: str | None = None, timeout: float = 5.0
) -> PullResult:
    """Every stream and consumer the credentials' account sees, with observed states.

    Args:
        url: a server of the cluster (``nats://HOST:PORT``).
        auth: credentials and TLS files.
        account: the account name recorded (default: asked with ``$SYS.REQ.USER.INFO``,
            else ``$G``).
        timeout: seconds per request (each retried up to ``RETRIES`` times).

    Raises:
        PullError: no connection, authorization refused, JetStream not enabled.
    """
    return asyncio.run(_pull_account(url, auth, account, timeout))


# --- /jsz of every server: $SYS and the monitoring port ---------------------------------


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
                where = _Where(cluster, account_name, view.version)
                items = [("stream", stream, detail)]
                items += [
                    ("consumer", str(c.get("name") or ""), c)
                    for c in detail.get("consumer_detail") or ()
                ]
                for kind, name, item in items:
                    key = (cluster, account_name, kind, stream, name)
                    hosts.setdefault(key, []).append(view)
                    if key not in merged:
                        merged[key] = _record(
                            where,
                            kind,
                            stream,
                            name,
                            config=item.get("config"),
                            created=item.get("created"),
                        )
    result.records.extend(
        _server_record(view.name, view.cluster, view.version) for view in views
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
    nc = await _connect(url, auth, request_s)
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
    auth: Auth = Auth(),
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
    urls: Sequence[str], auth: Auth = Auth(), *, timeout: float = 5.0
) -> PullResult:
    """Every asset of the servers whose monitoring endpoints are given (``/varz``, ``/jsz``).

    Raises:
        PullError: a URL is not http(s), or an endpoint does not answer.
    """
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
