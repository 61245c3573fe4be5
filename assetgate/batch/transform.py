"""The scan's Arrow-batch functions: each hands whole batches or groups to the core.

Nothing here re-implements a rule: lines are read with
:func:`assetgate.inventory.read_records`, assets judged with :func:`assetgate.gate.judge`,
streams settled with their consumers by :func:`assetgate.gate.settle`, and overlaps
found by :func:`assetgate.subjects.find_overlaps`, exactly as :func:`assetgate.check.check`
does. The functions run on Spark's Python workers: the :class:`ScanContext` (the
catalogue and the target profiles, frozen Structs) is pickled with them, and msgspec
decoders are built on the worker (cached per process), never captured.

Each ``*_transform`` returns a ``Callable[[DataFrame], DataFrame]`` for
``df.transform(...)``; DataFrame APIs only (``mapInArrow``, ``groupBy().applyInArrow``),
so the job also runs under Spark Connect.
"""

from __future__ import annotations

import functools
import itertools
import os
import urllib.parse
from typing import TYPE_CHECKING, Any, Final

import msgspec

from assetgate._collect import asset_hash
from assetgate.batch.schema import ENTRY, OVERLAP, VERDICT, arrow_schema
from assetgate.gate import Judged, Mode, Verdict, judge, settle, untargeted
from assetgate.inventory import Asset, Ignored, RecordError, read_records
from assetgate.levels import Catalogue, ServerProfile  # noqa: TC001 (Struct fields)
from assetgate.subjects import find_overlaps

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = [
    "BLOCK",
    "DEFAULT_CLUSTER",
    "ScanContext",
    "file_key",
    "judge_batches",
    "judge_transform",
    "overlap_group",
    "overlaps_transform",
    "settle_group",
    "settle_transform",
]

DEFAULT_CLUSTER: Final = "*"
BLOCK: Final = "_block"  # the ``record`` of a file split's row count (not an entry)
_BOM: Final = b"\xef\xbb\xbf"
_JSON_SPACE: Final = b" \t\r\n"
_OVERLAP_STATES: Final = ("online", "degraded", "offline")
SETTLE_BUCKETS_PER_PARTITION: Final = 4
# the entry columns settling reads (the others are not shipped to the settle tasks)
_SETTLE_INPUT: Final = (
    "cluster",
    "account",
    "kind",
    "stream",
    "name",
    "source",
    "source_file",
    "line",
    "_rank",
    "_entry",
    "_hash",
    "_judged",
)

Row = dict[str, Any]


class ScanContext(msgspec.Struct, frozen=True, kw_only=True):
    """What every worker needs, pickled once per task with the batch functions.

    Attributes:
        profiles: the target profile per cluster (``"*"``: the default).
        mode: ``single`` or ``cluster``.
        catalogue: the level catalogue (a frozen Struct, about 20 kB pickled).
        files: :func:`file_key` of each input file -> (its name in sources, its rank in
            input order), so that sources read ``file:line`` as ``check`` prints them.
    """

    profiles: dict[str, ServerProfile]
    mode: Mode
    catalogue: Catalogue
    files: dict[str, tuple[str, int]]

    def profile(self, cluster: str) -> ServerProfile | None:
        """The target profile of a cluster, ``None`` if no target covers it."""
        return self.profiles.get(cluster) or self.profiles.get(DEFAULT_CLUSTER)

    def target_profile(self, cluster: str) -> ServerProfile:
        """The target profile of a cluster that has one (every judged asset's does)."""
        found = self.profile(cluster)
        if found is None:
            msg = f"no target version for cluster {cluster!r}"
            raise RuntimeError(msg)
        return found

    def name_of(self, path: str) -> tuple[str, int]:
        """(name in sources, rank) of a file as Spark reports it (``_metadata``)."""
        found = self.files.get(file_key(path))
        return found if found is not None else (path, len(self.files))


def file_key(path: str) -> str:
    """A file path as Spark's ``_metadata.file_path`` gives it, made comparable.

    ``file:/a%20b/x.jsonl`` and ``/a b/x.jsonl`` give the same key; other schemes
    (``s3a://``, ``hdfs://``) are kept as they are.
    """
    parts = urllib.parse.urlsplit(path)
    if parts.scheme in {"", "file"}:
        return os.path.normpath(urllib.parse.unquote(parts.path))
    return path


@functools.cache
def _msgpack_encoder() -> msgspec.msgpack.Encoder:
    return msgspec.msgpack.Encoder()


@functools.cache
def _judged_decoder() -> msgspec.msgpack.Decoder[Judged]:
    return msgspec.msgpack.Decoder(Judged)


# --- stage 1: lines -> entries (mapInArrow) ----------------------------------------------


def judge_transform(ctx: ScanContext) -> Callable[[DataFrame], DataFrame]:
    """Lines (``value``, ``_file_path``, ``_block_start``) -> one row per entry (``ENTRY``).

    The input must be the file scan itself, unfiltered and unshuffled, so that the rows
    of each file split arrive contiguous and in file order: ``_row`` is the row's
    position in its split, from which the job derives line numbers.
    """

    def apply(lines: DataFrame) -> DataFrame:
        return lines.mapInArrow(functools.partial(judge_batches, ctx), ENTRY)

    return apply


def judge_batches(
    ctx: ScanContext, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """Read and judge the lines of Arrow batches; one output batch per input batch.

    After the last batch, one ``record="_block"`` row per file split gives in ``_row``
    the number of rows (blank ones too) the function saw in it: the job derives line
    numbers from them and checks them against Spark's own count of the lines read.
    """
    schema = arrow_schema(ENTRY)
    rows_in_block: dict[tuple[str, int], int] = {}
    started: set[tuple[str, int]] = set()
    names: dict[str, tuple[str, int]] = {}
    for batch in batches:
        rows: list[tuple[Any, ...]] = []
        values = batch.column("value").to_pylist()
        paths = batch.column("_file_path").to_pylist()
        starts = batch.column("_block_start").to_pylist()
        for value, path, start in zip(values, paths, starts, strict=True):
            key = (path, start)
            row = rows_in_block.get(key, 0)
            rows_in_block[key] = row + 1
            data = (value or b"").strip(_JSON_SPACE)
            if start == 0 and key not in started and data.startswith(_BOM):
                # as the file reader does: a BOM before the first record is skipped
                data = data[len(_BOM) :].lstrip(_JSON_SPACE)
            if not data:
                continue
            started.add(key)
            found = names.get(path)
            if found is None:
                found = names[path] = ctx.name_of(path)
            name, rank = found
            for index, record in enumerate(read_records(data, "")):
                head = (path, start, row, index, rank, record.source, name)
                rows.append(head + _entry_fields(ctx, record))
        yield _batch(schema, rows)
    if rows_in_block:
        empty = (None,) * (len(schema.names) - 8)
        yield _batch(
            schema,
            [
                (path, start, count, None, None, None, None, BLOCK, *empty)
                for (path, start), count in rows_in_block.items()
            ],
        )


def _batch(schema: pa.Schema, rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    """Row tuples (in the schema's column order) -> one Arrow batch."""
    import pyarrow as pa

    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema.names)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(col, type=field.type)
            for col, field in zip(columns, schema, strict=True)
        ],
        schema=schema,
    )


def _entry_fields(
    ctx: ScanContext, record: Asset | RecordError | Ignored
) -> tuple[Any, ...]:
    """The columns of one entry from ``record`` on (``ENTRY`` order); assets are judged here."""
    # an error or ignored record fills only its last three columns (``ENTRY`` order)
    if isinstance(record, RecordError):
        return ("error", *(None,) * 7, record.message, record.retriable, None)
    if isinstance(record, Ignored):
        return ("ignored", *(None,) * 9, record.reason)
    profile = ctx.profile(record.cluster)
    if profile is None:
        # as check's Collector does: a cluster no target covers is an error record
        error = untargeted(record)
        return ("error", *(None,) * 7, error.message, error.retriable, None)
    judged = judge(record, profile, ctx.mode, ctx.catalogue)
    return (
        "asset",
        record.cluster,
        record.account,
        record.kind,
        record.stream,
        record.name,
        asset_hash(record),
        _msgpack_encoder().encode(judged),
        None,
        None,
        None,
    )


def _add(columns: dict[str, list[Any]], row: Row) -> None:
    for name, values in columns.items():
        values.append(row.get(name))


# --- stage 2: settle each stream with its consumers (groupBy().applyInArrow) -------------


def settle_transform(
    ctx: ScanContext, partitions: int
) -> Callable[[DataFrame], DataFrame]:
    """Asset entries with ``source`` and ``line`` -> one settled row per asset (``VERDICT``).

    ``partitions``: how many Python tasks settle (the job passes its number of file
    splits). Every task costs a fixed hand-off to a Python worker, so a tiny scan must
    not pay for ``spark.sql.shuffle.partitions`` (200) of them.
    """

    def apply(assets: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F  # noqa: N812 (Spark's convention)

        # Groups of one stream are tiny (a stream and a few consumers) and Spark pays
        # a fixed cost per group, so streams are hashed into buckets and each Python
        # call settles every stream of its bucket; the explicit repartition (which
        # the grouping reuses) fixes the number of tasks.
        count = max(partitions, 1)
        buckets = SETTLE_BUCKETS_PER_PARTITION * count
        bucket = F.pmod(F.xxhash64("cluster", "account", "stream"), F.lit(buckets))
        # a lambda, not a partial: Spark infers the API from annotations, and a
        # function without any is the (pyarrow.Table) -> pyarrow.Table form
        return (
            assets.select(*_SETTLE_INPUT)
            .withColumn("_bucket", bucket)
            .repartition(count, "_bucket")
            .groupBy("_bucket")
            .applyInArrow(lambda table: settle_group(ctx, table), VERDICT)
        )

    return apply


def _input_order(row: Row) -> tuple[int, str, int, int]:
    return (row["_rank"], row["source_file"], row["line"], row["_entry"])


def settle_group(ctx: ScanContext, table: pa.Table) -> pa.Table:
    """Settle every (cluster, account, stream) group of a table, one by one."""
    import pyarrow as pa

    rows: list[Row] = table.select(list(_SETTLE_INPUT)).to_pylist()
    rows.sort(key=lambda r: (r["cluster"], r["account"], r["stream"]))
    out: list[tuple[Any, ...]] = []
    for _, group in itertools.groupby(
        rows, key=lambda r: (r["cluster"], r["account"], r["stream"])
    ):
        out.extend(_settle_stream(ctx, list(group)))
    width = len(VERDICT.fields)
    out = [row if len(row) == width else (*row, None, None) for row in out]
    return pa.Table.from_batches([_batch(arrow_schema(VERDICT), out)])


def _settle_stream(ctx: ScanContext, rows: list[Row]) -> list[tuple[Any, ...]]:
    """Settle one (cluster, account, stream) group as ``check`` does.

    The first stream record in input order is the stream; later ones are duplicates
    whose verdicts are kept unsettled (and the last one's state decides whether the
    stream takes part in overlaps, as in ``check``). Consumers are settled in name
    order, input order among equal names.
    """
    streams = sorted((r for r in rows if r["kind"] == "stream"), key=_input_order)
    consumers = sorted(
        (r for r in rows if r["kind"] != "stream"),
        key=lambda r: (r["name"], *_input_order(r)),
    )
    judged = {id(row): _judged(row) for row in rows}
    head = judged[id(streams[0])] if streams else None
    profile = ctx.target_profile(rows[0]["cluster"])  # judged rows have one
    settled = settle(head, [judged[id(r)] for r in consumers], profile)
    out: list[tuple[Any, ...]] = []
    if head is not None:
        last = judged[id(streams[-1])].verdict.state if len(streams) > 1 else None
        overlap_state = settled[0].state if last is None else last
        first = _verdict_row(streams[0], settled[0], 0, duplicate=False)
        out.append((*first, list(head.subjects), overlap_state))
    offset = len(settled) - len(consumers)
    for index, row in enumerate(consumers):
        verdict = settled[offset + index]
        out.append(_verdict_row(row, verdict, index + 1, duplicate=False))
    for index, row in enumerate(streams[1:]):
        out.append(_verdict_row(row, judged[id(row)].verdict, index, duplicate=True))
    return out


def _judged(row: Row) -> Judged:
    """The judgement of an entry, with its real source (judged before lines were known)."""
    judged = _judged_decoder().decode(row["_judged"])
    verdict = msgspec.structs.replace(judged.verdict, source=row["source"])
    return msgspec.structs.replace(judged, verdict=verdict)


def _verdict_row(
    row: Row,
    verdict: Verdict,
    position: int,
    *,
    duplicate: bool,
) -> tuple[Any, ...]:
    """A ``VERDICT`` row without ``_subjects`` and ``_overlap_state`` (null unless added)."""
    return (
        *msgspec.structs.astuple(verdict),
        row["source_file"],
        row["line"],
        duplicate,
        position,
        row["_rank"],
        row["_entry"],
        row["_hash"],
        _msgpack_encoder().encode(verdict),
    )


# --- stage 3: overlaps per account (groupBy().applyInArrow) ------------------------------


def overlaps_transform(partitions: int) -> Callable[[DataFrame], DataFrame]:
    """Settled verdicts -> overlaps per (cluster, account) (``OVERLAP``).

    Streams take part when their state is online, degraded or offline (offline
    streams keep their subjects on the server), as in ``check``. ``partitions``: how
    many Python tasks find them (see :func:`settle_transform`).
    """

    def apply(verdicts: DataFrame) -> DataFrame:
        from pyspark.sql import functions as F  # noqa: N812 (Spark's convention)

        streams = verdicts.where(
            F.col("_subjects").isNotNull()
            & F.col("_overlap_state").isin(*_OVERLAP_STATES)
        ).select("cluster", "account", "stream", "_subjects", "_overlap_state")
        return (
            streams.repartition(max(partitions, 1), "cluster", "account")
            .groupBy("cluster", "account")
            .applyInArrow(overlap_group, OVERLAP)
        )

    return apply


def overlap_group(table: pa.Table) -> pa.Table:
    """Find the overlaps of one account and group each pair under its busier side.

    :func:`find_overlaps` gives one row per overlapping pair (a catch-all ``>`` stream
    overlaps every other stream: n - 1 pairs). Each pair is attributed to the
    (stream, subject) side that takes part in more pairs (the earlier stream on a
    tie), and one row is written per such side, listing the others: a catch-all
    subject is one row, every pair appears exactly once, and ``pairs`` sums to
    ``check``'s overlap count.
    """
    import pyarrow as pa

    rows: list[Row] = sorted(table.to_pylist(), key=lambda r: r["stream"])
    offline = {r["stream"] for r in rows if r["_overlap_state"] == "offline"}
    pairs = find_overlaps([(r["stream"], r["_subjects"]) for r in rows])
    degree: dict[tuple[str, str], int] = {}
    for a, subject_a, b, subject_b in pairs:
        for side in ((a, subject_a), (b, subject_b)):
            degree[side] = degree.get(side, 0) + 1
    hubs: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a, subject_a, b, subject_b in pairs:
        first, second = (a, subject_a), (b, subject_b)
        if degree[second] > degree[first]:
            first, second = second, first
        hubs.setdefault(first, []).append(second)
    schema = arrow_schema(OVERLAP)
    columns: dict[str, list[Any]] = {name: [] for name in schema.names}
    cluster, account = (rows[0]["cluster"], rows[0]["account"]) if rows else ("", "")
    for (stream, subject), others in sorted(hubs.items()):
        _add(
            columns,
            {
                "cluster": cluster,
                "account": account,
                "stream": stream,
                "subject": subject,
                "offline": stream in offline,
                "pairs": len(others),
                "overlaps": [
                    {"stream": s, "subject": sub, "offline": s in offline}
                    for s, sub in sorted(others)
                ],
            },
        )
    return pa.Table.from_pydict(columns, schema=schema)
