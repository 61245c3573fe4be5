"""msgspec Struct types for stream and consumer configs, built from the catalogue.

Each release line knows its own fields, so the types are generated once per line from
``levels/`` rather than written by hand. Struct field names are the server's JSON keys;
defaults are Go zero values, so a field is "used" when it differs from its default
(nats-server's rule in ``jetstream_versioning.go``).

The generated types are the *fast path*: msgspec accepts a document only when Go's
``encoding/json`` would decode it to the same values (exact keys, no nulls where Go
ignores them, enum values spelled exactly). Everything else goes to the Go-exact walker
in :mod:`assetgate.decode`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import msgspec

from assetgate.catalogue import derived
from assetgate.wire import GO_ZERO_TIME

if TYPE_CHECKING:
    from assetgate.catalogue.levels import FieldSpec, ReleaseLine

__all__ = [
    "CONFIG_STRUCT",
    "INT_BOUNDS",
    "STREAM_REQUEST",
    "UINT64_MAX",
    "flat_fields",
    "flat_specs",
    "stream_request",
    "struct_type",
]

UINT64_MAX: Final = (1 << 64) - 1

# The server struct that holds each kind of asset's config (as stored and listed).
CONFIG_STRUCT: Final[dict[str, str]] = {
    "stream": "StreamConfig",
    "consumer": "ConsumerConfig",
}

# Go integer kinds -> inclusive bounds (int is 64-bit on every server build).
INT_BOUNDS: Final[dict[str, tuple[int, int]]] = {
    "int": (-(1 << 63), (1 << 63) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
    "duration": (-(1 << 63), (1 << 63) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint64": (0, UINT64_MAX),
}


STREAM_REQUEST: Final = "StreamConfigRequest"
"""The body of a stream create or update (``StreamConfig`` with ``pedantic``, from 2.11)."""


def stream_request(line: ReleaseLine) -> str:
    """The struct a stream create's body decodes into on ``line``."""
    return STREAM_REQUEST if STREAM_REQUEST in line.structs else CONFIG_STRUCT["stream"]


def flat_specs(line: ReleaseLine, struct: str) -> dict[str, FieldSpec]:
    """JSON name -> field of ``struct``, embedded structs flattened (Go's rule).

    The embedded structs' fields come first; a field of the struct itself shadows them.
    """
    spec = line.structs[struct]
    fields: dict[str, FieldSpec] = {}
    for embedded in spec.embeds:
        fields.update(flat_specs(line, embedded))
    for field in spec.fields:
        fields[field.name] = field
    return fields


def flat_fields(line: ReleaseLine, struct: str) -> dict[str, str]:
    """JSON name -> Go type of ``struct``, embedded structs flattened (Go's rule)."""
    return {name: field.type for name, field in flat_specs(line, struct).items()}


_TYPES: dict[tuple[str, str, bool], type[Any]] = derived.cache(
    "model.types", keyed_by="(line fingerprint, struct, strict)"
)


def struct_type(line: ReleaseLine, struct: str, *, strict: bool = True) -> type[Any]:
    """The msgspec Struct type for ``struct`` as ``line`` knows it (built once).

    ``strict`` types forbid unknown fields (the fast path); lenient ones keep only known
    fields and are the target of :func:`msgspec.convert` in the Go-exact walker.
    """
    key = (line.fingerprint, struct, strict)
    kind = _TYPES.get(key)
    if kind is None:
        kind = _TYPES[key] = _build(line, struct, strict=strict, seen={})
    return kind


def _build(
    line: ReleaseLine, struct: str, *, strict: bool, seen: dict[str, type[Any]]
) -> type[Any]:
    if struct in seen:
        return seen[struct]
    fields: list[tuple[str, Any, Any]] = []
    for name, type_name in flat_fields(line, struct).items():
        annotation, default = _annotation(line, type_name, strict=strict, seen=seen)
        fields.append((name, annotation, default))
    kind = msgspec.defstruct(
        f"{struct}_{line.line.replace('.', '_')}",
        fields,
        kw_only=True,
        frozen=True,
        forbid_unknown_fields=strict,
        gc=False,  # configs are trees of str/int/list/dict: no reference cycles
        module=__name__,
    )
    seen[struct] = kind
    return kind


def _annotation(
    line: ReleaseLine, type_name: str, *, strict: bool, seen: dict[str, type[Any]]
) -> tuple[Any, Any]:
    if type_name in INT_BOUNDS:
        low, high = INT_BOUNDS[type_name]
        # msgspec cannot bound above int64; uint64 overflow is checked after decoding.
        meta = (
            msgspec.Meta(ge=low)
            if type_name == "uint64"
            else msgspec.Meta(ge=low, le=high)
        )
        return Annotated[int, meta], 0
    simple: dict[str, tuple[Any, Any]] = {
        "string": (str, ""),
        "bool": (bool, False),
        "time": (str, GO_ZERO_TIME),
        "*time": (str | None, None),
        "[]string": (list[str] | None, None),
        "[]duration": (
            list[Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]] | None,
            None,
        ),
        "map": (dict[str, str] | None, None),
    }
    if type_name in simple:
        return simple[type_name]
    if type_name.startswith("enum:"):
        enum = line.enums[type_name.removeprefix("enum:")]
        return Literal[enum.values], enum.values[0]
    if type_name.startswith("[]*"):
        inner = _build(line, type_name[3:], strict=strict, seen=seen)
        return list[inner | None] | None, None  # type: ignore[valid-type]  # generated type
    if type_name.startswith("[]"):
        inner = _build(line, type_name[2:], strict=strict, seen=seen)
        return list[inner] | None, None  # type: ignore[valid-type]  # generated type
    if type_name.startswith("*"):
        inner = _build(line, type_name[1:], strict=strict, seen=seen)
        return inner | None, None
    inner = _build(line, type_name, strict=strict, seen=seen)
    return inner, msgspec.field(default_factory=inner)
