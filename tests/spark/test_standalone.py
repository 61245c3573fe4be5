"""``scan --master spark://...`` on a real standalone master and worker gives the local result."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from tests.spark.conftest import skip_without_pyspark

skip_without_pyspark()

from assetgate.batch.job import scan  # noqa: E402 (after the pyspark skip)
from assetgate.run.check import check  # noqa: E402 (after the pyspark skip)
from benchmarks.gen_inventory import generate  # noqa: E402 (after the pyspark skip)
from tests.conftest import FIXTURES  # noqa: E402 (after the pyspark skip)
from tests.spark.conftest import (  # noqa: E402 (after the pyspark skip)
    STARTUP_SECONDS,
    check_tables,
    daemon_env,
    free_port,
    report_dict,
    run_job,
    stop_process,
    table_rows,
    wait_for_port,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import SparkSession

    from assetgate.catalogue.levels import Catalogue

pytestmark = pytest.mark.spark

DEMO: Final = str(FIXTURES / "inventories" / "demo.jsonl")


def _wait_for_worker(web_port: int, log: Path) -> None:
    """Wait (bounded) until the master's log says a worker registered."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if "Registering worker" in log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    pytest.fail(f"no worker registered (master web UI port {web_port})")


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[str]:
    """A standalone master and one worker on 127.0.0.1 (started from the pyspark package).

    Requested after ``spark`` by the test, so it is skipped (or fails) as that is.
    """
    import pyspark

    spark_class = str(Path(pyspark.__file__).parent / "bin" / "spark-class")
    env = daemon_env()
    port, web, worker_web = free_port(), free_port(), free_port()
    master_log, worker_log = tmp_path / "master.log", tmp_path / "worker.log"
    processes: list[subprocess.Popen[bytes]] = []
    try:
        with master_log.open("wb") as out:
            processes.append(
                subprocess.Popen(
                    [
                        spark_class,
                        "org.apache.spark.deploy.master.Master",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(port),
                        "--webui-port",
                        str(web),
                    ],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                )
            )
        wait_for_port(port, processes[0], master_log)
        with worker_log.open("wb") as out:
            processes.append(
                subprocess.Popen(
                    [
                        spark_class,
                        "org.apache.spark.deploy.worker.Worker",
                        f"spark://127.0.0.1:{port}",
                        "--host",
                        "127.0.0.1",
                        "--cores",
                        "1",
                        "--memory",
                        "1g",
                        "--webui-port",
                        str(worker_web),
                        "--work-dir",
                        str(tmp_path / "work"),
                    ],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                )
            )
        _wait_for_worker(web, master_log)
        yield f"spark://127.0.0.1:{port}"
    finally:
        for process in reversed(processes):
            stop_process(process)


def test_standalone_cluster_gives_the_local_result(
    spark: SparkSession, catalogue: Catalogue, standalone: str, tmp_path: Path
) -> None:
    """A scan submitted to a standalone master writes what the local session writes.

    The inventory is the demo plus a generated fleet with bad lines; the worker's
    executor writes the tables, which hold check's rows.
    """
    fleet = tmp_path / "fleet.jsonl"
    fleet.write_bytes(
        Path(DEMO).read_bytes()
        + b"".join(generate(400, seed=7, bad_fraction=0.05, overlap_fraction=0.05))
    )
    local = scan(
        spark,
        [str(fleet)],
        tmp_path / "local",
        targets={"*": "2.11.11"},
        catalogue=catalogue,
    )
    out = tmp_path / "remote"
    done = run_job(
        fleet,
        out,
        standalone,
        "spark.executor.memory=512m",
        "spark.cores.max=1",
        "spark.sql.shuffle.partitions=2",
    )
    assert done.returncode == 1, done.stderr.decode(errors="replace")[-3000:]
    expected = check([str(fleet)], target="2.11.11", catalogue=catalogue)
    assert expected.summary.errors > 0
    remote = json.loads((out / "report.json").read_text())
    assert local.report is not None
    assert remote == report_dict(local.report) == report_dict(expected)
    assert (out / "_SUCCESS").exists()
    assert json.loads((out / "summary.json").read_text()) == json.loads(
        (tmp_path / "local" / "summary.json").read_text()
    )
    tables = check_tables(expected)
    for table in ("assets", "errors", "ignored"):
        assert table_rows(out / table) == tables[table]
