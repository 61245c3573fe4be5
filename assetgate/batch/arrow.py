"""Arrow helpers of the scan's batch functions: msgpack columns without a copy per value."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Final, TypeVar

if TYPE_CHECKING:
    import msgspec
    import pyarrow as pa

__all__ = ["binary", "decode_column", "large_binary_id", "value_bytes"]

T = TypeVar("T")
_MSGPACK_ARRAY32: Final = b"\xdd"


def value_bytes(chunk: pa.Array) -> memoryview:
    """The values of a binary array back to back, as they lie in its data buffer.

    A null takes no bytes; a sliced array gives only its slice.
    """
    _, offsets_buffer, data = chunk.buffers()
    if data is None:
        return memoryview(b"")
    view = memoryview(offsets_buffer)
    offsets = view.cast("q") if chunk.type.id == large_binary_id() else view.cast("i")
    start, end = offsets[chunk.offset], offsets[chunk.offset + len(chunk)]
    return memoryview(data)[start:end]


def decode_column(
    column: pa.ChunkedArray, decoder: msgspec.msgpack.Decoder[list[T]]
) -> list[T]:
    """Decode the non-null values of a binary column of msgpack, in order.

    The values of an Arrow binary array lie back to back in its data buffer (a null
    takes no bytes), so prefixing them with a msgpack array header makes one document
    of them: one decode call per chunk.
    """
    out: list[T] = []
    for chunk in column.chunks:
        count = len(chunk) - chunk.null_count
        if not count:
            continue
        header = _MSGPACK_ARRAY32 + count.to_bytes(4, "big")
        out.extend(decoder.decode(b"".join([header, value_bytes(chunk)])))
    return out


@functools.cache
def binary() -> pa.DataType:
    """Arrow's ``binary`` type."""
    import pyarrow as pa

    return pa.binary()


@functools.cache
def large_binary_id() -> int:
    """Arrow's type id of ``large_binary`` (64-bit offsets)."""
    import pyarrow as pa

    large: int = pa.large_binary().id
    return large
