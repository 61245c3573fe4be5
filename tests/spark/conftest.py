"""The session-scoped local SparkSession of the Spark tests, and their shared helpers.

Tests here are marked ``spark``. Without Java they are skipped with a reason, unless
``ASSETGATE_REQUIRE_SPARK=1`` (CI), which turns the skip into a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec
import pytest

from tests.conftest import REPO
from tests.support.natsserver import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import SparkSession

__all__ = [
    "FAST_CONF",
    "STARTUP_SECONDS",
    "check_tables",
    "daemon_env",
    "free_port",
    "java_missing",
    "report_dict",
    "run_job",
    "skip_without_pyspark",
    "sorted_rows",
    "stop_process",
    "table_rows",
    "wait_for_port",
]

STARTUP_SECONDS: Final = 60.0
JOB_SECONDS: Final = 240.0
FAST_CONF: Final = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.adaptive.enabled": "false",
}


def java_missing() -> str | None:
    """Why Spark cannot start here (no Java, no pyspark), or ``None``."""
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (
        home and Path(home, "bin", "java").exists()
    ):
        return "Java is not installed (Spark needs a JVM; set JAVA_HOME or put java on PATH)"
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'assetgate[spark]')"
    return None


def skip_without_pyspark() -> None:
    """Skip the calling test module when pyspark is missing (fail if CI requires Spark)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        reason = "pyspark is not installed (pip install 'assetgate[spark]')"
        if os.environ.get("ASSETGATE_REQUIRE_SPARK") == "1":
            raise
        pytest.skip(reason, allow_module_level=True)


def table_rows(path: Path) -> list[dict[str, Any]]:
    """A scan's Parquet table (a folder, maybe partitioned by cluster) as sorted rows.

    The ``cluster`` partition comes back as the string it was (``""`` for
    ``__HIVE_DEFAULT_PARTITION__``); rows are sorted by their JSON form, so that two
    tables compare as multisets.
    """
    import pyarrow as pa
    import pyarrow.dataset as ds

    partitioned = any(p.name.startswith("cluster=") for p in path.iterdir())
    partitioning = (
        ds.partitioning(pa.schema([("cluster", pa.string())]), flavor="hive")
        if partitioned
        else None
    )
    table = ds.dataset(path, format="parquet", partitioning=partitioning).to_table()
    rows = table.to_pylist()
    for row in rows:
        if "cluster" in row and row["cluster"] is None:
            row["cluster"] = ""
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True, default=str))


def sorted_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in :func:`table_rows`' order."""
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True, default=str))


def check_tables(report: msgspec.Struct) -> dict[str, list[dict[str, Any]]]:
    """The rows a scan's ``assets``/``errors``/``ignored`` tables must hold.

    ``check --format json``'s entries plus ``source_file``/``line``, sorted as
    :func:`table_rows` sorts them.
    """
    data = report_dict(report)

    def where(source: str) -> dict[str, Any]:
        name, _, line = source.partition("#")[0].rpartition(":")
        return {"source_file": name, "line": int(line)}

    return {
        "assets": sorted_rows([{**a, **where(a["source"])} for a in data["assets"]]),
        "errors": sorted_rows(
            [
                {k: e[k] for k in ("source", "message", "retriable")}
                | where(e["source"])
                for e in data["errors"]
            ]
        ),
        "ignored": sorted_rows(
            [
                {k: i[k] for k in ("source", "reason")} | where(i["source"])
                for i in data["ignored"]
            ]
        ),
    }


def report_dict(report: msgspec.Struct) -> dict[str, Any]:
    """A report as the plain data of its JSON form (tuples become lists)."""
    data: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(report))
    return data


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """A quiet local[2] session tuned for tiny data (2 shuffle partitions, no UI)."""
    reason = java_missing()
    if reason is not None:
        if os.environ.get("ASSETGATE_REQUIRE_SPARK") == "1":
            pytest.fail(f"ASSETGATE_REQUIRE_SPARK=1 but {reason}")
        pytest.skip(reason)
    from assetgate.batch.job import build_session

    session = build_session("local[2]", FAST_CONF)
    yield session
    session.stop()


def daemon_env(**extra: str) -> dict[str, str]:
    """The environment of a Spark daemon started from the pyspark package on loopback.

    Its Python workers run this interpreter; a ``SPARK_HOME`` of the caller's would
    point the scripts elsewhere.
    """
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        **extra,
    }
    env.pop("SPARK_HOME", None)
    return env


def run_job(
    inventory: str | Path, out: Path, master: str, *conf: str
) -> subprocess.CompletedProcess[bytes]:
    """``python -m assetgate.batch.job INVENTORY`` against 2.11.11 (JSON report) on ``master``.

    ``conf``: ``KEY=VALUE`` Spark settings, each passed as ``--conf``.
    """
    command = [sys.executable, "-m", "assetgate.batch.job", str(inventory)]
    command += ["--target", "2.11.11", "--out", str(out), "--format", "json"]
    command += ["--master", master, "--levels", str(REPO / "levels")]
    for setting in conf:
        command += ["--conf", setting]
    return subprocess.run(
        command, capture_output=True, timeout=JOB_SECONDS, cwd=REPO, check=False
    )


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait (bounded) until something listens on the port; fail with the daemon's log."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"Spark daemon exited: {log.read_text(errors='replace')[-2000:]}"
            )
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    pytest.fail(
        f"Spark daemon not listening on {port}: {log.read_text(errors='replace')[-2000:]}"
    )


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate a daemon started by a test, then kill it (both bounded)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)
