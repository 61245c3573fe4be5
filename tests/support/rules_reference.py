"""A plain, interpreted evaluator of the catalogue's rules, hazards and field history.

:mod:`assetgate.catalogue.compile` turns a release line's facts into generated Python source and
``exec``s it. This module answers the same three questions by walking the catalogue's
objects directly, one field at a time, with no generated code, so that a differential
test (``tests/unit/test_compile_reference.py``) can hold the two against each other:

* :func:`required_level`: the highest ``level`` of the line's rules for the kind's
  config struct whose condition the config meets (0 when none does);
* :func:`features`: that level and the earliest release that both has an API level at
  least that high and knows every field and enum value the config uses;
* :func:`hazard`: the first of the line's hazards that the server version still has
  and whose condition the config meets, as ``(effect, text)``.

It is written from the catalogue's own descriptions (``levels/README.md``, the
docstrings of :mod:`assetgate.catalogue.levels` and :mod:`assetgate.catalogue.model`: "a field is used when
it differs from its Go zero value"), not from the generated source. Where those leave a
question open, the choice ``assetgate.catalogue.compile`` makes is followed and marked ``AMBIGUOUS``.
Speed does not matter here; being obviously right does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from assetgate.catalogue.model import CONFIG_STRUCT
from assetgate.decoding.decode import is_zero_time
from assetgate.version import parse_version

if TYPE_CHECKING:
    from collections.abc import Iterator

    from assetgate.catalogue.levels import (
        Catalogue,
        FieldSpec,
        Hazard,
        ReleaseLine,
        Rule,
        StructSpec,
    )
    from assetgate.version import ServerVersion

__all__ = [
    "active_hazards",
    "condition_holds",
    "earliest_release_with_level",
    "features",
    "field_release",
    "hazard",
    "is_set",
    "matching_rules",
    "release_key",
    "required_level",
]

_INTEGERS: Final = frozenset({"int", "int32", "int64", "uint64", "duration"})


def release_key(text: str) -> tuple[int, int, int]:
    """``2.12.5`` (or ``2.12.5-RC.1``) as a tuple that orders releases."""
    version = parse_version(text)
    return (version.major, version.minor, version.patch)


# --- is a value set? ------------------------------------------------------------------


def is_set(line: ReleaseLine, type_name: str, value: Any) -> bool:
    """Whether ``value``, of catalogue type ``type_name``, differs from Go's zero value.

    This is nats-server's notion of a "used" field (``jetstream_versioning.go``), as
    the decoded model stores it: defaults are Go zero values, pointers and slices are
    ``None`` when absent.
    """
    if type_name == "bool":
        return value is True
    if type_name in _INTEGERS:
        return bool(value != 0)
    if type_name == "string":
        return bool(value != "")
    if type_name in {"time", "*time"}:
        # A *time.Time is set when non-nil and not Go's zero instant, however it is
        # spelled (an offset or fraction may still name 0001-01-01T00:00:00Z). A plain
        # ``time`` (decoded default "0001-01-01T00:00:00Z") is set by the same test.
        # No packaged field has that type yet; a test adds one in a synthetic line.
        return value is not None and not is_zero_time(value)
    if type_name.startswith("enum:"):
        enum = line.enums[type_name.removeprefix("enum:")]
        # An enum is set when it holds another value than its zero (its first value).
        # AMBIGUOUS: ``""`` also counts as unset for every enum, as in ``assetgate.catalogue.compile``:
        # where it is a value at all it decodes to the zero (persist_mode) or is the
        # zero itself (consumer_action).
        return value not in {enum.values[0], ""}
    if type_name.startswith("[]") or type_name == "map":
        # AMBIGUOUS: an empty list or map counts as unset although the decoded model
        # keeps ``[]`` apart from ``null`` (Go's non-nil empty slice is not its zero
        # value); a length test is followed, as ``assetgate.catalogue.compile``'s truth test does.
        return value is not None and len(value) > 0
    if type_name.startswith("*"):
        return value is not None
    if type_name in line.structs:
        # A struct held by value is set when any of its fields is (Go's zero value).
        # No rule or later-added field has such a type yet; a test adds one in a
        # synthetic line.
        return any(
            is_set(line, spec.type, getattr(value, spec.name))
            for spec in _fields(line, type_name)
        )
    msg = f"unknown catalogue type {type_name!r}"
    raise ValueError(msg)


def _fields(line: ReleaseLine, struct: str) -> Iterator[FieldSpec]:
    """Every JSON field of ``struct``: embedded structs' first, then its own."""
    spec: StructSpec = line.structs[struct]
    for embedded in spec.embeds:
        yield from _fields(line, embedded)
    yield from spec.fields


def _field_type(line: ReleaseLine, struct: str, name: str) -> str:
    for spec in _fields(line, struct):
        if spec.name == name:
            return spec.type
    msg = f"{struct} has no field {name!r} in {line.line}"
    raise KeyError(msg)


# --- conditions ----------------------------------------------------------------------


def condition_holds(line: ReleaseLine, fact: Rule | Hazard, config: Any) -> bool:
    """Whether ``config`` (a decoded ``fact.struct``) meets the fact's ``when``.

    ``set``: the field differs from its zero value (:func:`is_set`); ``positive``: the
    number is above 0; ``equals``: the field is ``value``; ``contains``: ``value`` is a
    substring of the string; ``has_null``: the list holds a JSON ``null``.
    """
    value = getattr(config, fact.field)
    when = fact.when
    if when == "set":
        return is_set(line, _field_type(line, fact.struct, fact.field), value)
    if when == "positive":
        return bool(value > 0)
    if when == "equals":
        return bool(value == fact.value)
    if when == "contains":
        # AMBIGUOUS: the catalogue uses ``contains`` on strings only; on a list it is
        # taken as membership of ``str(value)``, as Python's ``in`` in ``assetgate.catalogue.compile``.
        return value is not None and str(fact.value) in value
    if when == "has_null":
        return value is not None and any(item is None for item in value)
    msg = f"unknown condition {when!r}"
    raise ValueError(msg)


def matching_rules(line: ReleaseLine, kind: str, config: Any) -> list[Rule]:
    """The line's rules for ``kind``'s config struct that ``config`` meets."""
    struct = CONFIG_STRUCT[kind]
    # AMBIGUOUS: a rule naming another struct (a nested one such as StreamSource) is
    # not applied, as in ``assetgate.catalogue.compile``; the catalogue has none (a test checks it).
    return [
        rule
        for rule in line.rules
        if rule.struct == struct and condition_holds(line, rule, config)
    ]


def required_level(line: ReleaseLine, kind: str, config: Any) -> int:
    """The API level ``config`` needs on ``line``: its highest matching rule's, or 0."""
    return max((rule.level for rule in matching_rules(line, kind, config)), default=0)


# --- hazards -------------------------------------------------------------------------


def _still_has(fact: Hazard, version: ServerVersion) -> bool:
    """Whether ``version`` still has the hazard, by its ``fixed`` list.

    ``fixed`` names the first patch of each line that no longer has it; a line it does
    not name has it when the line is older than the newest line named, and no longer
    when newer. A pre-release counts as its release.
    """
    if not fact.fixed:
        return True
    release = (version.major, version.minor, version.patch)
    fixes = [release_key(text) for text in fact.fixed]
    for fix in fixes:
        if fix[:2] == release[:2]:
            return release < fix
    return release[:2] < max(fixes)[:2]


def active_hazards(
    line: ReleaseLine, version: ServerVersion, kind: str
) -> list[Hazard]:
    """The line's hazards on ``kind``'s config struct that ``version`` still has."""
    struct = CONFIG_STRUCT[kind]
    return [
        fact
        for fact in line.hazards
        if fact.struct == struct and _still_has(fact, version)
    ]


def hazard(
    line: ReleaseLine, version: ServerVersion, kind: str, config: Any
) -> tuple[str, str] | None:
    """``(effect, text)`` of the first active hazard ``config`` meets, or ``None``.

    The first in catalogue order wins (the order the fold keeps: older lines first).
    """
    for fact in active_hazards(line, version, kind):
        if condition_holds(line, fact, config):
            return (fact.effect, fact.text)
    return None


# --- field and value history ------------------------------------------------------------


def _all_ranges(catalogue: Catalogue) -> list[tuple[str, int]]:
    """Every ``[[versions]]`` range as (first release, API level; none counts as 0)."""
    return [
        (rng.first, rng.switches.api_level or 0)
        for release_line in catalogue.lines
        for rng in release_line.ranges
    ]


def earliest_release_with_level(catalogue: Catalogue, level: int) -> str:
    """The oldest release whose API level is at least ``level``."""
    candidates = [first for first, api in _all_ranges(catalogue) if api >= level]
    if not candidates:
        msg = f"no release has API level {level}"
        raise ValueError(msg)
    return min(candidates, key=release_key)


def field_release(line: ReleaseLine, struct: str, config: Any) -> str | None:
    """The newest release that added a field or enum value ``config`` uses, if any.

    A field counts when it is set (:func:`is_set`), with the release that added it; an
    enum field counts with the later of the field's and its value's release; a nested
    struct (by value, pointer or list element) counts its own fields the same way.
    Embedded structs' fields count too (Go flattens them, and so does the decoded
    model); no packaged config struct embeds one, so a test adds one in a synthetic
    line.
    """
    found: list[str] = []
    for spec in _fields(line, struct):
        value = getattr(config, spec.name)
        if is_set(line, spec.type, value):
            found.append(spec.since)
            if spec.type.startswith("enum:"):
                enum = line.enums[spec.type.removeprefix("enum:")]
                found.append(enum.since[value])
        for inner_struct, inner in _nested(line, spec.type, value):
            release = field_release(line, inner_struct, inner)
            if release is not None:
                found.append(release)
    return max(found, key=release_key, default=None)


def _nested(line: ReleaseLine, type_name: str, value: Any) -> list[tuple[str, Any]]:
    """The struct values inside a field's value, with their struct names."""
    base = type_name.removeprefix("[]").removeprefix("*")
    if base not in line.structs or value is None:
        return []
    if type_name.startswith("[]"):
        return [(base, item) for item in value if item is not None]
    return [(base, value)]


def features(
    catalogue: Catalogue, line: ReleaseLine, kind: str, config: Any
) -> tuple[int, str]:
    """(required level, earliest release that has that level and knows the config)."""
    level = required_level(line, kind, config)
    candidates = [earliest_release_with_level(catalogue, level)]
    used = field_release(line, CONFIG_STRUCT[kind], config)
    if used is not None:
        candidates.append(used)
    return level, max(candidates, key=release_key)
