"""Scan throughput against ``check`` on all cores, and the driver's memory as fleets grow.

Run from the repository root (needs ``assetgate[spark]`` and Java)::

    python benchmarks/bench_scan.py [--sizes 1000000 10000000] [--compare 1000000]

Each inventory is ``gen_inventory.generate(n, seed=3)``, written once to
``.cache/bench/scan-<n>-seed3.jsonl`` (about 590 bytes a line: 10M lines are 5.9 GB)
and reused. Each size is scanned in a fresh interpreter (``--child``) on ``local[2]``
with **the default driver memory** (no ``spark.driver.memory``: a 1 GiB heap) and
``--report summary``, so that every measure is that scan's alone:

- the session is started and warmed with a 50-line scan before the timed scan, and
  the scan's seconds exclude both;
- the driver's memory: the Python driver's peak RSS (``ru_maxrss``), and the driver
  JVM's peak RSS (``VmHWM`` of ``/proc/PID/status``, the pid asked of the JVM itself)
  and the sum of its heap pools' peak use (``MemoryPoolMXBean.getPeakUsage``) with the
  heap's maximum. On ``local[2]`` the driver JVM also runs the executors, so its
  figures hold their work too; the Python workers are processes of their own.

On the ``--compare`` size, ``check`` on every core runs in a fresh interpreter
(``bench_check.py``'s runner, as a user runs it) on the same file, and the scan's
``summary.json`` must equal the summary of ``check``'s report (exit 1 otherwise).
Prints ratios; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

try:
    from benchmarks.bench_check import measure
    from benchmarks.gen_inventory import write_inventory
    from benchmarks.provenance import source_state
except ModuleNotFoundError:  # run as a script: benchmarks/ is the first path entry
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.bench_check import measure
    from benchmarks.gen_inventory import write_inventory
    from benchmarks.provenance import source_state

REPO: Final = Path(__file__).resolve().parent.parent
CACHE: Final = REPO / ".cache" / "bench"
TARGET: Final = "2.11.11"
SEED: Final = 3
MIB: Final = 1024 * 1024


def inventory(assets: int) -> Path:
    """The cached generated inventory of ``assets`` lines (written once)."""
    path = CACHE / f"scan-{assets}-seed{SEED}.jsonl"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        write_inventory(partial, assets, seed=SEED)
        partial.rename(path)
    return path


def child(path: Path, out: Path, master: str) -> dict[str, Any]:
    """One timed scan in this interpreter (``--child``); what it measured."""
    from assetgate.batch.job import build_session, scan
    from assetgate.catalogue.levels import load_catalogue

    catalogue = load_catalogue(REPO / "levels")
    start = time.perf_counter()
    spark = build_session(master)
    started = time.perf_counter() - start
    warm = out.parent / "warm.jsonl"
    write_inventory(warm, 50, seed=4)
    start = time.perf_counter()
    scan(
        spark,
        [str(warm)],
        out.parent / "warm",
        targets={"*": TARGET},
        catalogue=catalogue,
    )
    warmed = time.perf_counter() - start
    start = time.perf_counter()
    result = scan(
        spark,
        [str(path)],
        out,
        targets={"*": TARGET},
        catalogue=catalogue,
        report="summary",
    )
    scanned = time.perf_counter() - start
    jvm = _jvm_memory(spark)
    spark.stop()
    return {
        "assets": result.summary.summary.assets,
        "records": result.summary.summary.records,
        "session_seconds": started,
        "warm_seconds": warmed,
        "scan_seconds": scanned,
        "python_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        **jvm,
    }


def _jvm_memory(spark: Any) -> dict[str, float]:  # noqa: ANN401 (a classic session)
    """The driver JVM's peak RSS, its heap pools' peak use, and its heap's maximum."""
    jvm = spark._jvm  # noqa: SLF001 (the py4j gateway is the only way to ask the JVM)
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    status = Path(f"/proc/{pid}/status").read_text()
    hwm = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    factory = jvm.java.lang.management.ManagementFactory
    heap_peak = sum(
        pool.getPeakUsage().getUsed()
        for pool in factory.getMemoryPoolMXBeans()
        if str(pool.getType().toString()) == "Heap memory"
    )
    return {
        "jvm_peak_rss_mib": int(hwm.split()[1]) / 1024,
        "jvm_heap_peak_mib": heap_peak / MIB,
        "jvm_heap_max_mib": factory.getMemoryMXBean().getHeapMemoryUsage().getMax()
        / MIB,
    }


def _run_child(path: Path, out: Path, master: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", str(path), "--out", str(out)]
    command += ["--master", master]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        log = CACHE / f"{path.stem}.stderr.log"
        log.write_text(done.stderr + "\n--- standard output ---\n" + done.stdout)
        lines = done.stderr.splitlines()
        shown = [line for line in lines if not line.startswith(("\tat ", "\t..."))]
        sys.stderr.write("\n".join(shown[-60:]) + "\n")
        msg = f"scan of {path.name} failed (exit {done.returncode}); stderr in {log}"
        raise SystemExit(msg)
    measured: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return measured


def main(argv: list[str] | None = None) -> int:
    """Scan each size in a fresh interpreter; compare with check on one; print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument(
        "--compare", type=int, default=1_000_000, help="size to compare"
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child, args.out, args.master)))
        return 0
    print(
        f"{time.strftime('%Y-%m-%d')}; nproc {os.cpu_count()};"
        f" Python {platform.python_version()}; master {args.master}; {source_state()}"
    )
    same = True
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for size in sorted({*args.sizes, args.compare} - {0}):
            path = inventory(size)
            out = Path(folder) / f"scan-{size}"
            measured = _run_child(path, out, args.master)
            rows.append((size, path, measured))
            if size == args.compare:
                same = _compare(path, out, measured, Path(folder))
    print()
    print(
        "| lines | GB | assets | scan s | assets/s | Python driver peak RSS MiB |"
        " JVM peak RSS MiB | JVM heap peak / max MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, path, m in rows:
        print(
            f"| {size:,} | {path.stat().st_size / 1e9:.2f} | {m['assets']:,} |"
            f" {m['scan_seconds']:.1f} | {m['assets'] / m['scan_seconds']:,.0f} |"
            f" {m['python_peak_mib']:.0f} | {m['jvm_peak_rss_mib']:.0f} |"
            f" {m['jvm_heap_peak_mib']:.0f} / {m['jvm_heap_max_mib']:.0f} |"
        )
    print(f"summary equals check's: {'yes' if same else 'NO'}")
    return 0 if same else 1


def _compare(path: Path, out: Path, measured: dict[str, Any], folder: Path) -> bool:
    """Check on all cores on the same file: throughput ratio, and the same summary."""
    from assetgate.judge.rules import DEFAULT_FAIL_ON
    from assetgate.report.scan import summary_json
    from assetgate.run.aggregate import summary_of_report
    from assetgate.run.check import _usable_cores

    pooled, report = measure(path, TARGET, "cluster", None, folder / "check-all.json")
    expected = json.loads(summary_json(summary_of_report(report, DEFAULT_FAIL_ON)))
    del report
    written = json.loads((out / "summary.json").read_text())
    assets = measured["assets"]
    print(
        f"check ({_usable_cores()} cores): {pooled.seconds:8.2f} s"
        f"  {assets / pooled.seconds:10.0f} assets/s"
    )
    print(
        f"scan  (Spark):        {measured['scan_seconds']:8.2f} s"
        f"  {assets / measured['scan_seconds']:10.0f} assets/s"
        f"  (session start {measured['session_seconds']:.1f} s excluded)"
    )
    print(
        f"ratio scan/check all cores: {pooled.seconds / measured['scan_seconds']:.2f}x"
        "  (goal 0.85x)"
    )
    return bool(expected == written)


if __name__ == "__main__":
    raise SystemExit(main())
