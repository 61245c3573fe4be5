"""The one-pass line judge (``LineJudge``) against the record-by-record path.

``check`` reads, judges and hashes a plain canonical line in one pass; every other
line goes to the inventory reader and ``judge_record``. These tests hold the one pass
to the general path, line by line and report by report, for every release and mode,
over the fixtures and a generated fleet.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

import msgspec
import pytest

from assetgate.inventory.read import line_data, read_inventory, read_records
from assetgate.run.check import check
from assetgate.run.collect import DEFAULT_CLUSTER, Collector, LineJudge, judge_record
from benchmarks.gen_inventory import generate
from tests.conftest import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.judge.gate import Mode

MODES: Final[tuple[Mode, ...]] = ("single", "cluster")


def _stream(name: str, replicas: int) -> bytes:
    config = {"name": name, "subjects": [f"{name.lower()}.>"], "num_replicas": replicas}
    record = {"kind": "stream", "cluster": "c1", "account": "A", "config": config}
    return json.dumps(record).encode() + b"\n"


def _consumer(stream: str, name: str) -> bytes:
    config = {"durable_name": name, "ack_policy": "explicit"}
    record = {
        "kind": "consumer",
        "cluster": "c1",
        "account": "A",
        "stream": stream,
        "config": config,
    }
    return json.dumps(record).encode() + b"\n"


# a stream listed twice with other replica counts, and consumers before and after it:
# each consumer without its own count takes the first record's
REPLICAS: Final = (
    _consumer("ORD", "early")
    + _stream("ORD", 3)
    + _consumer("ORD", "mid")
    + _stream("ORD", 1)
    + _consumer("ORD", "late")
    + _consumer("NONE", "orphan")
)


def _lines() -> list[bytes]:
    """The fixture inventories' lines, a generated fleet and the replica cases."""
    lines = [
        line
        for path in sorted((FIXTURES / "inventories").glob("*.jsonl"))
        for line in path.read_bytes().splitlines(keepends=True)
    ]
    lines += generate(1500, seed=11, bad_fraction=0.02)
    lines += REPLICAS.splitlines(keepends=True)
    return lines


LINES: Final = _lines()


@pytest.mark.parametrize("mode", MODES)
def test_a_plain_line_is_judged_as_its_record(catalogue: Catalogue, mode: Mode) -> None:
    """A line the one pass takes gives the record's own judgement and hash, on every release."""
    taken = 0
    for release in catalogue.releases():
        profiles = {DEFAULT_CLUSTER: catalogue.server(release)}
        judge_line = LineJudge(profiles, mode, catalogue)
        for number, line in enumerate(LINES, 1):
            data = line_data(line, first=False)
            if not data:
                continue
            source = f"f:{number}"
            expected = [
                judge_record(record, profiles, mode, catalogue)
                for record in read_records(data, source)
            ]
            assert list(judge_line(data, source)) == expected, (release, line)
            if judge_line.plain(data, source) is not None:
                taken += 1
                assert len(expected) == 1
    assert taken > len(LINES) * len(catalogue.releases()) // 2  # the common case


def _by_record(path: Path, target: str, mode: Mode, catalogue: Catalogue) -> object:
    """The report of ``path`` judged record by record (no one-pass lines)."""
    collector = Collector({DEFAULT_CLUSTER: catalogue.server(target)}, mode, catalogue)
    for record in read_inventory([path]):
        collector.add(record)
    return msgspec.to_builtins(collector.report({DEFAULT_CLUSTER: target}, []))


@pytest.mark.parametrize("mode", MODES)
def test_check_reports_as_record_by_record(
    catalogue: Catalogue, mode: Mode, tmp_path: Path
) -> None:
    """``check``'s one-pass reading gives the record-by-record report, on every release."""
    path = tmp_path / "fleet.jsonl"
    path.write_bytes(b"".join(LINES))
    for release in catalogue.releases():
        report = check([path], target=release, mode=mode, catalogue=catalogue)
        assert msgspec.to_builtins(report) == _by_record(
            path, release, mode, catalogue
        ), release


def test_consumers_take_the_first_stream_records_replicas(
    catalogue: Catalogue, tmp_path: Path
) -> None:
    """A consumer without a replica count gets its stream's first record's, wherever listed."""
    path = tmp_path / "replicas.jsonl"
    path.write_bytes(REPLICAS)
    report = check([path], target="2.12.8", mode="single", catalogue=catalogue)
    replicas = {v.name: v.replicas for v in report.assets if v.kind == "consumer"}
    assert replicas == {"early": 3, "mid": 3, "late": 3, "orphan": None}


def test_every_record_is_counted(catalogue: Catalogue, tmp_path: Path) -> None:
    """Records read in one pass are counted: records = assets + errors + ignored."""
    path = tmp_path / "fleet.jsonl"
    path.write_bytes(b"".join(LINES))
    summary = check([path], target="2.11.11", catalogue=catalogue).summary
    assert summary.records == summary.assets + summary.errors + summary.ignored
    assert summary.assets > 1000
    assert summary.errors
    assert summary.records == sum(1 for _ in read_inventory([path]))
