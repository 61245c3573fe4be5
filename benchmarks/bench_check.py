"""Time ``assetgate.check`` on a generated fleet inventory, on one core and on all cores.

Run from the repository root::

    python benchmarks/bench_check.py [--assets 300000] [--target 2.11.11]
        [--mode cluster] [--seed 1] [--cache-dir .cache/bench]

The inventory comes from ``benchmarks/gen_inventory.py`` (canonical JSON Lines, about
600 bytes a line, about 1 % bad lines). It is written once per size, seed and
generator version under ``--cache-dir`` and reused after that. One run measures, on
the same file:

* (a) **baseline**: one process decodes every line with msgspec into a small Struct
  of the canonical record (the config kept as ``msgspec.Raw``, so it is skipped, not
  decoded). This is the floor cost of reading the file;
* (a2) **full decode**: one process decodes every whole line with ``msgspec.json``
  (config included, into builtins). This is the floor cost of reading the data, and
  the literal "bare single-process msgspec decode of the same lines";
* (b) ``check(path, workers=1)``: the whole check in this process;
* (c) ``check(path, workers=None)``: the check with one worker process per core.

Each is timed once, after the file has been read once so that it is in the page cache.
(b) and (c) each run in a fresh interpreter (``--one``, internal): the catalogue is
loaded before the clock starts, the peak RSS (``ru_maxrss``) is that run's alone, and
neither run pays for the other's live objects (a report of 300,000 verdicts left
alive makes the cyclic GC and the fork of the workers of the next run much slower).
Each writes ``msgspec.to_builtins`` of its report as JSON next to the inventory; the
parent reads both back and checks that they are identical, and prints the result.
The rate is input records (lines) per second for all three. Nothing here asserts on
timing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

try:
    from benchmarks import gen_inventory
    from benchmarks.provenance import source_state
except ModuleNotFoundError:  # run as a script: benchmarks/ is the first path entry
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks import gen_inventory
    from benchmarks.provenance import source_state

from assetgate.catalogue.levels import load_catalogue
from assetgate.run.check import Report, check

if TYPE_CHECKING:
    from assetgate.judge.gate import Mode

REPO: Final = Path(__file__).resolve().parents[1]


class CanonicalRecord(msgspec.Struct, frozen=True):
    """The canonical record with the config left raw: what the baseline decodes."""

    kind: str
    config: msgspec.Raw
    cluster: str = ""
    account: str = "$G"
    stream: str = ""
    name: str = ""
    created: str | None = None


def inventory_file(cache: Path, assets: int, seed: int) -> Path:
    """The cached inventory for this size, seed and generator version; made if absent."""
    generator = hashlib.sha256(Path(gen_inventory.__file__).read_bytes()).hexdigest()
    path = cache / f"inventory-{assets}-seed{seed}-gen{generator[:12]}.jsonl"
    if path.exists():
        print(f"reusing {path}")
        return path
    cache.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    start = time.perf_counter()
    size = gen_inventory.write_inventory(partial, assets, seed)
    partial.replace(path)
    took = time.perf_counter() - start
    print(f"generated {path} ({size:,} bytes) in {took:.1f} s")
    return path


def baseline(path: Path, *, whole: bool = False) -> tuple[int, int, float]:
    """(records, decoded, seconds): a bare msgspec decode of every line, one process.

    ``whole``: decode the whole line (config included) into builtins, instead of the
    canonical record with its config left raw.
    """
    decoder: msgspec.json.Decoder[Any] = (
        msgspec.json.Decoder() if whole else msgspec.json.Decoder(CanonicalRecord)
    )
    records = decoded = 0
    start = time.perf_counter()
    with path.open("rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            records += 1
            try:
                decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
            decoded += 1
    return records, decoded, time.perf_counter() - start


class RunResult(msgspec.Struct, frozen=True):
    """What one measured ``check`` run reports to the parent process."""

    seconds: float
    peak_rss_mib: float
    children_peak_rss_mib: float


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size so far, in MiB (``ru_maxrss`` is KiB on Linux)."""
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return resource.getrusage(who).ru_maxrss / scale


def run_one(
    path: Path, target: str, mode: Mode, workers: int | None, out: Path
) -> None:
    """In a fresh process: time one ``check``, write its report, print a RunResult."""
    catalogue = load_catalogue()
    start = time.perf_counter()
    report = check(
        [path], target=target, mode=mode, catalogue=catalogue, workers=workers
    )
    seconds = time.perf_counter() - start
    result = RunResult(
        seconds=seconds,
        peak_rss_mib=peak_rss_mib(),
        children_peak_rss_mib=peak_rss_mib(resource.RUSAGE_CHILDREN),
    )
    out.write_bytes(msgspec.json.encode(msgspec.to_builtins(report)))
    print(msgspec.json.encode(result).decode())


def measure(
    path: Path, target: str, mode: Mode, workers: int | None, out: Path
) -> tuple[RunResult, Report]:
    """Run :func:`run_one` in a fresh interpreter; its result and its report."""
    command = [sys.executable, __file__, "--one", str(workers), "--file", str(path)]
    command += ["--target", target, "--mode", mode, "--report-out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result = msgspec.json.decode(done.stdout.strip().splitlines()[-1], type=RunResult)
    return result, msgspec.json.decode(out.read_bytes(), type=Report)


def main(argv: list[str] | None = None) -> int:
    """Generate or reuse the inventory, time (a), (b) and (c), print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=int, default=300_000)
    parser.add_argument("--target", default="2.11.11")
    parser.add_argument("--mode", choices=("cluster", "single"), default="cluster")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".cache" / "bench")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: one timed run
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--report-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    mode: Mode = "single" if args.mode == "single" else "cluster"
    if args.one is not None:
        workers = None if args.one == "None" else int(args.one)
        run_one(args.file, args.target, mode, workers, args.report_out)
        return 0

    print(f"date {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}")
    print(
        f"nproc {os.cpu_count()}, Python {platform.python_version()},"
        f" msgspec {msgspec.__version__}, {source_state()}"
    )
    command = " ".join(["python", "benchmarks/bench_check.py", *sys.argv[1:]])
    print(f"command: {command}")
    path = inventory_file(args.cache_dir, args.assets, args.seed)
    baseline(path)  # warm the page cache
    records, decoded, t_a = baseline(path)
    _, decoded_a2, t_a2 = baseline(path, whole=True)
    rss_a = peak_rss_mib()
    stem = path.with_suffix("")
    run_b, report_b = measure(path, args.target, mode, 1, stem.with_suffix(".b.json"))
    run_c, report_c = measure(
        path, args.target, mode, None, stem.with_suffix(".c.json")
    )

    summary = report_b.summary
    print(
        f"\ninventory: {path.stat().st_size:,} bytes, {records:,} records"
        f" ({decoded:,} decoded by the baseline); check: {summary.assets:,} assets,"
        f" {summary.errors:,} errors, {summary.ignored:,} ignored,"
        f" {summary.overlaps:,} overlaps; target {args.target}, {mode} mode"
    )
    print(
        f"states: online {summary.online:,}, offline {summary.offline:,},"
        f" degraded {summary.degraded:,}, unloadable {summary.unloadable:,},"
        f" detached {summary.detached:,}, unavailable {summary.unavailable:,}"
    )
    t_b, t_c = run_b.seconds, run_c.seconds
    rates = {
        "a": records / t_a,
        "a2": records / t_a2,
        "b": records / t_b,
        "c": records / t_c,
    }
    print("\n| run | seconds | assets/s | peak RSS MiB |")
    print("|---|---:|---:|---:|")
    print(
        f"| (a) baseline: msgspec decode, 1 process | {t_a:.2f} | {rates['a']:,.0f}"
        f" | {rss_a:.0f} |"
    )
    print(
        f"| (a2) full decode: msgspec, whole line, 1 process | {t_a2:.2f}"
        f" | {rates['a2']:,.0f} | {rss_a:.0f} |"
    )
    print(
        f"| (b) check, workers=1 | {t_b:.2f} | {rates['b']:,.0f}"
        f" | {run_b.peak_rss_mib:.0f} |"
    )
    print(
        f"| (c) check, workers=None ({os.cpu_count()} cores) | {t_c:.2f}"
        f" | {rates['c']:,.0f} | {run_c.peak_rss_mib:.0f}"
        f" (+ workers, largest {run_c.children_peak_rss_mib:.0f}) |"
    )
    print(
        f"\nratios of throughput: (b)/(a) {rates['b'] / rates['a']:.3f},"
        f" (c)/(a) {rates['c'] / rates['a']:.3f},"
        f" (b)/(a2) {rates['b'] / rates['a2']:.3f},"
        f" (c)/(a2) {rates['c'] / rates['a2']:.3f},"
        f" (c)/(b) {rates['c'] / rates['b']:.2f}"
    )
    print(f"(a2) decoded {decoded_a2:,} lines")
    same = msgspec.to_builtins(report_b) == msgspec.to_builtins(report_c)
    print(
        "reports of (b) and (c) identical (msgspec.to_builtins):"
        f" {'yes' if same else 'NO'}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
