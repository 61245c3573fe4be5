"""The scan's helpers that need no session: msgpack columns and the line accounting."""

from __future__ import annotations

import msgspec
import pytest

from tests.spark.conftest import skip_without_pyspark

skip_without_pyspark()

import pyarrow as pa  # noqa: E402 (after the pyspark skip)

from assetgate.batch.job import ScanError, _account  # noqa: E402 (after the pyspark skip)
from assetgate.batch.transform import (  # noqa: E402 (after the pyspark skip)
    SplitCount,
    decode_column,
)
from assetgate.run.check import Summary  # noqa: E402 (after the pyspark skip)

pytestmark = pytest.mark.spark

_DECODER = msgspec.msgpack.Decoder(list[dict[str, int]])


def _packed(values: list[dict[str, int] | None]) -> list[bytes | None]:
    return [None if v is None else msgspec.msgpack.encode(v) for v in values]


@pytest.mark.parametrize("kind", [pa.binary(), pa.large_binary()])
def test_decode_column_gives_the_non_null_values_in_order(kind: pa.DataType) -> None:
    """Nulls take no bytes and are skipped; every chunk is decoded, in order."""
    first = _packed([{"a": 1}, None, {"b": 2}])
    second = _packed([None, {"c": 3}])
    column = pa.chunked_array([pa.array(first, kind), pa.array(second, kind)])
    assert decode_column(column, _DECODER) == [{"a": 1}, {"b": 2}, {"c": 3}]


def test_decode_column_reads_only_the_slice_of_a_sliced_chunk() -> None:
    """A sliced chunk (a filtered or split table) decodes its own rows, not its buffer's."""
    values = [{"n": i} for i in range(6)]
    column = pa.chunked_array([pa.array(_packed(list(values))).slice(2, 3)])
    assert decode_column(column, _DECODER) == values[2:5]


def test_decode_column_of_nothing_is_empty() -> None:
    """An empty or all-null column decodes to no values (no empty-document call)."""
    empty = pa.chunked_array(
        [pa.array([], pa.binary()), pa.array([None, None], pa.binary())]
    )
    assert decode_column(empty, _DECODER) == []


def _written(assets: int, errors: int, ignored: int) -> dict[str, int]:
    return {"assets": assets, "errors": errors, "ignored": ignored, "pairs": 0}


def _summary(assets: int, errors: int, ignored: int) -> Summary:
    zero = dict.fromkeys(Summary.__struct_fields__, 0)
    return Summary(
        **{
            **zero,
            "records": assets + errors + ignored,
            "assets": assets,
            "errors": errors,
            "ignored": ignored,
        }
    )


def test_accounting_passes_when_every_line_is_accounted_for() -> None:
    """Blank lines and lines with entries make up every row Spark counted."""
    block = SplitCount(path="f", start=0, rows=4, blank=1, lines=3, asset=3, error=1)
    _account({("f", 0): 4}, [block], _written(3, 1, 0), _summary(3, 1, 0), 3)


@pytest.mark.parametrize(
    ("counts", "block", "hashed", "message"),
    [
        (
            {("f", 0): 5},
            SplitCount(path="f", start=0, rows=4, blank=1, lines=3, asset=3, error=1),
            3,
            "lines per file split",
        ),
        (
            {("f", 0): 4},
            SplitCount(path="f", start=0, rows=4, blank=1, lines=2, asset=3, error=1),
            3,
            "1 non-blank lines gave no entry",
        ),
        (
            {("f", 0): 4},
            SplitCount(path="f", start=0, rows=4, blank=1, lines=3, asset=4, error=1),
            3,
            "asset entries: judged 4, written 3, reported 3",
        ),
        (
            {("f", 0): 4},
            SplitCount(path="f", start=0, rows=4, blank=1, lines=3, asset=3, error=1),
            2,
            "asset hashes: judged 3, digested 2",
        ),
    ],
)
def test_accounting_refuses_what_does_not_add_up(
    counts: dict[tuple[str, int], int], block: SplitCount, hashed: int, message: str
) -> None:
    """A line Spark counted but never judged, a silent line, a lost entry or hash."""
    with pytest.raises(ScanError, match=message):
        _account(counts, [block], _written(3, 1, 0), _summary(3, 1, 0), hashed)


def test_judge_stage_refuses_an_over_long_line_as_the_file_reader_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The scan's judge stage makes a line at the length limit the file reader's error."""
    from assetgate.batch.transform import ScanContext, judge_batches
    from assetgate.catalogue.levels import load_catalogue
    from assetgate.inventory import read as inventory

    monkeypatch.setattr(inventory, "MAX_LINE_BYTES", 100)
    catalogue = load_catalogue()
    ctx = ScanContext(
        profiles={"*": catalogue.server("2.12.8")},
        mode="single",
        catalogue=catalogue,
        files={},
        offsets={},
    )
    good = '{"kind":"stream","config":{"name":"A"}}'
    batch = pa.record_batch(
        {
            "value": ["x" * 100, good],
            "_file_path": ["/f.jsonl", "/f.jsonl"],
            "_block_start": [0, 0],
        }
    )
    rows = pa.Table.from_batches(list(judge_batches(ctx, [batch]))).to_pylist()
    assert ("/f.jsonl:1", "line too long: 100 bytes or more, not read") in {
        (row["source"], row["message"]) for row in rows
    }
    assert ("asset", 2) in {(row["record"], row["line"]) for row in rows}


def test_spark_failure_says_what_broke_and_leaves_other_errors() -> None:
    """A broken py4j connection is the JVM stopping; a Spark error is the job failing."""
    from py4j.protocol import Py4JError, Py4JNetworkError
    from pyspark.errors import AnalysisException

    from assetgate.batch.job import spark_failure

    stopped = "the scan's Spark JVM stopped before the job ended"
    for broken in (
        Py4JError("An error occurred while calling o144.getResult"),
        Py4JNetworkError("Answer from Java side is empty"),
        ConnectionRefusedError(111, "Connection refused"),
    ):
        assert (spark_failure(broken) or "").startswith(stopped)
    failed = spark_failure(AnalysisException("[PATH_NOT_FOUND] Path does not exist"))
    assert (failed or "").startswith("the Spark job failed: ")
    assert spark_failure(ValueError("a bug of ours")) is None


def test_settle_stage_in_small_batches_gives_the_same_rows_and_tallies() -> None:
    """A partition's settled rows and tallies do not depend on its output batch size.

    One account may hold millions of assets; its rows leave in bounded batches.
    """
    from assetgate.batch.transform import (
        TALLY_ROW,
        ScanContext,
        judge_batches,
        settle_batches,
    )
    from assetgate.catalogue.levels import load_catalogue
    from assetgate.run.aggregate import Partial
    from benchmarks.gen_inventory import generate

    catalogue = load_catalogue()
    lines = list(generate(600, seed=9, bad_fraction=0.05, accounts=2))
    batch = pa.record_batch(
        {
            "value": [line.rstrip(b"\n") for line in lines],
            "_file_path": ["/f.jsonl"] * len(lines),
            "_block_start": [0] * len(lines),
        }
    )

    def settled(rows: int) -> tuple[list[dict[str, object]], Partial, int]:
        ctx = ScanContext(
            profiles={"*": catalogue.server("2.11.11")},
            mode="cluster",
            catalogue=catalogue,
            files={},
            offsets={},
            rules=[("stamp_missing", "*/*/S1*")],
            fail_on=("offline", "record-error"),
            batch_rows=rows,
        )
        entries = list(judge_batches(ctx, [batch]))
        out = list(settle_batches(ctx, entries))
        table = pa.Table.from_batches(out)
        kept = table.filter(pa.compute.not_equal(table.column("record"), TALLY_ROW))
        tallies = [
            msgspec.msgpack.decode(row["_counts"], type=Partial)
            for row in table.to_pylist()
            if row["record"] == TALLY_ROW
        ]
        whole = Partial(matched=[(0, [])])
        for part in tallies:
            whole = whole.merge(part)
        key = msgspec.json.encode
        return sorted(kept.to_pylist(), key=key), whole, len(out)

    small, small_tally, small_batches = settled(7)
    large, large_tally, large_batches = settled(20_000)
    assert small == large
    assert small_tally == large_tally
    assert small_tally.assets > 500
    assert small_batches > large_batches + 50
