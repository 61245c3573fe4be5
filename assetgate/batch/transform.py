"""The scan's Arrow-batch functions: each hands whole batches to the core.

Nothing here re-implements a rule: lines are read with
:func:`assetgate.inventory.read.read_records`, assets judged with :func:`assetgate.judge.gate.judge`,
streams settled with their consumers by :func:`assetgate.judge.gate.settle`, and overlaps
found by :func:`assetgate.judge.subjects.find_overlaps`, exactly as :func:`assetgate.run.check.check`
does. The functions run on Spark's Python workers: the :class:`ScanContext` (the
catalogue and the target profiles, frozen Structs) is pickled with them, and msgspec
decoders are built on the worker (cached per process), never captured.

There are two stages and one shuffle: :func:`judge_transform` reads and judges the
lines of each file split where it lies; :func:`settle_transform` moves every account's
entries to one task, which settles each stream with its consumers and finds the
account's overlaps in the same call. Each ``*_transform`` returns a
``Callable[[DataFrame], DataFrame]`` for ``df.transform(...)``; DataFrame APIs only
(``mapInArrow``, ``repartition``), so the job also runs under Spark Connect.

Size: over the ~400-line guide because every Arrow-batch stage of the scan (read, judge,
settle, overlaps) hands batches to the same core calls, and their column layouts change
together.
"""

from __future__ import annotations

import functools
import itertools
import operator
import os
import urllib.parse
from typing import TYPE_CHECKING, Any, Final, TypeVar

import msgspec

from assetgate.batch.arrow import binary, decode_column
from assetgate.batch.finish import (
    PLACE,
    Finish,
    asset_order,
    final_verdicts,
    tally_assets,
    tally_others,
    verdict_arrays,
)
from assetgate.batch.schema import ENTRY, SCAN, arrow_schema
from assetgate.catalogue.levels import (  # noqa: TC001 (Struct fields)
    Catalogue,
    ServerProfile,
)
from assetgate.inventory.read import (
    Ignored,
    RecordError,
    line_records_with,
)
from assetgate.judge.gate import Judged, Mode, Verdict
from assetgate.judge.outcomes import causes
from assetgate.judge.subjects import KEEP_SUBJECTS, find_overlaps
from assetgate.run.aggregate import Tally
from assetgate.run.collect import (
    Hashed,
    LineJudge,
    settle_key,
    target_profile,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    import pyarrow as pa
    from pyspark.sql import DataFrame

__all__ = [
    "BLOCK",
    "TALLY_ROW",
    "ScanContext",
    "SplitCount",
    "decode_column",
    "file_key",
    "judge_batches",
    "judge_transform",
    "overlap_rows",
    "settle_batches",
    "settle_transform",
]

BLOCK: Final = "_block"  # the ``record`` of a file split's row count (not an entry)
TALLY_ROW: Final = "_tally"  # the ``record`` of a partition's tally (``_counts``)
# the entry columns settling reads, in this order
_SETTLE_INPUT: Final = (
    "cluster",
    "account",
    "stream",
    "source_file",
    "line",
    "_rank",
    "_entry",
    "_hash",
)
_SCAN_NAMES: Final = tuple(field.name for field in SCAN.fields)
# the ``SCAN`` columns a settled asset fills (besides ``record``), in this order
_ASSET_ROW: Final = (*PLACE, "_hash", "_verdict")
_PLACE_END: Final = len(PLACE)
_VERDICT: Final = _ASSET_ROW.index("_verdict")

T = TypeVar("T")


class ScanContext(msgspec.Struct, frozen=True, kw_only=True):
    """What every worker needs, pickled once per task with the batch functions.

    Attributes:
        profiles: the target profile per cluster (``"*"``: the default).
        mode: ``single`` or ``cluster``.
        catalogue: the level catalogue (a frozen Struct, about 20 kB pickled).
        files: :func:`file_key` of each input file -> (its name in sources, its rank in
            input order), so that sources read ``file:line`` as ``check`` prints them.
        offsets: (``_metadata.file_path``, ``file_block_start``) of each file split ->
            the number of lines in the earlier splits of its file (Spark's own count,
            taken before judging), so that every line is numbered where it is read.
        rules: the acceptances, ``(rule, pattern)``, in the order given.
        fail_on: what fails the run (``check``'s ``--fail-on``).
        batch_rows: settled asset rows per output batch of the settle stage (the
            JVM takes each batch whole, in direct memory).
    """

    profiles: dict[str, ServerProfile]
    mode: Mode
    catalogue: Catalogue
    files: dict[str, tuple[str, int]]
    offsets: dict[tuple[str, int], int]
    rules: list[tuple[str, str]] = msgspec.field(default_factory=list)
    fail_on: tuple[str, ...] = ()
    batch_rows: int = 20_000

    def finish(self, down: dict[str, str]) -> Finish:
        """How to finish verdicts when the clusters of ``down`` are down."""
        return Finish(down=down, rules=self.rules, fail_on=self.fail_on, mode=self.mode)

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
def _judged_decoder() -> msgspec.msgpack.Decoder[list[Judged]]:
    return msgspec.msgpack.Decoder(list[Judged])


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


# --- stage 1: lines -> entries (mapInArrow, where the lines lie) -------------------------


def judge_transform(ctx: ScanContext) -> Callable[[DataFrame], DataFrame]:
    """Lines (``value`` text or bytes, ``_file_path``, ``_block_start``) -> ``ENTRY`` rows.

    The input must be the file scan itself, unfiltered and unshuffled, so that the rows
    of each file split arrive contiguous and in file order: a row's line is its
    position in its split plus the split's offset (``ctx.offsets``).
    """

    def apply(lines: DataFrame) -> DataFrame:
        return lines.mapInArrow(functools.partial(judge_batches, ctx), ENTRY)

    return apply


class SplitCount(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What the judge function saw in one file split, for the job's accounting.

    Attributes:
        path: the split's file, as Spark's ``_metadata.file_path`` gives it.
        start: the split's ``_metadata.file_block_start``.
        rows: the lines it was handed (blank ones too).
        blank: the lines that were blank (or only a BOM).
        lines: the lines that gave entries (every other line must).
        asset: the asset entries it handed on.
        error: the error entries.
        ignored: the ignored entries.
    """

    path: str
    start: int
    rows: int = 0
    blank: int = 0
    lines: int = 0
    asset: int = 0
    error: int = 0
    ignored: int = 0


# the counted SplitCount fields, in the order judge_batches keeps them
_COUNTED: Final = ("rows", "blank", "lines", "asset", "error", "ignored")
_ROWS, _BLANK, _LINES = range(3)


def judge_batches(
    ctx: ScanContext, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """Read and judge the lines of Arrow batches; one output batch per input batch.

    After the last batch, one ``record="_block"`` row per file split carries its
    :class:`SplitCount` (msgpack, in ``_counts``): the job checks the rows against
    Spark's own count of the lines of each split, and the entries against its output.
    """
    schema = arrow_schema(ENTRY)
    # per split, the SplitCount fields from ``rows`` on (_ROWS, _BLANK, _LINES, kinds)
    seen: dict[tuple[str, int], list[int]] = {}
    names: dict[str, tuple[str, int]] = {}
    judge_line = LineJudge(ctx.profiles, ctx.mode, ctx.catalogue)
    for batch in batches:
        rows: list[tuple[Any, ...]] = []
        # Spark reads text as strings; as bytes (an Arrow view, no copy) for the reader
        values = batch.column("value").cast(binary()).to_pylist()
        paths = batch.column("_file_path").to_pylist()
        starts = batch.column("_block_start").to_pylist()
        for value, path, start in zip(values, paths, starts, strict=True):
            key = (path, start)
            counts = seen.get(key)
            if counts is None:
                counts = seen[key] = [0] * len(_COUNTED)
            row = counts[_ROWS]
            counts[_ROWS] = row + 1
            found = names.get(path)
            if found is None:
                found = names[path] = ctx.name_of(path)
            name, rank = found
            # a split Spark did not count numbers from 0; the job refuses the run
            line = ctx.offsets.get(key, 0) + row + 1
            # as the file reader reads it (a BOM before the file's first record skipped)
            entries = line_records_with(
                value or b"",
                f"{name}:{line}",
                first=start == 0 and counts[_LINES] == 0,
                read=judge_line,
            )
            if not entries:
                counts[_BLANK] += 1
                continue
            counts[_LINES] += 1
            for index, item in enumerate(entries):
                entry = _entry_row(item, (name, line, rank, index))
                counts[_COUNTED.index(entry[0])] += 1
                rows.append((*entry, None))
        yield _batch(schema, rows)
    if seen:
        encode = _msgpack_encoder().encode
        empty = (None,) * (len(schema.names) - 2)
        splits = [
            SplitCount(
                path=path, start=start, **dict(zip(_COUNTED, counts, strict=True))
            )
            for (path, start), counts in seen.items()
        ]
        yield _batch(schema, [(BLOCK, *empty, encode(split)) for split in splits])


_NO_ASSET: Final = (None, None, None)  # cluster, account, stream of a non-asset entry


def _entry_row(
    found: RecordError | Ignored | Hashed, head: tuple[Any, ...]
) -> tuple[Any, ...]:
    """An ``ENTRY`` row up to ``reason``; ``head`` is (source_file ... index)."""
    if isinstance(found, Hashed):
        verdict = found.judged.verdict
        return (
            "asset",
            verdict.cluster,
            verdict.account,
            verdict.stream,
            *head,
            None,  # the source is the verdict's
            found.digest,
            _msgpack_encoder().encode(found.judged),
            None,
            None,
            None,
        )
    if isinstance(found, RecordError):  # a cluster no target covers too, as in check
        return (
            "error",
            *_NO_ASSET,
            *head,
            found.source,
            None,
            None,
            found.message,
            found.retriable,
            None,
        )
    return (
        "ignored",
        *_NO_ASSET,
        *head,
        found.source,
        None,
        None,
        None,
        None,
        found.reason,
    )


# --- stage 2: settle streams and find overlaps, one account per task ----------------------


def settle_transform(
    ctx: ScanContext, partitions: int
) -> Callable[[DataFrame], DataFrame]:
    """Entries (``ENTRY``) -> settled assets, overlaps and the other rows (``SCAN``).

    One shuffle by (cluster, account) puts each account, with its streams and their
    consumers, in one partition; one Python call per partition settles and finds
    overlaps for all of them. Errors, ignored records and split counts (no account)
    land together in one partition and pass through. ``partitions``: how many tasks
    (the job passes its number of file splits); every task costs a fixed hand-off to a
    Python worker, so a tiny scan must not pay for ``spark.sql.shuffle.partitions``.
    """

    def apply(entries: DataFrame) -> DataFrame:
        return entries.repartition(max(partitions, 1), "cluster", "account").mapInArrow(
            functools.partial(settle_batches, ctx), SCAN
        )

    return apply


def settle_batches(
    ctx: ScanContext, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """Settle every account of a partition (all its batches) and find its overlaps.

    Also tallies them (as if every cluster were up): one ``_tally`` row per cluster,
    and one for the partition's overlaps, errors and ignored records.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = arrow_schema(SCAN)
    taken = list(batches)
    if not taken:
        return
    table = pa.Table.from_batches(taken)
    del taken
    fin = ctx.finish({})
    tallies: dict[str, Tally] = {}
    others = Tally(fin.fail_on, len(fin.rules))
    is_asset = pc.equal(table.column("record"), "asset")
    passed = table.filter(pc.invert(is_asset))
    if passed.num_rows:
        tally_others(passed.to_pylist(), fin, others)
        yield from _passed_through(passed, schema).to_batches()
    # the Judged of the asset rows, in order (the other rows' nulls take no bytes)
    judged = decode_column(table.column("_judged"), _judged_decoder())
    keys = table.select(list(_SETTLE_INPUT)).filter(is_asset)
    columns = [keys.column(name).to_pylist() for name in _SETTLE_INPUT]
    entries = sorted(zip(*columns, judged, strict=True), key=_stream_key)
    del table, keys, columns, judged
    out: list[tuple[Any, ...]] = []
    overlaps: list[tuple[object, ...]] = []
    for (cluster, account), group in itertools.groupby(entries, key=_account_key):
        profile = target_profile(ctx.profiles, cluster)  # judged entries have one
        kept: list[tuple[str, tuple[str, ...], str]] = []
        for _, rows in itertools.groupby(group, key=_stream_key):
            _settle_stream(list(rows), profile, out, kept)
            # per stream, not per account: one account may hold millions of assets
            if len(out) >= ctx.batch_rows:
                yield _asset_batch(schema, out, fin, tallies, ctx.profiles)
                out = []
        for stream, subject, offline, pairs, covered in overlap_rows(kept):
            overlaps.append(
                _scan_row(
                    record="overlap",
                    cluster=cluster,
                    account=account,
                    stream=stream,
                    subject=subject,
                    offline=offline,
                    pairs=pairs,
                    overlaps=covered,
                )
            )
    if out:
        yield _asset_batch(schema, out, fin, tallies, ctx.profiles)
    if overlaps:
        batch = _batch(schema, overlaps)
        tally_others(batch.to_pylist(), fin, others)
        yield batch
    yield _tally_batch(schema, tallies, others)


def _tally_batch(
    schema: pa.Schema, tallies: Mapping[str, Tally], others: Tally
) -> pa.RecordBatch:
    """The ``_tally`` rows of a partition: one per cluster, one for the other entries."""
    encode = _msgpack_encoder().encode
    rows = [
        _scan_row(record=TALLY_ROW, cluster=cluster, _counts=encode(tally.partial()))
        for cluster, tally in sorted(tallies.items())
    ]
    rows.append(_scan_row(record=TALLY_ROW, _counts=encode(others.partial())))
    return _batch(schema, rows)


def _asset_batch(
    schema: pa.Schema,
    rows: list[tuple[Any, ...]],
    fin: Finish,
    tallies: dict[str, Tally],
    profiles: Mapping[str, ServerProfile],
) -> pa.RecordBatch:
    """Settled asset rows (``_ASSET_ROW`` with the ``Verdict``) -> one ``SCAN`` batch.

    Each cluster's verdicts are finished as if it were up (acceptances applied) and
    tallied in its own tally, with those that trigger its outcome rules (the
    causes); ``_verdict`` keeps the settled verdict for a down cluster's second pass.
    """
    import pyarrow as pa

    profile_of = functools.partial(target_profile, profiles)
    finished: list[Verdict] = []
    for cluster, group in itertools.groupby(rows, key=operator.itemgetter(0)):
        members = list(group)
        verdicts, marked = final_verdicts([row[_VERDICT] for row in members], fin)
        tally = tallies.get(cluster)
        if tally is None:
            tally = tallies[cluster] = Tally(fin.fail_on, len(fin.rules))
        tally_assets(
            tally, (row[:_PLACE_END] for row in members), verdicts, fin, profile_of
        )
        tally.add_matched(marked.accepted)
        # the settled verdicts that can take the cluster down (judge_clusters' input)
        rules = profile_of(cluster).cluster_outcomes if fin.mode == "cluster" else ()
        for row in members if rules else ():
            found = causes(rules, row[_VERDICT])
            if found:
                order = asset_order(row[:_PLACE_END])
                tally.add_cause(order, row[_VERDICT], [rule.id for rule in found])
        finished.extend(verdicts)
    encode = _msgpack_encoder().encode
    given: dict[str, Any] = dict(zip(_ASSET_ROW, zip(*rows, strict=True), strict=True))
    given["_verdict"] = [encode(row[_VERDICT]) for row in rows]
    given.update(
        zip(
            Verdict.__struct_fields__,
            verdict_arrays(finished, schema),
            strict=True,
        )
    )
    count = len(rows)
    arrays = [
        pa.repeat(pa.scalar("asset", field.type), count)
        if field.name == "record"
        else given[field.name]
        if isinstance(given.get(field.name), pa.Array)
        else pa.array(given[field.name], type=field.type)
        if field.name in given
        else pa.nulls(count, field.type)
        for field in schema
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


# positions in a settle entry (the ``_SETTLE_INPUT`` columns, then the Judged)
_FILE, _LINE, _RANK, _ENTRY, _HASH, _JUDGED = range(3, 9)
_account_key = operator.itemgetter(0, 1)
_stream_key = operator.itemgetter(0, 1, 2)
_input_order = operator.itemgetter(_RANK, _FILE, _LINE, _ENTRY)


def _scan_row(**values: object) -> tuple[object, ...]:
    """A ``SCAN`` row from column values by name (the others empty)."""
    return tuple(values.get(name) for name in _SCAN_NAMES)


def _passed_through(others: pa.Table, schema: pa.Schema) -> pa.Table:
    """Error, ignored and split rows in ``SCAN`` columns (as they came, others empty)."""
    import pyarrow as pa

    names = set(others.column_names)
    return pa.table(
        [
            others.column(field.name)
            if field.name in names
            else pa.nulls(others.num_rows, field.type)
            for field in schema
        ],
        schema=schema,
    )


def _settle_stream(
    rows: list[tuple[Any, ...]],
    profile: ServerProfile,
    out: list[tuple[Any, ...]],
    kept: list[tuple[str, tuple[str, ...], str]],
) -> None:
    """Settle one (cluster, account, stream) group as ``check`` does.

    The first stream record in input order is the stream; later ones are duplicates
    whose verdicts are kept unsettled (and the last one's state decides whether the
    stream takes part in overlaps, as in ``check``). Consumers are settled in name
    order, input order among equal names. Verdict rows go to ``out``; the stream's
    (name, subjects, state) goes to ``kept`` when it keeps its subjects.
    """
    rows = sorted(rows, key=_input_order)
    streams = [r for r in rows if r[_JUDGED].verdict.kind == "stream"]
    consumers = [r for r in rows if r[_JUDGED].verdict.kind != "stream"]
    settled = settle_key(
        [r[_JUDGED] for r in streams], [r[_JUDGED] for r in consumers], profile
    )
    if streams:
        first = streams[0][_JUDGED]
        if settled.state in KEEP_SUBJECTS:
            kept.append((first.verdict.stream, first.subjects, settled.state))
        out.append(_verdict_row(streams[0], settled.verdicts[0], 0, duplicate=False))
    offset = len(settled.verdicts) - len(consumers)
    for index, position in enumerate(settled.order):
        verdict = settled.verdicts[offset + index]
        out.append(
            _verdict_row(consumers[position], verdict, index + 1, duplicate=False)
        )
    for index, row in enumerate(streams[1:]):
        out.append(_verdict_row(row, row[_JUDGED].verdict, index, duplicate=True))


def _verdict_row(
    row: tuple[Any, ...], verdict: Verdict, position: int, *, duplicate: bool
) -> tuple[Any, ...]:
    """The ``_ASSET_ROW`` columns of a settled asset (its ``Verdict`` as it is)."""
    return (
        verdict.cluster,
        verdict.account,
        verdict.stream,
        duplicate,
        position,
        row[_RANK],
        row[_FILE],
        row[_LINE],
        row[_ENTRY],
        row[_HASH],
        verdict,
    )


def overlap_rows(
    streams: list[tuple[str, tuple[str, ...], str]],
) -> list[tuple[str, str, bool, int, list[dict[str, Any]]]]:
    """The overlaps of one account's streams, each pair grouped under its busier side.

    ``streams``: (name, subjects, state) of the streams that keep their subjects.
    :func:`find_overlaps` gives one row per overlapping pair (a catch-all ``>`` stream
    overlaps every other stream: n - 1 pairs). Each pair is attributed to the
    (stream, subject) side that takes part in more pairs (the earlier stream on a
    tie), and one row (stream, subject, offline, pairs, overlaps) is returned per such
    side, listing the others: a catch-all subject is one row, every pair appears
    exactly once, and ``pairs`` sums to ``check``'s overlap count.
    """
    ordered = sorted(streams, key=operator.itemgetter(0))
    offline = {name for name, _, state in ordered if state == "offline"}
    pairs = find_overlaps([(name, subjects) for name, subjects, _ in ordered])
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
    return [
        (
            stream,
            subject,
            stream in offline,
            len(others),
            [
                {"stream": s, "subject": sub, "offline": s in offline}
                for s, sub in sorted(others)
            ],
        )
        for (stream, subject), others in sorted(hubs.items())
    ]
