"""Decode stream and consumer configs exactly as a given nats-server version does.

The server decodes with Go ``encoding/json``: strictly (``DisallowUnknownFields``) and,
where it falls back, leniently. One call here gives both answers:

* ``strict_error``: the error a strict decode reports, or ``None``: the first problem
  in document order; before the jsonv2-backed ``encoding/json`` (Go 1.27) an enum or
  time error (a custom ``UnmarshalJSON``) aborts at once and so beats an earlier one;
* ``lenient_error``: the error a lenient decode reports (unknown fields ignored), or
  ``None`` when the config loads; then ``config`` holds the decoded value;
* ``unknown_fields``: every unknown key as a path (``sources[0].consumer``), which the
  server never lists, and ``dropped_fields``: those set to a non-zero value, i.e. what
  a lenient server silently loses. Each lists at most :data:`MAX_LISTED` paths, then
  one entry that counts the rest (``... 2,499,000 more``).

Fast path: a msgspec Struct generated for the release line accepts a document only
when Go would decode it to the same values. Anything else (unknown or case-folded keys,
``null``, duplicate keys, odd spellings, syntax errors) goes through a walker over the
parsed document that follows Go's rules. No msgspec exception escapes this module.

Size: over the ~400-line guide because the exact path and the fast path must give Go's
answers byte for byte and share the struct lookups and error texts, so they stay
together.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
import threading
from datetime import date
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple

import msgspec

from assetgate.catalogue import derived
from assetgate.catalogue.model import INT_BOUNDS, UINT64_MAX, flat_fields, struct_type
from assetgate.decoding import goscan
from assetgate.wire import FAST_DECODE_FAILURES, GO_ZERO_TIME

if TYPE_CHECKING:
    from collections.abc import Callable

    from assetgate.catalogue.levels import EnumSpec, ReleaseLine

__all__ = [
    "Context",
    "Decoded",
    "decode",
    "decode_signature",
    "decoder",
    "fast_path",
    "given_fields",
    "reproduces",
]

Context = Literal["request", "stored"]

MAX_CONFIG_BYTES: Final = 64 * 1024 * 1024
"""The largest config decoded: a create or update reaches the server in one message,
and ``max_payload`` is 1 MiB by default and can be set to 64 MiB at most, so the server
never decodes a larger config. (An inventory *file* may hold larger documents, such as
a ``/jsz`` dump of many configs: :data:`assetgate.inventory.read.MAX_CONFIG_BYTES`.)"""


class Decoded(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """How one server version decodes one config.

    Attributes:
        config: the leniently decoded config (a Struct of the release line's model),
            or ``None`` when even the lenient decode fails.
        strict_error: Go's error text for a strict decode, ``None`` when clean.
        lenient_error: Go's error text for a lenient decode, ``None`` when it loads.
        syntax_offset: the byte offset Go reports when the error is a syntax error.
        unknown_fields: every key the server does not know, as a path.
        dropped_fields: the unknown keys whose value is not a JSON zero value.
        name: the ``name`` (or ``durable_name``) found, even when decoding fails.
    """

    config: Any | None
    strict_error: str | None = None
    lenient_error: str | None = None
    syntax_offset: int | None = None
    unknown_fields: tuple[str, ...] = ()
    dropped_fields: tuple[str, ...] = ()
    name: str = ""


# --- entry point ----------------------------------------------------------------------


def decode(
    data: bytes | str,
    line: ReleaseLine,
    struct: str,
    *,
    context: Context = "request",
    go_json: str = "1.24",
) -> Decoded:
    """Decode ``data`` into ``struct`` (``StreamConfigRequest``, ``ConsumerConfig``, ...).

    ``context="request"`` reads a JSON stream as an API request body is read (an
    empty body is a zero config; several values decode into one target);
    ``"stored"`` reads exactly one value, as the server reads a stored config.
    """
    return decoder(line, struct, context=context, go_json=go_json)(data)


_DECODERS: dict[tuple[str, str, str, str], Callable[[bytes | str], Decoded]] = (
    derived.cache(
        "decoding.decoders", keyed_by="(line fingerprint, struct, context, go_json)"
    )
)


def decoder(
    line: ReleaseLine, struct: str, *, context: Context, go_json: str
) -> Callable[[bytes | str], Decoded]:
    """:func:`decode` for one release line, struct, context and Go version, bound once.

    For a caller that decodes many configs alike (``check_matrix``): the lookups are
    made once, not per call.
    """
    key = (line.fingerprint, struct, context, go_json)
    found = _DECODERS.get(key)
    if found is None:
        found = _DECODERS[key] = _bind(line, struct, context, go_json)
    return found


def _bind(
    line: ReleaseLine, struct: str, context: Context, go_json: str
) -> Callable[[bytes | str], Decoded]:
    decode_fast = _fast_decoder(line, struct).decode
    passes = _post_check(line, struct)

    def run(data: bytes | str) -> Decoded:
        if not _has_escape(data):  # Go compares enum tokens raw: escapes go exact
            try:
                config = decode_fast(data)
            except FAST_DECODE_FAILURES:
                unknown = _unknown_fields_only(data, line, struct)
                if unknown is not None:
                    return unknown
            else:
                if passes(config):
                    return Decoded(config=config, name=_name_of(config))
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        return _Exact(line, go_json=go_json).run(raw, struct, context=context)

    return run


def _closure(line: ReleaseLine, struct: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """What decoding ``struct`` on ``line`` depends on: the structs it reaches, the enums.

    Both by name, with their specs.
    """
    structs: dict[str, Any] = {}
    enums: dict[str, Any] = {}
    todo = [struct]
    while todo:
        name = todo.pop()
        if name in structs:
            continue
        spec = structs[name] = line.structs[name]
        todo.extend(spec.embeds)
        for field in spec.fields:
            base = field.type.removeprefix("[]").removeprefix("*")
            if base.startswith("enum:"):
                enums[base] = line.enums[base.removeprefix("enum:")]
            elif base in line.structs:
                todo.append(base)
    return structs, enums


def decode_signature(line: ReleaseLine, struct: str) -> bytes:
    """The specs decoding ``struct`` on ``line`` depends on, as bytes.

    Two lines with equal signatures (and one Go version) decode every document alike.
    """
    structs, enums = _closure(line, struct)
    return msgspec.json.encode((sorted(structs.items()), sorted(enums.items())))


def reproduces(older: ReleaseLine, newer: ReleaseLine, struct: str) -> bool:
    """Whether ``newer`` decodes each document that ``older`` decodes cleanly alike.

    Clean: no error and no unknown key. That holds when the structs reachable from
    ``struct`` are the same on both lines and each enum they use keeps its zero value
    and matching rule on ``newer`` and only gains values there: a document every key
    and value of which ``older`` knows means the same to ``newer``. (Not the other way
    round: a value only ``newer`` knows is an error to ``older``.)
    """
    old_structs, old_enums = _closure(older, struct)
    new_structs, new_enums = _closure(newer, struct)
    if old_structs != new_structs or old_enums.keys() != new_enums.keys():
        return False
    return all(
        new.match == old.match
        and new.values[:1] == old.values[:1]
        and set(old.values) <= set(new.values)
        and old.alias.items() <= new.alias.items()
        for old, new in ((old_enums[name], new_enums[name]) for name in old_enums)
    )


_LENIENT: dict[tuple[str, str], msgspec.json.Decoder[Any]] = derived.cache(
    "decoding.lenient", keyed_by="(line fingerprint, struct)"
)


MAX_LISTED: Final = 1000
"""How many unknown (or dropped) field paths a verdict lists; one entry counts the rest."""


def listed(paths: list[str]) -> tuple[str, ...]:
    """``paths``, or its first :data:`MAX_LISTED` and ``... N more``.

    A config with millions of unknown keys so gives a verdict of a bounded size.
    """
    if len(paths) <= MAX_LISTED:
        return tuple(paths)
    return (*paths[:MAX_LISTED], f"... {len(paths) - MAX_LISTED:,} more")


def _unknown_fields_only(
    data: bytes | str, line: ReleaseLine, struct: str
) -> Decoded | None:
    """The answer for a document whose only problem is unknown fields, or ``None``.

    The common case of an older server reading a newer config: every known field is
    spelled exactly and well typed (msgspec's lenient decode accepts it) and the other
    keys are simply unknown. Then Go reports the first unknown key in document order
    and loads the rest. Anything subtler (a key that case-folds to a known field, odd
    values, deep nesting) returns ``None`` and takes the Go-exact walk.
    """
    key = (line.fingerprint, struct)
    lenient = _LENIENT.get(key)
    if lenient is None:
        lenient = _LENIENT[key] = msgspec.json.Decoder(
            struct_type(line, struct, strict=False)
        )
    try:
        config = lenient.decode(data)
        document = msgspec.json.decode(data)
    except FAST_DECODE_FAILURES:
        return None
    if not isinstance(document, dict) or not _post_check(line, struct)(config):
        return None
    unknown: list[tuple[str, str]] = []
    dropped: list[str] = []
    if not _collect_unknown(
        document, line, struct, "", unknown=unknown, dropped=dropped
    ):
        return None
    if not unknown:
        return None  # msgspec refused something else: let the exact path say what
    return Decoded(
        config=config,
        strict_error=f"json: unknown field {goscan.go_quote(unknown[0][1])}",
        unknown_fields=listed([where for where, _key in unknown]),
        dropped_fields=listed(dropped),
        name=_name_of(config),
    )


def _collect_unknown(
    document: dict[str, Any],
    line: ReleaseLine,
    struct: str,
    path: str,
    *,
    unknown: list[tuple[str, str]],
    dropped: list[str],
) -> bool:
    """Gather unknown (path, key) pairs; ``False`` when a key needs Go's case folding."""
    exact, folded, _owners_map = _lookup(line, struct)
    for key, value in document.items():
        found = exact.get(key)
        where = f"{path}.{key}" if path else key
        if found is None:
            if _fold(key) in folded or not key.isascii():
                return False  # Go would match it case-insensitively: exact path
            unknown.append((where, key))
            if not _is_json_zero(value):
                dropped.append(where)
            continue
        base = found[1].removeprefix("[]").removeprefix("*")
        if base not in line.structs or value is None:
            continue
        if isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict) and not _collect_unknown(
                    item,
                    line,
                    base,
                    f"{where}[{index}]",
                    unknown=unknown,
                    dropped=dropped,
                ):
                    return False
        elif isinstance(value, dict) and not _collect_unknown(
            value, line, base, where, unknown=unknown, dropped=dropped
        ):
            return False
    return True


_FAST: dict[tuple[str, str], msgspec.json.Decoder[Any]] = derived.cache(
    "decoding.fast", keyed_by="(line fingerprint, struct)"
)
# msgspec refuses what Go may still accept: invalid UTF-8 (Go substitutes U+FFFD),
# nesting beyond its recursion limit (Go allows 10,000 levels), odd spellings.


def fast_path(line: ReleaseLine, struct: str) -> Callable[[bytes | str], Any | None]:
    """A function returning the decoded config, or ``None`` to use :func:`decode`.

    It returns a value only when msgspec and the post-checks accept the document,
    i.e. when Go would decode it to the same value.
    """
    decode_fast = _fast_decoder(line, struct).decode
    errors = FAST_DECODE_FAILURES
    passes = _post_check(line, struct)

    def run(data: bytes | str) -> Any | None:
        if _has_escape(data):
            return None  # Go compares enum tokens raw: escapes need the exact path
        try:
            value = decode_fast(data)
        except errors:
            return None
        return value if passes(value) else None

    return run


def _fast_decoder(line: ReleaseLine, struct: str) -> msgspec.json.Decoder[Any]:
    key = (line.fingerprint, struct)
    found = _FAST.get(key)
    if found is None:
        found = _FAST[key] = msgspec.json.Decoder(struct_type(line, struct))
    return found


def _has_escape(data: bytes | str) -> bool:
    return (b"\\" in data) if isinstance(data, bytes) else ("\\" in data)


def _name_of(config: Any) -> str:
    return str(getattr(config, "name", "") or getattr(config, "durable_name", "") or "")


# --- checks msgspec cannot express: Go time syntax, uint64 overflow ------------------------


_CHECKS: dict[tuple[str, str], Callable[[Any], bool]] = derived.cache(
    "decoding.checks", keyed_by="(line fingerprint, struct)"
)


def _post_check(line: ReleaseLine, struct: str) -> Callable[[Any], bool]:
    """What msgspec cannot check: Go's RFC 3339 time syntax and uint64 overflow.

    The check is generated once per struct from the catalogue.
    """
    key = (line.fingerprint, struct)
    check = _CHECKS.get(key)
    if check is None:
        check = _CHECKS[key] = _build_check(line, struct)
    return check


def _build_check(line: ReleaseLine, struct: str) -> Callable[[Any], bool]:
    namespace: dict[str, Any] = {"_time_error": _go_time_error, "_MAX": UINT64_MAX}
    source: list[str] = []
    done: set[str] = set()

    def emit(name: str) -> bool:
        """Write ``_check_<name>``; return whether it checks anything."""
        if name in done:
            return True
        done.add(name)
        body: list[str] = []
        for field, type_name in flat_fields(line, name).items():
            base = type_name.removeprefix("[]").removeprefix("*")
            if type_name == "uint64":
                body.append(f"    if c.{field} > _MAX:\n        return False")
            elif type_name in {"time", "*time"}:
                body.append(
                    f"    if c.{field} is not None and _time_error(c.{field}) is not None:\n"
                    "        return False"
                )
            elif base in line.structs and base != name and emit(base):
                if type_name.startswith("[]"):
                    body.append(
                        f"    for x in c.{field} or ():\n"
                        f"        if x is not None and not _check_{base}(x):\n"
                        "            return False"
                    )
                else:
                    body.append(
                        f"    if c.{field} is not None and not _check_{base}(c.{field}):\n"
                        "        return False"
                    )
        source.append(f"def _check_{name}(c):")
        source.extend(body)
        source.append("    return True")
        return bool(body)

    emit(struct)
    # generated from identifier-checked catalogue names only
    code = compile("\n".join(source) + "\n", f"<assetgate checks {line.line}>", "exec")
    exec(code, namespace)  # noqa: S102
    check: Callable[[Any], bool] = namespace[f"_check_{struct}"]
    return check


_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-](\d{2}):(\d{2}))"
)
_GO_ZERO_ORDINAL: Final = 1  # date(1, 1, 1).toordinal()


def _go_time_error(text: str) -> str | None:
    """Go's error for a time string ``time.Time.UnmarshalJSON`` refuses, else ``None``."""
    match = _RFC3339.fullmatch(text)
    quoted = goscan.go_quote(text)
    if match is None:
        return f'parsing time {quoted} as "2006-01-02T15:04:05Z07:00": cannot parse {quoted} as "2006"'
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    checks = (
        (1 <= month <= 12, "month"),  # noqa: PLR2004
        (hour < 24, "hour"),  # noqa: PLR2004
        (minute < 60, "minute"),  # noqa: PLR2004
        (second < 60, "second"),  # noqa: PLR2004
    )
    for ok, what in checks:
        if not ok:
            return f"parsing time {quoted}: {what} out of range"
    try:
        date(year, month, day)
    except ValueError:
        return f"parsing time {quoted}: day out of range"
    if match.group(8) != "Z" and (
        int(match.group(9)) >= 24 or int(match.group(10)) >= 60  # noqa: PLR2004
    ):
        return f"parsing time {quoted}: time zone offset out of range"
    return None


def is_zero_time(text: str) -> bool:
    """Whether an RFC 3339 time is Go's zero instant (0001-01-01T00:00:00Z)."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    if match.group(7) and int(match.group(7)) != 0:
        return False
    offset = 0
    if match.group(8) != "Z":
        sign = -1 if match.group(8).startswith("-") else 1
        offset = sign * (int(match.group(9)) * 3600 + int(match.group(10)) * 60)
    try:
        ordinal = date(year, month, day).toordinal()
    except ValueError:
        return False
    seconds = ordinal * 86400 + hour * 3600 + minute * 60 + second - offset
    return seconds == _GO_ZERO_ORDINAL * 86400


# --- Go-exact path ------------------------------------------------------------------------


def _go_replace(error: UnicodeError) -> tuple[str, int]:
    """Replace each invalid UTF-8 byte by U+FFFD, one per byte, as Go's decoder does."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return ("\ufffd", error.start + 1)


codecs.register_error("assetgate-go", _go_replace)


class _Float(str):
    """A JSON number with a fraction or exponent, kept as its literal text."""

    __slots__ = ()


class _Object(list[tuple[str, Any]]):
    """A JSON object as its (key, value) pairs in document order, duplicates kept."""

    __slots__ = ()


class _Abort(Exception):
    """An error Go returns at once (custom UnmarshalJSON), ending the decode."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


_INT_DIGITS: Final = 4000  # below Python's int-string conversion limit (4,300)


def _parse_int(text: str) -> int | _Float:
    """A JSON integer; one too long for Python's conversion stays a literal number.

    Any such number is outside every Go integer type: a field of an integer type
    refuses it as Go does, and an unknown field skips it.
    """
    return int(text) if len(text) <= _INT_DIGITS else _Float(text)


_PARSER: Final = json.JSONDecoder(
    object_pairs_hook=_Object,
    parse_float=_Float,
    parse_int=_parse_int,
    parse_constant=_reject_constant,
)


_NO_VALUE: Final = object()

JSONV2: Final = "1.27"
"""The first Go generation whose ``encoding/json`` runs on ``encoding/json/v2``
(Go 1.27): no decode error aborts (the first in document order wins) and a type
error's path is the JSON pointer of the value (keys as written, array indexes)."""


class _Exact:
    """Walks a parsed document against the release line's structs, as Go would.

    One walk yields both answers: errors are saved for the strict decode (unknown
    fields included) and for the lenient one (unknown fields ignored); an enum or
    time error aborts both, as a custom ``UnmarshalJSON`` error does in Go, until
    Go 1.27 (:data:`JSONV2`), where it is saved like any other.
    """

    def __init__(self, line: ReleaseLine, *, go_json: str) -> None:
        self.line = line
        self.go_json = go_json
        self.v2 = go_json >= JSONV2
        self.saved_strict: str | None = None
        self.saved_lenient: str | None = None
        self.unknown: list[str] = []
        self.dropped: list[str] = []
        self.top = ""
        self.raw = b""
        self.has_escapes = False

    def run(self, raw: bytes, struct: str, *, context: Context) -> Decoded:
        self.top = struct
        self.raw = raw
        self.has_escapes = b"\\" in raw
        if len(raw) > MAX_CONFIG_BYTES:
            message = f"document too large: {len(raw)} bytes (limit {MAX_CONFIG_BYTES})"
            return Decoded(config=None, strict_error=message, lenient_error=message)
        text = raw.decode("utf-8", "assetgate-go")
        values, problem = _parse_values(text, raw, stream=context == "request")
        target: dict[str, Any] = {}
        abort: str | None = None
        try:
            for value in values:
                self._into_struct(
                    value, struct, target, path="", stack=[], owner=struct
                )
                if self.saved_strict is not None and context == "request":
                    break  # json.Decoder.Decode returns the error; later values stay unread
        except _Abort as exc:
            abort = exc.message
        strict_error = abort if abort is not None else self.saved_strict
        lenient_error = abort if abort is not None else self.saved_lenient
        offset: int | None = None
        if strict_error is None and problem is not None:
            strict_error = (
                "unexpected EOF"
                if problem.eof and context == "request"
                else problem.message
            )
            offset = None if problem.eof else problem.offset
        if context == "request" and (problem is not None or len(values) != 1):
            # the lenient fallback is json.Unmarshal of the whole body: one value only
            single = goscan.scan(raw)
            if single is not None:
                lenient_error = single.message
        elif problem is not None:
            lenient_error = problem.message
        config = None
        if lenient_error is None or strict_error is None:
            config = msgspec.convert(
                target, struct_type(self.line, struct, strict=False)
            )
        return Decoded(
            config=config,
            strict_error=strict_error,
            lenient_error=lenient_error,
            syntax_offset=offset,
            unknown_fields=listed(self.unknown),
            dropped_fields=listed(self.dropped),
            name=str(target.get("name") or target.get("durable_name") or ""),
        )

    # --- errors

    def _fail(self, message: str) -> None:
        """A custom ``UnmarshalJSON`` error: it aborts the decode before Go 1.27."""
        if not self.v2:
            raise _Abort(message)
        self._save(message)

    def _save(self, message: str, *, unknown: bool = False) -> None:
        if self.saved_strict is None:
            self.saved_strict = message
        if not unknown and self.saved_lenient is None:
            self.saved_lenient = message

    def _type_error(self, value: Any, go_type: str, where: _Where) -> None:
        self._save(self._type_text(value, go_type, where))

    def _type_text(self, value: Any, go_type: str, where: _Where) -> str:
        """Go's ``UnmarshalTypeError`` text, in the release's Go generation."""
        kind = _json_kind(value)
        if kind == "number" and go_type in _GO_INT_NAMES:
            kind = f"number {_raw_token(value)}"
        if not where.fields:
            return f"json: cannot unmarshal {kind} into Go value of type {go_type}"
        field = ".".join(where.fields)
        if not self.v2:
            return f"json: cannot unmarshal {kind} into Go struct field {where.struct}.{field} of type {go_type}"
        # the JSON pointer, '.'-joined; a last token of digits reads as an array index
        last = field.rpartition(".")[2]
        into = "" if last.isascii() and last.isdigit() else "Go struct field "
        return f"json: cannot unmarshal {kind} into {into}{self.top}.{field} of type {go_type}"

    # --- structs

    def _into_struct(
        self,
        value: Any,
        struct: str,
        target: dict[str, Any],
        *,
        path: str,
        stack: list[str],
        owner: str,  # the struct whose field holds ``value``: a type error names it
    ) -> None:
        if value is None:
            return
        if not isinstance(value, _Object):
            self._type_error(value, f"server.{struct}", _Where(owner, stack))
            return
        exact, folded, owners = _lookup(self.line, struct)
        for key, item in value:
            found = exact.get(key) or folded.get(_fold(key))
            if found is None:
                key = _go_string(key)  # noqa: PLW2901 - Go sees U+FFFD for a lone surrogate
                where = f"{path}.{key}" if path else key
                self.unknown.append(where)
                if not _is_json_zero(item):
                    self.dropped.append(where)
                self._save(f"json: unknown field {goscan.go_quote(key)}", unknown=True)
                continue
            name, type_name = found
            if self.v2:  # the key as written, not the field's name
                here = _Where(struct, [*stack, _pointer_token(key)])
            elif owners[name] != struct and self.go_json == "1.24":
                here = _Where(
                    struct, [*stack, owners[name], name]
                )  # the embedded struct
            else:
                here = _Where(struct, [*stack, name])
            decoded = self._value(
                item,
                type_name,
                target.get(name),
                f"{path}.{name}" if path else name,
                here,
            )
            if decoded is not _NO_VALUE:
                target[name] = decoded

    def _value(
        self, item: Any, type_name: str, current: Any, path: str, where: _Where
    ) -> Any:
        """Decode one field value; return the new value, or _NO_VALUE to keep the old one."""
        if type_name.startswith("enum:"):
            return self._enum(item, self.line.enums[type_name[5:]], where)
        if type_name in {"time", "*time"}:
            return self._time(item, type_name)
        if item is None:
            return (
                None
                if type_name.startswith(("*", "[]")) or type_name == "map"
                else _NO_VALUE
            )
        if type_name in INT_BOUNDS:
            return self._int(item, type_name, where)
        if type_name == "string":
            if isinstance(item, str) and not isinstance(item, _Float):
                return _go_string(item)
            self._type_error(item, "string", where)
            return _NO_VALUE
        if type_name == "bool":
            if isinstance(item, bool):
                return item
            self._type_error(item, "bool", where)
            return _NO_VALUE
        if type_name == "map":
            return self._map(item, where)
        if type_name.startswith("[]"):
            return self._slice(item, type_name, path, where)
        struct = type_name.removeprefix("*")
        target = dict(current) if isinstance(current, dict) else {}
        self._into_struct(
            item, struct, target, path=path, stack=where.fields, owner=where.struct
        )
        return target

    def _int(self, item: Any, type_name: str, where: _Where) -> Any:
        go_type = _go_type(type_name)
        if isinstance(item, bool) or not isinstance(item, int | _Float):
            self._type_error(item, go_type, where)
            return _NO_VALUE
        low, high = INT_BOUNDS[type_name]
        if isinstance(item, _Float) or not low <= item <= high:
            self._type_error(item, go_type, where)
            return _NO_VALUE
        return item

    def _map(self, item: Any, where: _Where) -> Any:
        if not isinstance(item, _Object):
            self._type_error(item, "map[string]string", where)
            return _NO_VALUE
        out: dict[str, str] = {}
        for key, value in item:
            name = _go_string(key)
            if isinstance(value, str) and not isinstance(value, _Float):
                out[name] = _go_string(value)
                continue
            if value is not None:
                fields = (
                    [*where.fields, _pointer_token(key)] if self.v2 else where.fields
                )
                self._type_error(value, "string", _Where(where.struct, fields))
            out[name] = ""
        return out

    def _slice(self, item: Any, type_name: str, path: str, where: _Where) -> Any:
        if not isinstance(item, list) or isinstance(item, _Object):
            self._type_error(item, _go_type(type_name), where)
            return _NO_VALUE
        element = type_name[2:]
        out: list[Any] = []
        for index, entry in enumerate(item):
            here = (
                _Where(where.struct, [*where.fields, str(index)]) if self.v2 else where
            )
            if element in {"string", "duration"}:
                decoded = self._value(entry, element, None, f"{path}[{index}]", here)
                out.append(
                    ("" if element == "string" else 0)
                    if decoded in (_NO_VALUE, None)
                    else decoded
                )
            elif entry is None:
                out.append(None if element.startswith("*") else {})
            else:
                struct = element.removeprefix("*")
                target: dict[str, Any] = {}
                self._into_struct(
                    entry,
                    struct,
                    target,
                    path=f"{path}[{index}]",
                    stack=here.fields,
                    owner=where.struct,
                )
                out.append(target)
        return out

    def _enum(self, item: Any, enum: EnumSpec, where: _Where) -> Any:
        if enum.match == "string":
            # the server first decodes the value into a Go string (escapes resolved);
            # a type error there gets the outer field's context added, until Go 1.27
            # returns the inner error as it is
            if item is not None and (
                not isinstance(item, str) or isinstance(item, _Float)
            ):
                context = _Where(where.struct, []) if self.v2 else where
                self._fail(self._type_text(item, "string", context))
                return _NO_VALUE
            text = "" if item is None else item
            if text in enum.values:
                return text
            if text in enum.alias:
                return enum.alias[text]
        elif (
            isinstance(item, str)
            and not isinstance(item, _Float)
            and self._spelled_plainly(item)
        ):
            value = item.lower() if enum.match == "lower" else item
            if value in enum.values:
                return value
            if value in enum.alias:  # the fast path refuses it: decoded here
                return enum.alias[value]
        token = self._token(item)
        self._fail(enum.error.format(raw=goscan.go_quote(token), token=token))
        return _NO_VALUE

    def _token(self, item: Any) -> str:
        """The raw token of a value; for an escaped string, its spelling in the input."""
        if self.has_escapes and isinstance(item, str) and not isinstance(item, _Float):
            text = self.raw.decode("utf-8", "assetgate-go")
            for match in _STRING_TOKEN.finditer(text):
                token = match.group(0)
                if "\\" in token and json.loads(token) == item:
                    return token
        return _raw_token(item)

    def _spelled_plainly(self, value: str) -> bool:
        """Whether an enum string appears unescaped: Go compares the raw token bytes."""
        if not self.has_escapes:
            return True
        # a lone surrogate came from an escape: never spelled plainly
        return ('"' + value + '"').encode("utf-8", "surrogatepass") in self.raw

    def _time(self, item: Any, type_name: str) -> Any:
        if item is None:
            return None if type_name == "*time" else _NO_VALUE
        if not isinstance(item, str) or isinstance(item, _Float):
            self._fail("Time.UnmarshalJSON: input is not a JSON string")
            return _NO_VALUE
        problem = _go_time_error(item)
        if problem is not None:
            self._fail(problem)
            return _NO_VALUE
        return item


def _pointer_token(key: str) -> str:
    """An object key as a JSON pointer token (RFC 6901): ``~`` and ``/`` escaped."""
    return _go_string(key).replace("~", "~0").replace("/", "~1")


class _Where(NamedTuple):
    """Go's error context: the struct being decoded and the field path to the value."""

    struct: str
    fields: list[str]


def given_fields(data: bytes, line: ReleaseLine, struct: str) -> frozenset[str]:
    """The fields of ``struct`` that a JSON object's top-level keys set.

    Keys match as Go's decoder matches them: exactly, else case-folded. A key that
    names no field sets none; a document that is no object sets nothing.
    """
    try:
        keys = _TOP_KEYS.decode(data)
    except FAST_DECODE_FAILURES:
        return frozenset()
    exact, folded, _owners_map = _lookup(line, struct)
    found = (exact.get(key) or folded.get(_fold(key)) for key in keys)
    return frozenset(field[0] for field in found if field is not None)


_TOP_KEYS: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])


def _lookup(
    line: ReleaseLine, struct: str
) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]], dict[str, str]]:
    """Exact and case-folded key maps (key -> (name, type)) and field owners, cached."""
    key = (line.fingerprint, struct)
    cached = _LOOKUPS.get(key)
    if cached is None:
        exact: dict[str, tuple[str, str]] = {}
        folded: dict[str, tuple[str, str]] = {}
        for name, type_name in flat_fields(line, struct).items():
            exact[name] = (name, type_name)
            folded.setdefault(_fold(name), (name, type_name))
        cached = _LOOKUPS[key] = (exact, folded, _owners(line, struct))
    return cached


def _parse_values(
    text: str, raw: bytes, *, stream: bool
) -> tuple[list[Any], goscan.SyntaxProblem | None]:
    """The JSON values in ``text`` up to the first syntax error, and that error."""
    values: list[Any] = []
    if raw.count(b"[") + raw.count(b"{") > goscan.MAX_DEPTH:
        # only then can nesting pass Go's limit, which Python's parser does not know
        problem = goscan.scan(raw, stream=stream)
        if problem is not None and problem.message.endswith("exceeded max depth"):
            return values, problem
    position = 0
    end = len(text)
    while True:
        while position < end and text[position] in " \t\r\n":
            position += 1
        if position >= end:
            if not values and not stream:
                return values, goscan.scan(raw)
            return values, None
        if values and not stream:
            return values, goscan.scan(raw)
        try:
            value, position = _PARSER.raw_decode(text, position)
        except RecursionError:
            # deeper than Python parses by default: Go's limit decides (10,000 levels)
            problem = goscan.scan(raw, stream=stream)
            if problem is not None:
                return values, problem
            value, position = _deep_raw_decode(text, position)
        except ValueError:
            return values, goscan.scan(raw, stream=stream) or goscan.SyntaxProblem(
                "invalid JSON", position + 1
            )
        values.append(value)


def _deep_raw_decode(text: str, position: int) -> tuple[Any, int]:
    """Parse a value nested deeper than the default recursion limit allows.

    Go accepts up to 10,000 levels; the syntax scan has already refused anything
    deeper. The parse runs in a thread with a large stack so that the raised
    recursion limit is safe.
    """
    result: list[Any] = []
    failure: list[BaseException] = []

    def work() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 4 * goscan.MAX_DEPTH + 100))
        try:
            result.append(_PARSER.raw_decode(text, position))
        except (ValueError, RecursionError) as exc:
            failure.append(exc)
        finally:
            sys.setrecursionlimit(limit)

    old = threading.stack_size()
    threading.stack_size(512 * 1024 * 1024)
    try:
        thread = threading.Thread(target=work, name="assetgate-deep-json")
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old)
    if failure:
        raise ValueError(str(failure[0]))
    value, end = result[0]
    return value, end


_LOOKUPS: dict[
    tuple[str, str],
    tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]], dict[str, str]],
] = derived.cache("decoding.lookups", keyed_by="(line fingerprint, struct)")

_GO_INT_NAMES: Final = frozenset({"int", "int32", "int64", "uint64", "time.Duration"})


def _owners(line: ReleaseLine, struct: str) -> dict[str, str]:
    """Field name -> the struct that declares it (embedded structs resolved)."""
    spec = line.structs[struct]
    owners: dict[str, str] = {}
    for embedded in spec.embeds:
        owners.update(dict.fromkeys(_owners(line, embedded), embedded))
    for field in spec.fields:
        owners[field.name] = struct
    return owners


def _go_type(type_name: str) -> str:
    if type_name.startswith("[]"):
        return "[]" + _go_type(type_name[2:])
    if type_name.startswith("*"):
        return "*" + _go_type(type_name[1:])
    simple = {
        "duration": "time.Duration",
        "map": "map[string]string",
        "time": "time.Time",
    }
    if type_name in simple:
        return simple[type_name]
    if type_name in INT_BOUNDS or type_name in {"string", "bool"}:
        return type_name
    return f"server.{type_name}"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "number"
    if isinstance(value, _Object):
        return "object"
    return "array"


_STRING_TOKEN: Final = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')


def _raw_token(item: Any) -> str:
    """The raw JSON text of a value, as a Go UnmarshalJSON method receives it."""
    if item is None:
        return "null"
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, _Float):
        return str(item)
    if isinstance(item, str):
        return json.dumps(item, ensure_ascii=False)
    if isinstance(item, int):
        return str(item)
    return _compact(item)


def _scalar(item: Any) -> str:
    """A scalar as ``json.dumps(..., ensure_ascii=False)`` writes it."""
    if isinstance(item, _Float):
        return json.dumps(float(item))
    if isinstance(item, int) and not isinstance(item, bool):
        return str(item)  # no int(str) conversion limit is involved: str() of an int
    return json.dumps(item, ensure_ascii=False)


def _compact(item: Any) -> str:
    """Compact JSON of a decoded value, without recursion (values nest 10,000 deep).

    The same text as ``json.dumps(..., separators=(",", ":"))`` of the plain value.
    """
    out: list[str] = []
    stack: list[Any] = [item]
    while stack:
        top = stack.pop()
        if isinstance(top, _Closing):
            out.append(top.text)
        elif isinstance(top, _Object):
            out.append("{")
            stack.append(_Closing("}"))
            pairs = list(top)
            for index in range(len(pairs) - 1, -1, -1):
                key, value = pairs[index]
                stack.append(value)
                head = (
                    ("," if index else "") + json.dumps(key, ensure_ascii=False) + ":"
                )
                stack.append(_Closing(head))
        elif isinstance(top, list):
            out.append("[")
            stack.append(_Closing("]"))
            for index in range(len(top) - 1, -1, -1):
                stack.append(top[index])
                if index:
                    stack.append(_Closing(","))
        else:
            out.append(_scalar(top))
    return "".join(out)


class _Closing:
    """Literal text in :func:`_compact`'s work stack."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _is_json_zero(item: Any) -> bool:
    """Whether a value is a JSON zero (false, 0, "", null, [], {}, Go's zero time)."""
    if item is None or item is False or item == 0 or item in ("", GO_ZERO_TIME):
        return True
    if isinstance(item, _Float):
        return float(item) == 0
    return isinstance(item, list | dict) and len(item) == 0


def _go_string(text: str) -> str:
    r"""Lone surrogates (from ``\\ud800`` escapes) become U+FFFD, as in Go."""
    if text.isascii() or not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


_FOLD: Final = str.maketrans({"\u017f": "S", "\u212a": "K"})


def _fold(key: str) -> str:
    """Go's key folding: ASCII letters upper-cased; long s and Kelvin sign fold to S, K."""
    if key.isascii():
        return key.upper()
    return "".join(ch.upper() if ch.isascii() else ch for ch in key.translate(_FOLD))
