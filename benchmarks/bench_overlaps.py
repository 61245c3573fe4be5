"""Time find_overlaps on seeded multi-tenant accounts against an all-pairs baseline.

Run from the repository root: ``python benchmarks/bench_overlaps.py [--catch-all]``.
Each account has streams with subjects ``tenants.<id>.<app>.>`` or
``tenants.<id>.<app>.events.*`` plus ``tenants.<id>.<app>.cmds.*``, one (tenant, app)
per stream, and about 0.1 % extra streams that deliberately overlap an existing one.
The baseline compares every pair of streams with subjects_collide, the way the server
checks one new stream against all others; it runs in full on the smallest account
and is extrapolated from a random sample of stream pairs on the larger ones.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

try:
    from assetgate.judge.subjects import find_overlaps, subjects_collide
except ModuleNotFoundError:  # not installed: run from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from assetgate.judge.subjects import find_overlaps, subjects_collide

if TYPE_CHECKING:
    from collections.abc import Sequence

Inventory = list[tuple[str, list[str]]]
Row = tuple[str, str, str, str]

APPS = ("orders", "billing", "audit", "users", "search", "mail", "media", "auth")
FULL_BASELINE_MAX = 1_000  # all-pairs in full up to this many streams
SAMPLE_PAIRS = 200_000  # stream pairs timed to extrapolate the baseline beyond it


def make_account(size: int, *, seed: int, catch_all: bool) -> Inventory:
    """Build ``size`` streams of one account, about 0.1 % of them overlapping."""
    rng = random.Random(seed)
    overlaps = max(1, size // 1000)
    streams: Inventory = []
    for i in range(size - overlaps - int(catch_all)):
        tenant, app = divmod(i, len(APPS))
        prefix = f"tenants.{tenant}.{APPS[app]}"
        if rng.random() < 0.5:
            subjects = [f"{prefix}.>"]
        else:
            subjects = [f"{prefix}.events.*", f"{prefix}.cmds.*"]
        streams.append((f"T{tenant}-{APPS[app].upper()}", subjects))
    victims = rng.sample(range(len(streams)), overlaps)
    for k, victim in enumerate(victims):
        prefix = streams[victim][1][0].rsplit(".", 1)[0].removesuffix(".events")
        streams.append((f"OVERLAP-{k}", [f"{prefix}.events.*"]))
    if catch_all:
        streams.append(("CATCH-ALL", [">"]))
    rng.shuffle(streams)
    return streams


def all_pairs(streams: Inventory) -> list[Row]:
    """Compare every pair of streams, keeping find_overlaps' row contract."""
    rows: list[Row] = []
    for i, (name_a, subjects_a) in enumerate(streams):
        for name_b, subjects_b in streams[i + 1 :]:
            row = _first_collision(name_a, subjects_a, name_b, subjects_b)
            if row is not None:
                rows.append(row)
    return rows


def _first_collision(
    name_a: str, subjects_a: list[str], name_b: str, subjects_b: list[str]
) -> Row | None:
    for subject_a in subjects_a:
        for subject_b in subjects_b:
            if subjects_collide(subject_a, subject_b):
                return (name_a, subject_a, name_b, subject_b)
    return None


def sampled_all_pairs_seconds(streams: Inventory, *, seed: int) -> float:
    """Extrapolate the all-pairs time from SAMPLE_PAIRS random stream pairs."""
    rng = random.Random(seed)
    size = len(streams)
    pairs = []
    for _ in range(SAMPLE_PAIRS):
        i, j = rng.sample(range(size), 2)
        pairs.append((streams[i], streams[j]))
    start = time.perf_counter()
    for (name_a, subjects_a), (name_b, subjects_b) in pairs:
        _first_collision(name_a, subjects_a, name_b, subjects_b)
    elapsed = time.perf_counter() - start
    return elapsed / SAMPLE_PAIRS * size * (size - 1) / 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print one line per account size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument(
        "--catch-all", action="store_true", help="add one stream with subject '>'"
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000]
    )
    args = parser.parse_args(argv)
    print(
        f"python {sys.version.split()[0]}, seed {args.seed}, catch-all {args.catch_all}"
    )
    print(
        f"{'streams':>8} {'subjects':>9} {'rows':>7} {'index s':>9} "
        f"{'all-pairs s':>14} {'ratio':>8}"
    )
    for size in args.sizes:
        streams = make_account(size, seed=args.seed + size, catch_all=args.catch_all)
        subjects = sum(len(s) for _, s in streams)
        start = time.perf_counter()
        rows = find_overlaps(streams)
        indexed = time.perf_counter() - start
        if size <= FULL_BASELINE_MAX:
            start = time.perf_counter()
            expected = all_pairs(streams)
            baseline = time.perf_counter() - start
            label = f"{baseline:.3f}"
            if rows != expected:
                print(f"MISMATCH at {size} streams: {len(rows)} != {len(expected)}")
                return 1
        else:
            baseline = sampled_all_pairs_seconds(streams, seed=args.seed)
            label = f"~{baseline:.1f} (est)"
        print(
            f"{size:>8} {subjects:>9} {len(rows):>7} {indexed:>9.3f} "
            f"{label:>14} {baseline / indexed:>7.0f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
