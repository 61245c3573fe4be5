"""What ``check --target all`` costs against one target, measured in one run.

Run from the repository root::

    python benchmarks/bench_matrix.py [--assets 300000] [--target 2.12.8]
        [--mode cluster] [--rounds 1]

The inventory is ``bench_check``'s generated fleet (cached under ``.cache/bench``).
Each round times, each in a fresh interpreter and in alternating order, ``check`` on one
target and ``check_matrix`` over every release the catalogue distinguishes, both in one
process (``workers=1``; the matrix has no worker pool yet), with the cyclic garbage
collector on (``--gc on``, a library caller's default) or off (``--gc off``, as the
command line runs them). It prints the best time of each, the ratio (issue #14 bounds it at
3x) and the peak resident memory of each child. Nothing here asserts on timing.
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
import gc, resource, sys, time
from assetgate.run.check import check
from assetgate.catalogue.levels import load_catalogue
from assetgate.run.matrix import check_matrix
path, target, mode, what, collector = sys.argv[1:6]
if collector == "off":  # as the command line runs (cli.common.without_cyclic_gc)
    gc.disable()
catalogue = load_catalogue()
start = time.perf_counter()
if what == "one":
    result = check([path], target=target, mode=mode, catalogue=catalogue, workers=1)
    releases = 1
else:
    result = check_matrix([path], mode=mode, catalogue=catalogue)
    releases = len(result.releases)
took = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(took, releases, peak)
"""


def timed(path: Path, args: argparse.Namespace, what: str) -> tuple[float, int, int]:
    """Seconds, releases judged and peak RSS (KiB) of one fresh-interpreter run."""
    command = [
        sys.executable,
        "-c",
        _CHILD,
        str(path),
        args.target,
        args.mode,
        what,
        args.gc,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    seconds, releases, peak = done.stdout.split()
    return float(seconds), int(releases), int(peak)


def main(argv: list[str] | None = None) -> int:
    """Time one target and every release; print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=300_000)
    parser.add_argument("--target", default="2.12.8")
    parser.add_argument("--mode", choices=("cluster", "single"), default="cluster")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--gc",
        choices=("on", "off"),
        default="on",
        help="the cyclic garbage collector in both children (off: as the command "
        "line runs them; on: as a library caller does, and as earlier sessions measured)",
    )
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".cache" / "bench")
    args = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, {source_state()}")
    path = inventory_file(args.cache_dir, args.assets, args.seed)
    best = {"one": float("inf"), "all": float("inf")}
    for round_no in range(args.rounds):
        order = ("one", "all") if round_no % 2 == 0 else ("all", "one")
        for what in order:
            seconds, releases, peak = timed(path, args, what)
            best[what] = min(best[what], seconds)
            print(
                f"round {round_no + 1} {what}: {seconds:.2f} s, {releases} release(s), "
                f"peak RSS {peak / 1024:.0f} MiB"
            )
    ratio = best["all"] / best["one"]
    print(
        f"{args.assets:,} lines, {args.mode} mode, cyclic GC {args.gc}, one process: one target "
        f"{best['one']:.2f} s, --target all {best['all']:.2f} s: {ratio:.2f}x one target "
        "(issue #14 bound: 3x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
