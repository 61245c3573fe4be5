"""Pull the live inventory of running NATS servers into canonical JSON Lines records.

Three sources, one record shape (the canonical inventory of :mod:`assetgate.inventory.read`
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
from typing import TYPE_CHECKING, Any

from assetgate.inventory.read import TRANSIENT_ERR_CODES
from assetgate.live.common import (
    BACKOFF_S,
    PAGE_LIMIT,
    PROGRESS_EVERY,
    RETRIES,
    Auth,
    PullError,
    PullResult,
    Where,
    connect,
    connection_lost,
    log,
    lost,
    make_record,
    redact,
    server_record,
    strip_dynamic,
    write_records,
)
from assetgate.live.fleet import pull_monitor, pull_system
from assetgate.wire import DEFAULT_ACCOUNT

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient

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


class _Unavailable(Exception):
    """The JetStream API kept answering 503/10008 (or nothing) after the retries.

    ``reason`` is the server's last error description, or ``no reply`` with the
    client's error when nothing answered.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


async def _request(
    nc: NatsClient, subject: str, body: dict[str, Any] | None, request_s: float
) -> dict[str, Any]:
    """One API request with retries (timeouts, no responders, 503/10008) and backoff."""
    from nats.errors import NoRespondersError
    from nats.errors import TimeoutError as NatsTimeout

    payload = b"" if body is None else json.dumps(body).encode()
    reason = detail = "no reply"
    for attempt in range(RETRIES + 1):
        if attempt:
            await asyncio.sleep(BACKOFF_S * 2 ** (attempt - 1))
        try:
            msg = await nc.request(subject, payload, timeout=request_s)
        except (NatsTimeout, NoRespondersError) as exc:
            reason = detail = f"no reply: {type(exc).__name__}"
            continue
        reply: dict[str, Any] = json.loads(msg.data)
        error = reply.get("error")
        if isinstance(error, dict) and error.get("err_code") in TRANSIENT_ERR_CODES:
            reason = str(error.get("description"))
            detail = f"{error.get('code')} {error.get('err_code')} {reason}"
            continue
        return reply
    raise _Unavailable(reason, detail)


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
        return str(data.get("account") or DEFAULT_ACCOUNT)
    except Exception:  # noqa: BLE001 - older servers or no permission: the default
        return DEFAULT_ACCOUNT


async def _pull_account(
    url: str, auth: Auth, account: str | None, request_s: float
) -> PullResult:
    nc = await connect(url, auth, request_s)
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
        where = Where(cluster, await _account_name(nc, account, request_s), version)
        result.records.append(
            server_record(str(info.get("server_name") or ""), where.cluster, version)
            | {"account": where.account}
        )
        try:
            js = await _request(nc, "$JS.API.INFO", None, request_s)
            error = js.get("error")
            if isinstance(error, dict):
                msg = f"JetStream is not available to this account: {error.get('description')}"
                raise PullError(msg)
            level = (js.get("api") or {}).get("level")
            where = Where(
                where.cluster,
                where.account,
                version,
                level if isinstance(level, int) else None,
            )
            await _collect_account(nc, where, request_s, result)
        except _Unavailable as exc:
            result.records.append(_unavailable(where, exc.reason))
            result.problems.append(
                f"the JetStream API of {redact(url)} stayed unavailable ({exc})"
            )
    except connection_lost() as exc:
        raise lost(url, exc) from None
    finally:
        with contextlib.suppress(*connection_lost()):
            await nc.close()
    return result


def _unavailable(where: Where, reason: str) -> dict[str, Any]:
    """The whole-cluster observation: no JetStream API answer after the retries."""
    return {
        "cluster": where.cluster,
        "account": where.account,
        "kind": "cluster",
        "observed_state": "unavailable",
        "observed_reason": reason,
        "server_version": where.version,
    }


async def _collect_account(
    nc: NatsClient, where: Where, request_s: float, result: PullResult
) -> None:
    """Streams in name order, each followed by its consumers (offline ones too)."""
    streams, offline, missing = await _paged(
        nc, "$JS.API.STREAM.LIST", "streams", request_s
    )
    found: dict[str, dict[str, Any]] = {
        str(r["name"]): r
        for r in (
            *(
                make_record(where, "stream", n, n, state="offline", reason=why)
                for n, why in offline.items()
            ),
            *(
                make_record(where, "stream", n, n, state="missing")
                for n in missing
                if n not in offline
            ),
        )
    }
    for entry in streams:
        name = str(entry["config"]["name"])
        found[name] = make_record(
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
            str(item["name"]): make_record(
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
            listed[cname] = make_record(
                where, "consumer", name, cname, state="offline", reason=reason
            )
        for cname in cmiss:
            listed.setdefault(
                cname, make_record(where, "consumer", name, cname, state="missing")
            )
        result.records.extend(listed[cname] for cname in sorted(listed))
        consumers += len(listed)
        if index % PROGRESS_EVERY == 0:
            log.info("pull_progress", streams=index, of=len(found), consumers=consumers)


def pull_account(
    url: str,
    auth: Auth | None = None,
    *,
    account: str | None = None,
    timeout: float = 5.0,
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
    auth = auth or Auth()
    return asyncio.run(_pull_account(url, auth, account, timeout))
