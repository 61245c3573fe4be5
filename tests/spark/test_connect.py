"""``scan --master sc://...`` through a real Spark Connect server gives ``check``'s report.

The server is started from the pyspark package on 127.0.0.1 (its Python workers run
this interpreter) and stopped by pid. The scan runs in a separate process, the Spark
Connect client, so it does not meet the tests' local session.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from tests.spark.conftest import skip_without_pyspark

skip_without_pyspark()

from assetgate.run.check import check  # noqa: E402 (after the pyspark skip)
from benchmarks.gen_inventory import generate  # noqa: E402 (after the pyspark skip)
from tests.conftest import FIXTURES  # noqa: E402 (after the pyspark skip)
from tests.spark.conftest import (  # noqa: E402 (after the pyspark skip)
    check_tables,
    daemon_env,
    free_port,
    java_missing,
    report_dict,
    run_job,
    stop_process,
    table_rows,
    wait_for_port,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from assetgate.catalogue.levels import Catalogue

pytestmark = pytest.mark.spark

DEMO: Final = FIXTURES / "inventories" / "demo.jsonl"
SERVER_CLASS: Final = "org.apache.spark.sql.connect.service.SparkConnectServer"


def _connect_missing() -> str | None:
    """Why a Spark Connect client cannot run here, or ``None``."""
    for module in ("grpc", "google.protobuf", "pyspark.sql.connect.session"):
        try:
            found = importlib.util.find_spec(module)
        except ImportError:
            found = None
        if found is None:
            return f"Spark Connect client missing ({module}): pip install 'assetgate[connect]'"
    return None


@pytest.fixture
def connect_server(tmp_path: Path) -> Iterator[str]:
    """A Spark Connect server (local[2]) on 127.0.0.1; yields its ``sc://`` URL."""
    missing = java_missing() or _connect_missing()
    if missing is not None:
        if os.environ.get("ASSETGATE_REQUIRE_SPARK") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    import pyspark

    submit = str(Path(pyspark.__file__).parent / "bin" / "spark-submit")
    env = daemon_env(SPARK_CONNECT_MODE="0")  # the server is a classic application
    port = free_port()
    log = tmp_path / "connect.log"
    command = [
        submit,
        "--class",
        SERVER_CLASS,
        "--name",
        "assetgate-connect-test",
        "--master",
        "local[2]",
        "--driver-memory",
        "1g",
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.shuffle.partitions=2",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env
        )
    try:
        wait_for_port(port, process, log)
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop_process(process)


def test_spark_connect_gives_the_check_report(
    connect_server: str, catalogue: Catalogue, tmp_path: Path
) -> None:
    """Through Spark Connect, scan writes check's report for demo and generated fleets."""
    fleet = tmp_path / "fleet.jsonl"
    fleet.write_bytes(b"".join(generate(600, seed=5, overlap_fraction=0.05)))
    for inventory in (DEMO, fleet):
        out = tmp_path / f"out-{inventory.stem}"
        done = run_job(inventory, out, connect_server)
        assert done.returncode == 1, done.stderr.decode(errors="replace")[-3000:]
        expected = check([str(inventory)], target="2.11.11", catalogue=catalogue)
        assert json.loads((out / "report.json").read_text()) == report_dict(expected)
        assert (out / "_SUCCESS").exists()
        # the Connect server's executors wrote the tables: check's rows, as sets
        tables = check_tables(expected)
        for table in ("assets", "errors", "ignored"):
            assert table_rows(out / table) == tables[table]
    # the generated fleet exercises bad lines, ignored records and overlaps
    assert expected.summary.errors > 0
    assert expected.summary.ignored > 0
    assert expected.summary.overlaps > 0
