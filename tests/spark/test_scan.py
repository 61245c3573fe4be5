"""``scan`` on local Spark gives what ``check`` gives, line numbers and all."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest
import structlog

from tests.spark.conftest import skip_without_pyspark

skip_without_pyspark()

from assetgate.batch import job, output  # noqa: E402 (after the pyspark skip)
from assetgate.batch.job import ScanError, scan  # noqa: E402 (after the pyspark skip)
from assetgate.cli.scan import submit_main  # noqa: E402 (after the pyspark skip)
from assetgate.run.check import check  # noqa: E402 (after the pyspark skip)
from tests.conftest import FIXTURES, REPO  # noqa: E402 (after the pyspark skip)
from tests.spark.conftest import (  # noqa: E402 (after the pyspark skip)
    check_tables,
    report_dict,
    table_rows,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from assetgate.batch.job import ScanResult
    from assetgate.catalogue.levels import Catalogue
    from assetgate.run.check import Report

pytestmark = pytest.mark.spark

DEMO: Final = str(FIXTURES / "inventories" / "demo.jsonl")
MIXED: Final = str(FIXTURES / "inventories" / "formats" / "mixed.jsonl")
TARGET: Final = "2.11.11"


def _full(result: ScanResult) -> Report:
    """The scan's whole check report (a small inventory's ``--report auto``)."""
    assert result.report is not None
    return result.report


@pytest.fixture(scope="module")
def demo_scan(
    spark: SparkSession, catalogue: Catalogue, tmp_path_factory: pytest.TempPathFactory
) -> ScanResult:
    """One scan of the demo and mixed-format inventories, shared by the tests below."""
    out = tmp_path_factory.mktemp("scan") / "out"
    return scan(spark, [DEMO, MIXED], out, targets={"*": TARGET}, catalogue=catalogue)


def test_report_equals_check(demo_scan: ScanResult, catalogue: Catalogue) -> None:
    """The scan's report is check's report: verdicts, errors, ignored, overlaps, digests."""
    expected = check([DEMO, MIXED], target=TARGET, catalogue=catalogue)
    assert report_dict(_full(demo_scan)) == report_dict(expected)


def test_assets_parquet_has_check_fields_and_lines(
    demo_scan: ScanResult, catalogue: Catalogue
) -> None:
    """assets/ holds one row per verdict, check's JSON fields plus source_file and line."""
    expected = check([DEMO, MIXED], target=TARGET, catalogue=catalogue)
    rows = table_rows(Path(demo_scan.out) / "assets")
    assert rows == check_tables(expected)["assets"]
    assert len(rows) == expected.summary.assets


def test_errors_and_ignored_parquet_name_file_and_line(
    demo_scan: ScanResult, catalogue: Catalogue
) -> None:
    """errors/ and ignored/ rows carry check's words, the file and 1-based line."""
    expected = check([DEMO, MIXED], target=TARGET, catalogue=catalogue)
    wanted = check_tables(expected)
    for table in ("errors", "ignored"):
        rows = table_rows(Path(demo_scan.out) / table)
        assert rows == wanted[table]
        assert len(rows) > 0


def test_assets_and_overlaps_are_partitioned_by_cluster(demo_scan: ScanResult) -> None:
    """assets/ has one cluster=NAME folder per cluster (Spark's default one for "")."""
    folders = sorted(
        p.name for p in (Path(demo_scan.out) / "assets").iterdir() if p.is_dir()
    )
    assert folders == [
        "cluster=__HIVE_DEFAULT_PARTITION__",
        "cluster=east",
        "cluster=west",
    ]


def test_summary_json_is_checks_summary(
    demo_scan: ScanResult, catalogue: Catalogue
) -> None:
    """summary.json holds check's summary, target and catalogue digest, and per-account counts."""
    expected = check([DEMO, MIXED], target=TARGET, catalogue=catalogue)
    body = json.loads((Path(demo_scan.out) / "summary.json").read_text())
    assert body["summary"] == report_dict(expected)["summary"]
    assert body["target"] == report_dict(expected)["target"]
    assert body["catalogue"]["digest"] == catalogue.digest
    per_account = sum(
        sum(v for k, v in row.items() if k not in {"cluster", "account"})
        for row in body["accounts"]
    )
    assert per_account == expected.summary.assets
    assert (
        (Path(demo_scan.out) / "summary.md").read_text().startswith("## assetgate scan")
    )


def test_summary_names_the_verdict_the_outcomes_and_the_main_finding(
    demo_scan: ScanResult, catalogue: Catalogue
) -> None:
    """summary.json/.md carry check's verdict, cluster outcomes and first failing finding."""
    from assetgate.report.common import verdict_line
    from assetgate.run.check import DEFAULT_FAIL_ON, finding_rules

    expected = check([DEMO, MIXED], target=TARGET, catalogue=catalogue)
    body = json.loads((Path(demo_scan.out) / "summary.json").read_text())
    rules = finding_rules(expected, DEFAULT_FAIL_ON)
    assert body["verdict"] == verdict_line(expected)
    assert body["failing"] == len(rules) > 0
    assert body["outcomes"] == report_dict(expected)["clusters"]
    east = next(c for c in expected.clusters if c.outcome == "crash")
    assert body["main_finding"] == {"finding": rules[0], "reason": east.reason}
    assert rules[0] == f"crash: {east.cluster}"
    markdown = (Path(demo_scan.out) / "summary.md").read_text()
    assert (
        f"**Failing findings:** {len(rules)}; the first: crash: {east.cluster}"
        in markdown
    )
    assert "| cluster | target | outcome | reason | caused by |" in markdown


def test_report_file_is_checks_rendering(demo_scan: ScanResult) -> None:
    """The report in the requested format is written to DIR and returned as check prints it."""
    from assetgate.report.formats import render

    text = (Path(demo_scan.out) / "report.txt").read_text(encoding="utf-8")
    assert text == demo_scan.text == render(_full(demo_scan), "text")


def _generated(path: Path) -> Path:
    """A few thousand generated lines: bad ones (invalid UTF-8 too), blanks, a list page, `>`."""
    from benchmarks.gen_inventory import generate

    rng = random.Random(5)  # noqa: S311 (test data, not secrets)
    lines = list(generate(3000, seed=11, bad_fraction=0.03, accounts=6))
    first = json.loads(lines[0])
    catch_all = {
        "cluster": first["cluster"],
        "account": first["account"],
        "kind": "stream",
        "stream": "ALL",
        "name": "ALL",
        # a catch-all stream the server stores only with no_ack (checkStreamCfg)
        "config": {"name": "ALL", "subjects": [">"], "no_ack": True},
    }
    extra = [
        b"\n",
        b"   \r\n",
        json.dumps(catch_all).encode() + b"\n",
        b'{"kind":"kv","config":{"bucket":"b"}}\n',
        b'[{"kind":"stream","config":{"name":"A1"}},"note"]\n',
        b"not json\n",
        b'{"kind":"stream","config":{"name":"\xff\xfe not UTF-8"}}\n',
    ]
    for item in extra:
        lines.insert(rng.randrange(1, len(lines)), item)
    path.write_bytes(b"".join(lines))
    return path


def test_generated_inventory_split_in_blocks_equals_check(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """On a file read in many splits, line numbers, verdicts and overlaps equal check's."""
    source = _generated(tmp_path / "fleet.jsonl")
    targets = {"*": TARGET, "east": "2.12.8"}
    spark.conf.set("spark.sql.files.maxPartitionBytes", "65536")
    try:
        blocks = (
            spark.read.text(str(source))
            .select("_metadata.file_block_start")
            .distinct()
            .count()
        )
        result = scan(
            spark, [str(source)], tmp_path / "out", targets=targets, catalogue=catalogue
        )
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    expected = check([str(source)], target=targets, catalogue=catalogue)
    assert blocks > 5
    assert expected.summary.overlaps > 0
    assert expected.summary.errors > 0
    assert report_dict(_full(result)) == report_dict(expected)
    hubs = table_rows(tmp_path / "out" / "overlaps")
    tables = check_tables(expected)
    for table in ("assets", "errors", "ignored"):
        assert table_rows(tmp_path / "out" / table) == tables[table]
    assert sum(row["pairs"] for row in hubs) == expected.summary.overlaps
    catch_all = [row for row in hubs if row["stream"] == "ALL"]
    assert len(catch_all) == 1
    assert (
        sum(1 for o in expected.overlaps if "ALL" in o.streams) == catch_all[0]["pairs"]
    )


def test_rerun_replaces_output_and_success_is_last(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """A rerun replaces the previous output; _SUCCESS is the newest file; no temp dir stays."""
    out = tmp_path / "out"
    scan(spark, [MIXED], out, targets={"*": TARGET}, catalogue=catalogue)
    (out / "stale.txt").write_text("from the first run")
    scan(spark, [MIXED], out, targets={"*": TARGET}, catalogue=catalogue, fmt="json")
    files = [p for p in out.rglob("*") if p.is_file()]
    newest = max(files, key=lambda p: p.stat().st_mtime_ns)
    assert not (out / "stale.txt").exists()
    assert (out / "report.json").exists()
    assert not (out / "report.txt").exists()
    assert newest.stat().st_mtime_ns == (out / "_SUCCESS").stat().st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_failed_run_keeps_previous_output(
    spark: SparkSession,
    catalogue: Catalogue,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run that fails before committing leaves the previous output and no temp dir."""
    out = tmp_path / "out"
    scan(spark, [MIXED], out, targets={"*": TARGET}, catalogue=catalogue)
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))

    def broken(*_: object, **__: object) -> None:
        raise ScanError("lines or records not accounted for: simulated")

    monkeypatch.setattr(job, "_account", broken)
    with pytest.raises(ScanError, match="simulated"):
        scan(spark, [DEMO], out, targets={"*": TARGET}, catalogue=catalogue)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_split_counted_differently_refuses_the_run(
    spark: SparkSession,
    catalogue: Catalogue,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Line numbers rest on the first pass's counts; if judging saw other rows, no output."""
    counted = job._count_lines

    def one_line_more(spark: SparkSession, paths: list[str]) -> dict[Any, int]:
        counts = counted(spark, paths)
        first = min(counts)
        return {**counts, first: counts[first] + 1}

    monkeypatch.setattr(job, "_count_lines", one_line_more)
    with pytest.raises(ScanError, match="lines or records not accounted for"):
        scan(
            spark, [MIXED], tmp_path / "out", targets={"*": TARGET}, catalogue=catalogue
        )
    assert list(tmp_path.iterdir()) == []


def test_refuses_to_replace_a_directory_that_is_not_a_scan(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """An existing non-empty DIR without _SUCCESS is left alone and reported."""
    (tmp_path / "keep.txt").write_text("not a scan")
    with pytest.raises(ScanError, match="not a scan's output"):
        scan(spark, [MIXED], tmp_path, targets={"*": TARGET}, catalogue=catalogue)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_submit_main_writes_report_and_exit_code(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The spark-submit entry point scans with the CLI flags and exits 1 on findings."""
    out = tmp_path / "out"
    try:
        code = submit_main(
            [
                DEMO,
                "--target",
                TARGET,
                "--out",
                str(out),
                "--format",
                "json",
                "--levels",
                str(REPO / "levels"),
            ]
        )
    finally:
        structlog.reset_defaults()  # main configured logging to pytest's stderr
    printed = json.loads(capsys.readouterr().out)
    assert code == 1
    assert printed == json.loads((out / "report.json").read_text())
    assert (out / "_SUCCESS").exists()
    assert spark.range(1).count() == 1  # the shared session was not stopped


def test_accept_marks_what_check_marks(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """--accept gives check's accepted verdicts, overlaps, acceptances and summary."""
    source = _generated(tmp_path / "fleet.jsonl")
    accept = ["*:*/*/ALL", "overlap:*", "unloadable:*", "stamp_missing:*/*/S1*"]
    out = tmp_path / "out"
    result = scan(
        spark,
        [str(source)],
        out,
        targets={"*": TARGET},
        catalogue=catalogue,
        accept=accept,
    )
    expected = check([str(source)], target=TARGET, catalogue=catalogue, accept=accept)
    assert expected.summary.accepted > 0
    assert report_dict(_full(result)) == report_dict(expected)
    assert table_rows(out / "assets") == check_tables(expected)["assets"]


def test_malformed_accept_is_refused_before_spark_runs(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """A malformed acceptance raises check's ValueError and writes nothing."""
    with pytest.raises(ValueError, match="invalid acceptance"):
        scan(
            spark,
            [MIXED],
            tmp_path / "out",
            targets={"*": TARGET},
            catalogue=catalogue,
            accept=["nonsense:*"],
        )
    assert list(tmp_path.iterdir()) == []


def test_down_cluster_is_checks_outcome(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """On 2.12.8 the demo's east cluster goes down: scan reports check's clusters."""
    out = tmp_path / "out"
    result = scan(spark, [DEMO], out, targets={"*": "2.12.8"}, catalogue=catalogue)
    expected = check([DEMO], target="2.12.8", catalogue=catalogue)
    assert [(c.cluster, c.outcome) for c in expected.clusters] == [
        ("east", "meta_unavailable"),
        ("west", "ok"),
    ]
    assert report_dict(_full(result)) == report_dict(expected)
    assert table_rows(out / "assets") == check_tables(expected)["assets"]


def test_empty_and_blank_inputs_give_an_empty_report(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """No lines, or only blank ones: check's empty report and empty tables, committed."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n  \r\n\t\n")
    inputs = [str(empty), str(blank)]
    result = scan(
        spark, inputs, tmp_path / "out", targets={"*": TARGET}, catalogue=catalogue
    )
    expected = check(inputs, target=TARGET, catalogue=catalogue)
    assert report_dict(_full(result)) == report_dict(expected)
    assert expected.summary.records == 0
    for folder in ("assets", "errors", "ignored", "overlaps"):
        assert table_rows(tmp_path / "out" / folder) == []
    assert (tmp_path / "out" / "_SUCCESS").exists()


def test_scan_prints_no_jvm_or_spark_banner(tmp_path: Path) -> None:
    """`assetgate scan` in a fresh process shows none of the JVM's or Spark's start lines."""
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assetgate",
            "scan",
            DEMO,
            "--target",
            TARGET,
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # east crashes on 2.11.11
    assert "verdict:" in done.stdout
    shown = [line for line in done.stderr.splitlines() if line.startswith(job.BANNERS)]
    assert shown == []
    assert all(line.startswith("{") for line in done.stderr.splitlines()), done.stderr


def test_banner_filter_forwards_every_other_line(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Inside the filter a child's banner lines are dropped and its other lines still shown."""
    import subprocess
    import sys
    import time

    lines = [
        "WARNING: Using incubator modules: jdk.incubator.vector",
        "Exception in thread main: real trouble",
        'Setting default log level to "WARN".',
    ]
    child = f"import sys; sys.stderr.write({chr(10).join(lines)!r} + '\\n')"
    with job._banners_filtered():
        subprocess.run([sys.executable, "-c", child], check=True)
    deadline = time.monotonic() + 10
    err = ""
    while "real trouble" not in err and time.monotonic() < deadline:
        time.sleep(0.05)
        err += capfd.readouterr().err
    assert err == "Exception in thread main: real trouble\n"


def test_stale_work_folders_of_dead_scans_are_removed(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """A killed scan's work folders go at the next run; a live owner's and others stay."""
    import os
    import subprocess
    import sys

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone = int(dead.stdout)
    host = output._HOST
    old = 1_000_000_000  # 2001: older than any run
    stale = [
        tmp_path / f".out.tmp-{host}-{gone}-{'a' * 12}",
        tmp_path / f".out.old-{host}-{gone}-{'b' * 12}",
    ]
    kept = [
        tmp_path / f".out.tmp-{host}-{os.getpid()}-{'c' * 12}",  # alive: this process
        tmp_path / f".out.tmp-00000000-{gone}-{'d' * 12}",  # another host's
        tmp_path / ".out.tmp-eeeeeeeeeeee",  # no owner in its name
        tmp_path / f".other.tmp-{host}-{gone}-{'f' * 12}",  # another output's
    ]
    for folder in stale + kept:
        folder.mkdir()
        (folder / "part-0.parquet").write_bytes(b"partial")
        os.utime(folder, (old, old))
    scan(spark, [MIXED], tmp_path / "out", targets={"*": TARGET}, catalogue=catalogue)
    assert [folder.exists() for folder in stale] == [False, False]
    assert [folder.exists() for folder in kept] == [True] * len(kept)
    assert (tmp_path / "out" / "_SUCCESS").exists()


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _command_line(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""


def test_a_jvm_that_dies_mid_scan_ends_the_command_with_exit_2(tmp_path: Path) -> None:
    """Killing the driver JVM while Python workers judge ends `scan` at once: exit 2, one line."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from benchmarks.gen_inventory import generate

    fleet = tmp_path / "fleet.jsonl"
    fleet.write_bytes(b"".join(generate(150_000, seed=2)))
    command = [sys.executable, "-m", "assetgate", "scan", str(fleet)]
    command += ["--target", TARGET, "--out", str(tmp_path / "out")]
    scan_process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        jvm = workers = None
        deadline = time.monotonic() + 120
        while workers is None and time.monotonic() < deadline:
            below = _descendants(scan_process.pid)
            jvm = next((p for p in below if b"SparkSubmit" in _command_line(p)), None)
            workers = next(
                (p for p in below if b"pyspark.daemon" in _command_line(p)), None
            )
            time.sleep(0.1)
        assert jvm is not None, "no JVM"
        assert workers is not None, "the Python workers never started"
        os.kill(jvm, signal.SIGKILL)
        _, err = scan_process.communicate(timeout=120)
    finally:
        if scan_process.poll() is None:
            scan_process.kill()
            scan_process.wait()
    assert scan_process.returncode == 2
    assert err.decode().splitlines()[-1] == (
        "assetgate: error: the scan's Spark JVM stopped before the job ended (out of "
        "memory or killed; docs/spark.md says how to give the driver more memory)"
    )
    assert b"Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_summary_report_gives_the_full_reports_summary_and_tables(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """--report summary (no report on the driver) writes full's summary.json and check's rows."""
    source = _generated(tmp_path / "fleet.jsonl")
    targets = {"*": TARGET, "east": "2.12.8"}
    accept = ["overlap:*/*/ALL", "stamp_missing:*/*/S1*", "record-error:*:4*"]
    runs = {
        report: scan(
            spark,
            [str(source)],
            tmp_path / report,
            targets=targets,
            catalogue=catalogue,
            accept=accept,
            report=report,
        )
        for report in ("full", "summary")
    }
    expected = check([str(source)], target=targets, catalogue=catalogue, accept=accept)
    assert runs["summary"].report is None
    assert report_dict(_full(runs["full"])) == report_dict(expected)
    bodies = [json.loads((tmp_path / r / "summary.json").read_text()) for r in runs]
    assert bodies[0] == bodies[1]
    assert bodies[0]["failing"] > 0
    assert bodies[0]["summary"]["accepted"] > 0
    assert set(bodies[0]["findings"]) >= {"stamp_missing"}
    tables = check_tables(expected)
    for table in ("assets", "errors", "ignored"):
        assert table_rows(tmp_path / "summary" / table) == tables[table]
    hubs = table_rows(tmp_path / "summary" / "overlaps")
    assert sum(row["pairs"] for row in hubs) == expected.summary.overlaps > 0
    text = (tmp_path / "summary" / "report.txt").read_text()
    assert text == runs["summary"].text
    assert "report: summary" in text
    assert text.rstrip().endswith(bodies[0]["verdict"])


def test_auto_keeps_only_the_summary_above_its_line_limit(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """--report auto holds check's report up to the limit, and only aggregates above it."""
    small = scan(
        spark, [MIXED], tmp_path / "a", targets={"*": TARGET}, catalogue=catalogue
    )
    large = scan(
        spark,
        [MIXED],
        tmp_path / "b",
        targets={"*": TARGET},
        catalogue=catalogue,
        full_report_lines=3,
    )
    assert small.report is not None
    assert large.report is None
    assert large.summary == small.summary


def test_summary_report_refuses_a_format_that_lists_every_finding(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """SARIF needs every finding: with only a summary the scan refuses and writes nothing."""
    for report, limit in (("summary", 200_000), ("auto", 3)):
        with pytest.raises(ScanError, match="--format sarif lists every finding"):
            scan(
                spark,
                [MIXED],
                tmp_path / "out",
                targets={"*": TARGET},
                catalogue=catalogue,
                fmt="sarif",
                report=report,
                full_report_lines=limit,
            )
    assert list(tmp_path.iterdir()) == []


def test_uri_output_is_written_in_place_and_replaced(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """A file:// URI goes through Hadoop's filesystem: marker, tables, _SUCCESS last."""
    out = tmp_path / "out"
    uri = out.as_uri()
    first = scan(spark, [DEMO], uri, targets={"*": TARGET}, catalogue=catalogue)
    expected = check([DEMO], target=TARGET, catalogue=catalogue)
    assert first.out == uri
    assert table_rows(out / "assets") == check_tables(expected)["assets"]
    assert (out / "_assetgate").exists()
    files = [p for p in out.rglob("*") if p.is_file() and not p.name.startswith(".")]
    newest = max(files, key=lambda p: p.stat().st_mtime_ns)
    assert newest.name == "_SUCCESS"
    assert newest.parent == out
    scan(spark, [MIXED], uri, targets={"*": TARGET}, catalogue=catalogue, fmt="json")
    assert not (out / "report.txt").exists()
    assert (out / "report.json").exists()
    expected = check([MIXED], target=TARGET, catalogue=catalogue)
    assert table_rows(out / "assets") == check_tables(expected)["assets"]


def test_failed_uri_run_leaves_no_success(
    spark: SparkSession,
    catalogue: Catalogue,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A URI run that fails after it started leaves a folder that does not look complete."""
    out = tmp_path / "out"
    scan(spark, [MIXED], out.as_uri(), targets={"*": TARGET}, catalogue=catalogue)

    def broken(*_: object, **__: object) -> None:
        raise ScanError("lines or records not accounted for: simulated")

    monkeypatch.setattr(job, "_account", broken)
    with pytest.raises(ScanError, match="simulated"):
        scan(spark, [DEMO], out.as_uri(), targets={"*": TARGET}, catalogue=catalogue)
    assert not (out / "_SUCCESS").exists()
    assert (out / "_assetgate").exists()


def test_an_output_that_is_a_file_is_refused(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """--out naming a file is a ScanError (exit 2 at the command line), the file kept."""
    taken = tmp_path / "taken"
    taken.write_text("keep")
    with pytest.raises(ScanError, match="output is a file"):
        scan(spark, [MIXED], taken, targets={"*": TARGET}, catalogue=catalogue)
    assert taken.read_text() == "keep"


def test_uri_output_refuses_a_folder_that_is_not_a_scan(
    spark: SparkSession, catalogue: Catalogue, tmp_path: Path
) -> None:
    """A non-empty folder without _SUCCESS or _assetgate is not replaced through a URI."""
    (tmp_path / "keep.txt").write_text("not a scan")
    with pytest.raises(ScanError, match="not a scan's output"):
        scan(
            spark,
            [MIXED],
            tmp_path.as_uri(),
            targets={"*": TARGET},
            catalogue=catalogue,
        )
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
