"""Real-server scenarios: a store with one asset per feature, its inventory, observations.

``build_feature_store`` runs the newest release (2.15.1) on a store directory, creates
one stream or consumer per JetStream feature of 2.11-2.15 (names as in
``real-server-observations.md``), captures their inventory, stops the server and then
forges ``_nats.req.level: "6"`` into two assets' ``meta.inf`` on disk (the stream
``S_FORGED`` and the consumer ``C_FORGED``, next to its plain sibling ``C_SIB``).
A single server checks the stream's ``meta.sum`` (HighwayHash-64 keyed with the SHA-256
of the stream's name) on load, so the checksum is recomputed with the pure-Python
:func:`highwayhash64` below; consumer checksum files are only required to exist, and are
rewritten too (key: SHA-256 of ``stream/consumer``, as the filestore writes them).

``capture_inventory`` pages through ``$JS.API.STREAM.LIST`` and
``$JS.API.CONSUMER.LIST.<stream>`` and returns assetgate's canonical JSONL records;
``observe`` records what a (usually older) server did with each inventoried asset:
``online``, ``offline`` (with the server's reason), ``degraded`` (loaded with non-zero
stored fields missing from its INFO config) or ``missing``.

Nothing here sends ``"storage":"any"`` (it crashes 2.10 and 2.11). The module is over
the ~400-line size guide because it carries the HighwayHash-64 port, which exists only
to rewrite ``meta.sum`` and is checked against the server's own checksums before every
edit.
"""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

from assetgate.inventory.read import Asset
from assetgate.live.observed import dropped_paths
from assetgate.live.pull import strip_dynamic
from tests.support.natsserver import Client, NatsServer, NatsServerError, raw_request

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from assetgate.judge.gate import Verdict

__all__ = [
    "FEATURE_CONSUMERS",
    "FEATURE_STREAMS",
    "FORGED",
    "FORGED_LEVEL",
    "NEWEST",
    "OLDEST",
    "PLAIN_CONSUMERS",
    "PLAIN_STREAMS",
    "SOURCING_STREAMS",
    "AssetKey",
    "Observation",
    "agrees",
    "build_feature_store",
    "build_plain_store",
    "build_template_store",
    "capture_inventory",
    "dropped_paths",
    "feature_asset_keys",
    "forge_level_on_disk",
    "forge_record",
    "highwayhash64",
    "observe",
    "record_asset",
    "record_key",
    "strip_level_on_disk",
    "write_jsonl",
]

NEWEST: Final = "2.15.1"
OLDEST: Final = "2.10.26"
FORGED_LEVEL: Final = "6"
LEVEL_KEY: Final = "_nats.req.level"

# Request timeout; replies about offline assets come after a 500 ms delay.
REQUEST_TIMEOUT_S: Final = 5.0
PAGE_LIMIT: Final = 50  # at most this many pages of any list (256 entries each)
WORKERS: Final = 16

FEATURE_STREAMS: Final[tuple[dict[str, Any], ...]] = (
    {"name": "S_PLAIN", "subjects": ["plain.>"]},
    {"name": "S_TTL", "subjects": ["ttl.>"], "allow_msg_ttl": True},
    {"name": "S_COUNTER", "subjects": ["counter.>"], "allow_msg_counter": True},
    {"name": "S_ATOMIC", "subjects": ["atomic.>"], "allow_atomic": True},
    {"name": "S_SCHED", "subjects": ["sched.>"], "allow_msg_schedules": True},
    {"name": "S_ASYNC", "subjects": ["async.>"], "persist_mode": "async"},
    {"name": "S_BATCHED", "subjects": ["batched.>"], "allow_batched": True},
    # The stream the sourcing consumer of S_SRCCONS is created on.
    {"name": "H_SRC", "subjects": ["hsrc.>"]},
    {"name": "H_PAUSED", "subjects": ["hpaused.>"]},
    {"name": "H_PINNED", "subjects": ["hpinned.>"]},
    {"name": "H_PRIO", "subjects": ["hprio.>"]},
    {"name": "H_FLOWACK", "subjects": ["hflowack.>"]},
    {"name": "H_SRCFLAG", "subjects": ["hsrcflag.>"]},
    {"name": "S_FORGED", "subjects": ["forged.>"]},
    {"name": "H_FORGED", "subjects": ["hforged.>"]},
)
"""Streams created on the newest release, in creation order, before the consumers."""

SOURCING_STREAMS: Final[tuple[dict[str, Any], ...]] = (
    {
        "name": "S_SRCCONS",
        "subjects": ["srccons.>"],
        "sources": [
            {
                "name": "H_SRC",
                "consumer": {"name": "C_SOURCING", "deliver_subject": "dsrc.sourcing"},
            }
        ],
    },
)
"""Streams created after the consumers: S_SRCCONS sources H_SRC through C_SOURCING.

The server does not create that consumer: ``sources[].consumer`` names a durable one
that must exist, with ``sourcing: true`` and the flow-control ack policy (else the
source reports 400/10217 "stream source consumer requires flow control ack policy").
"""

FEATURE_CONSUMERS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    (
        "H_PAUSED",
        {
            "durable_name": "C_PAUSED",
            "ack_policy": "explicit",
            "pause_until": "2999-01-01T00:00:00Z",
        },
    ),
    (
        "H_PINNED",
        {
            "durable_name": "C_PINNED",
            "ack_policy": "explicit",
            "priority_groups": ["g"],
            "priority_policy": "pinned_client",
        },
    ),
    (
        "H_PRIO",
        {
            "durable_name": "C_PRIO",
            "ack_policy": "explicit",
            "priority_groups": ["g"],
            "priority_policy": "prioritized",
        },
    ),
    # flow_control acks need a push consumer (a pull one gets 400/10218).
    (
        "H_FLOWACK",
        {
            "durable_name": "C_FLOWACK",
            "deliver_subject": "push.flowack",
            "ack_policy": "flow_control",
        },
    ),
    (
        "H_SRC",
        {
            "durable_name": "C_SOURCING",
            "deliver_subject": "dsrc.sourcing",
            "ack_policy": "flow_control",
            "sourcing": True,
        },
    ),
    # `sourcing: true` without the flow-control ack policy: loadable by 2.11-2.12
    # (an unknown field at level 0), unlike C_SOURCING whose ack policy they cannot parse.
    (
        "H_SRCFLAG",
        {"durable_name": "C_SRCFLAG", "ack_policy": "explicit", "sourcing": True},
    ),
    ("H_FORGED", {"durable_name": "C_FORGED", "ack_policy": "explicit"}),
    ("H_FORGED", {"durable_name": "C_SIB", "ack_policy": "explicit"}),
)
"""(stream, consumer config) created on the newest release."""

FORGED: Final[tuple[tuple[str, str | None], ...]] = (
    ("S_FORGED", None),
    ("H_FORGED", "C_FORGED"),
)
"""(stream, consumer or None) whose stored ``_nats.req.level`` is forged to "6"."""

PLAIN_STREAMS: Final[tuple[dict[str, Any], ...]] = (
    {"name": "ORDERS", "subjects": ["orders.>"], "max_age": 86_400_000_000_000},
    {"name": "AUDIT", "subjects": ["audit.>"], "compression": "s2"},
)
"""Plain streams created on the oldest release (2.10.26) for the demo inventory."""

PLAIN_CONSUMERS: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("ORDERS", {"durable_name": "ship", "ack_policy": "explicit"}),
    (
        "ORDERS",
        {
            "durable_name": "bill",
            "ack_policy": "explicit",
            "filter_subjects": ["orders.new", "orders.paid"],
        },
    ),
)
"""Consumers created on the oldest release for the demo inventory."""

AssetKey = tuple[str, str, str]
"""(kind, stream, name) of an asset."""

Observation = tuple[str, str | None]


def record_asset(record: dict[str, Any], source: str) -> Asset:
    """Turn a captured inventory record into the gate's Asset."""
    return Asset(
        source=source,
        cluster=record["cluster"],
        account=record["account"],
        kind=record["kind"],
        stream=record["stream"],
        name=record["name"],
        config=json.dumps(record["config"]).encode(),
        created=record["created"],
    )


def agrees(
    verdict: Verdict,
    seen: Observation,
    *,
    not_served: frozenset[str] = frozenset({"missing"}),
) -> bool:
    """Whether an observation is what the verdict predicts.

    ``not_served`` are the observed states that count as the asset not being loaded
    (unloadable or detached).
    """
    state, reason = seen
    if verdict.state == "online":
        return seen == ("online", None)
    if verdict.state == "offline":
        return seen == ("offline", verdict.reason)
    if verdict.state in {"unloadable", "detached"}:
        return state in not_served
    if verdict.state == "unavailable":  # the whole cluster's JetStream is down
        return state == "unavailable"
    dropped = set((reason or "").split(", ")) if state == "degraded" else set()
    return dropped == set(verdict.dropped_fields)


"""(state, reason): ``online``/``offline``/``degraded``/``missing`` and the details.

For ``offline`` the reason is the server's offline reason verbatim; for ``degraded``
it is the dropped field paths joined by ``", "``; for ``missing`` the error seen.
"""


# --------------------------------------------------------------------------
# HighwayHash-64 (the filestore's meta.sum), after google/highwayhash's portable C

_MASK: Final = (1 << 64) - 1
_INIT0: Final = (
    0xDBE6D5D5FE4CCE2F,
    0xA4093822299F31D0,
    0x13198A2E03707344,
    0x243F6A8885A308D3,
)
_INIT1: Final = (
    0x3BD39E10CB0EF593,
    0xC0ACF169B5F18A8C,
    0xBE5466CF34E90C6C,
    0x452821E638D01377,
)


def _rot32(value: int) -> int:
    """Swap the two 32-bit halves of a 64-bit lane."""
    return ((value >> 32) | (value << 32)) & _MASK


def _zipper(v1: int, v0: int) -> tuple[int, int]:
    """HighwayHash's ZipperMerge: return (add1, add0) for lanes v1, v0."""
    add0 = (
        (((v0 & 0xFF000000) | (v1 & 0xFF00000000)) >> 24)
        | (((v0 & 0xFF0000000000) | (v1 & 0xFF000000000000)) >> 16)
        | (v0 & 0xFF0000)
        | ((v0 & 0xFF00) << 32)
        | ((v1 & 0xFF00000000000000) >> 8)
        | (v0 << 56)
    ) & _MASK
    add1 = (
        (((v1 & 0xFF000000) | (v0 & 0xFF00000000)) >> 24)
        | (v1 & 0xFF0000)
        | ((v1 & 0xFF0000000000) >> 16)
        | ((v1 & 0xFF00) << 24)
        | ((v0 & 0xFF000000000000) >> 8)
        | ((v1 & 0xFF) << 48)
        | (v0 & 0xFF00000000000000)
    ) & _MASK
    return add1, add0


class _Highway:
    """HighwayHash state: v0, v1, mul0, mul1 (four 64-bit lanes each)."""

    def __init__(self, key: bytes) -> None:
        """Reset the state for a 32-byte key."""
        lanes = [int.from_bytes(key[i : i + 8], "little") for i in range(0, 32, 8)]
        self.mul0 = list(_INIT0)
        self.mul1 = list(_INIT1)
        self.v0 = [m ^ k for m, k in zip(_INIT0, lanes, strict=True)]
        self.v1 = [m ^ _rot32(k) for m, k in zip(_INIT1, lanes, strict=True)]

    def update(self, lanes: Sequence[int]) -> None:
        """Mix four 64-bit lanes into the state."""
        v0, v1, mul0, mul1 = self.v0, self.v1, self.mul0, self.mul1
        for i in range(4):
            v1[i] = (v1[i] + mul0[i] + lanes[i]) & _MASK
            mul0[i] ^= ((v1[i] & 0xFFFFFFFF) * (v0[i] >> 32)) & _MASK
            v0[i] = (v0[i] + mul1[i]) & _MASK
            mul1[i] ^= ((v0[i] & 0xFFFFFFFF) * (v1[i] >> 32)) & _MASK
        for lo, hi, vsrc, vdst in ((0, 1, v1, v0), (2, 3, v1, v0)):
            add1, add0 = _zipper(vsrc[hi], vsrc[lo])
            vdst[hi] = (vdst[hi] + add1) & _MASK
            vdst[lo] = (vdst[lo] + add0) & _MASK
        for lo, hi, vsrc, vdst in ((0, 1, v0, v1), (2, 3, v0, v1)):
            add1, add0 = _zipper(vsrc[hi], vsrc[lo])
            vdst[hi] = (vdst[hi] + add1) & _MASK
            vdst[lo] = (vdst[lo] + add0) & _MASK

    def packet(self, data: bytes) -> None:
        """Mix one 32-byte packet."""
        self.update(
            [int.from_bytes(data[i : i + 8], "little") for i in range(0, 32, 8)]
        )

    def remainder(self, data: bytes) -> None:
        """Mix the final 1-31 bytes (HighwayHash's UpdateRemainder)."""
        size = len(data)
        size_mod4 = size & 3
        whole = size & ~3
        for i in range(4):
            self.v0[i] = (self.v0[i] + (size << 32) + size) & _MASK
        for i in range(4):
            half0 = self.v1[i] & 0xFFFFFFFF
            half1 = self.v1[i] >> 32
            half0 = ((half0 << size) | (half0 >> (32 - size))) & 0xFFFFFFFF
            half1 = ((half1 << size) | (half1 >> (32 - size))) & 0xFFFFFFFF
            self.v1[i] = half0 | (half1 << 32)
        packet = bytearray(32)
        packet[:whole] = data[:whole]
        tail = data[whole:]
        if size & 16:
            for i in range(4):
                packet[28 + i] = data[whole + i + size_mod4 - 4]
        elif size_mod4:
            packet[16] = tail[0]
            packet[17] = tail[size_mod4 >> 1]
            packet[18] = tail[size_mod4 - 1]
        self.packet(bytes(packet))

    def finalize64(self) -> int:
        """Four permute-and-update rounds, then the 64-bit result."""
        for _ in range(4):
            v0 = self.v0
            self.update([_rot32(v0[2]), _rot32(v0[3]), _rot32(v0[0]), _rot32(v0[1])])
        return (self.v0[0] + self.v1[0] + self.mul0[0] + self.mul1[0]) & _MASK


def highwayhash64(key: bytes, data: bytes) -> bytes:
    """Return HighwayHash-64 of ``data`` under a 32-byte ``key`` (8 bytes, little endian).

    This is what github.com/minio/highwayhash's ``Sum64`` digest returns, which the
    nats-server filestore hex-encodes into ``meta.sum``.
    """
    if len(key) != 32:
        raise ValueError(f"highwayhash key must be 32 bytes, got {len(key)}")
    state = _Highway(key)
    full = len(data) - len(data) % 32
    for offset in range(0, full, 32):
        state.packet(data[offset : offset + 32])
    if len(data) % 32:
        state.remainder(data[full:])
    return state.finalize64().to_bytes(8, "little")


def meta_checksum(key_text: str, meta: bytes) -> str:
    """Return the ``meta.sum`` text for ``meta`` (key: SHA-256 of ``key_text``)."""
    key = hashlib.sha256(key_text.encode()).digest()
    return highwayhash64(key, meta).hex()


def feature_asset_keys() -> tuple[AssetKey, ...]:
    """Return (kind, stream, name) of every asset of the feature store, sorted."""
    keys: list[AssetKey] = [
        ("stream", c["name"], c["name"]) for c in (*FEATURE_STREAMS, *SOURCING_STREAMS)
    ]
    keys.extend(("consumer", s, c["durable_name"]) for s, c in FEATURE_CONSUMERS)
    return tuple(sorted(keys))


# --------------------------------------------------------------------------
# Building stores


def _api(client: Client, subject: str, body: dict[str, Any]) -> dict[str, Any]:
    """Send one JetStream API request; raise with the reply if it is an error."""
    reply = client.request_json(subject, json.dumps(body).encode())
    if "error" in reply:
        raise NatsServerError(f"{subject} {body} failed: {reply['error']}")
    return reply


def _create(
    client: Client,
    streams: Iterable[dict[str, Any]],
    consumers: Iterable[tuple[str, dict[str, Any]]],
) -> None:
    """Create the streams, then the durable consumers."""
    for config in streams:
        _api(client, f"$JS.API.STREAM.CREATE.{config['name']}", config)
    for stream, config in consumers:
        name = config["durable_name"]
        body = {"stream_name": stream, "config": config}
        _api(client, f"$JS.API.CONSUMER.CREATE.{stream}.{name}", body)


def _stream_dir(store_dir: Path, stream: str) -> Path:
    """Return a single server's directory of a stream in account ``$G``."""
    return store_dir / "jetstream" / "$G" / "streams" / stream


def forge_level_on_disk(
    store_dir: Path, stream: str, consumer: str | None, level: str = FORGED_LEVEL
) -> None:
    """Set the stored ``_nats.req.level`` of one asset to ``level`` (server stopped).

    Edits the value in ``meta.inf`` in place (the rest stays byte for byte) and writes
    the matching ``meta.sum``.

    Raises:
        ValueError: the file holds no ``"_nats.req.level":"..."`` entry, or the
            existing checksum does not verify (the checksum scheme is not the one
            this module implements).
    """
    directory = _stream_dir(store_dir, stream)
    key_text = stream
    if consumer is not None:
        directory = directory / "obs" / consumer
        key_text = f"{stream}/{consumer}"
    meta_path, sum_path = directory / "meta.inf", directory / "meta.sum"
    meta = meta_path.read_bytes()
    if sum_path.read_text(encoding="ascii") != meta_checksum(key_text, meta):
        raise ValueError(f"{sum_path}: checksum does not verify before the edit")
    stored = json.loads(meta)
    old = stored.get("config", stored).get("metadata", {}).get(LEVEL_KEY)
    needle = json.dumps({LEVEL_KEY: old}, separators=(",", ":"))[1:-1].encode()
    if old is None or meta.count(needle) != 1:
        raise ValueError(f"{meta_path}: no single {LEVEL_KEY!r} entry to forge")
    forged = json.dumps({LEVEL_KEY: level}, separators=(",", ":"))[1:-1].encode()
    meta = meta.replace(needle, forged)
    meta_path.write_bytes(meta)
    sum_path.write_text(meta_checksum(key_text, meta), encoding="ascii")


def strip_level_on_disk(store_dir: Path, stream: str) -> None:
    """Remove a stream's stored ``_nats.req.level`` (a restore from an unstamped backup).

    Rewrites ``meta.inf`` without the key (same JSON otherwise, compact) and its
    ``meta.sum``; the server must be stopped.

    Raises:
        ValueError: the checksum does not verify before the edit, or there is no stamp.
    """
    directory = _stream_dir(store_dir, stream)
    meta_path, sum_path = directory / "meta.inf", directory / "meta.sum"
    meta = meta_path.read_bytes()
    if sum_path.read_text(encoding="ascii") != meta_checksum(stream, meta):
        raise ValueError(f"{sum_path}: checksum does not verify before the edit")
    stored = json.loads(meta)
    config = stored.get("config", stored)
    if LEVEL_KEY not in config.get("metadata", {}):
        raise ValueError(f"{meta_path}: no {LEVEL_KEY!r} to remove")
    del config["metadata"][LEVEL_KEY]
    if not config["metadata"]:
        del config["metadata"]
    meta = json.dumps(stored, separators=(",", ":")).encode()
    meta_path.write_bytes(meta)
    sum_path.write_text(meta_checksum(stream, meta), encoding="ascii")


TEMPLATE_RELEASE: Final = "2.12.8"
"""The newest release that still has stream templates (removed in 2.14)."""


def build_template_store(store_dir: Path) -> list[dict[str, Any]]:
    """On 2.12.8: a template-owned stream and a restored (unstamped) TTL stream.

    The template ``T`` (subjects ``tpl.*``) creates stream ``tpl_x`` on the first
    message to ``tpl.x`` (2.12.8 stores it without any ``_nats.req.level``);
    ``S_RESTORED`` (``allow_msg_ttl``) is created normally, then its stamp is removed
    on disk, as a restore from a backup made before 2.11 would leave it. Returns the
    inventory of what is on disk (server stopped).
    """
    with NatsServer(TEMPLATE_RELEASE, store_dir) as server:
        with Client(server.url, timeout=REQUEST_TIMEOUT_S) as client:
            template = {"name": "T", "max_streams": 5}
            template["config"] = {"name": "", "subjects": ["tpl.*"], "storage": "file"}
            _api(client, "$JS.API.STREAM.TEMPLATE.CREATE.T", template)
            client.request_msg("tpl.x", b"first")  # the template creates tpl_x
            restored = {"name": "S_RESTORED", "subjects": ["restored.>"]}
            _api(
                client,
                "$JS.API.STREAM.CREATE.S_RESTORED",
                {**restored, "allow_msg_ttl": True},
            )
        records = capture_inventory(server.url)
    strip_level_on_disk(store_dir, "S_RESTORED")
    out: list[dict[str, Any]] = []
    for record in records:
        if record["name"] == "S_RESTORED":
            config = dict(record["config"])
            metadata = {
                k: v for k, v in config.get("metadata", {}).items() if k != LEVEL_KEY
            }
            config.pop("metadata", None)
            if metadata:
                config["metadata"] = metadata
            record = {**record, "config": config}  # noqa: PLW2901
        out.append(record)
    return out


def forge_record(record: dict[str, Any], level: str = FORGED_LEVEL) -> dict[str, Any]:
    """Return a copy of an inventory record with its ``_nats.req.level`` forged."""
    config = dict(record["config"])
    config["metadata"] = {**config.get("metadata", {}), LEVEL_KEY: level}
    return {**record, "config": config}


def build_feature_store(store_dir: Path, *, cluster: str = "") -> list[dict[str, Any]]:
    """Create the feature store on the newest release; return its inventory.

    The inventory is captured from the running server before the forging, then the
    forged assets' records get the same edit as their files, so it describes exactly
    what is on disk when this returns (server stopped).
    """
    with NatsServer(NEWEST, store_dir) as server:
        with Client(server.url, timeout=REQUEST_TIMEOUT_S) as client:
            _create(client, FEATURE_STREAMS, FEATURE_CONSUMERS)
            _create(client, SOURCING_STREAMS, ())
        records = capture_inventory(server.url, cluster=cluster)
    forged = set(FORGED)
    out: list[dict[str, Any]] = []
    for record in records:
        name = None if record["kind"] == "stream" else record["name"]
        if (record["stream"], name) in forged:
            record = forge_record(record)  # noqa: PLW2901
        out.append(record)
    for stream, consumer in FORGED:
        forge_level_on_disk(store_dir, stream, consumer)
    return out


def build_plain_store(
    store_dir: Path,
    *,
    version: str = OLDEST,
    cluster: str = "",
    extra_streams: Iterable[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Create the plain demo assets (and ``extra_streams``) on ``version``; capture them."""
    with NatsServer(version, store_dir) as server:
        with Client(server.url, timeout=REQUEST_TIMEOUT_S) as client:
            _create(client, (*PLAIN_STREAMS, *extra_streams), PLAIN_CONSUMERS)
        return capture_inventory(server.url, cluster=cluster)


# --------------------------------------------------------------------------
# Capturing an inventory


def _paged(url: str, subject: str, items: str) -> tuple[list[Any], dict[str, str]]:
    """Page through a NAMES or LIST endpoint; return its items and ``offline`` map."""
    found: list[Any] = []
    offline: dict[str, str] = {}
    for _ in range(PAGE_LIMIT):
        body = json.dumps({"offset": len(found)}).encode()
        reply = raw_request(url, subject, body, timeout=REQUEST_TIMEOUT_S)
        if "error" in reply:
            raise NatsServerError(f"{subject}: {reply['error']}")
        page = reply.get(items) or []
        found.extend(page)
        offline.update(reply.get("offline") or {})
        if not page or len(found) >= int(reply.get("total", 0)):
            return found, offline
    raise NatsServerError(f"{subject}: more than {PAGE_LIMIT} pages")


def _strip_dynamic(config: dict[str, Any]) -> dict[str, Any]:
    """Return ``config`` without the per-response ``_nats.ver``/``_nats.level``."""
    stripped = strip_dynamic(config)
    assert isinstance(stripped, dict)
    return stripped


def _record(
    cluster: str, kind: str, stream: str, name: str, entry: dict[str, Any]
) -> dict[str, Any]:
    """Build one canonical inventory record from a LIST entry."""
    return {
        "cluster": cluster,
        "account": "$G",
        "kind": kind,
        "stream": stream,
        "name": name,
        "config": _strip_dynamic(entry["config"]),
        "created": entry.get("created"),
    }


def capture_inventory(url: str, *, cluster: str = "") -> list[dict[str, Any]]:
    """Return the live inventory of a server (account ``$G``) as canonical records.

    One record per stream, followed by its consumers, streams in name order; offline
    assets (which LIST leaves out) are not captured.
    """
    streams, _ = _paged(url, "$JS.API.STREAM.LIST", "streams")
    records: list[dict[str, Any]] = []
    for entry in sorted(streams, key=lambda e: str(e["config"]["name"])):
        name = str(entry["config"]["name"])
        records.append(_record(cluster, "stream", name, name, entry))
        consumers, _ = _paged(url, f"$JS.API.CONSUMER.LIST.{name}", "consumers")
        records.extend(
            _record(cluster, "consumer", name, str(cons["name"]), cons)
            for cons in sorted(consumers, key=lambda e: str(e["name"]))
        )
    return records


def record_key(record: dict[str, Any]) -> AssetKey:
    """Return (kind, stream, name) of an inventory record."""
    return (str(record["kind"]), str(record["stream"]), str(record["name"]))


def write_jsonl(records: Iterable[dict[str, Any]], path: Path) -> None:
    """Write records as JSON lines (compact, keys in insertion order)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------
# Observing what a server did


def _error_of(reply: dict[str, Any]) -> tuple[int, str] | None:
    """Return (err_code, description) of an API error reply, or None."""
    error = reply.get("error")
    if not isinstance(error, dict):
        return None
    return int(error.get("err_code", 0)), str(error.get("description", ""))


_STREAM_OFFLINE: Final = (10194, "stream is offline: ")
_CONSUMER_OFFLINE: Final = (10195, "consumer is offline: ")
_NOT_FOUND: Final = frozenset({10014, 10059})  # consumer / stream not found


def _judge_info(
    reply: dict[str, Any], stored: dict[str, Any], offline: tuple[int, str]
) -> Observation:
    """Turn an INFO reply into an observation, given the stored config."""
    error = _error_of(reply)
    if error is None:
        dropped = dropped_paths(_strip_dynamic(stored), reply.get("config", {}))
        return ("degraded", ", ".join(dropped)) if dropped else ("online", None)
    code, text = error
    if code == offline[0] and text.startswith(offline[1]):
        return "offline", text.removeprefix(offline[1])
    if code in _NOT_FOUND:
        return "missing", f"{code} {text}"
    return "error", f"{code} {text}"


def observe(
    server: NatsServer, inventory: Sequence[dict[str, Any]]
) -> dict[AssetKey, Observation]:
    """Record what a running server did with each asset of ``inventory``.

    STREAM.NAMES, STREAM.LIST and per stream CONSUMER.NAMES/LIST say what is there
    and what is offline; STREAM.INFO/CONSUMER.INFO (sent in parallel: replies about
    offline assets are delayed by 500 ms) give the offline reason (10194/10195) or the
    loaded config, compared with the stored one for dropped fields. An asset absent
    from the names, or answered with "not found", is ``missing``. A disagreement
    between the listings and INFO is recorded as state ``inconsistent``.
    """
    url = server.url
    names, _ = _paged(url, "$JS.API.STREAM.NAMES", "streams")
    _, stream_offline = _paged(url, "$JS.API.STREAM.LIST", "streams")
    present = {str(n) for n in names}
    consumer_names: dict[str, set[str]] = {}
    consumer_offline: dict[str, dict[str, str]] = {}
    for stream in sorted(present):
        try:
            cnames, _ = _paged(url, f"$JS.API.CONSUMER.NAMES.{stream}", "consumers")
            _, coff = _paged(url, f"$JS.API.CONSUMER.LIST.{stream}", "consumers")
        except NatsServerError:  # an offline stream: its consumers are not loaded
            cnames, coff = [], {}
        consumer_names[stream] = {str(n) for n in cnames}
        consumer_offline[stream] = coff

    def look(record: dict[str, Any]) -> Observation:
        kind, stream, name = record_key(record)
        if stream not in present:
            return "missing", "stream not in STREAM.NAMES"
        if kind == "stream":
            subject, listed = f"$JS.API.STREAM.INFO.{stream}", stream_offline
            offline_error = _STREAM_OFFLINE
        else:
            if name not in consumer_names[stream]:
                return "missing", "consumer not in CONSUMER.NAMES"
            subject = f"$JS.API.CONSUMER.INFO.{stream}.{name}"
            listed, offline_error = consumer_offline[stream], _CONSUMER_OFFLINE
        reply = raw_request(url, subject, b"", timeout=REQUEST_TIMEOUT_S)
        state, reason = _judge_info(reply, record["config"], offline_error)
        if (state == "offline") != (name in listed) or (
            state == "offline" and listed[name] != reason
        ):
            return (
                "inconsistent",
                f"INFO: {state} {reason!r}; LIST: {listed.get(name)!r}",
            )
        return state, reason

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        results = list(pool.map(look, inventory))
    return {record_key(r): obs for r, obs in zip(inventory, results, strict=True)}
