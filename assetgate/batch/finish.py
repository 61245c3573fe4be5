"""The scan's finishing of settled verdicts: final verdicts, their tally, the digest.

The settle stage finishes and tallies every verdict as if its cluster were up (the
common case: :func:`tally_assets`, :func:`tally_others`, :func:`verdict_arrays`).
Once the driver knows each cluster's outcome (from the causes the tallies keep), only
a down cluster's assets are finished again where they lie: :func:`final_verdicts`
marks them ``unavailable`` (:func:`~assetgate.judge.outcomes.mark_down`) and applies
the acceptances (:func:`~assetgate.judge.accept.apply_acceptances`), exactly as
``check``'s ``assemble`` does; :func:`asset_batches` turns them into rows of
``assets/`` and :func:`tally_batches` tallies them. :func:`digest_batches` hashes the
sorted per-asset hashes in one task, as :func:`~assetgate.run.collect.inventory_digest`
does. Nothing here holds more than one Arrow batch (and a partition's tally).
"""

from __future__ import annotations

import functools
import hashlib
import operator
from typing import TYPE_CHECKING, Any, Final

import msgspec

from assetgate.batch.arrow import decode_column, value_bytes
from assetgate.batch.schema import ASSET, DIGEST, TALLY, arrow_schema
from assetgate.inventory.read import Ignored
from assetgate.judge.accept import Accepted, apply_acceptances
from assetgate.judge.gate import Mode, Verdict
from assetgate.judge.outcomes import health_failures, mark_down
from assetgate.run.aggregate import Tally
from assetgate.run.collect import ErrorEntry, Overlap, target_profile

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

    import pyarrow as pa

    from assetgate.catalogue.levels import ServerProfile

__all__ = [
    "PLACE",
    "Finish",
    "asset_batches",
    "asset_order",
    "digest_batches",
    "final_verdicts",
    "overlap_order",
    "overlap_pairs",
    "record_entry",
    "record_order",
    "tally_assets",
    "tally_batches",
    "tally_others",
    "verdict_arrays",
]


class Finish(msgspec.Struct, frozen=True, kw_only=True):
    """What finishing a verdict needs besides the verdict, pickled to every task.

    Attributes:
        down: cluster -> the reason its assets get, for each cluster the target takes
            down (``judge_clusters``' second half).
        rules: the acceptances, ``(rule, pattern)``, in the order given.
        fail_on: what fails the run (``check``'s ``--fail-on``).
        mode: ``single`` or ``cluster``.
    """

    down: dict[str, str]
    rules: list[tuple[str, str]]
    fail_on: tuple[str, ...]
    mode: Mode


# the SCAN columns that place an asset in check's report order
PLACE: Final = (
    "cluster",
    "account",
    "stream",
    "_duplicate",
    "_position",
    "_rank",
    "source_file",
    "line",
    "_entry",
)


@functools.cache
def _verdicts_decoder() -> msgspec.msgpack.Decoder[list[Verdict]]:
    return msgspec.msgpack.Decoder(list[Verdict])


def asset_order(place: Sequence[Any]) -> tuple[Any, ...]:
    """An asset's place in ``check``'s report order, from its ``PLACE`` columns.

    Settled assets by (cluster, account, stream, position: the stream first, then its
    consumers by name), then duplicate stream records in input order.
    """
    cluster, account, stream, duplicate, position, rank, name, line, entry = place
    if duplicate:
        return (1, rank, name, line, entry)
    return (0, cluster, account, stream, position)


def record_order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """A record error's or ignored record's place in report order: input order."""
    return (row["_rank"], row["source_file"], row["line"], row["_entry"])


def final_verdicts(
    settled: Sequence[Verdict], fin: Finish
) -> tuple[list[Verdict], Accepted]:
    """Settled verdicts as the report holds them, and what each acceptance matched.

    Marked ``unavailable`` when their cluster is down, then covered by the
    acceptances, as ``check``'s ``assemble`` does.
    """
    marked = apply_acceptances(mark_down(settled, fin.down), [], fin.rules)
    return marked.verdicts, marked


def verdict_arrays(verdicts: Sequence[Verdict], schema: pa.Schema) -> list[pa.Array]:
    """The ``Verdict`` fields of ``verdicts``, one Arrow array each, typed by ``schema``.

    One field at a time: no row tuples for the cyclic GC to track and walk.
    """
    import pyarrow as pa

    return [
        pa.array(
            map(operator.attrgetter(name), verdicts),
            schema.field(name).type,
            size=len(verdicts),
        )
        for name in Verdict.__struct_fields__
    ]


def tally_assets(
    tally: Tally,
    places: Iterable[Sequence[Any]],
    verdicts: Sequence[Verdict],
    fin: Finish,
    profile_of: Callable[[str], ServerProfile],
) -> None:
    """Final verdicts (with their ``PLACE`` columns) into ``tally``, health included."""
    for place, verdict in zip(places, verdicts, strict=True):
        order = asset_order(place)
        tally.add_asset(order, verdict)
        if verdict.check is not None and verdict.state == "unloadable":
            for failure in health_failures([verdict], fin.mode, profile_of):
                tally.add_health(order, failure)


def asset_batches(
    fin: Finish, batches: Iterable[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """A down cluster's settled asset rows -> rows of ``assets/`` (``ASSET``)."""
    import pyarrow as pa

    schema = arrow_schema(ASSET)
    for batch in batches:
        if not batch.num_rows:
            continue
        verdicts, _ = final_verdicts(_settled(batch), fin)
        arrays = verdict_arrays(verdicts, schema)
        arrays += [batch.column("source_file"), batch.column("line")]
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)


def tally_batches(
    profiles: Mapping[str, ServerProfile],
    fin: Finish,
    batches: Iterable[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """A down cluster's settled asset rows -> one tally row for the partition."""
    import pyarrow as pa

    tally = Tally(fin.fail_on, len(fin.rules))
    profile_of = functools.partial(target_profile, profiles)
    for batch in batches:
        if not batch.num_rows:
            continue
        verdicts, marked = final_verdicts(_settled(batch), fin)
        places = zip(*(batch.column(name).to_pylist() for name in PLACE), strict=True)
        tally_assets(tally, places, verdicts, fin, profile_of)
        tally.add_matched(marked.accepted)
    yield pa.RecordBatch.from_pylist(
        [{"_partial": msgspec.msgpack.encode(tally.partial())}],
        schema=arrow_schema(TALLY),
    )


def _settled(batch: pa.RecordBatch) -> list[Verdict]:
    import pyarrow as pa

    return decode_column(
        pa.chunked_array([batch.column("_verdict")]), _verdicts_decoder()
    )


def tally_others(rows: Iterable[dict[str, Any]], fin: Finish, tally: Tally) -> None:
    """Overlap, error and ignored rows (``SCAN`` columns as dicts) into ``tally``."""
    rows = list(rows)
    pairs = [
        pair
        for row in rows
        if row["record"] == "overlap"
        for pair in overlap_pairs(row)
    ]
    errors: list[tuple[tuple[Any, ...], ErrorEntry]] = []
    ignored: list[tuple[tuple[Any, ...], Ignored]] = []
    for row in rows:
        if row["record"] in {"error", "ignored"}:
            entry = record_entry(row)
            if isinstance(entry, ErrorEntry):
                errors.append((record_order(row), entry))
            else:
                ignored.append((record_order(row), entry))
    marked = apply_acceptances(
        [],
        pairs,
        fin.rules,
        errors=[e for _, e in errors],
        ignored=[i for _, i in ignored],
    )
    for overlap in marked.overlaps:
        tally.add_overlap(overlap_order(overlap), overlap)
    for (order, _), error in zip(errors, marked.errors, strict=True):
        tally.add_error(order, error)
    for (order, _), item in zip(ignored, marked.ignored, strict=True):
        tally.add_ignored(order, item)
    tally.add_matched(marked.accepted)


def record_entry(row: dict[str, Any]) -> ErrorEntry | Ignored:
    """The report entry of an ``error`` or ``ignored`` row, as ``check`` reports it."""
    if row["record"] == "error":
        return ErrorEntry(
            source=row["source"], message=row["message"], retriable=row["retriable"]
        )
    return Ignored(source=row["source"], reason=row["reason"])


def overlap_order(overlap: Overlap) -> tuple[str, str, tuple[str, str]]:
    """``check``'s order of overlaps: by account, then by the pair of streams."""
    return (overlap.cluster, overlap.account, overlap.streams)


def overlap_pairs(row: dict[str, Any]) -> list[Overlap]:
    """``check``'s one-entry-per-pair overlaps of one ``overlaps/`` row (a busy side)."""
    hub = (row["stream"], row["subject"], bool(row["offline"]))
    out: list[Overlap] = []
    for other in row["overlaps"]:
        a, b = sorted(
            [hub, (other["stream"], other["subject"], bool(other["offline"]))]
        )
        out.append(
            Overlap(
                cluster=row["cluster"],
                account=row["account"],
                streams=(a[0], b[0]),
                subjects=(a[1], b[1]),
                offline=tuple(side[0] for side in (a, b) if side[2]),
            )
        )
    return out


def digest_batches(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The per-asset hashes (``_hash``), sorted, of one task -> the inventory digest."""
    import pyarrow as pa

    digest = hashlib.sha256()
    count = 0
    for batch in batches:
        chunk = batch.column("_hash")
        count += len(chunk)
        if not len(chunk):
            continue
        # the values lie back to back in the data buffer: hash them in one call
        digest.update(value_bytes(chunk))
    yield pa.RecordBatch.from_pylist(
        [{"digest": digest.hexdigest(), "hashes": count}], schema=arrow_schema(DIGEST)
    )
