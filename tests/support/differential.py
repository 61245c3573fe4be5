"""Seeded random create requests, and when a real server's answer equals validate's.

The differential test (``tests/realserver/test_differential.py``) sends these requests
to real nats-server binaries and compares each reply with ``assetgate.validate``. This
module holds its two halves that do no I/O:

* **Generators.** :func:`make_case` builds one stream or consumer create request from
  ``(seed, version, kind, index)`` alone: it seeds one ``random.Random`` with
  ``"seed:version:kind:index"``, so any case of a failure report is made again without
  the ones before it. A config uses only the fields the release knows (the catalogue's
  request struct) plus, rarely, an unknown one; values lean on what the server's checks
  look at: boundaries, wrong JSON types, invalid subjects, names and transforms. The
  index makes names and subjects unique (``FZ<i>``/``s<i>.``, ``c<i>``).
* **Equality.** :func:`differences` states what counts as the same answer.

Known machine-dependent answers, and how they are handled:

* ``max_bytes`` over the server's storage: kept in the generator. A standalone
  server's default ``max_file_store``/``max_memory_store`` come from the machine, so the
  test starts every server with :data:`LIMITS` (``jetstream { ... }`` text:
  :data:`JETSTREAM_LIMITS`) and gives validate the same ``limits``.
* A non-durable consumer ``name`` over 255 bytes on a file stream: avoided (the answer
  depends on the filesystem's limit for a directory name, ``error creating store for
  consumer`` on ext4); such a name is sent as a ``durable_name`` instead (a durable over
  255 bytes is refused before the store is made), or on the memory stream ``CBI``.
* Deleting a server's last stream removes the account's ``streams`` directory
  asynchronously on 2.10, and a create in that moment fails with 500/10049 ``error
  creating store for stream`` (``mkdir .../$G/streams: no such file or directory``):
  the test keeps :data:`ANCHOR_STREAM` (a mirror, so it has no subjects to overlap)
  for the whole run.
* A stream that captures API subjects (``*.>`` on 2.10, without ``no_ack``) answers
  the INFO and DELETE requests sent to it with a publish ack, which may arrive before
  the API's reply: the test waits for the API's reply (``Client.request_api``).
* Cluster runs (``make_case(..., cluster=True)``): the same config is drawn, then a
  second ``random.Random`` (``"seed:version:kind:index:cluster"``) sets replicas (1-3,
  and 4-5 that a 3-node cluster cannot place) and ``placement.cluster`` ``C1``, so a
  single-server run of a seed is the same run as before. A cluster places a stream only
  on peers with room for its ``max_bytes`` (400/10005 ``insufficient storage``, which
  validate does not model), so the nodes get :data:`CLUSTER_JETSTREAM_LIMITS` (1 TiB,
  not the machine's disk and RAM) and a larger ``max_bytes`` is sent as
  :data:`CLUSTER_MAX_BYTES` (64 GiB: room for it even while the meta leader's view of
  a peer's reservations lags behind the deletes). Consumers are created on the same
  base streams, some of them replicated (:func:`base_stream`).
* Requests validate predicts a ``server_crash`` or ``no_reply`` for (``"storage":"any"``
  on 2.10/2.11, ...): generated, not sent, and counted as skipped by the test.

What it deliberately does not do: talk to a server, or decide anything validate decides.

Size: over the ~400-line guide because most of it is value pools (the formatter writes
them one per line), and generators and equality are read together when a run fails.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

import assetgate
from assetgate.catalogue.model import CONFIG_STRUCT, flat_fields, stream_request
from assetgate.judge.metadata import DYNAMIC_KEYS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from assetgate.catalogue.levels import Catalogue

__all__ = [
    "ANCHOR_STREAM",
    "BASE_STREAMS",
    "CLUSTER_JETSTREAM_LIMITS",
    "CLUSTER_MAX_BYTES",
    "JETSTREAM_LIMITS",
    "LIMITS",
    "Case",
    "base_stream",
    "bytes_literal",
    "differences",
    "info_metadata",
    "known_fields",
    "make_case",
    "predicted_error",
    "stored_pair",
]

Kind = Literal["stream", "consumer"]
T = TypeVar("T")

_MS: Final = 1_000_000
_S: Final = 1_000_000_000
_I64_MAX: Final = (1 << 63) - 1

STORE_LIMIT: Final = 1024 * 1024
"""Bytes of file and of memory storage every differential server gets (1 MiB)."""

LIMITS: Final = assetgate.ServerLimits(
    max_file_store=STORE_LIMIT, max_memory_store=STORE_LIMIT
)
"""The same limits, as validate takes them."""

JETSTREAM_LIMITS: Final = (
    f"max_file_store: {STORE_LIMIT}\n  max_memory_store: {STORE_LIMIT}"
)
"""The same limits, as ``NatsServer(jetstream_config=...)`` takes them."""

CLUSTER_STORE_LIMIT: Final = 1 << 40
"""Bytes of file and of memory storage every node of a differential cluster gets."""

CLUSTER_JETSTREAM_LIMITS: Final = (
    f"max_file_store: {CLUSTER_STORE_LIMIT}\n  max_memory_store: {CLUSTER_STORE_LIMIT}"
)
"""The same, as ``NatsCluster(jetstream_config=...)`` takes them."""

CLUSTER_MAX_BYTES: Final = 1 << 36
"""A cluster case's stream ``max_bytes`` above this is sent as this (see above)."""

ANCHOR_STREAM: Final[Mapping[str, Any]] = {
    "name": "DIFFANCHOR",
    "mirror": {"name": "DIFFNONE"},
}
"""A stream that stays, so the account never runs out of streams (see above)."""

_ENUM_ZEROS: Final = ("default", "none")
"""Zero values of enums the server omits (``persist_mode``, ``priority_policy``)."""

_MAX_STORE_NAME: Final = 255
"""Longest consumer name whose store directory every common filesystem can create."""

# --------------------------------------------------------------------------- values

_INTS: Final = (0, -1, -2, 1, 2, 5, 100, 1024, 1 << 20, 1 << 31, _I64_MAX, -(1 << 63))
_WRONG_INTS: Final = (1 << 64, 1.5, "5", None, True)
_DURATIONS: Final = (
    *(0, -1, -2, 1, 50 * _MS, 99 * _MS, 100 * _MS, 999 * _MS),
    *(_S, 2 * _S, 5 * _S, 30 * _S, 60 * _S, 120 * _S, 3600 * _S, _I64_MAX),
)
_TIMES: Final = (
    "2020-01-01T00:00:00Z",
    "2999-01-01T00:00:00Z",
    "0001-01-01T00:00:00Z",
    "2024-06-01T12:34:56.789Z",
    "2024-06-01T12:34:56+02:00",
    "2999-01-01T00:00:00.123456789Z",
    "not-a-time",
    None,
)
_METADATA: Final[tuple[dict[str, str] | None, ...]] = (
    {},
    {"k": "v"},
    {"_nats.req.level": "9"},
    {"_nats.ver": "x", "a": "b"},
    {"big": "v" * (128 * 1024)},
    {"k": ""},
    None,
)
_STREAM_FLAGS: Final = (
    *("no_ack", "deny_delete", "deny_purge", "allow_rollup_hdrs", "allow_direct"),
    *("mirror_direct", "sealed", "discard_new_per_subject", "allow_msg_ttl"),
    *("allow_msg_counter", "allow_atomic", "allow_msg_schedules", "allow_batched"),
)


class _Draw:
    """The random choices of one case: a thin, typed layer over ``random.Random``."""

    def __init__(self, rng: random.Random, sparse: float) -> None:
        """Draw from ``rng``; a quarter of the configs are dense, the others ``sparse``.

        In a dense config an optional field is set with probability 0.35 (checks meet
        each other), in a sparse one with probability ``sparse``.
        """
        self._rng = rng
        self.dense = rng.random() < 0.25
        self.density = 0.35 if self.dense else sparse

    def chance(self, probability: float) -> bool:
        """True with the given probability."""
        return self._rng.random() < probability

    def pick(self, values: Sequence[T]) -> T:
        """One of ``values``, uniformly."""
        return values[self._rng.randrange(len(values))]

    def mostly(self, good: Sequence[T], bad: Sequence[T], good_share: float) -> T:
        """One of ``good`` with probability ``good_share``, else one of ``bad``."""
        return self.pick(good if self.chance(good_share) else bad)

    def integer(self) -> object:
        """A boundary int64, or now and then a value of the wrong JSON type."""
        return self.mostly(_INTS, _WRONG_INTS, 0.98)

    def duration(self) -> object:
        """A duration in nanoseconds near a check's bound, now and then mistyped."""
        return self.mostly(_DURATIONS, _WRONG_INTS, 0.985)


# -------------------------------------------------------------------------- streams


def _subject(d: _Draw, prefix: str, *, anywhere: bool = True) -> str:
    """A subject under ``prefix`` (valid or not), or with ``anywhere`` a global one."""
    forms = [
        *(prefix, f"{prefix}.>", f"{prefix}.*", f"{prefix}.a", f"{prefix}.a.b"),
        *(f"{prefix}.*.x", f"{prefix}.a.>", f"{prefix}..x", f"{prefix}.", f".{prefix}"),
        *("", f"{prefix}.a b", f"{prefix}.\t", f"{prefix}." + "x" * 300),
        *(f"{prefix}.*.>", f"{prefix}.>.x", f"{prefix}.a*", f"{prefix}.ü"),
    ]
    if anywhere:
        forms += [
            *(">", "*", "*.>", f"*.{prefix}", "$JS.API.x", "$JS.API.>", "$SYS.x"),
            *("$NRG.x", "$JS.EVENT.x", "$JS.>", "$JS.*.x", "$KV.x.>", "_INBOX.x"),
            *("*.*.>", "$JS.API"),
        ]
    return d.pick(forms)


def _subjects(d: _Draw, prefix: str) -> list[str]:
    """Zero to four subjects, now and then with the first one repeated."""
    subjects = [_subject(d, prefix) for _ in range(d.pick((0, 1, 1, 1, 2, 2, 3, 4)))]
    if subjects and d.chance(0.1):
        subjects.append(subjects[0])
    return subjects


def _transform(d: _Draw, prefix: str) -> dict[str, Any]:
    """A subject transform; each side may be missing, empty or invalid."""
    p, t = prefix, f"t{prefix}"
    sources = (f"{p}.>", f"{p}.*", f"{p}.*.*", f"{p}.a", "", f"{p}..b", ">", f"{p}.*.>")
    destinations = (
        *(f"{t}.>", f"{t}.$1", f"{t}.{{{{wildcard(1)}}}}", f"{t}.{{{{wildcard(2)}}}}"),
        *(
            f"{t}.{{{{partition(3,1)}}}}",
            f"{t}.{{{{partition(3,1)}}}}.{{{{wildcard(1)}}}}",
        ),
        *(f"{t}.x", "", f"{t}.{{{{nope(1)}}}}", f"{t}.{{{{split(1,-)}}}}"),
        *(
            f"{t}.{{{{splitfromleft(1,2)}}}}",
            f"{t}.{{{{wildcard(1)}}}}.{{{{wildcard(2)}}}}",
        ),
        *(f"{t}..x", f"{t}.*", f"{t}.{{{{wildcard(0)}}}}", f"{t}.$2"),
        *(f"{t}.{{{{partition(0,1)}}}}", f"{t}.{{{{Wildcard(1)}}}}"),
    )
    transform: dict[str, Any] = {}
    if d.chance(0.9):
        transform["src"] = d.pick(sources)
    if d.chance(0.9):
        transform["dest"] = d.pick(destinations)
    return transform


def _source(d: _Draw, prefix: str) -> dict[str, Any]:
    """A mirror or source: name, start, filter, transforms, external API."""
    o = f"o{prefix}"
    source: dict[str, Any] = {}
    if d.chance(0.95):
        names = (f"O{prefix}", f"O{prefix}", f"O{prefix}b", "bad.name", "", "a b")
        source["name"] = d.pick((*names, "X*", "ORIGIN/x"))
    if d.chance(0.2):
        source["opt_start_seq"] = d.pick((0, 1, 100, -1))
    if d.chance(0.15):
        source["opt_start_time"] = d.pick(_TIMES)
    if d.chance(0.3):
        source["filter_subject"] = d.pick(
            (f"{o}.>", f"{o}.a", f"{o}..b", ">", "", f"{o}.*")
        )
    if d.chance(0.3):
        count = d.pick((0, 1, 1, 2, 3))
        source["subject_transforms"] = [_transform(d, o) for _ in range(count)]
    if d.chance(0.15):
        external: dict[str, Any] = {}
        if d.chance(0.9):
            apis = (
                "$JS.hub.API",
                "$JS.API",
                "a.*",
                "",
                "$JS.hub.API.>",
                f"ext{prefix}.api",
            )
            external["api"] = d.pick(apis)
        if d.chance(0.6):
            external["deliver"] = d.pick(
                ("", f"dlv{prefix}", "d.*", f"dlv{prefix}.x", "d.>")
            )
        source["external"] = external
    return source


def _stream_name(d: _Draw, index: int) -> str:
    """``FZ<index>``, or (6 %) a name the server refuses or must take as it is."""
    name = f"FZ{index}"
    if not d.chance(0.06):
        return name
    return d.pick(
        (
            *(f"{name}*", f"{name}>", f"{name}/x", f"{name}\\x", "N" * 256),
            *(name + "n" * 250, f"{name}ü", f"{name}-_x", f"{name}\u00a0"),
        )
    )


def _stream_scalars(d: _Draw, want: _Want) -> dict[str, Any]:
    """Description, enums, limits and durations, in the server's field order."""
    c: dict[str, Any] = {}
    if want("description", 0.5):
        c["description"] = d.pick(("", "d", "d" * 4096, "d" * 4097, "d" * 1025))
    if want("retention"):
        good = ("limits", "interest", "workqueue")
        c["retention"] = d.mostly(
            good, ("workQueue", "Limits", "bogus", "", None), 0.85
        )
    if want("discard"):
        c["discard"] = d.mostly(("old", "new"), ("NEW", "Old", "bogus", ""), 0.85)
    if want("storage"):
        c["storage"] = d.mostly(("file", "memory"), ("File", "mem", "", "any"), 0.9)
    for field in ("max_msgs", "max_bytes", "max_msgs_per_subject", "max_consumers"):
        if want(field):
            c[field] = d.integer()
    if want("max_msg_size"):  # an int32: the int64 extremes only as decode errors
        value = d.integer()
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and abs(value) > 1 << 31
        ):
            value = d.pick((-1, 0, 1, (1 << 31) - 1, 1 << 31, -(1 << 31)))
        c["max_msg_size"] = value
    for field in ("max_age", "duplicate_window"):
        if want(field, 1.5):
            c[field] = d.duration()
    if want("num_replicas"):
        c["num_replicas"] = d.pick((0, 1, 1, 3, 5, 6, -1))
    for field in _STREAM_FLAGS:
        if want(field, 0.8):
            c[field] = d.mostly(
                (True, True, True, True, False), ("true", 1, None), 0.97
            )
    return c


def _stream_features(d: _Draw, want: _Want, prefix: str, name: str) -> dict[str, Any]:
    """Newer settings, placement, limits for consumers, transform and republish."""
    c: dict[str, Any] = {}
    if want("template_owner", 0.2):
        c["template_owner"] = d.pick(("T", ""))
    if want("compression", 0.7):
        c["compression"] = d.mostly(("none", "s2", ""), ("S2", "zstd", None), 0.85)
    if want("first_seq", 0.7):
        c["first_seq"] = d.mostly(
            (0, 1, 100, 1 << 40), (0, 1, 100, 1 << 40, 1, -1), 0.9
        )
    if want("metadata", 0.5):
        c["metadata"] = d.pick(_METADATA)
    if want("subject_delete_marker_ttl", 0.8):
        c["subject_delete_marker_ttl"] = d.duration()
    if want("persist_mode", 0.7):
        c["persist_mode"] = d.mostly(("default", "async", ""), ("sync", "Async"), 0.85)
    if want("placement", 0.5):
        placement: dict[str, Any] = {}
        if d.chance(0.5):
            placement["cluster"] = d.pick(("", "c1", "nope"))
        if d.chance(0.4):
            placement["tags"] = d.pick(([], ["t"], ["a", "b"]))
        if d.chance(0.2):
            placement["preferred"] = d.pick(("", "n1"))
        c["placement"] = placement
    if want("consumer_limits", 0.7):
        limits: dict[str, Any] = {}
        if d.chance(0.7):
            limits["inactive_threshold"] = d.duration()
        if d.chance(0.7):
            limits["max_ack_pending"] = d.pick((0, -1, 1, 10, 1000, 20000))
        c["consumer_limits"] = limits
    if want("subject_transform", 0.6):
        c["subject_transform"] = _transform(d, prefix)
    if want("republish", 0.6):
        c["republish"] = _republish(d, prefix, name)
    return c


def _republish(d: _Draw, prefix: str, name: str) -> dict[str, Any]:
    """A republish: cycles, wildcards, tokens and empty sides included."""
    p, r = prefix, f"r{prefix}"
    republish: dict[str, Any] = {}
    if d.chance(0.7):
        republish["src"] = d.pick(
            (f"{p}.>", ">", f"{p}.*", "", f"{p}..x", f"{p}.a", "x.>")
        )
    if d.chance(0.9):
        republish["dest"] = d.pick(
            (
                *(f"{r}.>", f"{r}.x", ">", f"{p}.x", "", f"{r}.$1"),
                *(f"{r}.{{{{wildcard(1)}}}}", f"{r}..x", name, f"{r}.*"),
            )
        )
    if d.chance(0.3):
        republish["headers_only"] = d.chance(0.7)
    return republish


class _Want:
    """Whether to set an optional field: the release knows it, and a draw says yes."""

    def __init__(self, d: _Draw, fields: frozenset[str]) -> None:
        """Draw with ``d`` among ``fields``."""
        self._d = d
        self._fields = fields

    def __call__(self, field: str, boost: float = 1.0) -> bool:
        """Set ``field``, ``boost`` times as often as the config's density says."""
        return field in self._fields and self._d.chance(
            min(1.0, self._d.density * boost)
        )


def stream_config(
    rng: random.Random, index: int, fields: frozenset[str]
) -> dict[str, Any]:
    """A stream create config from ``rng``, unique by ``index``, over ``fields``."""
    d = _Draw(rng, 0.12)
    want = _Want(d, fields)
    prefix, name = f"s{index}", _stream_name(d, index)
    config: dict[str, Any] = {"name": name}
    if d.chance(0.75):
        config["subjects"] = _subjects(d, prefix)
    config |= _stream_scalars(d, want)
    config |= _stream_features(d, want, prefix, name)
    origin = 0.2 if d.dense else 0.1
    if "mirror" in fields and d.chance(origin):
        config["mirror"] = _source(d, prefix)
        if d.chance(0.6):
            config.pop("subjects", None)
    if "sources" in fields and d.chance(origin):
        sources = [_source(d, prefix) for _ in range(d.pick((0, 1, 1, 2, 3)))]
        if sources and d.chance(0.15):
            sources.append(dict(sources[0]))
        config["sources"] = sources
    if "pedantic" in fields and d.chance(0.06):
        config["pedantic"] = True
    if d.chance(0.01):
        config["no_such_field"] = 1
    return config


# ------------------------------------------------------------------------ consumers

BASE_STREAMS: Final[Mapping[str, Mapping[str, Any]]] = {
    "CBL": {"name": "CBL", "subjects": ["cbl.>"]},
    "CBW": {"name": "CBW", "subjects": ["cbw.>"], "retention": "workqueue"},
    "CBI": {
        "name": "CBI",
        "subjects": ["cbi.>", "cbi2.*"],
        "retention": "interest",
        "storage": "memory",
    },
    "CBX": {
        "name": "CBX",
        "subjects": ["cbx.>"],
        "consumer_limits": {"max_ack_pending": 10, "inactive_threshold": 60 * _S},
    },
    "CBM": {
        "name": "CBM",
        "subjects": ["cbm.a", "cbm.b.*"],
        "max_consumers": 3,
        "discard": "new",
        "max_msgs_per_subject": 1,
    },
}
"""The streams the consumers are created on, by name (fields every release knows)."""

_CLUSTER_BASE_REPLICAS: Final[Mapping[str, int]] = {"CBW": 3, "CBI": 2, "CBX": 3}
"""Replicas of the base streams in a cluster run (the others are R1)."""

_CROWDED: Final = frozenset({"CBW", "CBM"})
"""Base streams where one consumer left behind changes the answer to the next (a
workqueue's second unfiltered consumer, 10099; ``max_consumers``, 10026). A cluster's
direct consumer is unknown to the meta layer and cannot be deleted (it goes when
inactive), so a cluster run sends no direct consumer to them."""


def base_stream(name: str, *, cluster: bool = False) -> dict[str, Any]:
    """The create config of base stream ``name``; replicated as a cluster run makes it."""
    config = dict(BASE_STREAMS[name])
    replicas = _CLUSTER_BASE_REPLICAS.get(name) if cluster else None
    if replicas is not None:
        config["num_replicas"] = replicas
    return config


def _consumer_names(d: _Draw, index: int, base: Mapping[str, Any]) -> dict[str, str]:
    """Durable, named, both, odd or none; see the module docstring for long names."""
    n = f"c{index}"
    # 55 % durable, 25 % named, 8 % both, 5 % an odd name, 7 % none
    if d.chance(0.55):
        return {"durable_name": n}
    if d.chance(0.25 / 0.45):
        return {"name": n}
    if d.chance(0.08 / 0.2):
        return {"durable_name": n, "name": d.pick((n, n + "x"))}
    if not d.chance(0.05 / 0.12):
        return {}
    key = d.pick(("durable_name", "name"))
    long = n + "n" * (300 - len(n))  # over 255 bytes, and still this case's own
    odd = d.pick((n + "*", n + ">", n + "/x", n + "\\x", long, n + "ü", n + "-_x"))
    on_file = base.get("storage", "file") != "memory"
    if key == "name" and on_file and len(odd.encode()) > _MAX_STORE_NAME:
        key = "durable_name"
    return {key: odd}


def _delivery(d: _Draw, want: _Want, n: str, root: str) -> dict[str, Any]:
    """Push or pull, policies and where to start."""
    c: dict[str, Any] = {}
    if d.chance(0.25):
        subjects = (f"dlv.{n}", f"dlv.{n}", f"dlv.{n}.*", f"dlv..{n}", f"{root}.x")
        c["deliver_subject"] = d.pick((*subjects, f"dlv.{n}.>", ""))
        if d.chance(0.3):
            c["deliver_group"] = d.pick(("g", "", "g.x"))
    if want("ack_policy", 2.5):
        good = ("explicit", "explicit", "none", "all", "flow_control")
        c["ack_policy"] = d.mostly(good, ("Explicit", "bogus", "", None), 0.88)
    if want("deliver_policy", 1.5):
        good = ("all", "last", "new", "by_start_sequence", "by_start_time")
        bad = ("undefined", "bogus", "All")
        c["deliver_policy"] = d.mostly((*good, "last_per_subject"), bad, 0.9)
    if want("opt_start_seq"):
        c["opt_start_seq"] = d.pick((0, 1, 5, -1))
    if want("opt_start_time"):
        c["opt_start_time"] = d.pick(_TIMES)
    if want("replay_policy", 0.6):
        c["replay_policy"] = d.mostly(
            ("instant", "original"), ("bogus", "Instant"), 0.9
        )
    if want("ack_wait"):
        c["ack_wait"] = d.duration()
    if want("max_deliver"):
        c["max_deliver"] = d.pick((0, -1, -2, 1, 2, 3, 5, 100))
    if want("backoff"):
        backoffs: tuple[list[int], ...] = (
            [],
            [_S],
            [_S, 2 * _S],
            [_S, 2 * _S, 3 * _S],
            [-1],
            [0],
        )
        c["backoff"] = d.pick((*backoffs, [_S] * 10, [50 * _MS], None))
    return c


def _filters(d: _Draw, want: _Want, root: str, subjects: list[str]) -> dict[str, Any]:
    """``filter_subject`` and ``filter_subjects``: overlaps, misses, invalid ones."""
    c: dict[str, Any] = {}
    if want("filter_subject", 1.5):
        one = (f"{root}.a", f"{root}.>", f"{root}.*", "nomatch.x", f"{root}..a", "")
        c["filter_subject"] = d.pick((*one, ">", f"{root}.a.b", *subjects))
    if want("filter_subjects", 1.5):
        many = (f"{root}.a", f"{root}.b", f"{root}.>", f"{root}.*", f"{root}.*.x")
        more = (f"{root}.b.*", "nomatch.x", "", f"{root}..a", ">", *subjects)
        count = d.pick((0, 1, 2, 2, 3))
        c["filter_subjects"] = [d.pick((*many, *more)) for _ in range(count)]
    return c


def _consumer_limits(d: _Draw, want: _Want) -> dict[str, Any]:
    """Rates, sampling, pending and pull limits, heartbeats, replicas, storage."""
    c: dict[str, Any] = {}
    if want("rate_limit_bps", 0.6):
        c["rate_limit_bps"] = d.pick((0, 1, 1000, 1 << 40, -1))
    if want("sample_freq", 0.5):
        c["sample_freq"] = d.pick(
            ("", "50", "50%", "100%", "101%", "abc", "0", "-5", "1.5%")
        )
    if want("max_waiting"):
        c["max_waiting"] = d.pick((0, -1, 1, 5, 512, 1 << 20))
    if want("max_ack_pending", 1.3):
        c["max_ack_pending"] = d.pick((0, -1, -2, 1, 5, 10, 11, 20, 1000, 1 << 20))
    if want("idle_heartbeat"):
        c["idle_heartbeat"] = d.pick((0, -1, 50 * _MS, 100 * _MS, _S, 5 * _S))
    if want("flow_control"):
        c["flow_control"] = d.chance(0.8)
    if want("headers_only", 0.5):
        c["headers_only"] = d.chance(0.8)
    if want("max_batch"):
        c["max_batch"] = d.pick((0, -1, 1, 100))
    if want("max_expires"):
        c["max_expires"] = d.pick((0, -1, 500_000, _MS, _S, 60 * _S))
    if want("max_bytes"):
        c["max_bytes"] = d.pick((0, -1, 1, 1 << 20))
    if want("inactive_threshold"):
        c["inactive_threshold"] = d.pick((0, -1, _MS, _S, 60 * _S, 120 * _S, 3600 * _S))
    if want("num_replicas", 0.8):
        c["num_replicas"] = d.pick((0, 1, 3, -1, 6))
    if want("mem_storage", 0.5):
        c["mem_storage"] = d.chance(0.8)
    if want("direct", 0.3):
        c["direct"] = d.chance(0.8)
    return c


def _consumer_features(d: _Draw, want: _Want) -> dict[str, Any]:
    """Description, metadata, pausing and priority groups."""
    c: dict[str, Any] = {}
    if want("description", 0.4):
        c["description"] = d.pick(("", "d", "d" * 4097))
    if want("metadata", 0.5):
        c["metadata"] = d.pick(_METADATA)
    if want("pause_until", 0.8):
        c["pause_until"] = d.pick(_TIMES)
    if want("priority_policy", 1.5):
        good = ("none", "overflow", "pinned_client", "prioritized", "")
        c["priority_policy"] = d.mostly(good, ("bogus",), 0.93)
    if want("priority_groups", 1.5):
        groups: tuple[list[str], ...] = (
            [],
            ["g"],
            ["g", "h"],
            [""],
            ["a b"],
            ["g" * 17],
            ["g", "g"],
        )
        c["priority_groups"] = d.pick((*groups, ["A/_=-z"]))
    if want("priority_timeout", 0.8):
        c["priority_timeout"] = d.pick((0, -1, _S, 5 * _S))
    return c


def consumer_config(
    rng: random.Random, index: int, fields: frozenset[str], base: Mapping[str, Any]
) -> dict[str, Any]:
    """A consumer create config from ``rng`` for the stream ``base``, over ``fields``."""
    d = _Draw(rng, 0.13)
    want = _Want(d, fields)
    subjects = list(base.get("subjects") or [base["name"]])
    root = subjects[0].split(".")[0]
    config: dict[str, Any] = _consumer_names(d, index, base)
    config |= _delivery(d, want, f"c{index}", root)
    config |= _filters(d, want, root, subjects)
    config |= _consumer_limits(d, want)
    config |= _consumer_features(d, want)
    if d.chance(0.01):
        config["no_such_field"] = 1
    return config


# ----------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One generated create request, ready to send and to validate.

    Attributes:
        version: the nats-server release it is generated for.
        kind: ``"stream"`` or ``"consumer"``.
        index: its number in the run (names and subjects carry it).
        subject: the API subject to send it to.
        request: the exact request bytes (a consumer's wraps its config).
        config: the config alone, as validate takes it.
        base: the stream a consumer is created on (``None`` for a stream).
        cluster: made for a 3-node cluster (replicas, and ``base_stream``'s bases).
    """

    version: str
    kind: Kind
    index: int
    subject: str
    request: bytes
    config: bytes
    base: str | None = None
    cluster: bool = False

    @property
    def named(self) -> bool:
        """A stream, or a consumer whose config names it (else the server names it)."""
        if self.kind == "stream":
            return True
        config = json.loads(self.config)
        return bool(config.get("durable_name") or config.get("name"))


def known_fields(catalogue: Catalogue, version: str, kind: Kind) -> frozenset[str]:
    """The JSON keys a release's create request knows for ``kind``."""
    line = catalogue.server(version).line
    struct = stream_request(line) if kind == "stream" else CONFIG_STRUCT["consumer"]
    return frozenset(flat_fields(line, struct))


def _json(value: Mapping[str, Any]) -> bytes:
    """Compact JSON, non-ASCII kept as UTF-8 (as a client library sends it)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _clustered(
    rng: random.Random, kind: Kind, config: dict[str, Any], fields: frozenset[str]
) -> None:
    """Make ``config`` a cluster case: replicas, placement, ``max_bytes`` (in place)."""
    if rng.random() < 0.5:
        replicas = (1, 2, 3, 3, 4, 5) if kind == "stream" else (0, 1, 2, 3, 3, 4, 5)
        config["num_replicas"] = rng.choice(replicas)
    if kind == "consumer":
        return
    if "placement" in fields and rng.random() < 0.05:
        config["placement"] = {"cluster": "C1"}
    size = config.get("max_bytes")
    if type(size) is int and size > CLUSTER_MAX_BYTES:
        config["max_bytes"] = CLUSTER_MAX_BYTES


def make_case(
    seed: int,
    version: str,
    kind: Kind,
    index: int,
    fields: frozenset[str],
    *,
    cluster: bool = False,
) -> Case:
    """Case ``index`` of the run ``seed`` for ``version`` and ``kind`` (pure).

    Args:
        seed: the run's seed.
        version: the nats-server release.
        kind: ``"stream"`` or ``"consumer"``.
        index: the case's number; names and subjects are unique per index.
        fields: :func:`known_fields` of that release and kind.
        cluster: for a 3-node cluster: the same draw, then replicas from a second
            generator (see the module docstring); ``False`` leaves it untouched.
    """
    rng = random.Random(f"{seed}:{version}:{kind}:{index}")  # noqa: S311 (not security)
    more = random.Random(f"{seed}:{version}:{kind}:{index}:cluster")  # noqa: S311
    if kind == "stream":
        stream = stream_config(rng, index, fields)
        if cluster:
            _clustered(more, kind, stream, fields)
        body = _json(stream)
        subject = f"$JS.API.STREAM.CREATE.{stream['name']}"
        return Case(version, kind, index, subject, body, body, cluster=cluster)
    base = rng.choice(sorted(BASE_STREAMS))
    consumer = consumer_config(rng, index, fields, BASE_STREAMS[base])
    if cluster:
        _clustered(more, kind, consumer, fields)
        if base in _CROWDED and consumer.get("direct"):
            del consumer["direct"]
    config = _json(consumer)
    request = b'{"stream_name":"' + base.encode() + b'","config":' + config + b"}"
    name = consumer.get("durable_name") or consumer.get("name")
    subject = f"$JS.API.CONSUMER.CREATE.{base}" + (f".{name}" if name else "")
    return Case(version, kind, index, subject, request, config, base, cluster)


# -------------------------------------------------------------------------- equality


def _nonzero(value: Any) -> Any:
    """A JSON value without its zero values and metadata (the server omits most)."""
    if isinstance(value, dict):
        kept = {k: _nonzero(v) for k, v in value.items() if k != "metadata"}
        return {k: v for k, v in kept.items() if v not in (0, "", False, None, [], {})}
    if isinstance(value, list):
        return [_nonzero(v) for v in value]
    return value


def stored_pair(
    served: Mapping[str, Any], predicted: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the stored config a reply shows, validate's), comparable with ``==``.

    Zero values and metadata are left out of both (metadata has its own rule), and a
    key the server's JSON omits may hold an enum's zero value in the prediction.
    """
    stored = _nonzero(dict(predicted))
    omitted = {k for k, v in stored.items() if k not in served and v in _ENUM_ZEROS}
    return _nonzero(dict(served)), {k: v for k, v in stored.items() if k not in omitted}


def info_metadata(
    metadata: dict[str, str] | None, version: str
) -> dict[str, str] | None:
    """INFO metadata without the keys 2.11+ add to every reply (``DYNAMIC_KEYS``; 2.10 stores all)."""
    if metadata is None or version.startswith("2.10."):
        return metadata
    kept = {key: value for key, value in metadata.items() if key not in DYNAMIC_KEYS}
    return kept or None


def predicted_error(prediction: assetgate.Validation) -> dict[str, Any] | None:
    """The predicted error as the server's JSON (``None``: accepted)."""
    error = prediction.error
    if error is None:
        return None
    return {
        "code": error.code,
        "err_code": error.err_code,
        "description": error.description,
    }


def _paths(served: Any, predicted: Any, path: str = "") -> list[str]:
    """Each path where two JSON values differ, with both sides."""
    if isinstance(served, dict) and isinstance(predicted, dict):
        out: list[str] = []
        for key in sorted(served.keys() | predicted.keys()):
            where = f"{path}{key}"
            if key not in served:
                out.append(
                    f"{where}: server <absent>, predicted {json.dumps(predicted[key])}"
                )
            elif key not in predicted:
                out.append(
                    f"{where}: server {json.dumps(served[key])}, predicted <absent>"
                )
            else:
                out.extend(_paths(served[key], predicted[key], f"{where}."))
        return out
    if served == predicted:
        return []
    where = path.rstrip(".") or "<config>"
    return [f"{where}: server {json.dumps(served)}, predicted {json.dumps(predicted)}"]


def differences(
    case: Case,
    prediction: assetgate.Validation,
    reply: Mapping[str, Any],
    info: Mapping[str, Any] | None,
) -> list[str]:
    """How the server's answer differs from validate's prediction (``[]``: equal).

    The rule: a refusal must be the predicted error exactly (code, err_code,
    description). An acceptance must be predicted, with the stored config of the reply
    equal to ``stored_config`` under :func:`stored_pair` (an unnamed consumer's name is
    made up by the server and left out), the reply's metadata equal to
    ``response_metadata``, and INFO's metadata without the dynamic keys
    (:func:`info_metadata`) equal to ``stamped_metadata``.

    Args:
        case: the request.
        prediction: validate's answer to it.
        reply: the server's reply.
        info: the server's INFO reply after an acceptance (``None`` after a refusal).
    """
    expected = predicted_error(prediction)
    if "error" in reply or expected is not None:
        if reply.get("error") == expected:
            return []
        served = json.dumps(reply.get("error")) if "error" in reply else "accepted"
        said = json.dumps(expected) if expected is not None else "accepted"
        return [f"error: server {served}, predicted {said}"]
    config = dict(reply.get("config") or {})
    stored = dict(prediction.stored_config or {})
    if not case.named:
        config.pop("name", None)
        stored.pop("name", None)
    out = _paths(*stored_pair(config, stored))
    if config.get("metadata") != prediction.response_metadata:
        out.append(
            f"metadata (reply): server {json.dumps(config.get('metadata'))}, "
            f"predicted {json.dumps(prediction.response_metadata)}"
        )
    kept = info_metadata((info or {}).get("config", {}).get("metadata"), case.version)
    if kept != prediction.stamped_metadata:
        out.append(
            f"metadata (INFO): server {json.dumps(kept)}, "
            f"predicted {json.dumps(prediction.stamped_metadata)}"
        )
    return out


_RUN: Final = re.compile(rb"(.)\1{31,}", re.DOTALL)


def bytes_literal(data: bytes) -> str:
    """``data`` as a Python expression that rebuilds it exactly, long runs as ``b'v' * n``."""
    parts: list[str] = []
    start = 0
    for run in _RUN.finditer(data):
        if run.start() > start:
            parts.append(repr(data[start : run.start()]))
        parts.append(f"{run.group(1)!r} * {len(run.group(0))}")
        start = run.end()
    if start < len(data) or not parts:
        parts.append(repr(data[start:]))
    return " + ".join(parts)
