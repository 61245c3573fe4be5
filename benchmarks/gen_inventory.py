"""Generate a realistic fleet inventory in canonical JSON Lines, seeded and streamed.

Run from the repository root::

    python benchmarks/gen_inventory.py --assets 1000000 --out fleet.jsonl \
        [--seed 1] [--bad-fraction 0.01] [--accounts K]

Each line is one canonical record (``{"cluster","account","kind","stream","name",
"config","created"}``, see :mod:`assetgate.inventory.read`). The fleet:

* three clusters (``east``, ``west``, ``central``); each account lives in one of them;
* accounts of Zipf-like sizes (exponent 1.1): a few huge tenants and a long tail. Most
  are named like operator-mode account public keys (``A`` + 55 base32 characters); one
  is ``$G``;
* streams with multi-tenant subjects ``tenants.<id>.<app>.>`` or
  ``tenants.<id>.<app>.events.*`` plus ``tenants.<id>.<app>.cmds.*``, one (tenant,
  app) per stream, so that subjects do not overlap, except about 0.1 % of streams
  (``overlap_fraction``) that deliberately overlap an earlier stream of their account.
  About 2 % are mirrors (no subjects);
* 1-4 consumers per stream (2.5 on average), right after their stream;
* configs shaped like the ``config`` of STREAM.INFO and CONSUMER.INFO replies of
  nats-server 2.10.26 and 2.15.1 (``fixtures/inventories/demo.jsonl``): every
  non-omitempty field, Go's key order, compact JSON, ``metadata`` with
  ``_nats.req.level``. Most assets use no feature newer than 2.10. Some use the
  features of 2.11-2.14: message TTLs, counters, atomic batches, schedules, async
  persistence, fast batches, sources with a consumer, paused consumers, priority
  groups, ``flow_control`` acks and sourcing consumers. Each is stamped with the level
  the server stamps. About 12 % of the assets date from 2.10 and carry no stamp. A few
  carry forged (``6``, ``99``) or unparsable user-set levels;
* about ``--bad-fraction`` of the lines are bad: truncated JSON, wrong types, or kinds
  the gate does not know (``kv``, ``object_store``). A bad line replaces the asset it
  was generated from, so that asset's consumers become detached if it was a stream.
  Line 1 is never bad.

Lines average about 590 bytes (1,000,000 assets are about 590 MB). The output is
written as it is generated (memory does not grow with ``--assets``); 1,000,000 lines
take about 10 s on one core. :func:`generate` yields the same lines for use elsewhere
(the benchmarks and tests, the Spark scan).
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["CLUSTERS", "generate", "main", "write_inventory"]

Config = dict[str, Any]

CLUSTERS: Final = ("east", "west", "central")
APPS: Final = (
    "orders",
    "billing",
    "audit",
    "users",
    "search",
    "mail",
    "media",
    "auth",
    "iot",
    "ledger",
)
USER_KEYS: Final = ("owner", "team", "env", "cost_center", "tier")
WORKERS: Final = ("worker", "indexer", "notifier", "archiver", "replayer", "sync")
SECOND: Final = 1_000_000_000
DAY: Final = 86_400
_BASE32: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_EPOCH_2023: Final = 1_672_531_200  # 2023-01-01T00:00:00Z: 2.10-era assets
_EPOCH_2025: Final = 1_735_689_600  # 2025-01-01T00:00:00Z: stamped assets
_ENCODE: Final = msgspec.json.Encoder()
_ZIPF_EXPONENT: Final = 1.1


class _Account:
    """One account: where it lives and how many (tenant, app) pairs it has used."""

    __slots__ = ("cluster", "name", "used")

    def __init__(self, name: str, cluster: str) -> None:
        self.name = name
        self.cluster = cluster
        self.used = 0


def _account_name(rng: random.Random) -> str:
    """An account public key as in operator mode: ``A`` and 55 base32 characters."""
    return "A" + "".join(rng.choices(_BASE32, k=55))


def _accounts(rng: random.Random, count: int) -> tuple[list[_Account], list[float]]:
    """The accounts, biggest first, and the cumulative weights of a Zipf-like law."""
    accounts = [
        _Account(_account_name(rng), CLUSTERS[rng.randrange(len(CLUSTERS))])
        for _ in range(count)
    ]
    if count > 3:  # the default account is a mid-sized tenant
        accounts[3] = _Account("$G", accounts[3].cluster)
    weights = [1.0 / (rank**_ZIPF_EXPONENT) for rank in range(1, count + 1)]
    return accounts, list(itertools.accumulate(weights))


def _created(rng: random.Random, era_2_10: bool) -> str:
    """An RFC 3339 creation time with nanoseconds, as the server reports it."""
    base = _EPOCH_2023 if era_2_10 else _EPOCH_2025
    seconds = base + rng.randrange(365 * DAY)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{stamp}.{rng.randrange(1_000_000_000):09d}Z"


def _later(created: str, rng: random.Random) -> str:
    """A creation time some nanoseconds to a second after ``created`` (same second)."""
    nanos = int(created[20:29]) + rng.randrange(1_000_000, 30_000_000)
    return f"{created[:20]}{min(nanos, 999_999_999):09d}Z"


def _metadata(rng: random.Random, level: int) -> dict[str, str]:
    """Stored metadata: the level stamp, rarely forged or unparsable, some user keys."""
    stamp = str(level)
    roll = rng.random()
    if roll < 0.0005:
        stamp = rng.choice(("6", "99"))  # forged by hand or by a newer tool
    elif roll < 0.0007:
        stamp = rng.choice(("1.0", "latest", " 1"))  # user-set, not a level
    out = {"_nats.req.level": stamp}
    if rng.random() < 0.25:
        key = rng.choice(USER_KEYS)
        out[key] = f"{key}-{rng.randrange(1, 100)}"
    return out


class _Fleet:
    """The state of a generation run: the random source and the accounts."""

    def __init__(self, rng: random.Random, accounts: int, overlaps: float) -> None:
        self.rng = rng
        self.overlaps = min(max(overlaps, 0.0), 0.1)
        self.accounts, self.cumulative = _accounts(rng, accounts)
        self.total = self.cumulative[-1]

    def account(self) -> _Account:
        """An account drawn with Zipf-like weights."""
        point = self.rng.random() * self.total
        index = bisect.bisect_right(self.cumulative, point)
        return self.accounts[min(index, len(self.accounts) - 1)]

    def stream(self, account: _Account, era_2_10: bool) -> tuple[str, Config, str, str]:
        """A stream config: (name, config, subject prefix, app)."""
        rng = self.rng
        slot = account.used
        account.used += 1
        tenant, app = divmod(slot, len(APPS))
        app_name = APPS[app]
        name = f"{app_name.upper()}_T{tenant:05d}"
        prefix = f"tenants.t{tenant:05d}.{app_name}"
        roll = rng.random()
        cfg: Config = {"name": name}
        if roll < 0.4:
            cfg["description"] = f"{app_name} events of tenant t{tenant:05d}"
        mirror = 0.3 <= roll < 0.32 and slot > 0
        if not mirror:
            if 0.5 <= roll < 0.5 + self.overlaps and slot > 0:  # deliberate overlap
                prefix = _prefix(rng.randrange(slot))
                cfg["subjects"] = [f"{prefix}.events.>"]
            elif roll < 0.75:
                cfg["subjects"] = [f"{prefix}.>"]
            else:
                cfg["subjects"] = [f"{prefix}.events.*", f"{prefix}.cmds.*"]
        _limits(cfg, roll, slot)
        if 0.4 <= roll < 0.45:
            cfg["placement"] = {"cluster": account.cluster, "tags": ["ssd"]}
        if mirror:
            cfg["mirror"] = {"name": _stream_name(rng.randrange(slot))}
        elif 0.6 <= roll < 0.63 and slot > 0:
            cfg["sources"] = [self._source(rng.randrange(slot), name, era_2_10)]
        cfg["compression"] = "none" if roll < 0.8 else "s2"
        if 0.7 <= roll < 0.72:
            cfg["republish"] = {"src": f"{prefix}.>", "dest": f"repub.{prefix}.>"}
        cfg["allow_direct"] = roll < 0.6
        cfg["mirror_direct"] = False
        cfg["sealed"] = False
        cfg["deny_delete"] = roll > 0.9
        cfg["deny_purge"] = roll > 0.95
        cfg["allow_rollup_hdrs"] = 0.2 <= roll < 0.3
        cfg["consumer_limits"] = (
            {"inactive_threshold": 300 * SECOND, "max_ack_pending": 10_000}
            if 0.1 <= roll < 0.15
            else {}
        )
        if not era_2_10:  # 2.10 has no allow_msg_ttl and stamps no level
            cfg["metadata"] = _metadata(rng, _stream_features(cfg, rng.random()))
        return name, cfg, prefix, app_name

    def _source(self, slot: int, name: str, era_2_10: bool) -> Config:
        """A source: another stream of the account, maybe filtered or with a consumer."""
        source: Config = {"name": _stream_name(slot)}
        if self.rng.random() < 0.5:
            source["filter_subject"] = f"{_prefix(slot)}.>"
        if not era_2_10 and self.rng.random() < 0.05:  # 2.14: a source with a consumer
            source["consumer"] = {
                "name": f"SRC_{name}",
                "deliver_subject": f"dsrc.{name.lower()}",
            }
        return source

    def consumer(
        self, stream: str, prefix: str, app: str, index: int, era_2_10: bool
    ) -> tuple[str, Config]:
        """A consumer config of a stream: (name, config)."""
        rng = self.rng
        roll = rng.random()
        name = f"{app}-{WORKERS[index % len(WORKERS)]}-{index}"
        durable = roll < 0.85
        cfg: Config = {}
        if durable:
            cfg["durable_name"] = name
        else:
            name = f"{stream}_{''.join(rng.choices(_BASE32, k=8))}"
        cfg["name"] = name
        if 0.2 <= roll < 0.4:
            cfg["description"] = f"{app} {WORKERS[index % len(WORKERS)]}"
        cfg["deliver_policy"] = "all" if roll < 0.7 else ("new", "last")[index % 2]
        push = 0.8 <= roll < 0.95
        feature = 1.0 if era_2_10 else rng.random()
        ack_flow = push and feature < 0.02  # the 2.14 flow_control ack policy
        cfg["ack_policy"] = "flow_control" if ack_flow else "explicit"
        if not ack_flow:
            cfg["ack_wait"] = 30 * SECOND
        cfg["max_deliver"] = -1 if roll < 0.6 else 5
        if roll < 0.5:
            event = ("created", "updated", "deleted", "*")[index % 4]
            cfg["filter_subject"] = f"{prefix}.events.{event}"
        elif roll < 0.6:
            cfg["filter_subjects"] = [f"{prefix}.events.created", f"{prefix}.cmds.*"]
        cfg["replay_policy"] = "instant"
        if not push:
            cfg["max_waiting"] = 512
        cfg["max_ack_pending"] = 1000
        if push:
            cfg["flow_control"] = True
            cfg["deliver_subject"] = f"push.{prefix}.{index}"
            cfg["idle_heartbeat"] = SECOND if ack_flow else 5 * SECOND
        if not durable:
            cfg["inactive_threshold"] = 5 * SECOND
        cfg["num_replicas"] = 0
        if 0.95 <= roll < 0.97:
            cfg["mem_storage"] = True
        if ack_flow and feature < 0.005:
            cfg["sourcing"] = True
        if not era_2_10:
            _consumer_features(cfg, rng, feature, push=push, ack_flow=ack_flow)
        return name, cfg


def _stream_name(slot: int) -> str:
    """The name of the stream of an account's ``slot``-th (tenant, app) pair."""
    tenant, app = divmod(slot, len(APPS))
    return f"{APPS[app].upper()}_T{tenant:05d}"


def _prefix(slot: int) -> str:
    """The subject prefix of an account's ``slot``-th (tenant, app) pair."""
    tenant, app = divmod(slot, len(APPS))
    return f"tenants.t{tenant:05d}.{APPS[app]}"


def _limits(cfg: Config, roll: float, slot: int) -> None:
    """The limits of a stream, in Go's field order."""
    cfg["retention"] = ("limits", "limits", "limits", "interest", "workqueue")[slot % 5]
    cfg["max_consumers"] = -1
    cfg["max_msgs"] = -1 if roll < 0.8 else 1_000_000
    cfg["max_bytes"] = -1 if roll > 0.15 else 1 << 30
    cfg["max_age"] = (0, DAY * SECOND, 7 * DAY * SECOND)[slot % 3]
    cfg["max_msgs_per_subject"] = -1 if roll < 0.9 else 10
    cfg["max_msg_size"] = -1
    cfg["discard"] = "old" if roll < 0.85 else "new"
    cfg["storage"] = "file" if roll < 0.9 else "memory"
    cfg["num_replicas"] = 3 if roll < 0.7 else 1
    cfg["duplicate_window"] = 120 * SECOND


def _stream_features(cfg: Config, feature: float) -> int:
    """Add the 2.11+ stream fields (at most one newer feature); return its level."""
    ttl = feature < 0.06
    cfg["allow_msg_ttl"] = ttl
    if ttl:
        if feature < 0.02:
            cfg["subject_delete_marker_ttl"] = 900 * SECOND
        return 1
    if feature < 0.07:
        cfg["allow_msg_counter"] = True
        return 2
    if feature < 0.08:
        cfg["allow_atomic"] = True
        return 2
    if feature < 0.085:
        cfg["allow_rollup_hdrs"] = True
        cfg["allow_msg_schedules"] = True
        return 2
    if feature < 0.09:
        cfg["allow_batched"] = True
        return 4
    if feature < 0.095:
        cfg["persist_mode"] = "async"
        return 2
    return 0


def _consumer_features(
    cfg: Config, rng: random.Random, feature: float, *, push: bool, ack_flow: bool
) -> None:
    """Add the stamp and the 2.11+ consumer fields, which follow it in Go's order.

    The stamps are those nats-server 2.15.1 wrote (``demo.jsonl``): 4 for flow-control
    acks and sourcing, 1 for pauses and priority groups (``prioritized`` too).
    """
    level = 4 if ack_flow else 0
    pause = priority = None
    if not push and 0.02 <= feature < 0.03:
        pause = "2999-01-01T00:00:00Z"
        level = 1
    elif not push and 0.03 <= feature < 0.06:
        priority = "pinned_client" if feature < 0.05 else "prioritized"
        level = 1
    cfg["metadata"] = _metadata(rng, level)
    if pause is not None:
        cfg["pause_until"] = pause
    if priority is not None:
        cfg["priority_groups"] = ["jobs"]
        cfg["priority_policy"] = priority
        if priority == "pinned_client":
            cfg["priority_timeout"] = 120 * SECOND


def _record(
    account: _Account,
    *,
    kind: str,
    stream: str,
    name: str,
    config: Config,
    created: str,
) -> dict[str, Any]:
    """A canonical inventory record, in the key order of ``demo.jsonl``."""
    return {
        "cluster": account.cluster,
        "account": account.name,
        "kind": kind,
        "stream": stream,
        "name": name,
        "config": config,
        "created": created,
    }


def _bad(rng: random.Random, record: dict[str, Any]) -> bytes:
    """A bad line made from a good record: truncated, wrongly typed or of another kind."""
    roll = rng.random()
    if roll < 0.4:  # cut short, as by a full disk or a killed exporter
        line = _ENCODE.encode(record)
        return line[: rng.randrange(1, len(line) - 1)]
    if roll < 0.7:
        broken = dict(record)
        which = rng.randrange(4)
        if which == 0:
            broken["config"] = "see attachment"
        elif which == 1:
            broken["account"] = 42
        elif which == 2:
            broken["kind"] = ["stream"]
        else:
            broken["config"] = dict(broken["config"], name=7, durable_name=7)
        return _ENCODE.encode(broken)
    bucket = record["stream"].lower()
    if roll < 0.9:
        kv = {"bucket": bucket, "history": 5, "ttl": 0, "storage": "file"}
        broken = dict(record, kind="kv", stream=f"KV_{bucket}", name=bucket, config=kv)
    else:
        store = {"bucket": bucket, "description": "", "storage": "file"}
        broken = dict(
            record,
            kind="object_store",
            stream=f"OBJ_{bucket}",
            name=bucket,
            config=store,
        )
    return _ENCODE.encode(broken)


def generate(
    n: int,
    seed: int = 1,
    *,
    bad_fraction: float = 0.01,
    accounts: int | None = None,
    overlap_fraction: float = 0.001,
) -> Iterator[bytes]:
    """Yield ``n`` inventory lines (each ending with a newline), the same for a seed.

    Args:
        n: how many lines (records); about ``bad_fraction`` of them are bad.
        seed: the random seed.
        bad_fraction: the share of bad lines (truncated, wrong types, unknown kinds).
        accounts: how many accounts (default: one per 2,000 lines, at least 3).
        overlap_fraction: the share of streams whose subjects overlap an earlier
            stream of their account (at most 0.1).
    """
    if n <= 0:
        return
    rng = random.Random(seed)
    count = accounts if accounts is not None else max(3, n // 2000)
    fleet = _Fleet(rng, count, overlap_fraction)
    emitted = 0
    while emitted < n:
        account = fleet.account()
        era_2_10 = rng.random() < 0.12
        created = _created(rng, era_2_10)
        stream, config, prefix, app = fleet.stream(account, era_2_10)
        records = [
            _record(
                account,
                kind="stream",
                stream=stream,
                name=stream,
                config=config,
                created=created,
            )
        ]
        for index in range(1 + rng.randrange(4)):
            name, consumer = fleet.consumer(stream, prefix, app, index, era_2_10)
            records.append(
                _record(
                    account,
                    kind="consumer",
                    stream=stream,
                    name=name,
                    config=consumer,
                    created=_later(created, rng),
                )
            )
        for record in records:
            if emitted >= n:
                return
            if emitted > 0 and rng.random() < bad_fraction:
                yield _bad(rng, record) + b"\n"
            else:
                yield _ENCODE.encode(record) + b"\n"
            emitted += 1


def write_inventory(
    path: Path,
    n: int,
    seed: int = 1,
    *,
    bad_fraction: float = 0.01,
    accounts: int | None = None,
) -> int:
    """Write :func:`generate`'s lines to ``path`` (buffered); return the bytes written."""
    written = 0
    with path.open("wb", buffering=1 << 20) as out:
        for line in generate(n, seed, bad_fraction=bad_fraction, accounts=accounts):
            out.write(line)
            written += len(line)
    return written


def main(argv: list[str] | None = None) -> int:
    """Command line: write an inventory file and print what was written."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, required=True, help="lines to write")
    parser.add_argument("--out", type=Path, required=True, help="the output file")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bad-fraction", type=float, default=0.01)
    parser.add_argument("--accounts", type=int, default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    size = write_inventory(
        args.out,
        args.assets,
        args.seed,
        bad_fraction=args.bad_fraction,
        accounts=args.accounts,
    )
    took = time.perf_counter() - start
    print(
        f"wrote {args.assets:,} lines, {size:,} bytes"
        f" ({size / max(args.assets, 1):.0f} B/line) to {args.out} in {took:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
