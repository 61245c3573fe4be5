"""The scan's batch helpers that need no session: one-call msgpack decoding of a column."""

from __future__ import annotations

import msgspec
import pytest

from tests.spark.conftest import skip_without_pyspark

skip_without_pyspark()

import pyarrow as pa  # noqa: E402 (after the pyspark skip)

from assetgate.batch.transform import decode_column  # noqa: E402 (after the pyspark skip)

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
