"""Read inventories of JetStream assets: what operators already have, one record at a time.

Formats are detected per record (KIP-915: a record of a kind the gate does not know is
ignored and counted, never fatal; KIP-467: a malformed record becomes an error that
names its source, and the run goes on). Every input record ends up as exactly one
:class:`Asset`, :class:`RecordError` or :class:`Ignored`.

The config of each asset is kept as the raw JSON bytes it had in the input
(``msgspec.Raw``), so that the gate decodes exactly what the server would read:
duplicate keys, key case and unknown fields survive.

Formats read (field names as in nats-server 2.12 ``server/jetstream_api.go``,
``stream.go``, ``consumer.go`` and ``monitor.go``): canonical JSON Lines, JetStream
API ``STREAM.INFO``/``CONSUMER.INFO`` responses and ``STREAM.LIST``/``CONSUMER.LIST``
pages, ``nats stream info --json`` output, and ``/jsz`` documents (also wrapped in a
``$SYS`` server API response); see :func:`read_records` for how each is detected.

This module does not decode or judge configs (``decode`` and ``gate`` do) and does no
network I/O: it reads files and bytes. It is longer than the size guide's ~400 lines
because every format, its detection and its error texts belong together here, and
only this module may change for it.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import io
import os
import re
import stat
from typing import (
    TYPE_CHECKING,
    BinaryIO,
    Final,
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    assert_never,
)

import msgspec
from msgspec.json import Decoder as _Decoder

from assetgate.wire import (
    DECODE_FAILURES,
    DEFAULT_ACCOUNT,
    FAST_DECODE_FAILURES,
    GO_ZERO_TIME,
    AssetKind,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "TRANSIENT_ERR_CODES",
    "Asset",
    "CanonicalHead",
    "Ignored",
    "InventoryEntry",
    "RecordError",
    "canonical_head",
    "line_data",
    "line_records",
    "line_records_with",
    "plain_names",
    "read_inventory",
    "read_inventory_bytes",
    "read_inventory_stream",
    "read_inventory_with",
    "read_records",
    "too_long",
    "too_long_error",
]


class Asset(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One stream or consumer as stored on a server.

    Attributes:
        source: where the record came from, ``file:line`` (``file:line#n`` for the n-th
            entry of a list page or document on that line, counting from 1).
        cluster: the cluster name ("" when unknown).
        account: the account name (``$G`` when unknown).
        kind: ``stream`` or ``consumer``.
        stream: the stream's name (for a stream, its own name).
        name: the asset's name.
        config: the stored config, raw JSON bytes as in the input.
        created: the creation time (RFC 3339) when the input has it.
        observed_state: what the source says the server did with it (``offline`` from a
            list page's ``offline`` map, ``missing`` from its ``missing`` list), if anything.
        observed_reason: the server's offline reason, when observed.
        server_version: the version of the server that reported it, when known.
    """

    source: str
    cluster: str = ""
    account: str = DEFAULT_ACCOUNT
    kind: AssetKind
    stream: str
    name: str
    config: bytes
    created: str | None = None
    observed_state: str | None = None
    observed_reason: str | None = None
    server_version: str | None = None


class RecordError(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A record that could not be read: its source, why, and whether retrying may help."""

    source: str
    message: str
    retriable: bool = False


class Ignored(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A well-formed record of a kind the gate does not know (counted, not fatal).

    ``accepted``: the ``--accept ignored:GLOB`` that covers it in a report (the reader
    leaves it ``None``).
    """

    source: str
    reason: str
    accepted: str | None = None


InventoryEntry: TypeAlias = Asset | RecordError | Ignored
"""What reading yields for each input record."""

# Limits, documented in read_inventory's docstring.
MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""A JSON Lines record holds one config, which the server never takes above 64 MiB
(:data:`assetgate.decoding.decode.MAX_CONFIG_BYTES`)."""
MAX_DOCUMENT_BYTES: Final = 512 * 1024 * 1024
"""A file read as JSON documents (pretty ``/jsz`` dumps, concatenated INFO replies) is
read whole: one document may hold many configs, so the cap is a memory bound, not a
server limit."""
_SKIP_CHUNK: Final = 1024 * 1024
_BOM: Final = b"\xef\xbb\xbf"
_JSON_SPACE: Final = b" \t\r\n"
_TRUNCATED: Final = "Input data was truncated"
_JSZ_HINT: Final = "request /jsz?accounts=true&streams=true&consumers=true&config=true"
_API: Final = "io.nats.jetstream.api.v1."
# records ``assetgate pull`` writes besides assets (read by ``check --compare-observed``)
_PULL_KINDS: Final = {
    "server": "server record of assetgate pull (which server was asked), not an asset",
    "cluster": "cluster observation of assetgate pull (its JetStream API), not an asset",
}
_LIST_TYPES: Final = {
    _API + "stream_list_response": "stream",
    _API + "consumer_list_response": "consumer",
}
_NAMES_TYPES: Final = frozenset(
    {_API + "stream_names_response", _API + "consumer_names_response"}
)
# JSStreamOfflineReasonErrF / JSConsumerOfflineReasonErrF (nats-server 2.12): the server
# does not support the stored config, so the response cannot carry it.
_UNSUPPORTED_ERR_CODES: Final = frozenset({10194, 10195})
# JSClusterNotAvailErr, JSStreamOfflineErr, JSConsumerOfflineErr: peers or the meta
# leader are away; asking again later can succeed.
TRANSIENT_ERR_CODES: Final = frozenset({10008, 10118, 10119})
_TRANSIENT_ERRNOS: Final = frozenset(
    {
        errno.EIO,
        errno.EAGAIN,
        errno.EWOULDBLOCK,
        errno.ETIMEDOUT,
        errno.EINTR,
        errno.EBUSY,
        errno.ESTALE,
        errno.ENFILE,
        errno.EMFILE,
    }
)
_BYTE_OFFSET: Final = re.compile(r"\(byte (\d+)\)")

_Field: TypeAlias = msgspec.Raw | msgspec.UnsetType
_T = TypeVar("_T")
_ReadLine: TypeAlias = "Callable[[bytes, str], Iterable[_T]]"
"""How a plain line's JSON is read: :func:`read_records`, or a reader standing for it."""


class _Record(msgspec.Struct, frozen=True):
    """Top-level keys of every format read here, kept raw until the format is known.

    Every field is ``Raw`` so that an unknown shape never fails here (it is ignored
    later), values are only decoded once the format is known, and configs keep their
    bytes exactly. Unknown keys are allowed.
    """

    # canonical JSON Lines
    kind: _Field = msgspec.UNSET
    config: _Field = msgspec.UNSET
    stream: _Field = msgspec.UNSET
    cluster: _Field = msgspec.UNSET
    account: _Field = msgspec.UNSET
    created: _Field = msgspec.UNSET
    observed_state: _Field = msgspec.UNSET
    observed_reason: _Field = msgspec.UNSET
    server_version: _Field = msgspec.UNSET
    # JetStream API responses (ApiResponse, StreamInfo, ConsumerInfo, list pages)
    type: _Field = msgspec.UNSET
    error: _Field = msgspec.UNSET
    state: _Field = msgspec.UNSET
    stream_name: _Field = msgspec.UNSET
    name: _Field = msgspec.UNSET
    streams: _Field = msgspec.UNSET
    consumers: _Field = msgspec.UNSET
    missing: _Field = msgspec.UNSET
    offline: _Field = msgspec.UNSET
    # /jsz (JSInfo, AccountDetail, StreamDetail) and $SYS ServerAPIResponse
    server_id: _Field = msgspec.UNSET
    meta_cluster: _Field = msgspec.UNSET
    account_details: _Field = msgspec.UNSET
    id: _Field = msgspec.UNSET
    stream_detail: _Field = msgspec.UNSET
    consumer_detail: _Field = msgspec.UNSET
    direct_consumer_detail: _Field = msgspec.UNSET
    server: _Field = msgspec.UNSET
    data: _Field = msgspec.UNSET


class _ConfigNames(msgspec.Struct, frozen=True):
    """Lenient view of a config: only the keys that name the asset (exact case)."""

    name: str = ""
    durable_name: str = ""


class _NameView(msgspec.Struct, frozen=True):
    """``ClusterInfo`` and ``MetaClusterInfo``: only the cluster's name."""

    name: str = ""


class _ServerView(msgspec.Struct, frozen=True):
    """``ServerInfo`` of a $SYS server API response: where the data came from."""

    cluster: str = ""
    ver: str = ""


class _ApiErrorView(msgspec.Struct, frozen=True):
    """``ApiError`` of a JetStream API response."""

    code: int = 0
    err_code: int = 0
    description: str = ""


# Built once (msgspec's advice); union types need their decoder type spelled out.
_ANY: Final[_Decoder[_Record | list[msgspec.Raw]]] = _Decoder(
    _Record | list[msgspec.Raw]
)
_OBJECT: Final = _Decoder(_Record)
_RAW: Final = _Decoder(msgspec.Raw)
_ARRAY: Final[_Decoder[list[msgspec.Raw] | None]] = _Decoder(list[msgspec.Raw] | None)
_TEXT: Final[_Decoder[str | None]] = _Decoder(str | None)
_TEXTS: Final[_Decoder[list[str] | None]] = _Decoder(list[str] | None)
_TEXT_MAP: Final[_Decoder[dict[str, str] | None]] = _Decoder(dict[str, str] | None)
_CONFIG_NAMES: Final = _Decoder(_ConfigNames)
_NAME_VIEW: Final[_Decoder[_NameView | None]] = _Decoder(_NameView | None)
_SERVER_VIEW: Final[_Decoder[_ServerView | None]] = _Decoder(_ServerView | None)
_API_ERROR: Final = _Decoder(_ApiErrorView)


class _LineReader(Protocol):
    """What lines are read from: a binary file, ``io.BytesIO`` or :class:`_Chain`."""

    def readline(self, size: int = -1, /) -> bytes: ...


class _Reader(_LineReader, Protocol):
    """A binary file or ``io.BytesIO``: lines, and the rest at once."""

    def read(self, size: int = -1, /) -> bytes: ...


class _Malformed(Exception):
    """A record (or one entry of it) that cannot be read; the text is the message."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Context:
    """Defaults an enclosing document gives its entries."""

    cluster: str = ""
    account: str = DEFAULT_ACCOUNT
    server_version: str | None = None


class _Sources:
    """Hands out sources: the record's own, or ``#n`` per entry of a container."""

    __slots__ = ("base", "count", "numbered")

    def __init__(self, base: str, *, numbered: bool) -> None:
        self.base = base
        self.numbered = numbered
        self.count = 0

    def next(self) -> str:
        """The source of the next entry produced from this record."""
        self.count += 1
        return f"{self.base}#{self.count}" if self.numbered else self.base


class _Chain:
    """Bytes already read from a stream, followed by the rest of that stream."""

    def __init__(self, head: bytes, tail: _LineReader) -> None:
        self._head = io.BytesIO(head)
        self._tail = tail

    def readline(self, size: int = -1, /) -> bytes:
        line = self._head.readline(size)
        if line.endswith(b"\n") or (size >= 0 and len(line) >= size):
            return line
        return line + self._tail.readline(-1 if size < 0 else size - len(line))


# --- public API -------------------------------------------------------------------------


def read_inventory(
    sources: Iterable[str | os.PathLike[str]],
) -> Iterator[InventoryEntry]:
    """Read inventory files lazily, one record at a time, in input order.

    Each file is read line by line in binary mode, so a large JSON Lines file is never
    held in memory. The format is detected per record (see :func:`read_records`).
    Blank lines are skipped and not counted; every other line yields at least one
    entry, so that every record ends up as an :class:`Asset`, a :class:`RecordError`
    or an :class:`Ignored`.

    Pretty-printed documents: when the first non-blank line of a file starts an
    object or array that is cut short at the end of that line, the rest of the file
    (if the file is under 512 MiB) is read as JSON documents, one after another
    (pretty-printed or not, as ``nats stream info --json`` of several streams prints
    them); each document's entries have the source of the line it starts on
    (``file:LINE#n`` for a list). A document that does not parse is one error at its
    line, naming the line where it breaks, and reading goes on at the next line that
    starts with ``{`` or ``[``.

    A line over 64 MiB becomes an error without being kept whole in memory; a file
    that cannot be opened or read becomes one error naming it (``retriable`` for
    transient causes such as ``EIO``, ``EAGAIN`` or timeouts, not for a missing file
    or a permission problem).

    Args:
        sources: paths of inventory files, read in order; nothing is opened before
            the returned iterator is advanced.

    Returns:
        An iterator of entries with sources ``file:line`` or ``file:line#n``.
    """
    for source in sources:
        yield from _read_path(source, read_records)


def read_inventory_with(
    sources: Iterable[str | os.PathLike[str]], read: _ReadLine[_T]
) -> Iterator[InventoryEntry | _T]:
    """:func:`read_inventory`, with each plain line's JSON read by ``read``.

    A plain line is one that is not a file's first record (which may start a
    pretty-printed document) nor too long: :func:`read_inventory` gives its JSON and
    source to :func:`read_records`. ``read`` takes its place, and must stand for what
    :func:`read_records` would answer (``check`` reads and judges a plain canonical
    record in one pass, and leaves any other line to :func:`read_records`).
    """
    for source in sources:
        yield from _read_path(source, read)


def read_inventory_stream(stream: BinaryIO, name: str) -> Iterator[InventoryEntry]:
    """Read an open binary stream (such as ``sys.stdin.buffer``) as one inventory file.

    Args:
        stream: read with ``readline`` and ``read`` only; it is not closed here.
        name: the file name that sources start with.

    Returns:
        An iterator of entries, as :func:`read_inventory` yields them for a file.
    """
    return _read_stream(stream, name, read=read_records)


def read_inventory_bytes(data: bytes, name: str) -> Iterator[InventoryEntry]:
    """Read an in-memory inventory file (JSON Lines or one pretty-printed document).

    Args:
        data: the file's bytes.
        name: the file name that sources start with.

    Returns:
        An iterator of entries, as :func:`read_inventory` yields them for a file.
    """
    return _read_stream(io.BytesIO(data), name, read=read_records)


def too_long(line: bytes) -> bool:
    """Whether a line is too long to read: ``MAX_LINE_BYTES`` or more without its newline.

    Every runner (the file reader, ``check``'s worker processes, the Spark scan) applies
    this one rule, so a line is an error or a record whatever reads it.
    """
    return len(line) - line.endswith(b"\n") >= MAX_LINE_BYTES


def too_long_error(source: str) -> RecordError:
    """The record error of a line :func:`too_long` finds."""
    message = f"line too long: {MAX_LINE_BYTES} bytes or more, not read"
    return RecordError(source=source, message=message)


def line_data(line: bytes, *, first: bool) -> bytes:
    """The JSON of an inventory line, as the file reader reads it (empty: blank).

    JSON whitespace around it is removed, and a UTF-8 byte-order mark when the line is
    the file's first non-blank one.
    """
    data = line.strip(_JSON_SPACE)
    if first and data.startswith(_BOM):
        data = data[len(_BOM) :].lstrip(_JSON_SPACE)
    return data


def line_records(line: bytes, source: str, *, first: bool) -> Sequence[InventoryEntry]:
    """The records of one inventory line, as every runner reads it.

    A line :func:`too_long` is one error; a blank one (see :func:`line_data`) holds
    none; any other holds at least one entry (a record, an error or an ignored one).
    ``first``: the line is the file's first non-blank one (it may start with a BOM).
    """
    return line_records_with(line, source, first=first, read=read_records)


def line_records_with(
    line: bytes,
    source: str,
    *,
    first: bool,
    read: Callable[[bytes, str], Sequence[_T]],
) -> Sequence[RecordError | _T]:
    """:func:`line_records`, with the line's JSON read by ``read``.

    ``read`` stands for :func:`read_records` (see :func:`read_inventory_with`).
    """
    if too_long(line):
        return [too_long_error(source)]
    data = line_data(line, first=first)
    return read(data, source) if data else ()


def read_records(data: bytes, source: str) -> list[InventoryEntry]:
    """Read one line or one JSON document of an inventory.

    Formats, detected by the top-level keys of each object:

    - canonical: ``kind`` (``stream``/``consumer``; any other kind is ignored) and
      ``config``, optionally ``stream``, ``cluster``, ``account``, ``created``,
      ``observed_state``, ``observed_reason`` and ``server_version``;
    - ``$JS.API.STREAM.INFO`` responses and ``nats stream info --json`` (``config``
      with ``state`` or ``created``), ``$JS.API.CONSUMER.INFO`` responses (``config``
      with ``stream_name``), and their error responses (``error``);
    - ``STREAM.LIST``/``CONSUMER.LIST`` pages (an array in ``streams`` or
      ``consumers``): one entry per item, then an error for each name in ``offline`` or
      ``missing`` whose config the page does not carry;
    - ``/jsz`` documents (``account_details``, or ``server_id`` with a count in
      ``streams``), a single account's ``/jsz?acc=`` detail (``stream_detail``), and
      either wrapped in a ``$SYS`` server API response (``server`` and ``data``);
    - a JSON array: each element is read as a record of its own.

    Anything else that is valid JSON (advisories, numbers, strings) is ignored.

    Args:
        data: the bytes of the line or document; surrounding whitespace is allowed.
        source: the record's source, such as ``file:line``.

    Returns:
        The entries, each with ``source``, or ``source#n`` (n from 1) for the entries
        of an array, list page or ``/jsz`` document. Blank input yields none.
    """
    data = data.strip(_JSON_SPACE)
    if not data:
        return []
    fast = _fast_canonical(data, source)
    if fast is not None:
        return [fast]
    misspelt = _unknown_canonical_key(data)
    if misspelt is not None:
        return [RecordError(source=source, message=misspelt)]
    try:
        record = _decode(data)
    except _Malformed as exc:
        return [RecordError(source=source, message=str(exc))]
    except RecursionError:
        return [RecordError(source=source, message=_too_deep())]
    return _dispatch_guarded(record, source)


# --- reading files ------------------------------------------------------------------------


def _read_path(
    path: str | os.PathLike[str], read: _ReadLine[_T]
) -> Iterator[InventoryEntry | _T]:
    name = os.fspath(path)
    try:
        stream = open(path, "rb")  # noqa: PTH123, SIM115 -- closed by the with below
    except OSError as exc:
        yield RecordError(
            source=name,
            message=f"cannot open inventory: {_describe(exc)}",
            retriable=_is_transient(exc),
        )
        return
    with stream:
        info = os.fstat(stream.fileno())
        size = info.st_size if stat.S_ISREG(info.st_mode) else None
        yield from _read_stream(stream, name, size=size, read=read)


def _read_stream(
    stream: _Reader,
    name: str,
    *,
    size: int | None = None,
    read: _ReadLine[_T],
) -> Iterator[InventoryEntry | _T]:
    reader: _LineReader = stream
    line_no = 0
    first = True
    while True:
        try:
            line = reader.readline(MAX_LINE_BYTES + 1)
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                _skip_line(reader)
        except OSError as exc:
            yield RecordError(
                source=f"{name}:{line_no + 1}",
                message=f"cannot read inventory: {_describe(exc)}",
                retriable=_is_transient(exc),
            )
            return
        if not line:
            return
        line_no += 1
        source = f"{name}:{line_no}"
        if too_long(line):
            yield too_long_error(source)
            first = False
            continue
        data = line_data(line, first=first)
        if not data:
            continue
        if first:
            first = False
            entries, rest = _read_first(data, stream, name, line_no, size)
            yield from entries
            if rest is None:
                return
            if rest:
                reader = _Chain(rest, reader)
            continue
        yield from read(data, source)


def _read_first(
    data: bytes, reader: _Reader, name: str, line_no: int, size: int | None
) -> tuple[list[InventoryEntry], bytes | None]:
    """Read the first record, as the start of a whole-file document if it is cut short.

    Returns the entries and the bytes read ahead that line-by-line reading must still
    see, or ``None`` when the whole stream was one document.
    """
    source = f"{name}:{line_no}"
    try:
        record = _decode(data)
    except _Malformed as exc:
        error = RecordError(source=source, message=str(exc))
        if str(exc) != f"invalid JSON: {_TRUNCATED}" or data[:1] not in {b"{", b"["}:
            return [error], b""
        if size is not None and size >= MAX_DOCUMENT_BYTES:
            return [error], b""
        try:
            rest = reader.read(MAX_DOCUMENT_BYTES - len(data))
        except OSError as read_exc:
            failed = RecordError(
                source=f"{name}:{line_no + 1}",
                message=f"cannot read inventory: {_describe(read_exc)}",
                retriable=_is_transient(read_exc),
            )
            return [error, failed], None
        return _documents(data + b"\n" + rest, name, line_no), None
    except RecursionError:
        return [RecordError(source=source, message=_too_deep())], b""
    misspelt = _unknown_canonical_key(data)
    if misspelt is not None:
        return [RecordError(source=source, message=misspelt)], b""
    return _dispatch_guarded(record, source), b""


_TRAILING: Final = re.compile(r"trailing characters \(byte (\d+)\)")
_DOCUMENT_START: Final = re.compile(rb"\n[{\[]")


def _documents(document: bytes, name: str, first_line: int) -> list[InventoryEntry]:
    """A file of pretty-printed or concatenated JSON documents, from ``first_line``.

    Each document's entries have the source of the line it starts on. A document that
    does not parse is one error at that line, naming the line where it breaks; reading
    goes on at the next line that starts with ``{`` or ``[`` in its first column (where
    pretty-printed documents, and JSON Lines records, start).
    """
    entries: list[InventoryEntry] = []
    pos, end = 0, len(document)
    view = memoryview(document)  # slices without copying the rest of the file
    while True:
        while pos < end and document[pos] in b" \t\r\n":
            pos += 1
        if pos >= end:
            return entries
        line = first_line + document.count(b"\n", 0, pos)
        source = f"{name}:{line}"
        chunk = view[pos:]
        try:
            value = _decode(chunk)  # type: ignore[arg-type]  # any buffer decodes
        except _Malformed as exc:
            trailing = _TRAILING.search(str(exc))
            if trailing is not None:  # a whole document, and another after it
                size = int(trailing.group(1)) - 1
                entries += _dispatch_guarded(_decode(bytes(chunk[:size])), source)
                pos += size
                continue
            why = _with_line(str(exc), bytes(chunk), line)
            entries.append(RecordError(source=source, message=why))
        except RecursionError:
            entries.append(RecordError(source=source, message=_too_deep()))
        else:
            return entries + _dispatch_guarded(value, source)
        following = _DOCUMENT_START.search(chunk)
        if following is None:
            return entries
        pos += following.start() + 1


def _skip_line(reader: _LineReader) -> None:
    """Read past the rest of an over-long line, a chunk at a time."""
    while True:
        chunk = reader.readline(_SKIP_CHUNK)
        if not chunk or chunk.endswith(b"\n"):
            return


def _with_line(message: str, document: bytes, first_line: int) -> str:
    """Replace the byte offset in a msgspec message by the file's line number."""
    match = _BYTE_OFFSET.search(message)
    if match is None:
        return message
    line = first_line + document.count(b"\n", 0, int(match.group(1)))
    return f"{message[: match.start()]}(line {line}){message[match.end() :]}"


def _describe(exc: OSError) -> str:
    code = errno.errorcode.get(exc.errno, "") if exc.errno is not None else ""
    text = exc.strerror or str(exc)
    return f"{text} ({code})" if code else text


def _is_transient(exc: OSError) -> bool:
    return isinstance(exc, TimeoutError) or exc.errno in _TRANSIENT_ERRNOS


def _too_deep() -> str:
    return "JSON nested too deeply to read"


# --- formats ------------------------------------------------------------------------------


def _decode(data: bytes) -> _Record | list[msgspec.Raw] | str:
    """Decode one document; a scalar comes back as its JSON type's name."""
    try:
        return _ANY.decode(data)
    except msgspec.ValidationError:
        pass  # a scalar (or an out-of-range number): valid JSON, checked below
    except msgspec.DecodeError as exc:
        tolerated = _with_lone_surrogates(data)
        if tolerated is None:
            raise _Malformed(f"invalid JSON: {exc}") from None
        return tolerated
    try:
        _RAW.decode(data)
    except msgspec.DecodeError as exc:
        raise _Malformed(f"invalid JSON: {exc}") from None
    return _json_type(data)


_ESCAPE: Final = re.compile(
    rb"\\\\"  # an escaped backslash: what follows it is no escape
    rb"|\\u[dD][89abAB][0-9a-fA-F]{2}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    rb"|\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _with_lone_surrogates(data: bytes) -> _Record | list[msgspec.Raw] | None:
    r"""Decode a document whose strings hold lone UTF-16 surrogate escapes (``\udc00``).

    msgspec refuses them; Go reads each as U+FFFD. The escapes are replaced by
    ``\ufffd`` (as long) for the decode, then put back in the buffer the raw values
    view (msgspec's ``Raw`` does not copy), so that a config keeps its bytes exactly
    and is decoded as Go decodes it. ``None``: there are none, or the document has
    other problems.
    """
    lone = _lone_surrogates(data)
    if not lone:
        return None
    buffer = _as_go_reads(data, lone)
    try:
        decoded = _ANY.decode(buffer)
    except DECODE_FAILURES:
        return None
    for start in lone:  # the same length: the raw values now show the original
        buffer[start : start + len(_FFFD)] = data[start : start + len(_FFFD)]
    return decoded


def _lone_surrogates(data: bytes) -> list[int]:
    """Where the lone UTF-16 surrogate escapes of a JSON document start."""
    return [
        found.start()
        for found in _ESCAPE.finditer(data)
        if len(found.group()) == len(_FFFD)  # neither a backslash nor a pair
    ]


def _as_go_reads(data: bytes, lone: list[int]) -> bytearray:
    r"""``data`` with the escapes at ``lone`` as Go reads them: ``\ufffd``."""
    buffer = bytearray(data)
    for start in lone:
        buffer[start : start + len(_FFFD)] = _FFFD
    return buffer


_FFFD: Final = b"\\ufffd"


def _dispatch_guarded(
    record: _Record | list[msgspec.Raw] | str, source: str
) -> list[InventoryEntry]:
    try:
        return _dispatch(record, source)
    except RecursionError:  # pragma: no cover -- an element nested at the stack's limit
        return [RecordError(source=source, message=_too_deep())]


def _dispatch(
    record: _Record | list[msgspec.Raw] | str, source: str
) -> list[InventoryEntry]:
    single = isinstance(record, str) or (
        isinstance(record, _Record) and _shape(record) == "single"
    )
    sources = _Sources(source, numbered=not single)
    out: list[InventoryEntry] = []
    _read_value(record, sources, "$", _Context(), out)
    return out


def _empty_reason(record: _Record | list[msgspec.Raw] | str) -> str:
    """Why a container record yielded nothing (it still counts, as one ignored)."""
    if isinstance(record, list):
        return "empty JSON array"
    if isinstance(record, _Record) and _shape(record) == "page":
        return "list page without entries"
    return f"/jsz document without stream details: {_JSZ_HINT}"


def _read_value(
    record: _Record | list[msgspec.Raw] | str,
    sources: _Sources,
    path: str,
    context: _Context,
    out: list[InventoryEntry],
) -> None:
    if isinstance(record, str):
        reason = f"JSON {record} is not an inventory record"
        out.append(Ignored(source=sources.next(), reason=reason))
        return
    before = len(out)
    if isinstance(record, list):
        for index, element in enumerate(record):
            # elements were checked when the array was decoded
            value = _decode(bytes(element))
            _read_value(value, sources, f"{path}[{index}]", context, out)
        if len(out) == before:
            out.append(Ignored(source=sources.next(), reason=_empty_reason(record)))
        return
    shape = _shape(record)
    if shape == "single":
        _guard(out, sources, lambda s: _read_single(record, s, path, context))
    elif shape == "page":
        _read_page(record, sources, path, context, out)
    elif shape == "wrapped":
        try:
            _read_wrapped(record, sources, path, out)
        except _Malformed as exc:
            out.append(RecordError(source=sources.next(), message=str(exc)))
    elif shape == "jsz":
        try:
            _read_jsz(record, sources, path, context, out)
        except _Malformed as exc:
            out.append(RecordError(source=sources.next(), message=str(exc)))
    else:
        assert_never(shape)
    if len(out) == before:  # a container without entries still counts, as ignored
        out.append(Ignored(source=sources.next(), reason=_empty_reason(record)))


def _read_single(
    record: _Record, source: str, path: str, context: _Context
) -> InventoryEntry:
    """Canonical records, INFO responses and their errors, and unknown shapes."""
    if record.kind is not msgspec.UNSET:
        return _canonical(record, source, path)
    record_type = _type_of(record)
    if record_type in _NAMES_TYPES:
        return Ignored(source=source, reason=f"{record_type} carries names, no configs")
    if record.error is not msgspec.UNSET and (
        record_type is None or record_type.startswith(_API)
    ):
        return _api_error(record.error, source, path, record_type)
    if record.config is not msgspec.UNSET and record.stream_name is not msgspec.UNSET:
        return _consumer_info(record, source, path, context)
    if record.config is not msgspec.UNSET and (
        record.state is not msgspec.UNSET or record.created is not msgspec.UNSET
    ):
        return _stream_info(record, source, path, context)
    if record_type is not None:
        return Ignored(source=source, reason=f"record type {record_type!r} is not read")
    return Ignored(source=source, reason="JSON object in no known inventory format")


class CanonicalHead(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A canonical record's keys with its config left raw: the common case, one decode.

    A key it does not know sends the record the long way, where it is an error.
    """

    kind: str
    config: msgspec.Raw
    stream: str = ""
    cluster: str = ""
    account: str = ""
    created: str | None = None
    observed_state: str | None = None
    observed_reason: str | None = None
    server_version: str | None = None
    # allowed, not read (as on the general path): the config names the asset, the
    # stamp in its metadata is its level, and the servers are for ``pull`` only
    name: _Field = msgspec.UNSET
    api_level: _Field = msgspec.UNSET
    servers: _Field = msgspec.UNSET


_CANONICAL: Final = msgspec.json.Decoder(CanonicalHead)


def canonical_head(data: bytes) -> CanonicalHead | None:
    """A plain canonical stream or consumer record's keys, or ``None``: not plain.

    ``data`` is a line's JSON (:func:`line_data`). ``None`` leaves the line to
    :func:`read_records`, which reads any record.
    """
    if not data.startswith(b"{"):
        return None
    try:
        head = _CANONICAL.decode(data)
    except FAST_DECODE_FAILURES:
        return None
    return head if head.kind in {"stream", "consumer"} else None


def plain_names(
    head: CanonicalHead, name: str, durable_name: str
) -> tuple[str, str] | None:
    """The stream and name of a plain record whose config names it so, or ``None``.

    ``name`` and ``durable_name`` are the config's (``""`` when absent). ``None``:
    the names are missing or disagree, and :func:`read_records` says what that is.
    """
    if head.kind == "stream":
        if not name or (head.stream and head.stream != name):
            return None
        return name, name
    name = name or durable_name
    if not head.stream or not name:
        return None
    return head.stream, name


def _fast_canonical(data: bytes, source: str) -> Asset | None:
    """A plain canonical stream or consumer record, or ``None`` for the general reader.

    Only records the general reader would turn into exactly this Asset are taken here;
    anything unusual (other kinds, missing names, odd types) goes the long way.
    """
    head = canonical_head(data)
    if head is None:
        return None
    config = bytes(head.config)
    if not config.startswith(b"{"):
        return None
    try:
        names = _CONFIG_NAMES.decode(config)
    except FAST_DECODE_FAILURES:
        return None
    named = plain_names(head, names.name, names.durable_name)
    if named is None:
        return None
    return Asset(
        source=source,
        cluster=head.cluster,
        account=head.account or DEFAULT_ACCOUNT,
        kind="stream" if head.kind == "stream" else "consumer",
        stream=named[0],
        name=named[1],
        config=config,
        created=head.created,
        observed_state=head.observed_state,
        observed_reason=head.observed_reason,
        server_version=head.server_version,
    )


CANONICAL_KEYS: Final = (
    "cluster",
    "account",
    "kind",
    "stream",
    "name",
    "config",
    "created",
    "observed_state",
    "observed_reason",
    "server_version",
    "api_level",
    "servers",
)
"""The top-level keys of a canonical record (``assetgate pull`` writes all of them;
``servers``, the servers that host the asset, only from a ``$SYS`` fleet pull)."""
_TOP_KEYS: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _unknown_canonical_key(data: bytes) -> str | None:
    """Why a canonical stream or consumer record is refused for a key it cannot have.

    A misspelt key (``"acount"``) must not silently fall back to a default.
    """
    if not data.startswith(b"{") or b'"kind"' not in data:
        return None
    try:
        try:
            keys = _TOP_KEYS.decode(data)
        except msgspec.DecodeError:  # lone surrogate escapes: read them as Go does
            keys = _TOP_KEYS.decode(_as_go_reads(data, _lone_surrogates(data)))
        kind = msgspec.json.decode(keys["kind"]) if "kind" in keys else None
    except FAST_DECODE_FAILURES:
        return None
    if not isinstance(kind, str) or kind not in {"stream", "consumer"}:
        return None
    unknown = [key for key in keys if key not in CANONICAL_KEYS]
    if not unknown:
        return None
    key = unknown[0]
    close = difflib.get_close_matches(key, CANONICAL_KEYS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (
        f"unknown key {key!r} in a canonical {kind} record{hint}; its keys are "
        f"{', '.join(CANONICAL_KEYS)}"
    )


def _canonical(record: _Record, source: str, path: str) -> InventoryEntry:
    kind = _text(record.kind, f"{path}.kind")
    if kind in _PULL_KINDS:
        return Ignored(source=source, reason=_PULL_KINDS[kind])
    if kind not in {"stream", "consumer"}:
        return Ignored(source=source, reason=f"unknown kind {kind!r}")
    state = _text(record.observed_state, f"{path}.observed_state")
    if state is not None and (
        record.config is msgspec.UNSET or bytes(record.config).strip() == b"null"
    ):
        name = _text(record.name, f"{path}.name") or ""
        reason = _text(record.observed_reason, f"{path}.observed_reason")
        why = f" ({reason})" if reason else ""
        of = (
            f" of stream {_text(record.stream, f'{path}.stream')!r}"
            if kind == "consumer"
            else ""
        )
        raise _Malformed(
            f"{kind} {name!r}{of} was observed {state}{why}; the server gave no config"
            " for it, so it cannot be judged (use an inventory taken before the change)"
        )
    config = _config(record.config, path)
    names = _names(config, path)
    stream = _text(record.stream, f"{path}.stream")
    if kind == "stream":
        if not names.name:
            raise _Malformed(f"stream config has no name - at `{path}.config.name`")
        if stream and stream != names.name:
            raise _Malformed(
                f"stream {stream!r} differs from its config's name {names.name!r}"
                f" - at `{path}.stream`"
            )
        stream, name = names.name, names.name
    else:
        if not stream:
            raise _Malformed(f"consumer record has no stream - at `{path}.stream`")
        name = names.name or names.durable_name
        if not name:
            raise _Malformed(
                f"consumer config has no name or durable_name - at `{path}.config`"
            )
    return Asset(
        source=source,
        cluster=_text(record.cluster, f"{path}.cluster") or "",
        account=_text(record.account, f"{path}.account") or DEFAULT_ACCOUNT,
        kind="stream" if kind == "stream" else "consumer",
        stream=stream,
        name=name,
        config=config,
        created=_text(record.created, f"{path}.created"),
        observed_state=_text(record.observed_state, f"{path}.observed_state"),
        observed_reason=_text(record.observed_reason, f"{path}.observed_reason"),
        server_version=_text(record.server_version, f"{path}.server_version"),
    )


def _stream_info(record: _Record, source: str, path: str, context: _Context) -> Asset:
    """A ``StreamInfo`` (INFO, list entry, ``nats stream info``) or ``StreamDetail``."""
    config = _config(record.config, path)
    name = _names(config, path).name or (_text(record.name, f"{path}.name") or "")
    if not name:
        raise _Malformed(f"stream config has no name - at `{path}.config.name`")
    return Asset(
        source=source,
        cluster=_cluster(record.cluster, f"{path}.cluster") or context.cluster,
        account=context.account,
        kind="stream",
        stream=name,
        name=name,
        config=config,
        created=_created(record.created, f"{path}.created"),
        server_version=context.server_version,
    )


def _consumer_info(record: _Record, source: str, path: str, context: _Context) -> Asset:
    """``ConsumerInfo`` (INFO response, list entry, ``/jsz`` ``consumer_detail``)."""
    stream = _text(record.stream_name, f"{path}.stream_name")
    if not stream:
        raise _Malformed(f"consumer info has no stream_name - at `{path}.stream_name`")
    outer = _text(record.name, f"{path}.name")
    if record.config is msgspec.UNSET:
        raise _Malformed(
            f"consumer {outer or ''!r} of stream {stream!r} has no config"
            f" - at `{path}.config` ({_JSZ_HINT})"
        )
    config = _config(record.config, path)
    names = _names(config, path)
    name = outer or names.name or names.durable_name
    if not name:
        raise _Malformed(f"consumer info has no name - at `{path}.name`")
    return Asset(
        source=source,
        cluster=_cluster(record.cluster, f"{path}.cluster") or context.cluster,
        account=context.account,
        kind="consumer",
        stream=stream,
        name=name,
        config=config,
        created=_created(record.created, f"{path}.created"),
        server_version=context.server_version,
    )


def _api_error(
    raw: _Field, source: str, path: str, record_type: str | None
) -> RecordError:
    what = "API response"
    if record_type:
        what = record_type.removeprefix(_API).replace("_", " ")
    try:
        error = _API_ERROR.decode(raw) if raw is not msgspec.UNSET else _ApiErrorView()
    except msgspec.ValidationError as exc:
        detail = _at(exc, f"{path}.error")
        raise _Malformed(f"{what} carries a malformed error: {detail}") from None
    except UnicodeDecodeError:
        detail = f"invalid UTF-8 in a string - at `{path}.error`"
        raise _Malformed(f"{what} carries a malformed error: {detail}") from None
    message = (
        f"{what} is an error: {error.description}"
        f" (err_code {error.err_code}, code {error.code})"
    )
    if error.err_code in _UNSUPPORTED_ERR_CODES:
        message += "; the config is not in the response"
    return RecordError(
        source=source,
        message=message,
        retriable=error.err_code in TRANSIENT_ERR_CODES,
    )


def _read_page(
    record: _Record,
    sources: _Sources,
    path: str,
    context: _Context,
    out: list[InventoryEntry],
) -> None:
    """A ``STREAM.LIST`` or ``CONSUMER.LIST`` page: its entries, then what it lacks."""
    kind = _page_kind(record)
    key, raw = ("consumers", record.consumers)
    if kind == "stream":
        key, raw = ("streams", record.streams)
    if record.error is not msgspec.UNSET:
        _guard(
            out, sources, lambda s: _api_error(record.error, s, path, _type_of(record))
        )
    observed: dict[str, tuple[str, str | None]] = {}
    items: list[msgspec.Raw] = []
    try:
        observed = _observed(record, path)
    except _Malformed as exc:
        out.append(RecordError(source=sources.next(), message=str(exc)))
    try:
        items = _array(raw, f"{path}.{key}")
    except _Malformed as exc:
        out.append(RecordError(source=sources.next(), message=str(exc)))
    assets: list[Asset] = []
    for index, item in enumerate(items):
        source, item_path = sources.next(), f"{path}.{key}[{index}]"
        try:
            entry = _object(item, item_path)
            build = _stream_info if kind == "stream" else _consumer_info
            asset = build(entry, source, item_path, context)
        except _Malformed as exc:
            out.append(RecordError(source=source, message=str(exc)))
            continue
        if asset.name in observed:
            state, reason = observed[asset.name]
            asset = msgspec.structs.replace(
                asset, observed_state=state, observed_reason=reason
            )
        assets.append(asset)
        out.append(asset)
    named = {asset.name for asset in assets}
    of_stream = ""
    if kind == "consumer" and len(parents := {asset.stream for asset in assets}) == 1:
        of_stream = f" of stream {parents.pop()!r}"
    for name, (state, reason) in observed.items():
        if name in named:
            continue
        why = f"offline by the server ({reason})"
        if state == "missing":
            why = "missing by the server (it did not answer in time)"
        out.append(
            RecordError(
                source=sources.next(),
                message=f"{kind} {name!r}{of_stream} is listed as {why};"
                " its config is not in the page",
                retriable=state == "missing",
            )
        )


def _observed(record: _Record, path: str) -> dict[str, tuple[str, str | None]]:
    """Names a list page reports as ``missing`` or ``offline`` (offline wins)."""
    observed: dict[str, tuple[str, str | None]] = {}
    for name in _decode_field(_TEXTS, record.missing, f"{path}.missing") or []:
        observed[name] = ("missing", None)
    offline = _decode_field(_TEXT_MAP, record.offline, f"{path}.offline") or {}
    for name, reason in offline.items():
        observed[name] = ("offline", reason)
    return observed


def _read_wrapped(
    record: _Record, sources: _Sources, path: str, out: list[InventoryEntry]
) -> None:
    """A ``$SYS`` server API response (``$SYS.REQ.SERVER.PING.JSZ``): server, data."""
    server = _decode_field(_SERVER_VIEW, record.server, f"{path}.server")
    server = server if server is not None else _ServerView()
    context = _Context(cluster=server.cluster, server_version=server.ver or None)
    if record.error is not msgspec.UNSET:
        _guard(out, sources, lambda s: _api_error(record.error, s, path, None))
    if record.data is msgspec.UNSET:
        return
    data = _object(record.data, f"{path}.data")
    if _shape(data) != "jsz":
        out.append(
            Ignored(
                source=sources.next(), reason="server API response without /jsz data"
            )
        )
        return
    _read_jsz(data, sources, f"{path}.data", context, out)


def _read_jsz(
    record: _Record,
    sources: _Sources,
    path: str,
    context: _Context,
    out: list[InventoryEntry],
) -> None:
    """A ``/jsz`` ``JSInfo`` or a single ``AccountDetail``: every stream and consumer.

    Shapes as in nats-server ``server/monitor.go`` (``JSInfo``, ``AccountDetail``,
    ``StreamDetail``). The account is ``AccountDetail.id`` (the account's name on the
    server; ``name`` differs only when the account has a name tag in operator mode).
    A stream's cluster is its own ``cluster.name``, else ``meta_cluster.name``.
    """
    meta = _cluster(record.meta_cluster, f"{path}.meta_cluster")
    context = dataclasses.replace(context, cluster=meta or context.cluster)
    accounts = [(record, path)]
    if not _is_account_detail(record):
        accounts = []
        details = f"{path}.account_details"
        for index, raw in enumerate(_array(record.account_details, details)):
            try:
                accounts.append(
                    (_object(raw, f"{details}[{index}]"), f"{details}[{index}]")
                )
            except _Malformed as exc:
                out.append(RecordError(source=sources.next(), message=str(exc)))
    for account, account_path in accounts:
        try:
            name = _text(account.id, f"{account_path}.id")
            name = name or _text(account.name, f"{account_path}.name")
            streams = _array(account.stream_detail, f"{account_path}.stream_detail")
        except _Malformed as exc:
            out.append(RecordError(source=sources.next(), message=str(exc)))
            continue
        account_context = dataclasses.replace(context, account=name or DEFAULT_ACCOUNT)
        for index, raw in enumerate(streams):
            item_path = f"{account_path}.stream_detail[{index}]"
            _read_stream_detail(raw, sources, item_path, account_context, out)


def _read_stream_detail(
    raw: msgspec.Raw,
    sources: _Sources,
    path: str,
    context: _Context,
    out: list[InventoryEntry],
) -> None:
    try:
        detail = _object(raw, path)
        cluster = _cluster(detail.cluster, f"{path}.cluster")
        consumers = _array(detail.consumer_detail, f"{path}.consumer_detail")
        direct = _array(detail.direct_consumer_detail, f"{path}.direct_consumer_detail")
    except _Malformed as exc:
        out.append(RecordError(source=sources.next(), message=str(exc)))
        return

    def stream(source: str) -> Asset:
        if detail.config is msgspec.UNSET:
            name = _text(detail.name, f"{path}.name") or ""
            raise _Malformed(
                f"stream {name!r} has no config - at `{path}.config` ({_JSZ_HINT})"
            )
        return _stream_info(detail, source, path, context)

    _guard(out, sources, stream)
    context = dataclasses.replace(context, cluster=cluster or context.cluster)
    for index, item in enumerate(consumers):
        item_path = f"{path}.consumer_detail[{index}]"

        def consumer(
            source: str, raw: msgspec.Raw = item, at: str = item_path
        ) -> Asset:
            return _consumer_info(_object(raw, at), source, at, context)

        _guard(out, sources, consumer)
    # direct consumers are made by the server for mirrors and sources and not stored
    # as assets (nats-server 2.12 also lists the stream's other consumers here)
    out.extend(
        Ignored(source=sources.next(), reason="direct consumer (not a stored asset)")
        for _ in direct
    )


# --- helpers ------------------------------------------------------------------------------

_Shape: TypeAlias = Literal["single", "page", "wrapped", "jsz"]


def _shape(record: _Record) -> _Shape:
    if record.kind is not msgspec.UNSET:
        return "single"
    if _page_kind(record) is not None:
        return "page"
    if _raw_type(record.server) == "object" and (
        record.data is not msgspec.UNSET or record.error is not msgspec.UNSET
    ):
        return "wrapped"
    if _is_account_detail(record) or record.account_details is not msgspec.UNSET:
        return "jsz"
    if record.server_id is not msgspec.UNSET and _raw_type(record.streams) == "number":
        return "jsz"
    return "single"


def _page_kind(record: _Record) -> AssetKind | None:
    record_type = _type_of(record)
    if record_type in _LIST_TYPES:
        return "stream" if _LIST_TYPES[record_type] == "stream" else "consumer"
    if record_type in _NAMES_TYPES:
        return None
    if _raw_type(record.streams) == "array":
        return "stream"
    if _raw_type(record.consumers) == "array":
        return "consumer"
    return None


def _is_account_detail(record: _Record) -> bool:
    return _raw_type(record.stream_detail) == "array"


def _type_of(record: _Record) -> str | None:
    """The ``type`` of an API response, or ``None`` if absent or not a string."""
    if record.type is msgspec.UNSET:
        return None
    try:
        return _TEXT.decode(record.type)
    except (msgspec.ValidationError, UnicodeDecodeError):
        return None


def _guard(
    out: list[InventoryEntry],
    sources: _Sources,
    build: Callable[[str], InventoryEntry],
) -> None:
    """Append what ``build`` makes for the next source, or the error it raises."""
    source = sources.next()
    try:
        out.append(build(source))
    except _Malformed as exc:
        out.append(RecordError(source=source, message=str(exc)))


def _decode_field(decoder: _Decoder[_T], raw: _Field, path: str) -> _T | None:
    if raw is msgspec.UNSET:
        return None
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError as exc:
        raise _Malformed(_at(exc, path)) from None
    except UnicodeDecodeError:
        raise _Malformed(f"invalid UTF-8 in a string - at `{path}`") from None


def _text(raw: _Field, path: str) -> str | None:
    return _decode_field(_TEXT, raw, path)


def _created(raw: _Field, path: str) -> str | None:
    created = _text(raw, path)
    return None if created == GO_ZERO_TIME else created  # Go's zero time: unknown


def _cluster(raw: _Field, path: str) -> str:
    view = _decode_field(_NAME_VIEW, raw, path)
    return view.name if view is not None else ""


def _array(raw: _Field, path: str) -> list[msgspec.Raw]:
    return _decode_field(_ARRAY, raw, path) or []


def _object(raw: msgspec.Raw, path: str) -> _Record:
    try:
        return _OBJECT.decode(raw)
    except msgspec.ValidationError as exc:
        raise _Malformed(_at(exc, path)) from None


def _config(raw: _Field, path: str) -> bytes:
    if raw is msgspec.UNSET:
        raise _Malformed(f"Object missing required field `config` - at `{path}`")
    if (found := _raw_type(raw)) != "object":
        raise _Malformed(f"Expected `object`, got `{found}` - at `{path}.config`")
    return bytes(raw)


def _names(config: bytes, path: str) -> _ConfigNames:
    try:
        return _CONFIG_NAMES.decode(config)
    except msgspec.ValidationError as exc:
        raise _Malformed(_at(exc, f"{path}.config")) from None
    except UnicodeDecodeError:
        # Go's encoding/json reads invalid UTF-8 as U+FFFD; only the name view is
        # repaired, the config keeps its bytes
        repaired = config.decode("utf-8", errors="replace").encode()
        return _CONFIG_NAMES.decode(repaired)
    except msgspec.DecodeError:
        # and a lone surrogate escape as U+FFFD too (the name view only, again)
        return _CONFIG_NAMES.decode(_as_go_reads(config, _lone_surrogates(config)))


def _at(exc: msgspec.ValidationError, path: str) -> str:
    """The msgspec message with its ``$`` path placed under ``path``."""
    message = str(exc)
    if " - at `$" in message:
        return message.replace(" - at `$", f" - at `{path}", 1)
    return f"{message} - at `{path}`"


def _raw_type(raw: _Field) -> str:
    if raw is msgspec.UNSET:
        return "absent"
    return _json_type(memoryview(raw)[:1].tobytes())


def _json_type(data: bytes) -> str:
    """The JSON type of a valid JSON value, from its first byte."""
    first = data[:1]
    if first == b"{":
        return "object"
    if first == b"[":
        return "array"
    if first == b'"':
        return "string"
    if first in {b"t", b"f"}:
        return "boolean"
    if first == b"n":
        return "null"
    return "number"
