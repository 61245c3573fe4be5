"""Judge JSON Lines inventories on every core: a process pool over byte ranges.

Judging (decoding every config as the target does) is the costly part of ``check`` and
each asset is judged on its own, so a file is cut into ranges at line boundaries and
each worker reads, parses and judges its range. Workers return compact results
(:class:`~assetgate.judge.gate.Judged`, no config bytes); the parent settles streams with
their consumers, which needs the whole inventory, while the workers find subject
overlaps per account. Files that are not line-oriented (a pretty-printed document)
are read by the parent as usual.
"""

from __future__ import annotations

import heapq
import mmap
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

import msgspec

from assetgate.inventory.read import (
    Ignored,
    RecordError,
    line_records_with,
)
from assetgate.judge.gate import Judged, Mode
from assetgate.judge.subjects import find_overlaps
from assetgate.run.collect import AccountKey, Collision, LineJudge
from assetgate.wire import FAST_DECODE_FAILURES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from assetgate.catalogue.levels import Catalogue, ServerProfile

__all__ = ["Item", "JudgePool", "Span", "split_files"]

MIN_CHUNK: Final = 4 * 1024 * 1024  # smaller files are not worth a worker
Span = tuple[int, int, int]  # (start, end, first line number) of a range of a file

# (hash of the asset, its judgement) or a record that is not an asset
Item = tuple[bytes, Judged] | RecordError | Ignored


class _Chunk(msgspec.Struct, frozen=True):
    """What a worker sends back: compact msgpack, not pickled objects."""

    hashes: list[bytes]
    judged: list[Judged]
    errors: list[RecordError]
    ignored: list[Ignored]


_CHUNK: Final = msgspec.msgpack.Decoder(_Chunk)
_STATE: dict[str, Any] = {}


def _initialise(
    profiles: dict[str, ServerProfile], mode: Mode, catalogue: Catalogue
) -> None:
    """Give a worker the targets and the catalogue once, not with every range."""
    _STATE.update(profiles=profiles, mode=mode, catalogue=catalogue)


class JudgePool:
    """Worker processes that judge byte ranges of files and find overlaps per account.

    Use as a context manager: :meth:`judge_files`, then :meth:`find_overlaps`, whose
    answer is collected while this process settles streams with their consumers.
    """

    def __init__(
        self,
        *,
        profiles: dict[str, ServerProfile],
        mode: Mode,
        catalogue: Catalogue,
        workers: int,
    ) -> None:
        """``workers`` processes, each judging against ``profiles`` in ``mode``."""
        self.workers = workers
        context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_initialise,
            initargs=(profiles, mode, catalogue),
        )

    def __enter__(self) -> Self:
        """The pool itself."""
        return self

    def __exit__(self, *_: object) -> None:
        """Stop the workers, cancelling work not started."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def judge_files(
        self, plans: list[tuple[str, list[Span]]]
    ) -> Iterator[tuple[str, list[Item] | None]]:
        """Judge files in their ranges (:func:`split_files`); yield (path, items) per range.

        Every range of every file is submitted at once, and each range's items are
        yielded as soon as it is judged, so the caller takes them in while the
        workers judge the next ones. A path that cannot be split (too small,
        unreadable, or not plainly JSON Lines: a byte-order mark, or a first line
        that is not a whole JSON value, as in a pretty-printed document: no ranges) is
        yielded once with ``None``, in input order, and must be read by the caller. A range's items are its
        assets, then its errors, then its ignored records, each in input order.
        """
        submitted = [
            [self._pool.submit(_judge_range, path, span) for span in ranges]
            for path, ranges in plans
        ]
        for (path, _), futures in zip(plans, submitted, strict=True):
            if not futures:
                yield path, None
                continue
            for future in futures:
                chunk = _CHUNK.decode(future.result())
                items: list[Item] = list(zip(chunk.hashes, chunk.judged, strict=True))
                items.extend(chunk.errors)
                items.extend(chunk.ignored)
                yield path, items

    def find_overlaps(
        self, groups: dict[AccountKey, list[tuple[str, tuple[str, ...]]]]
    ) -> Callable[[], dict[AccountKey, list[Collision]]]:
        """Start finding the collisions of each account; the returned call waits.

        Accounts with one stream cannot collide and are left out; the others are
        dealt, largest first, into one batch per worker.
        """
        batches: list[list[tuple[AccountKey, list[tuple[str, tuple[str, ...]]]]]] = [
            [] for _ in range(self.workers)
        ]
        loads = [(0, index) for index in range(self.workers)]
        for key, streams in sorted(
            groups.items(), key=lambda item: (-len(item[1]), item[0])
        ):
            if len(streams) < 2:  # noqa: PLR2004 - a pair needs two
                continue
            load, index = heapq.heappop(loads)
            batches[index].append((key, streams))
            heapq.heappush(loads, (load + len(streams), index))
        futures = [self._pool.submit(_collisions, batch) for batch in batches if batch]

        def result() -> dict[AccountKey, list[Collision]]:
            found: dict[AccountKey, list[Collision]] = {}
            for future in futures:
                found.update(future.result())
            return found

        return result


def split_files(paths: list[str], workers: int) -> list[tuple[str, list[Span]]]:
    """Each file with its ranges for ``workers`` processes ([]: read it in one piece)."""
    return [(path, _ranges(path, workers)) for path in paths]


def _collisions(
    batch: list[tuple[AccountKey, list[tuple[str, tuple[str, ...]]]]],
) -> dict[AccountKey, list[Collision]]:
    return {key: find_overlaps(streams) for key, streams in batch}


def _ranges(path: str, workers: int) -> list[Span]:
    """(start, end, first line number) per chunk, cut after newlines; [] to not split."""
    try:
        size = Path(path).stat().st_size
        if size < MIN_CHUNK * 2:
            return []
        with Path(path).open("rb") as handle:
            first = handle.readline(MIN_CHUNK)
            if not _whole_value(first):
                return []  # a document over many lines, a BOM, a bad first line
            view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError:
        return []
    with view:
        count = max(workers * 4, 2)
        step = max(size // count, MIN_CHUNK)
        out: list[Span] = []
        start, line = 0, 1
        while start < size:
            end = view.find(b"\n", min(start + step, size))
            end = size if end < 0 else end + 1
            out.append((start, end, line))
            line += view[start:end].count(b"\n")
            start = end
        return out


def _whole_value(line: bytes) -> bool:
    """Whether a first line is one complete JSON object on its own."""
    text = line.strip()
    if not text.startswith(b"{"):
        return False
    try:
        msgspec.json.decode(text)
    except FAST_DECODE_FAILURES:
        return False
    return True


def _judge_range(path: str, span: Span) -> bytes:
    profiles: dict[str, ServerProfile] = _STATE["profiles"]
    mode: Mode = _STATE["mode"]
    catalogue: Catalogue = _STATE["catalogue"]
    start, end, first_line = span
    chunk = _Chunk(hashes=[], judged=[], errors=[], ignored=[])
    with Path(path).open("rb") as handle:
        handle.seek(start)
        data = handle.read(end - start)
    number = first_line
    judge_line = LineJudge(profiles, mode, catalogue)
    for line in data.split(b"\n"):
        # files with a BOM are not split, so no range holds the first record's BOM
        source = f"{path}:{number}"
        for found in line_records_with(line, source, first=False, read=judge_line):
            if isinstance(found, RecordError):
                chunk.errors.append(found)
            elif isinstance(found, Ignored):
                chunk.ignored.append(found)
            else:
                chunk.hashes.append(found.digest)
                chunk.judged.append(found.judged)
        number += 1
    return msgspec.msgpack.encode(chunk)
