"""Column layouts of the scan: what each stage hands the next, and what it writes.

Spark ``StructType`` constants (the public layout of the Parquet outputs) and helpers
to turn them into Arrow schemas for the batch functions. Column order is the output
order; the ``_``-prefixed columns are internal and never written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "ASSET",
    "DIGEST",
    "ENTRY",
    "ERROR_COLUMNS",
    "IGNORED_COLUMNS",
    "OVERLAP_COLUMNS",
    "SCAN",
    "TALLY",
    "arrow_schema",
]


def _fields(*items: tuple[str, DataType]) -> list[StructField]:
    return [StructField(name, kind, nullable=True) for name, kind in items]


_TEXT: Final = StringType()
_TEXTS: Final = ArrayType(StringType(), containsNull=False)

# One row per inventory entry (an asset, an error or an ignored record) after judging,
# with its line and source; ``_judged`` is the asset's ``Judged`` as msgpack. A
# ``record="_block"`` row gives what the judge function saw in one file split
# (``_counts``: a ``SplitCount`` as msgpack), for the job's accounting.
ENTRY: Final = StructType(
    _fields(
        ("record", _TEXT),
        ("cluster", _TEXT),
        ("account", _TEXT),
        ("stream", _TEXT),
        ("source_file", _TEXT),
        ("line", LongType()),
        ("_rank", IntegerType()),
        ("_entry", IntegerType()),
        ("source", _TEXT),
        ("_hash", BinaryType()),
        ("_judged", BinaryType()),
        ("message", _TEXT),
        ("retriable", BooleanType()),
        ("reason", _TEXT),
        ("_counts", BinaryType()),
    )
)

# One row per asset in ``assets/``: the fields of ``check --format json``, in its order,
# then where the asset was read.
ASSET: Final = StructType(
    _fields(
        ("source", _TEXT),
        ("cluster", _TEXT),
        ("account", _TEXT),
        ("kind", _TEXT),
        ("stream", _TEXT),
        ("name", _TEXT),
        ("state", _TEXT),
        ("reason", _TEXT),
        ("target", _TEXT),
        ("stamped_level", _TEXT),
        ("required_level", IntegerType()),
        ("min_server_version", _TEXT),
        ("unknown_fields", _TEXTS),
        ("dropped_fields", _TEXTS),
        ("drift", _TEXT),
        ("accepted", _TEXT),
        ("own_state", _TEXT),
        ("own_reason", _TEXT),
        ("replicas", IntegerType()),
        ("check", _TEXT),
        ("notes", _TEXTS),
        ("source_file", _TEXT),
        ("line", LongType()),
    )
)

# A (stream, subject) that overlaps others: a catch-all subject is one row listing
# every stream it covers, not one row per pair (see docs/spark.md).
_OTHER: Final = StructType(
    _fields(("stream", _TEXT), ("subject", _TEXT), ("offline", BooleanType()))
)

# What the settle stage returns, one row per:
# - settled asset (``record="asset"``): the ``ASSET`` columns as its cluster leaves them
#   when the cluster is up (acceptances applied), its place in ``check``'s order
#   (``_duplicate``, ``_position``, ``_rank``, ``_entry``), ``_hash``, the settled
#   ``Verdict`` before acceptances as msgpack (``_verdict``: a down cluster's assets are
#   finished again from it);
# - tally (``"_tally"``): a ``Partial`` (msgpack, ``_counts``) of the partition's assets
#   of one cluster (``cluster``; with the first of those that trigger the cluster's
#   ``[[cluster_outcomes]]`` rules), or of its overlaps, errors and ignored records
#   (``cluster`` null);
# - overlap (``"overlap"``): cluster, account, stream and the overlap columns;
# - error, ignored record and file split count, passed through from ``ENTRY``.
# The job keeps it (on disk) for the passes that follow: the driver collects only the
# split counts and the tallies; the executors write the tables from it.
SCAN: Final = StructType(
    [
        *_fields(("record", _TEXT)),
        *ASSET.fields,
        *_fields(
            ("_duplicate", BooleanType()),
            ("_position", IntegerType()),
            ("_rank", IntegerType()),
            ("_entry", IntegerType()),
            ("_hash", BinaryType()),
            ("_verdict", BinaryType()),
            ("message", _TEXT),
            ("retriable", BooleanType()),
            ("subject", _TEXT),
            ("offline", BooleanType()),
            ("pairs", IntegerType()),
            ("overlaps", ArrayType(_OTHER, containsNull=False)),
            ("_counts", BinaryType()),
        ),
    ]
)

# One row per partition of a tally pass (a down cluster's assets): its ``Partial``.
TALLY: Final = StructType(_fields(("_partial", BinaryType())))

# The inventory digest: one row, from the sorted per-asset hashes.
DIGEST: Final = StructType(_fields(("digest", _TEXT), ("hashes", LongType())))

OVERLAP_COLUMNS: Final = (
    "cluster",
    "account",
    "stream",
    "subject",
    "offline",
    "pairs",
    "overlaps",
)
ERROR_COLUMNS: Final = ("source", "source_file", "line", "message", "retriable")
IGNORED_COLUMNS: Final = ("source", "source_file", "line", "reason")


_ARROW: dict[str, pa.Schema] = {}


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects from a batch function returning ``schema``.

    Cached per process: the batch functions run once per task.
    """
    key = schema.json()
    found = _ARROW.get(key)
    if found is None:
        from pyspark.sql.pandas.types import to_arrow_schema

        found = _ARROW[key] = to_arrow_schema(schema)
    return found
