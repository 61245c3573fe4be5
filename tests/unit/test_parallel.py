"""Judging in worker processes over byte ranges gives exactly the one-process report.

``MIN_CHUNK`` is lowered to 4 KiB so that a generated inventory of about 2,000 assets
(about 1.2 MB) is really cut into ranges. Further tests pin the inputs that once made
``workers=2`` differ from ``workers=1`` (pretty documents, BOMs, file order).
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

import assetgate.inventory.read
import assetgate.run.parallel
from assetgate.run.check import Report, check
from benchmarks.gen_inventory import generate

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue

TARGETS = ("2.10.26", "2.11.11", "2.14.6")
ASSETS = 2000


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let files of a few KiB be split, so that small inventories use the pool."""
    monkeypatch.setattr(assetgate.run.parallel, "MIN_CHUNK", 4096)


@pytest.fixture
def lines() -> list[bytes]:
    """The lines of a generated fleet inventory (about 1 % bad lines, 2 % overlaps)."""
    return list(generate(ASSETS, seed=11, overlap_fraction=0.02))


@pytest.fixture
def inventory(tmp_path: Path, lines: list[bytes]) -> Path:
    """The generated inventory as a JSON Lines file."""
    path = tmp_path / "fleet.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def _good_records(lines: list[bytes]) -> list[dict[str, Any]]:
    """The well-formed stream and consumer records among generated lines."""
    out: list[dict[str, Any]] = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        kind, config = record.get("kind"), record.get("config")
        if kind in ("stream", "consumer") and isinstance(config, dict):
            out.append(record)
    return out


def _reports(
    paths: list[Path], target: str, catalogue: Catalogue
) -> tuple[Report, Report]:
    """The reports of ``workers=1`` and ``workers=2`` for the same inventory."""
    one = check(paths, target=target, catalogue=catalogue, workers=1)
    two = check(paths, target=target, catalogue=catalogue, workers=2)
    return one, two


def _assert_same(one: Report, two: Report) -> None:
    """Same verdicts in the same order, same errors and sources, summary and digest."""
    assert [v.source for v in two.assets] == [v.source for v in one.assets]
    assert two.assets == one.assets
    assert two.errors == one.errors
    assert two.ignored == one.ignored
    assert two.overlaps == one.overlaps
    assert two.summary == one.summary
    assert two.inventory.digest == one.inventory.digest
    assert msgspec.to_builtins(two) == msgspec.to_builtins(one)


def test_generated_inventory_is_split(inventory: Path) -> None:
    """The test inventory is cut into several ranges at line boundaries."""
    ranges = assetgate.run.parallel._ranges(str(inventory), 2)
    assert len(ranges) > 2
    assert ranges[0][0] == 0
    assert ranges[-1][1] == inventory.stat().st_size
    data = inventory.read_bytes()
    for (_, end, _), (start, _, line) in itertools.pairwise(ranges):
        assert end == start
        assert data[start - 1 : start] == b"\n"
        assert line == data[:start].count(b"\n") + 1


@pytest.mark.parametrize("target", TARGETS)
def test_two_workers_give_the_one_process_report(
    inventory: Path, target: str, catalogue: Catalogue
) -> None:
    """workers=2 gives exactly the workers=1 report (verdicts, errors, summary, digest)."""
    one, two = _reports([inventory], target, catalogue)
    _assert_same(one, two)
    # the inventory exercises what could go wrong: errors and ignored records from
    # every range, several states, overlaps
    assert one.summary.records == ASSETS
    assert one.summary.errors > 5
    assert one.summary.ignored > 0
    assert one.summary.overlaps > 0
    assert one.summary.online < one.summary.assets
    last_line = max(int(e.source.rpartition(":")[2]) for e in one.errors)
    assert last_line > ASSETS // 2


def test_pretty_printed_array_is_not_split(
    tmp_path: Path, lines: list[bytes], catalogue: Catalogue
) -> None:
    """A pretty-printed JSON array is read whole, with the same result on 2 workers."""
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(_good_records(lines)[:300], indent=2), encoding="utf-8")
    assert path.stat().st_size > 2 * 4096
    assert assetgate.run.parallel._ranges(str(path), 2) == []
    one, two = _reports([path], "2.11.11", catalogue)
    _assert_same(one, two)
    assert one.summary.assets == 300
    assert one.errors == []


def test_pretty_printed_object_is_not_split(
    tmp_path: Path, lines: list[bytes], catalogue: Catalogue
) -> None:
    """A pretty-printed STREAM.LIST page is read whole, with the same result on 2 workers."""
    streams = [
        {"config": r["config"], "created": r["created"], "state": {"messages": 0}}
        for r in _good_records(lines)
        if r["kind"] == "stream"
    ][:60]
    page = {
        "type": "io.nats.jetstream.api.v1.stream_list_response",
        "total": len(streams),
        "offset": 0,
        "limit": 256,
        "streams": streams,
    }
    path = tmp_path / "streams.json"
    path.write_text(json.dumps(page, indent=2), encoding="utf-8")
    assert path.stat().st_size > 2 * 4096
    one, two = _reports([path], "2.11.11", catalogue)
    assert one.summary.assets == 60
    _assert_same(one, two)


def test_cut_short_first_line(
    tmp_path: Path, lines: list[bytes], catalogue: Catalogue
) -> None:
    """A truncated first line gives the same error on 2 workers."""
    path = tmp_path / "fleet.jsonl"
    path.write_bytes(lines[0][:100] + b"\n" + b"".join(lines[1:]))
    one, two = _reports([path], "2.11.11", catalogue)
    assert one.errors[0].source == f"{path}:1"
    _assert_same(one, two)


def test_byte_order_mark(
    tmp_path: Path, lines: list[bytes], catalogue: Catalogue
) -> None:
    """A file starting with a UTF-8 BOM gives the same report on 2 workers."""
    path = tmp_path / "fleet.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(lines))
    one, two = _reports([path], "2.11.11", catalogue)
    _assert_same(one, two)


def test_small_file_before_a_large_one(
    tmp_path: Path, inventory: Path, lines: list[bytes], catalogue: Catalogue
) -> None:
    """A small file (not split) before a large one keeps input order on 2 workers."""
    small = tmp_path / "a-small.jsonl"
    small.write_bytes(b"".join(lines[:5]) + b"{not json\n")
    one, two = _reports([small, inventory], "2.11.11", catalogue)
    assert one.errors[0].source == f"{small}:6"
    _assert_same(one, two)


def test_line_of_non_json_whitespace_is_an_error_in_every_range(
    tmp_path: Path, lines: list[bytes], catalogue: Catalogue
) -> None:
    """A line of form feeds or vertical tabs is not blank to the reader: an error, split or not."""
    odd = [b"\x0c\n", b"\x0b \x0c\n"]
    mixed = list(lines)
    for index, line in zip((len(lines) // 3, 2 * len(lines) // 3), odd, strict=True):
        mixed.insert(index, line)
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"".join(mixed))
    one, two = _reports([path], "2.11.11", catalogue)
    _assert_same(one, two)
    sources = {error.source for error in one.errors}
    assert {
        f"{path}:{len(lines) // 3 + 1}",
        f"{path}:{2 * len(lines) // 3 + 1}",
    } <= sources


def test_over_long_line_is_an_error_in_every_range(
    tmp_path: Path,
    lines: list[bytes],
    catalogue: Catalogue,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A line at the length limit is the same error with and without worker processes."""
    monkeypatch.setattr(assetgate.inventory.read, "MAX_LINE_BYTES", 2000)
    long = next(line for line in lines if len(line) < 1500).rstrip(b"\n")
    padded = long[:-1] + b',"description":"' + b"x" * 2000 + b'"}\n'
    mixed = list(lines)
    mixed.insert(len(lines) // 2, padded)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"".join(mixed))
    one, two = _reports([path], "2.11.11", catalogue)
    _assert_same(one, two)
    assert (
        f"{path}:{len(lines) // 2 + 1}",
        "line too long: 2000 bytes or more, not read",
    ) in {(error.source, error.message) for error in one.errors}
