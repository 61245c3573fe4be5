"""Scan throughput on local Spark against single-process ``check`` on the same file.

Run from the repository root (needs ``assetgate[spark]`` and Java)::

    python benchmarks/bench_scan.py [--assets 20000] [--master local[*]]

The inventory comes from ``gen_inventory.generate``; the Spark session is started
(and warmed with a tiny scan) before timing, so the numbers compare judging, not JVM
start-up. Prints assets/s of both and their ratio; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from assetgate.batch.job import build_session, scan
from assetgate.check import check
from assetgate.levels import load_catalogue

try:
    from benchmarks.gen_inventory import write_inventory
except ModuleNotFoundError:  # run as a script: benchmarks/ is the first path entry
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.gen_inventory import write_inventory

REPO = Path(__file__).resolve().parent.parent
TARGET = "2.11.11"


def main(argv: list[str] | None = None) -> int:
    """Generate an inventory, time check and scan on it, print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=20000)
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args(argv)
    catalogue = load_catalogue(REPO / "levels")
    with tempfile.TemporaryDirectory() as folder:
        inventory = Path(folder) / "fleet.jsonl"
        write_inventory(inventory, args.assets, seed=3)
        spark = build_session(args.master)
        warm = Path(folder) / "warm.jsonl"
        write_inventory(warm, 50, seed=4)
        scan(
            spark,
            [str(warm)],
            Path(folder) / "w",
            targets={"*": TARGET},
            catalogue=catalogue,
        )
        start = time.perf_counter()
        report = check([str(inventory)], target=TARGET, catalogue=catalogue, workers=1)
        checked = time.perf_counter() - start
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
    if result.report.summary != report.summary:
        print("scan and check disagree on the summary", file=sys.stderr)
        return 1
    print(
        f"inventory: {args.assets} lines, {assets} assets; Spark master {args.master}"
    )
    print(f"check (1 process): {checked:8.2f} s  {assets / checked:10.0f} assets/s")
    print(f"scan  (Spark):     {scanned:8.2f} s  {assets / scanned:10.0f} assets/s")
    print(f"ratio scan/check:  {checked / scanned:8.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
