"""Versioning metadata as nats-server computes, stores and returns it (ADR-44).

Pure functions over decoded configs: the required API level (the highest matching
rule of the server's release line, ``0`` when none), Go ``Atoi`` parsing of stored
levels and of the ``Nats-Required-Api-Level`` header, what a create or update stores,
what a response shows, and the earliest release that can honour a config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from assetgate.decode import is_zero_time

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from assetgate.levels import Catalogue, ReleaseLine, Rule, ServerProfile

__all__ = [
    "CREATED_LEVEL_KEY",
    "CREATED_VERSION_KEY",
    "REQUIRED_LEVEL_KEY",
    "SERVER_LEVEL_KEY",
    "SERVER_VERSION_KEY",
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

_INT64_MAX: Final = (1 << 63) - 1
_INT64_MIN: Final = -(1 << 63)


def go_atoi(text: str) -> int | None:
    """Go ``strconv.Atoi`` (64-bit): optional sign, ASCII digits, in range; else ``None``."""
    digits = text[1:] if text[:1] in {"+", "-"} else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def supports_required_level(metadata: Mapping[str, str] | None, api_level: int) -> bool:
    """``supportsRequiredApiLevel``: a missing or empty stored level is supported."""
    stored = (metadata or {}).get(REQUIRED_LEVEL_KEY, "")
    if not stored:
        return True
    level = go_atoi(stored)
    return level is not None and level <= api_level


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

_COMPILED: dict[
    tuple[str, str], tuple[tuple[str, Callable[[Any], bool], int], ...]
] = {}


def _is_set(value: Any) -> bool:
    if isinstance(value, str):
        return value not in {"", "0001-01-01T00:00:00Z"} and not (
            value[:1].isdigit() and "T" in value and is_zero_time(value)
        )
    return bool(value)


def _compile(rule: Rule, line: ReleaseLine) -> Callable[[Any], bool]:
    if rule.when == "equals":
        expected = rule.value
        return lambda value: bool(value == expected)
    if rule.when == "positive":
        return lambda value: bool(value > 0)
    struct = line.structs[rule.struct]
    type_name = next(f.type for f in struct.fields if f.name == rule.field)
    if type_name.startswith("enum:"):
        enum = line.enums[type_name.removeprefix("enum:")]
        zero = {enum.values[0], ""}
        return lambda value: value not in zero
    return _is_set


def _rules_for(
    line: ReleaseLine, kind: str
) -> tuple[tuple[str, Callable[[Any], bool], int], ...]:
    key = (line.fingerprint, kind)
    compiled = _COMPILED.get(key)
    if compiled is None:
        struct = "StreamConfig" if kind == "stream" else "ConsumerConfig"
        compiled = _COMPILED[key] = tuple(
            (rule.field, _compile(rule, line), rule.level)
            for rule in line.rules
            if rule.struct == struct
        )
    return compiled


def required_level(config: Any, line: ReleaseLine, kind: str) -> int:
    """The highest level of the line's rules that ``config`` matches (0 when none)."""
    level = 0
    for field, matches, rule_level in _rules_for(line, kind):
        if rule_level > level and matches(getattr(config, field)):
            level = rule_level
    return level


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
    out = {k: v for k, v in (request or {}).items() if k not in DYNAMIC_KEYS}
    out[REQUIRED_LEVEL_KEY] = str(level)
    return out


def response_metadata(
    stored: Mapping[str, str] | None, profile: ServerProfile
) -> dict[str, str] | None:
    """The metadata a create/update/info response shows: stored keys plus dynamic ones."""
    if not profile.switches.stamps_level:
        return dict(stored) if stored else None
    out = dict(stored or {})
    out[SERVER_VERSION_KEY] = profile.version.text
    out[SERVER_LEVEL_KEY] = str(profile.api_level)
    return out


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

# A plan entry: (field, since or "", enum since map or None, nested struct or None).
_Plan = tuple[tuple[str, str, dict[str, str] | None, str | None], ...]
_PLANS: dict[tuple[str, str], _Plan] = {}


def _plan(line: ReleaseLine, struct: str) -> _Plan:
    """The fields of ``struct`` that can raise the minimum version, found once per line."""
    key = (line.fingerprint, struct)
    plan = _PLANS.get(key)
    if plan is not None:
        return plan
    _PLANS[key] = ()  # guards recursive structs while building
    baseline = _BASELINE
    entries: list[tuple[str, str, dict[str, str] | None, str | None]] = []
    specs = {f.name: f for f in line.structs[struct].fields}
    for embedded in line.structs[struct].embeds:
        specs.update({f.name: f for f in line.structs[embedded].fields})
    for name, field in specs.items():
        since = field.since if field.since != baseline else ""
        enum_since: dict[str, str] | None = None
        nested: str | None = None
        if field.type.startswith("enum:"):
            enum = line.enums[field.type.removeprefix("enum:")]
            # the zero value (and "" where accepted) is what an absent key decodes to
            late = {
                v: s for v, s in enum.since.items() if v not in {enum.values[0], ""}
            }
            enum_since = late or None
            if since and not enum_since:
                enum_since = {}
        else:
            base = field.type.removeprefix("[]").removeprefix("*")
            if base in line.structs and _plan(line, base):
                nested = base
        if since or enum_since or nested:
            entries.append((name, since, enum_since, nested))
    plan = _PLANS[key] = tuple(entries)
    return plan


_BASELINE: Final = "2.10.0"


def min_server_version(
    config: Any, line: ReleaseLine, catalogue: Catalogue, *, struct: str, level: int
) -> str:
    """The earliest release that knows every field and value of ``config`` and meets ``level``.

    For example a ``prioritized`` consumer needs 2.12.0 though stamped 1, and a stream
    source with ``consumer`` needs 2.14.0 though stamped 0.

    ``config`` is decoded with ``line``'s model and ``level`` computed by its rules.
    """
    best = _walk(config, line, struct, catalogue.lines[0].first)
    for release in catalogue.lines:
        for rng in release.ranges:
            if (rng.switches.api_level or 0) >= level:
                return _later(best, rng.first)
    return best


def _walk(value: Any, line: ReleaseLine, struct: str, best: str) -> str:
    for name, since, enum_since, nested in _plan(line, struct):
        item = getattr(value, name)
        if item is None or item is False or item in (0, "", []):
            continue
        if enum_since is not None:
            value_since = enum_since.get(item)
            if value_since is None:
                continue  # the zero value: the field is not in use
            best = _later(
                best,
                max(since, value_since, key=_release_key) if since else value_since,
            )
        elif since:
            best = _later(best, since)
        if nested is not None:
            for sub in item if isinstance(item, list) else (item,):
                if sub is not None:
                    best = _walk(sub, line, nested, best)
    return best


def _later(a: str, b: str) -> str:
    return a if _release_key(a) >= _release_key(b) else b


def _release_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("-", 1)[0].split("."))
