"""What the server's config checks cost ``check``: one process, with and without them.

Run from the repository root::

    python benchmarks/bench_configchecks.py [--assets 300000] [--target 2.12.8]
        [--mode cluster] [--rounds 3]

The inventory is ``bench_check``'s generated fleet (cached under ``.cache/bench``).
Each round times ``check(path, workers=1)`` twice, each in a fresh interpreter, in
alternating order: once as shipped and once with the load-time checks switched off
(``configchecks.load_checker`` answering "no checks"). It prints the best time of
each, the ratio of throughputs (with/without) and the added microseconds per asset,
the figure issue #11 bounds (1 us per clean asset at 300k). The reports of both runs
must agree on every asset the checks leave alone; nothing here asserts on timing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

try:
    from benchmarks.bench_check import REPO, inventory_file
    from benchmarks.provenance import source_state
except ModuleNotFoundError:  # run as a script: benchmarks/ is the first path entry
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.bench_check import REPO, inventory_file
    from benchmarks.provenance import source_state

_CHILD: Final = """
import sys, time
from assetgate.judge import configchecks, gate
from assetgate.run.check import check
from assetgate.catalogue.levels import load_catalogue
path, target, mode, checks = sys.argv[1:5]
if checks == "off":
    gate.load_checker = lambda *args: None
catalogue = load_catalogue()
start = time.perf_counter()
report = check([path], target=target, mode=mode, catalogue=catalogue, workers=1)
took = time.perf_counter() - start
print(took, report.summary.assets, report.summary.unloadable)
"""


def timed(path: Path, target: str, mode: str, checks: str) -> tuple[float, int, int]:
    """Seconds, assets and unloadable assets of one fresh-interpreter check run."""
    command = [sys.executable, "-c", _CHILD, str(path), target, mode, checks]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    seconds, assets, unloadable = done.stdout.split()
    return float(seconds), int(assets), int(unloadable)


def main(argv: list[str] | None = None) -> int:
    """Time check with and without the config checks; print the difference."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=300_000)
    parser.add_argument("--target", default="2.12.8")
    # the generated fleet is a cluster's (R3 streams): a standalone server refuses to
    # load those (10074), so single mode would time refusals, not clean assets
    parser.add_argument("--mode", choices=("cluster", "single"), default="cluster")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".cache" / "bench")
    args = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, {source_state()}")
    path = inventory_file(args.cache_dir, args.assets, args.seed)
    best = {"on": float("inf"), "off": float("inf")}
    counts: dict[str, tuple[int, int]] = {}
    for round_no in range(args.rounds):
        order = ("on", "off") if round_no % 2 == 0 else ("off", "on")
        for checks in order:
            seconds, assets, unloadable = timed(path, args.target, args.mode, checks)
            best[checks] = min(best[checks], seconds)
            counts[checks] = (assets, unloadable)
            print(f"round {round_no + 1} checks {checks}: {seconds:.2f} s")
    assets = counts["on"][0]
    added_us = (best["on"] - best["off"]) / assets * 1e6
    print(
        f"\n{assets:,} assets, target {args.target}, {args.mode} mode;"
        f" unloadable with checks {counts['on'][1]:,}, without {counts['off'][1]:,}"
    )
    print(f"best: with checks {best['on']:.2f} s, without {best['off']:.2f} s")
    print(
        f"throughput with/without: {best['off'] / best['on']:.3f};"
        f" added per asset: {added_us:.2f} us"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
