"""Time assetgate.validate against json.loads + dict checks and a bare msgspec decode.

Run from the repository root: ``python benchmarks/bench_validate.py [--n N] [--repeat R]``.

The configs are what nats-server 2.12/2.14 return as ``config`` in STREAM.INFO and
CONSUMER.INFO replies (every non-omitempty field present, the server's key order,
compact JSON), generated with a fixed seed and encoded to bytes once. Every method
reads THE SAME BYTES in the same run:

* ``validate``: ``assetgate.validate(data, kind=..., server=..., mode="cluster")``
  (create; the configs are R3 replies of clustered servers, which a standalone server
  refuses since the 2.12 audit added ``stream.replicas_standalone``);
* ``json.loads``: ``json.loads`` plus plain dict checks (known keys, value types, enum
  values, nested objects), the hand-rolled way;
* ``msgspec``: a strict ``msgspec.json.Decoder`` into hand-written Structs with the same
  fields (``forbid_unknown_fields=True``): the floor cost of reading the data.

"clean" configs are all accepted by the target server (2.14.6 by default) with no
unknown field (checked before timing). Two slow-path sets, reported separately, make
validate leave msgspec's fast path for its Go-exact walker: "case-folded" (some keys
spelled ``Max_Age``/``MAX_AGE``, which Go matches case-insensitively: accepted) and
"unknown-field" (one key the server does not know: a strict server rejects it). The
baselines reject both slow sets, usually early, so there they time a rejection.
Throughput is the best of R passes over the whole set (GC off during a pass,
as timeit does); latency is per call, from one more pass. Nothing here asserts on
timing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import msgspec

try:
    from benchmarks.provenance import source_state
except ModuleNotFoundError:  # run as a script: put the checkout on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.provenance import source_state

from assetgate import validate

Kind = Literal["stream", "consumer"]
Config = dict[str, Any]
Check = Callable[[object], bool]

APPS = ("orders", "billing", "audit", "users", "search", "mail", "media", "auth")
USER_KEYS = ("owner", "team", "env", "cost_center", "tier", "created_by")
SECOND = 1_000_000_000

# --- realistic configs -------------------------------------------------------------------


def _metadata(rng: random.Random, level: int, version: str) -> dict[str, str]:
    """Stored metadata as an INFO reply shows it: req level, user keys, maybe dynamic keys."""
    out = {"_nats.req.level": str(level)}
    for key in rng.sample(USER_KEYS, rng.randint(1, 4)):
        out[key] = f"{key}-{rng.randint(1, 99)}"
    if rng.random() < 0.5:  # 2.11+ replies add the dynamic keys
        out["_nats.ver"] = version
        out["_nats.level"] = "4" if version.startswith("2.14") else "3"
    return out


def _sources(rng: random.Random, i: int, app: str) -> list[Config]:
    """One to three stream sources, some filtered, transformed or cross-domain."""
    sources: list[Config] = []
    for k in range(rng.randint(1, 3)):
        other = APPS[(i + k + 1) % len(APPS)]
        src: Config = {"name": f"{other.upper()}_{i + k + 1}"}
        # a filter or transforms, not both (400/10144)
        if rng.random() < 0.5:
            src["filter_subject"] = f"{other}.>"
        elif rng.random() < 0.6:
            src["subject_transforms"] = [{"src": f"{app}.>", "dest": f"agg.{app}.>"}]
        if rng.random() < 0.3:
            src["external"] = {"api": f"$JS.hub{k}.API", "deliver": ""}
        sources.append(src)
    return sources


def make_stream(rng: random.Random, i: int) -> Config:
    """One StreamConfig as ``STREAM.INFO`` returns it (Go struct order, omitempty honoured)."""
    app = APPS[i % len(APPS)]
    name = f"{app.upper()}_{i}"
    version = rng.choice(("2.12.8", "2.14.6"))
    level = 0
    cfg: Config = {"name": name}
    if rng.random() < 0.4:
        cfg["description"] = f"{app} events for tenant {i}"
    cfg["subjects"] = [
        f"{app}.{i}.{part}"
        for part in ("events.>", "cmds.*", "audit", "dlq.*", "x.>")[: rng.randint(1, 5)]
    ]
    cfg["retention"] = rng.choice(("limits", "limits", "interest", "workqueue"))
    cfg["max_consumers"] = -1
    cfg["max_msgs"] = rng.choice((-1, -1, 1_000_000))
    cfg["max_bytes"] = rng.choice((-1, -1, 1 << 30))
    cfg["max_age"] = rng.choice((0, 24 * 3600 * SECOND, 7 * 24 * 3600 * SECOND))
    cfg["max_msgs_per_subject"] = rng.choice((-1, -1, 1, 10))
    cfg["max_msg_size"] = -1
    cfg["discard"] = rng.choice(("old", "old", "new"))
    cfg["storage"] = rng.choice(("file", "file", "memory"))
    cfg["num_replicas"] = rng.choice((1, 3, 3))
    cfg["duplicate_window"] = rng.choice((120 * SECOND, 120 * SECOND, 60 * SECOND))
    if rng.random() < 0.3:
        cfg["placement"] = {
            "cluster": rng.choice(("east", "west")),
            "tags": ["ssd", f"az{rng.randint(1, 3)}"],
        }
    if rng.random() < 0.2:
        cfg["sources"] = _sources(rng, i, app)
    cfg["compression"] = rng.choice(("none", "none", "s2"))
    if rng.random() < 0.1:
        cfg["republish"] = {"src": f"{app}.{i}.>", "dest": f"repub.{app}.{i}.>"}
    cfg["allow_direct"] = rng.random() < 0.6
    cfg["mirror_direct"] = False
    cfg["sealed"] = False
    cfg["deny_delete"] = rng.random() < 0.2
    rollups = rng.random() < 0.3
    # roll-ups need the purge permission (400/10052 since the stream-check audit)
    cfg["deny_purge"] = not rollups and rng.random() < 0.2
    cfg["allow_rollup_hdrs"] = rollups
    limits: Config = {}
    if rng.random() < 0.2:
        limits = {"inactive_threshold": 300 * SECOND, "max_ack_pending": 10_000}
    cfg["consumer_limits"] = limits
    ttl = rng.random() < 0.2
    cfg["allow_msg_ttl"] = ttl
    if ttl:
        level = 1
        if rng.random() < 0.5:
            cfg["subject_delete_marker_ttl"] = 900 * SECOND
    if rng.random() < 0.05:
        cfg["allow_atomic"] = True
        level = 2
    cfg["metadata"] = _metadata(rng, level, version)
    return cfg


def make_consumer(rng: random.Random, i: int) -> Config:
    """One ConsumerConfig as ``CONSUMER.INFO`` returns it."""
    app = APPS[i % len(APPS)]
    version = rng.choice(("2.12.8", "2.14.6"))
    level = 0
    cfg: Config = {}
    durable = rng.random() < 0.8
    name = f"{app}-worker-{i}"
    if durable:
        cfg["durable_name"] = name
    cfg["name"] = name
    if rng.random() < 0.3:
        cfg["description"] = f"processes {app} events"
    policy = rng.choice(
        ("all", "all", "new", "last", "by_start_sequence", "last_per_subject")
    )
    cfg["deliver_policy"] = policy
    if policy == "by_start_sequence":
        cfg["opt_start_seq"] = rng.randint(1, 1_000_000)
    cfg["ack_policy"] = rng.choice(("explicit", "explicit", "explicit", "none", "all"))
    cfg["ack_wait"] = rng.choice((30 * SECOND, 30 * SECOND, 60 * SECOND))
    cfg["max_deliver"] = rng.choice((-1, -1, 5, 10))
    if rng.random() < 0.15:
        cfg["backoff"] = [SECOND, 5 * SECOND, 30 * SECOND]
    # last_per_subject needs a filter (400/10094)
    if policy == "last_per_subject" or rng.random() < 0.7:
        cfg["filter_subject"] = f"{app}.{i}.events.>"
    elif rng.random() < 0.7:
        cfg["filter_subjects"] = [
            f"{app}.{i}.events.{k}" for k in range(rng.randint(2, 4))
        ]
    cfg["replay_policy"] = "instant"
    push = rng.random() < 0.2
    if not push:
        cfg["max_waiting"] = 512
    if cfg["ack_policy"] != "none":  # max ack pending needs acks (400/10082)
        cfg["max_ack_pending"] = rng.choice((1000, 1000, 20_000))
    if push:
        cfg["flow_control"] = True
        cfg["deliver_subject"] = f"_INBOX.{app}.{i}"
        cfg["idle_heartbeat"] = 5 * SECOND
    if not durable:
        cfg["inactive_threshold"] = 5 * SECOND
    cfg["num_replicas"] = rng.choice((0, 0, 1, 3))
    if rng.random() < 0.1:
        cfg["mem_storage"] = True
    if not push and rng.random() < 0.1:
        cfg["priority_groups"] = ["jobs"]
        cfg["priority_policy"] = "pinned_client"
        cfg["priority_timeout"] = 120 * SECOND
        level = 1
    cfg["metadata"] = _metadata(rng, level, version)
    return cfg


def fold_keys(cfg: Config, rng: random.Random) -> Config:
    """Case-fold some top-level keys (``Max_Age``, ``MAX_AGE``): Go's decoder still matches them."""
    keys = [k for k in cfg if k != "metadata"]
    chosen = set(rng.sample(keys, min(len(keys), rng.randint(1, 3))))
    out: Config = {}
    for key, value in cfg.items():
        if key in chosen:
            key = key.title() if rng.random() < 0.5 else key.upper()  # noqa: PLW2901
        out[key] = value
    return out


def with_unknown(cfg: Config, rng: random.Random) -> Config:
    """Add a field the server does not know (a newer server's, or a typo)."""
    out = dict(cfg)
    key, value = rng.choice(
        (
            ("allow_msg_frobnicate", True),
            ("x_owner", "ops"),
            ("replicas", 3),
            ("max_age_s", 0),
        )
    )
    out[key] = value
    return out


def encode(configs: list[Config]) -> list[bytes]:
    """Compact JSON as the server sends it."""
    return [json.dumps(cfg, separators=(",", ":")).encode() for cfg in configs]


def make_sets(n: int, seed: int) -> dict[tuple[Kind, str], list[bytes]]:
    """``n`` configs per kind for the clean set and for each slow-path set, one seed.

    The slow-path sets are the clean configs changed: ``case-folded`` (accepted by
    Go, but not by msgspec's exact key match) and ``unknown-field`` (rejected by a
    strict server, dropped by a lenient one).
    """
    rng = random.Random(seed)
    streams = [make_stream(rng, i) for i in range(n)]
    consumers = [make_consumer(rng, i) for i in range(n)]
    by_kind: tuple[tuple[Kind, list[Config]], ...] = (
        ("stream", streams),
        ("consumer", consumers),
    )
    sets: dict[tuple[Kind, str], list[bytes]] = {}
    for kind, configs in by_kind:
        sets[kind, "clean"] = encode(configs)
    for kind, configs in by_kind:
        sets[kind, "case-folded"] = encode([fold_keys(c, rng) for c in configs])
    for kind, configs in by_kind:
        sets[kind, "unknown-field"] = encode([with_unknown(c, rng) for c in configs])
    return sets


# --- baseline (a): json.loads and plain dict checks ----------------------------------------


def _is_int(value: object) -> bool:
    return type(value) is int


def _is_str(value: object) -> bool:
    return type(value) is str


def _is_bool(value: object) -> bool:
    return type(value) is bool


def _one_of(*values: str) -> Check:
    allowed = frozenset(values)
    return lambda value: type(value) is str and value in allowed


def _list_of(check: Check) -> Check:
    return lambda value: (
        value is None or (type(value) is list and all(check(v) for v in value))
    )


def _str_map(value: object) -> bool:
    return value is None or (
        type(value) is dict and all(type(v) is str for v in value.values())
    )


def _obj(spec: dict[str, Check], *, nullable: bool = False) -> Check:
    def check(value: object) -> bool:
        if value is None:
            return nullable
        if type(value) is not dict:
            return False
        for key, item in value.items():
            field = spec.get(key)
            if field is None or not field(item):
                return False
        return True

    return check


_TRANSFORM = _obj({"src": _is_str, "dest": _is_str})
_SOURCE = _obj(
    {
        "name": _is_str,
        "opt_start_seq": _is_int,
        "opt_start_time": lambda v: v is None or type(v) is str,
        "filter_subject": _is_str,
        "subject_transforms": _list_of(_TRANSFORM),
        "external": _obj({"api": _is_str, "deliver": _is_str}, nullable=True),
        "consumer": _obj({"name": _is_str, "deliver_subject": _is_str}, nullable=True),
    },
    nullable=True,
)
STREAM_CHECK = _obj(
    {
        "name": _is_str,
        "description": _is_str,
        "subjects": _list_of(_is_str),
        "retention": _one_of("limits", "interest", "workqueue"),
        "max_consumers": _is_int,
        "max_msgs": _is_int,
        "max_bytes": _is_int,
        "max_age": _is_int,
        "max_msgs_per_subject": _is_int,
        "max_msg_size": _is_int,
        "discard": _one_of("old", "new"),
        "storage": _one_of("file", "memory"),
        "num_replicas": _is_int,
        "no_ack": _is_bool,
        "duplicate_window": _is_int,
        "placement": _obj(
            {"cluster": _is_str, "tags": _list_of(_is_str), "preferred": _is_str},
            nullable=True,
        ),
        "mirror": _SOURCE,
        "sources": _list_of(_SOURCE),
        "compression": _one_of("none", "s2"),
        "first_seq": _is_int,
        "subject_transform": _obj({"src": _is_str, "dest": _is_str}, nullable=True),
        "republish": _obj(
            {"src": _is_str, "dest": _is_str, "headers_only": _is_bool}, nullable=True
        ),
        "allow_direct": _is_bool,
        "mirror_direct": _is_bool,
        "discard_new_per_subject": _is_bool,
        "sealed": _is_bool,
        "deny_delete": _is_bool,
        "deny_purge": _is_bool,
        "allow_rollup_hdrs": _is_bool,
        "consumer_limits": _obj(
            {"inactive_threshold": _is_int, "max_ack_pending": _is_int}
        ),
        "metadata": _str_map,
        "allow_msg_ttl": _is_bool,
        "subject_delete_marker_ttl": _is_int,
        "allow_msg_counter": _is_bool,
        "allow_atomic": _is_bool,
        "allow_msg_schedules": _is_bool,
        "persist_mode": _one_of("default", "async", ""),
        "allow_batched": _is_bool,
        "pedantic": _is_bool,
    }
)
CONSUMER_CHECK = _obj(
    {
        "durable_name": _is_str,
        "name": _is_str,
        "description": _is_str,
        "deliver_policy": _one_of(
            "all",
            "last",
            "new",
            "by_start_sequence",
            "by_start_time",
            "last_per_subject",
            "undefined",
        ),
        "opt_start_seq": _is_int,
        "opt_start_time": lambda v: v is None or type(v) is str,
        "ack_policy": _one_of("none", "all", "explicit", "flow_control"),
        "ack_wait": _is_int,
        "max_deliver": _is_int,
        "backoff": _list_of(_is_int),
        "filter_subject": _is_str,
        "filter_subjects": _list_of(_is_str),
        "replay_policy": _one_of("instant", "original"),
        "rate_limit_bps": _is_int,
        "sample_freq": _is_str,
        "max_waiting": _is_int,
        "max_ack_pending": _is_int,
        "idle_heartbeat": _is_int,
        "flow_control": _is_bool,
        "headers_only": _is_bool,
        "max_batch": _is_int,
        "max_expires": _is_int,
        "max_bytes": _is_int,
        "deliver_subject": _is_str,
        "deliver_group": _is_str,
        "inactive_threshold": _is_int,
        "num_replicas": _is_int,
        "mem_storage": _is_bool,
        "direct": _is_bool,
        "metadata": _str_map,
        "pause_until": lambda v: v is None or type(v) is str,
        "priority_groups": _list_of(_is_str),
        "priority_policy": _one_of("none", "overflow", "pinned_client", "prioritized"),
        "priority_timeout": _is_int,
        "sourcing": _is_bool,
    }
)


def json_checked(data: bytes, check: Check) -> bool:
    """Baseline (a): parse with the standard library, then check keys and types."""
    try:
        value = json.loads(data)
    except ValueError:
        return False
    return check(value)


# --- baseline (b): a bare msgspec strict decode into hand-written Structs ------------------


class SubjectTransform(
    msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True
):
    """``SubjectTransformConfig``."""

    src: str = ""
    dest: str = ""


class External(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """``ExternalStream``."""

    api: str = ""
    deliver: str = ""


class ConsumerSource(
    msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True
):
    """``StreamConsumerSource`` (2.14)."""

    name: str = ""
    deliver_subject: str = ""


class Source(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """``StreamSource``."""

    name: str = ""
    opt_start_seq: int = 0
    opt_start_time: str | None = None
    filter_subject: str = ""
    subject_transforms: list[SubjectTransform] | None = None
    external: External | None = None
    consumer: ConsumerSource | None = None


class Placement(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """``Placement``."""

    cluster: str = ""
    tags: list[str] | None = None
    preferred: str = ""


class RePublish(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """``RePublish``."""

    src: str = ""
    dest: str = ""
    headers_only: bool = False


class ConsumerLimits(
    msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True
):
    """``StreamConsumerLimits``."""

    inactive_threshold: int = 0
    max_ack_pending: int = 0


class StreamConfig(
    msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True
):
    """2.14's ``StreamConfigRequest``: StreamConfig plus ``pedantic``."""

    name: str = ""
    description: str = ""
    subjects: list[str] | None = None
    retention: Literal["limits", "interest", "workqueue"] = "limits"
    max_consumers: int = 0
    max_msgs: int = 0
    max_bytes: int = 0
    max_age: int = 0
    max_msgs_per_subject: int = 0
    max_msg_size: int = 0
    discard: Literal["old", "new"] = "old"
    storage: Literal["file", "memory"] = "file"
    num_replicas: int = 0
    no_ack: bool = False
    duplicate_window: int = 0
    placement: Placement | None = None
    mirror: Source | None = None
    sources: list[Source | None] | None = None
    compression: Literal["none", "s2"] = "none"
    first_seq: int = 0
    subject_transform: SubjectTransform | None = None
    republish: RePublish | None = None
    allow_direct: bool = False
    mirror_direct: bool = False
    discard_new_per_subject: bool = False
    sealed: bool = False
    deny_delete: bool = False
    deny_purge: bool = False
    allow_rollup_hdrs: bool = False
    consumer_limits: ConsumerLimits = msgspec.field(default_factory=ConsumerLimits)
    metadata: dict[str, str] | None = None
    allow_msg_ttl: bool = False
    subject_delete_marker_ttl: int = 0
    allow_msg_counter: bool = False
    allow_atomic: bool = False
    allow_msg_schedules: bool = False
    persist_mode: Literal["default", "async", ""] = "default"
    allow_batched: bool = False
    pedantic: bool = False


class ConsumerConfig(
    msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True
):
    """2.14's ``ConsumerConfig``."""

    durable_name: str = ""
    name: str = ""
    description: str = ""
    deliver_policy: Literal[
        "all",
        "last",
        "new",
        "by_start_sequence",
        "by_start_time",
        "last_per_subject",
        "undefined",
    ] = "all"
    opt_start_seq: int = 0
    opt_start_time: str | None = None
    ack_policy: Literal["none", "all", "explicit", "flow_control"] = "none"
    ack_wait: int = 0
    max_deliver: int = 0
    backoff: list[int] | None = None
    filter_subject: str = ""
    filter_subjects: list[str] | None = None
    replay_policy: Literal["instant", "original"] = "instant"
    rate_limit_bps: int = 0
    sample_freq: str = ""
    max_waiting: int = 0
    max_ack_pending: int = 0
    idle_heartbeat: int = 0
    flow_control: bool = False
    headers_only: bool = False
    max_batch: int = 0
    max_expires: int = 0
    max_bytes: int = 0
    deliver_subject: str = ""
    deliver_group: str = ""
    inactive_threshold: int = 0
    num_replicas: int = 0
    mem_storage: bool = False
    direct: bool = False
    metadata: dict[str, str] | None = None
    pause_until: str | None = None
    priority_groups: list[str] | None = None
    priority_policy: Literal["none", "overflow", "pinned_client", "prioritized"] = (
        "none"
    )
    priority_timeout: int = 0
    sourcing: bool = False


STREAM_DECODER = msgspec.json.Decoder(StreamConfig)
CONSUMER_DECODER = msgspec.json.Decoder(ConsumerConfig)


def msgspec_decoded(data: bytes, decoder: msgspec.json.Decoder[Any]) -> bool:
    """Baseline (b): the floor cost of reading the bytes into typed values."""
    try:
        decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return True


# --- timing -----------------------------------------------------------------------------

Method = Callable[[bytes], object]


def methods(kind: Kind, server: str) -> dict[str, Method]:
    """The three readers of one kind, by column name."""
    check = STREAM_CHECK if kind == "stream" else CONSUMER_CHECK
    decoder: msgspec.json.Decoder[Any] = (
        STREAM_DECODER if kind == "stream" else CONSUMER_DECODER
    )
    return {
        "validate": lambda data: validate(
            data, kind=kind, server=server, mode="cluster"
        ),
        "json.loads+checks": lambda data: json_checked(data, check),
        "msgspec": lambda data: msgspec_decoded(data, decoder),
    }


def accepted_counts(kind: Kind, server: str, blobs: list[bytes]) -> dict[str, int]:
    """How many configs each method accepts."""
    check = STREAM_CHECK if kind == "stream" else CONSUMER_CHECK
    decoder: msgspec.json.Decoder[Any] = (
        STREAM_DECODER if kind == "stream" else CONSUMER_DECODER
    )
    return {
        "validate": sum(
            validate(d, kind=kind, server=server, mode="cluster").accepted
            for d in blobs
        ),
        "json.loads+checks": sum(json_checked(d, check) for d in blobs),
        "msgspec": sum(msgspec_decoded(d, decoder) for d in blobs),
    }


def one_pass(method: Method, blobs: list[bytes]) -> float:
    """Seconds for one call per config, GC off."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for data in blobs:
            method(data)
        return time.perf_counter() - start
    finally:
        gc.enable()


def latencies(method: Method, blobs: list[bytes]) -> list[float]:
    """Per-call seconds, one call per config, GC off."""
    out: list[float] = []
    clock = time.perf_counter
    gc.collect()
    gc.disable()
    try:
        for data in blobs:
            start = clock()
            method(data)
            out.append(clock() - start)
    finally:
        gc.enable()
    return out


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """One (kind, set, method) measurement."""

    kind: str
    dataset: str
    method: str
    configs_per_s: float
    median_us: float
    p99_us: float
    accepted: int
    size: int


def measure(
    kind: Kind, dataset: str, blobs: list[bytes], server: str, repeat: int
) -> list[Result]:
    """Warm up, then R interleaved passes per method (best kept), then a latency pass."""
    readers = methods(kind, server)
    counts = accepted_counts(kind, server, blobs)  # doubles as the warm-up
    for method in readers.values():
        one_pass(method, blobs)
    best = dict.fromkeys(readers, float("inf"))
    for _ in range(repeat):
        for name, method in readers.items():
            best[name] = min(best[name], one_pass(method, blobs))
    results: list[Result] = []
    for name, method in readers.items():
        samples = sorted(latencies(method, blobs))
        p99 = samples[min(len(samples) - 1, int(0.99 * len(samples)))]
        results.append(
            Result(
                kind=kind,
                dataset=dataset,
                method=name,
                configs_per_s=len(blobs) / best[name],
                median_us=statistics.median(samples) * 1e6,
                p99_us=p99 * 1e6,
                accepted=counts[name],
                size=len(blobs),
            )
        )
    return results


def print_table(results: list[Result]) -> None:
    """Markdown table: one row per (kind, set, method)."""
    print("| kind | set | method | configs/s | median µs | p99 µs | accepted |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r.kind} | {r.dataset} | {r.method} | {r.configs_per_s:,.0f} | "
            f"{r.median_us:.1f} | {r.p99_us:.1f} | {r.accepted}/{r.size} |"
        )


def print_ratios(results: list[Result]) -> None:
    """Throughput of validate as a fraction of each baseline's, per kind and set."""
    by_key = {(r.kind, r.dataset, r.method): r.configs_per_s for r in results}
    print()
    print("| kind | set | validate/msgspec | validate/json.loads |")
    print("|---|---|---:|---:|")
    for kind, dataset in dict.fromkeys((r.kind, r.dataset) for r in results):
        ours = by_key[kind, dataset, "validate"]
        to_msgspec = ours / by_key[kind, dataset, "msgspec"]
        to_json = ours / by_key[kind, dataset, "json.loads+checks"]
        print(f"| {kind} | {dataset} | {to_msgspec:.2f}x | {to_json:.2f}x |")


def breakdown(kind: Kind, blobs: list[bytes], server: str, repeat: int) -> None:
    """Per-call cost of validate's fast path, step by step, on clean configs.

    Each step is timed alone (best of ``repeat`` passes, GC off): the bare msgspec
    baseline, validate's bound Go-exact decoder, the compiled level rules, the hazard
    check, the whole fast path, and ``validate()`` itself. The differences are what
    stamping and the call cost on top of the decode.
    """
    from assetgate.catalogue.levels import load_catalogue
    from assetgate.requests.validate import _fast_plan

    plan = _fast_plan(load_catalogue(), server, kind, None, "cluster")
    values = [plan.decoder(data) for data in blobs]
    if any(v is None for v in values):
        print(f"# breakdown: some {kind} configs miss the fast path", file=sys.stderr)
        return
    decoder: msgspec.json.Decoder[Any] = (
        STREAM_DECODER if kind == "stream" else CONSUMER_DECODER
    )
    by_blob = dict(zip(blobs, values, strict=True))
    hazard = plan.hazard
    steps: dict[str, Method] = {
        "bare msgspec decode (baseline)": lambda d: msgspec_decoded(d, decoder),
        "validate's Go-exact decoder": plan.decoder,
        "level rules + minimum version": lambda d: plan.features(by_blob[d]),
        "crash-hazard check": lambda d: hazard(by_blob[d]) if hazard else None,
        "fast path (decode .. Validation)": plan.run,
        "validate()": lambda d: validate(d, kind=kind, server=server, mode="cluster"),
    }
    print(f"\n| {kind}: step | µs per config |\n|---|---:|")
    for name, method in steps.items():
        one_pass(method, blobs)
        best = min(one_pass(method, blobs) for _ in range(repeat))
        print(f"| {name} | {best / len(blobs) * 1e6:.2f} |")


def main(argv: list[str] | None = None) -> int:
    """Build the sets, check the clean ones are clean, time, print."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument(
        "--n", type=int, default=2000, help="configs per kind and set (default 2000)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="timed passes per method, best kept (default 5)",
    )
    parser.add_argument(
        "--server",
        default="2.14.6",
        help="nats-server version to validate for (default 2.14.6)",
    )
    parser.add_argument("--seed", type=int, default=20240611, help="generator seed")
    parser.add_argument(
        "--only",
        choices=("clean", "case-folded", "unknown-field"),
        help="time one set only",
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="time validate's fast path step by step on the clean sets instead",
    )
    args = parser.parse_args(argv)

    sets = make_sets(args.n, args.seed)
    kinds: tuple[Kind, ...] = ("stream", "consumer")
    for kind in kinds:
        for data in sets[kind, "clean"]:
            result = validate(data, kind=kind, server=args.server, mode="cluster")
            if not result.accepted or result.unknown_fields:
                print(
                    f"not clean for {args.server}: {data.decode()} -> {result}",
                    file=sys.stderr,
                )
                return 1
    sizes = {key: statistics.mean(len(b) for b in blobs) for key, blobs in sets.items()}
    print(
        f"# assetgate.validate benchmark: server {args.server}, n={args.n}, repeat={args.repeat}, "
        f"seed={args.seed}; python {platform.python_version()}, nproc {os.cpu_count()}, "
        f"msgspec {msgspec.__version__}, {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
    )
    print(f"# {source_state()}")
    print(
        "# mean config size (bytes): "
        + ", ".join(
            f"{kind}/{dataset} {size:.0f}" for (kind, dataset), size in sizes.items()
        )
    )
    print()
    if args.breakdown:
        for kind in kinds:
            breakdown(kind, sets[kind, "clean"], args.server, args.repeat)
        return 0
    results: list[Result] = []
    for (kind, dataset), blobs in sets.items():
        if args.only is None or args.only == dataset:
            results.extend(measure(kind, dataset, blobs, args.server, args.repeat))
    print_table(results)
    print_ratios(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
