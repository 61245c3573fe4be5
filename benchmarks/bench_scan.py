"""Scan throughput on local Spark against single-process ``check`` on the same file.

Run from the repository root (needs ``assetgate[spark]`` and Java)::

    python benchmarks/bench_scan.py [--assets 100000] [--master local[*]] [--input FILE]

The inventory is ``gen_inventory.generate(n, seed=3)``, written once to
``.cache/bench/scan-<n>-seed3.jsonl`` and reused (or ``--input``). The Spark session
is started and warmed with a tiny scan before timing, and both times are printed on
their own, so the comparison is judging throughput after session start. Then
``check`` (one process, ``workers=1``) and ``check`` on every core (``workers=None``),
each in a fresh interpreter (``bench_check.py``'s runner, as a user runs ``check``),
and ``scan`` run on the same file; the reports must be equal (exit 1 otherwise). Prints assets/s of both and their ratio; asserts
nothing about time.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from assetgate.batch.job import build_session, scan
from assetgate.catalogue.levels import load_catalogue
from assetgate.run.check import _usable_cores

try:
    from benchmarks.bench_check import measure
    from benchmarks.gen_inventory import write_inventory
except ModuleNotFoundError:  # run as a script: benchmarks/ is the first path entry
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.bench_check import measure
    from benchmarks.gen_inventory import write_inventory

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "bench"
TARGET = "2.11.11"
SEED = 3


def _inventory(assets: int, given: Path | None) -> Path:
    """The file to scan: ``--input``, or the cached generated inventory (written once)."""
    if given is not None:
        return given
    path = CACHE / f"scan-{assets}-seed{SEED}.jsonl"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        write_inventory(partial, assets, seed=SEED)
        partial.rename(path)
    return path


def main(argv: list[str] | None = None) -> int:
    """Time session start, check and scan on one inventory; print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=100000, help="lines to generate")
    parser.add_argument("--input", type=Path, help="an inventory file instead")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark setting"
    )
    args = parser.parse_args(argv)
    catalogue = load_catalogue(REPO / "levels")
    inventory = _inventory(args.assets, args.input)
    conf = dict(item.split("=", 1) for item in args.conf)
    print(
        f"{time.strftime('%Y-%m-%d')}; nproc {os.cpu_count()};"
        f" Python {platform.python_version()}; Spark master {args.master};"
        f" {inventory.name} ({inventory.stat().st_size / 1e6:.0f} MB)"
    )
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        spark = build_session(args.master, conf)
        started = time.perf_counter() - start
        warm = Path(folder) / "warm.jsonl"
        write_inventory(warm, 50, seed=4)
        start = time.perf_counter()
        scan(
            spark,
            [str(warm)],
            Path(folder) / "w",
            targets={"*": TARGET},
            catalogue=catalogue,
        )
        warmed = time.perf_counter() - start
        # check in fresh interpreters, as a user runs it (bench_check's own runner)
        one, report = measure(
            inventory, TARGET, "cluster", 1, Path(folder) / "check-1.json"
        )
        pooled, report_all = measure(
            inventory, TARGET, "cluster", None, Path(folder) / "check-all.json"
        )
        checked, checked_all = one.seconds, pooled.seconds
        same_pool = report_all == report
        del report_all
        gc.freeze()  # check's report stays alive for the comparison: not for the GC
        start = time.perf_counter()
        result = scan(
            spark,
            [str(inventory)],
            Path(folder) / "out",
            targets={"*": TARGET},
            catalogue=catalogue,
        )
        scanned = time.perf_counter() - start
        spark.stop()
    assets = report.summary.assets
    same = result.report == report
    print(
        f"session start:     {started:8.2f} s  (warm-up scan of 50 lines {warmed:.2f} s)"
    )
    print(f"records {report.summary.records}, assets {assets}")
    cores = _usable_cores()  # what check(workers=None) uses
    print(f"check (1 process): {checked:8.2f} s  {assets / checked:10.0f} assets/s")
    print(
        f"check ({cores} cores):   {checked_all:8.2f} s  "
        f"{assets / checked_all:10.0f} assets/s"
    )
    print(f"scan  (Spark):     {scanned:8.2f} s  {assets / scanned:10.0f} assets/s")
    print(f"ratio check all cores/1:  {checked / checked_all:8.2f}x  (target 1.8x)")
    print(f"ratio scan/check:         {checked / scanned:8.2f}x  (target 0.85x)")
    print(f"identical reports: {'yes' if same and same_pool else 'NO'}")
    return 0 if same and same_pool else 1


if __name__ == "__main__":
    raise SystemExit(main())
