"""Versioning metadata as nats-server computes, stores and returns it (ADR-44).

Pure functions over decoded configs: the required API level (the highest matching
rule of the server's release line, ``0`` when none), Go ``Atoi`` parsing of stored
levels and of the ``Nats-Required-Api-Level`` header, what a create or update stores,
what a response shows, and the earliest release that can honour a config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from assetgate.catalogue import derived
from assetgate.catalogue.compile import features_for, level_function
from assetgate.catalogue.model import CONFIG_STRUCT
from assetgate.decoding.decode import decode
from assetgate.decoding.goscan import go_atoi

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assetgate.catalogue.levels import Catalogue, ReleaseLine, ServerProfile

__all__ = [
    "CREATED_LEVEL_KEY",
    "CREATED_VERSION_KEY",
    "REQUIRED_LEVEL_KEY",
    "SERVER_LEVEL_KEY",
    "SERVER_VERSION_KEY",
    "config_features",
    "go_atoi",
    "header_accepted",
    "min_server_version",
    "required_level",
    "response_metadata",
    "stored_metadata",
    "supports_required_level",
]

REQUIRED_LEVEL_KEY: Final = "_nats.req.level"
SERVER_VERSION_KEY: Final = "_nats.ver"
SERVER_LEVEL_KEY: Final = "_nats.level"
DYNAMIC_KEYS: Final = (SERVER_VERSION_KEY, SERVER_LEVEL_KEY)
# ADR-44's created-version keys; the released server never writes them (assetgate does).
CREATED_VERSION_KEY: Final = "_nats.created.server.version"
CREATED_LEVEL_KEY: Final = "_nats.created.server.api_level"


def supports_required_level(metadata: Mapping[str, str] | None, api_level: int) -> bool:
    """``supportsRequiredApiLevel``: a missing or empty stored level is supported."""
    lowest = lowest_supporting_level(metadata)
    return lowest is not None and lowest <= api_level


def lowest_supporting_level(metadata: Mapping[str, str] | None) -> int | None:
    """The lowest API level that supports the stored level (:func:`supports_required_level`).

    0 when the stored level is missing or empty; ``None`` when it does not parse, which
    no level supports.
    """
    stored = (metadata or {}).get(REQUIRED_LEVEL_KEY, "")
    return go_atoi(stored) if stored else 0


def header_accepted(value: str | None, profile: ServerProfile) -> bool:
    """Whether a request carrying ``Nats-Required-Api-Level: value`` is served.

    Servers before 2.12 ignore the header. The header parser skips leading spaces of
    the value (trailing ones stay), an empty value is no requirement, and the rest is
    Go ``Atoi``: a value that does not parse, or exceeds the level, is refused.
    """
    if value is None or not profile.switches.required_level_header:
        return True
    trimmed = value.lstrip(" ")
    if not trimmed:
        return True
    level = go_atoi(trimmed)
    return level is not None and level <= (profile.api_level or 0)


# --- required level ----------------------------------------------------------------------


def required_level(config: Any, line: ReleaseLine, kind: str) -> int:
    """The highest level of the line's rules that ``config`` matches (0 when none)."""
    return level_function(line, kind)(config)


# --- stored and returned metadata -----------------------------------------------------------


def stored_metadata(
    request: Mapping[str, str] | None,
    *,
    profile: ServerProfile,
    level: int,
    existing: Mapping[str, str] | None = None,
    idempotent: bool = False,
) -> dict[str, str] | None:
    """What the server stores for a create or update request's ``metadata``.

    2.10 stores the user's map verbatim. From 2.11 the dynamic keys are dropped and
    ``_nats.req.level`` is set to ``level``, overwriting a user value; an idempotent
    re-create keeps the stored metadata as it is (``copyStreamMetadata``). ``None``
    stands for no metadata (omitted from the JSON).
    """
    if not profile.switches.stamps_level:
        return dict(request) if request else None
    if idempotent:
        return dict(existing) if existing else None
    if not request:
        return {
            REQUIRED_LEVEL_KEY: _LEVEL_TEXT[level]
            if level < _CACHED_LEVELS
            else str(level)
        }
    out = dict(request)
    if SERVER_VERSION_KEY in out or SERVER_LEVEL_KEY in out:
        out.pop(SERVER_VERSION_KEY, None)
        out.pop(SERVER_LEVEL_KEY, None)
    out[REQUIRED_LEVEL_KEY] = (
        _LEVEL_TEXT[level] if level < _CACHED_LEVELS else str(level)
    )
    return out


_CACHED_LEVELS: Final = 64
_LEVEL_TEXT: Final = tuple(str(level) for level in range(_CACHED_LEVELS))


def response_metadata(
    stored: Mapping[str, str] | None, profile: ServerProfile
) -> dict[str, str] | None:
    """The metadata a create/update/info response shows: stored keys plus dynamic ones."""
    if not profile.switches.stamps_level:
        return dict(stored) if stored else None
    if stored:
        return {
            **stored,
            SERVER_VERSION_KEY: profile.version.text,
            SERVER_LEVEL_KEY: str(profile.api_level),
        }
    return {
        SERVER_VERSION_KEY: profile.version.text,
        SERVER_LEVEL_KEY: str(profile.api_level),
    }


def created_metadata(
    profile: ServerProfile, existing: Mapping[str, str] | None, *, op: str
) -> dict[str, str]:
    """ADR-44's created-version keys: set on create, carried over on update."""
    if op != "create" and existing and CREATED_VERSION_KEY in existing:
        return {
            CREATED_VERSION_KEY: existing[CREATED_VERSION_KEY],
            CREATED_LEVEL_KEY: existing.get(CREATED_LEVEL_KEY, ""),
        }
    level = profile.api_level
    return {
        CREATED_VERSION_KEY: profile.version.text,
        CREATED_LEVEL_KEY: "" if level is None else str(level),
    }


# --- minimum server version ----------------------------------------------------------------


def min_server_version(
    config: Any, line: ReleaseLine, catalogue: Catalogue, *, kind: str
) -> str:
    """The earliest release that knows every field and value of ``config`` and meets its level.

    For example a ``prioritized`` consumer needs 2.12.0 though stamped 1, and a stream
    source with ``consumer`` needs 2.14.0 though stamped 0. ``config`` is decoded with
    ``line``'s model.
    """
    return features_for(catalogue, line, kind)(config)[1]


def config_features(
    raw: bytes, kind: str, catalogue: Catalogue
) -> tuple[int, str] | None:
    """What a config needs, whatever server it meets: (required level, earliest release).

    The newest release line decides when it knows every field; otherwise the lines are
    tried from the oldest on and the first that knows them all decides (stream templates'
    ``template_owner`` is known up to 2.12 only). ``None`` when no release knows every
    field, or none can decode the config at all.
    """
    struct = CONFIG_STRUCT[kind]
    newest = catalogue.newest
    go_json = newest.ranges[-1].switches.go_json
    decoded = decode(raw, newest, struct, context="stored", go_json=go_json)
    if decoded.config is not None and not decoded.unknown_fields:
        return features_for(catalogue, newest, kind)(decoded.config)
    known = _known_names(catalogue)
    if any(_leaf(path) not in known for path in decoded.unknown_fields):
        return None  # a field no release knows
    for line in catalogue.lines[:-1]:
        go_json = line.ranges[-1].switches.go_json
        other = decode(raw, line, struct, context="stored", go_json=go_json)
        if other.config is not None and not other.unknown_fields:
            return features_for(catalogue, line, kind)(other.config)
    return None


def _leaf(path: str) -> str:
    return path.rsplit(".", 1)[-1].split("[", 1)[0]


_KNOWN: dict[int, tuple[Catalogue, frozenset[str]]] = derived.cache(
    "metadata.known_names", keyed_by="id of catalogue"
)


def _known_names(catalogue: Catalogue) -> frozenset[str]:
    """Every JSON field name any release line knows, in any struct."""
    cached = _KNOWN.get(id(catalogue))
    if cached is None or cached[0] is not catalogue:
        names = frozenset(
            field.name
            for line in catalogue.lines
            for struct in line.structs.values()
            for field in struct.fields
        )
        cached = _KNOWN[id(catalogue)] = (catalogue, names)
    return cached[1]
