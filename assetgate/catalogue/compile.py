"""Compile a release line's rules and field history into one small function per kind.

``required_level`` and ``min_server_version`` run on every validated config, so the
catalogue's facts (rules, the release that added each field and enum value) are turned
into straight-line Python once per release line, instead of being interpreted field by
field on every call. The generated source only reads attributes named in ``levels/``
(checked to be identifiers when the catalogue loads) and compares them with constants.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from assetgate.catalogue import derived
from assetgate.catalogue.model import CONFIG_STRUCT, flat_specs
from assetgate.decoding.decode import is_zero_time
from assetgate.wire import GO_ZERO_TIME

if TYPE_CHECKING:
    from collections.abc import Callable

    from assetgate.catalogue.levels import (
        Catalogue,
        Hazard,
        HazardEffect,
        ReleaseLine,
        Rule,
        ServerProfile,
    )

__all__ = ["Features", "features_for", "hazard_function", "level_function"]

Features = tuple[int, str]  # (required level, earliest release)

_IDENT: Final = re.compile(r"[a-z_][a-z0-9_]*")


def _time_set(value: str | None) -> bool:
    """A ``*time.Time`` counts as set when non-nil and not Go's zero instant."""
    return value is not None and value != GO_ZERO_TIME and not is_zero_time(value)


_CACHE: dict[tuple[str, str, str], Callable[[Any], Features]] = derived.cache(
    "compile.features", keyed_by="(catalogue digest, line fingerprint, kind)"
)
_LEVELS: dict[tuple[str, str], Callable[[Any], int]] = derived.cache(
    "compile.levels", keyed_by="(line fingerprint, kind)"
)


def level_function(line: ReleaseLine, kind: str) -> Callable[[Any], int]:
    """The compiled ``config -> required level`` of ``line``'s rules for ``kind``."""
    key = (line.fingerprint, kind)
    compiled = _LEVELS.get(key)
    if compiled is None:
        struct = CONFIG_STRUCT[kind]
        rules = [rule for rule in line.rules if rule.struct == struct]
        src = ["def _level(c):"]
        for level in sorted({rule.level for rule in rules}, reverse=True):
            conds = " or ".join(_condition(line, r) for r in rules if r.level == level)
            src.append(f"    if {conds}:\n        return {level}")
        src.append("    return 0")
        namespace = _run(src, {}, f"<assetgate rules {line.line} {kind}>", line)
        compiled = _LEVELS[key] = namespace["_level"]
    return compiled


def _is_set(line: ReleaseLine, type_name: str, value: object) -> bool:
    """Whether ``value`` differs from Go's zero value (a struct held by value: any field).

    The generated code tests the common types inline (:func:`_set_test`).
    """
    if type_name in {"time", "*time"}:
        return isinstance(value, str) and _time_set(value)
    if type_name.startswith("enum:"):
        return value not in (line.enums[type_name.removeprefix("enum:")].values[0], "")
    if type_name in line.structs:
        return any(
            _is_set(line, f.type, getattr(value, f.name))
            for f in flat_specs(line, type_name).values()
        )
    return bool(value)


def _set_test(line: ReleaseLine, type_name: str, expr: str) -> str:
    """Generated source: does ``expr`` of catalogue type ``type_name`` differ from zero?

    A plain ``time`` holds Go's zero instant when unset, and a struct held by value is
    an instance even when every field is unset, so neither is tested for truth.
    """
    if type_name in {"time", "*time"}:
        return f"_time_set({expr})"
    if type_name.startswith("enum:"):  # its zero, or "" (which decodes to it)
        zero = line.enums[type_name.removeprefix("enum:")].values[0]
        return f"{expr} not in ({zero!r}, '')"
    if type_name in line.structs:
        return f"_is_set(_LINE, {type_name!r}, {expr})"
    return expr


def _run(
    lines: list[str], namespace: dict[str, Any], name: str, line: ReleaseLine
) -> dict[str, Any]:
    """Execute generated source in ``namespace`` (with the helpers it may call).

    The source is generated from identifier-checked catalogue names and constants only.
    """
    namespace.setdefault("_time_set", _time_set)
    namespace.setdefault("_is_set", _is_set)
    namespace.setdefault("_LINE", line)
    exec(compile("\n".join(lines) + "\n", name, "exec"), namespace)  # noqa: S102
    return namespace


_HAZARDS: dict[
    tuple[str, str, str], Callable[[Any], tuple[HazardEffect, str] | None] | None
] = derived.cache("compile.hazards", keyed_by="(line fingerprint, version, kind)")


def hazard_function(
    profile: ServerProfile, kind: str
) -> Callable[[Any], tuple[HazardEffect, str] | None] | None:
    """The compiled ``config -> (effect, text) or None`` of the release's hazards."""
    line = profile.line
    key = (line.fingerprint, profile.version.text, kind)
    if key in _HAZARDS:
        return _HAZARDS[key]
    struct = CONFIG_STRUCT[kind]
    hazards = [
        hazard
        for hazard in line.hazards
        if hazard.struct == struct and hazard.applies_to(profile.version)
    ]
    compiled: Callable[[Any], tuple[HazardEffect, str] | None] | None = None
    if hazards:
        src = ["def _hazard(c):"]
        src.extend(
            f"    if {_condition(line, hazard)}:\n"
            f"        return ({hazard.effect!r}, {hazard.text!r})"
            for hazard in hazards
        )
        src.append("    return None")
        compiled = _run(src, {}, f"<assetgate hazards {line.line} {kind}>", line)[
            "_hazard"
        ]
    _HAZARDS[key] = compiled
    return compiled


def _condition(line: ReleaseLine, rule: Rule | Hazard) -> str:
    field = _ident(rule.field)
    if rule.when == "contains":
        return f"{str(rule.value)!r} in c.{field}"
    if rule.when == "has_null":
        return f"None in (c.{field} or ())"
    type_name = flat_specs(line, rule.struct)[rule.field].type
    if rule.when == "equals":
        return f"c.{field} == {rule.value!r}"
    if rule.when == "positive":
        return f"c.{field} > 0"
    return _set_test(line, type_name, f"c.{field}")


def features_for(
    catalogue: Catalogue, line: ReleaseLine, kind: str
) -> Callable[[Any], Features]:
    """The compiled ``config -> (required level, earliest release)`` for ``line``."""
    key = (catalogue.digest, line.fingerprint, kind)
    compiled = _CACHE.get(key)
    if compiled is None:
        compiled = _CACHE[key] = _Builder(catalogue, line).build(kind)
    return compiled


class _Builder:
    def __init__(self, catalogue: Catalogue, line: ReleaseLine) -> None:
        self.line = line
        firsts = sorted(
            {rng.first for release in catalogue.lines for rng in release.ranges},
            key=_release_key,
        )
        self.ordinal = {text: index for index, text in enumerate(firsts)}
        self.releases = firsts
        self.level_first: list[int] = []
        top = max(
            (rng.switches.api_level or 0)
            for rel in catalogue.lines
            for rng in rel.ranges
        )
        for level in range(top + 1):
            first = next(
                rng.first
                for rel in catalogue.lines
                for rng in rel.ranges
                if (rng.switches.api_level or 0) >= level
            )
            self.level_first.append(self.ordinal[first])
        self.namespace: dict[str, Any] = {}
        self.lines: list[str] = []
        self.done: set[str] = set()

    def build(self, kind: str) -> Callable[[Any], Features]:
        struct = CONFIG_STRUCT[kind]
        self._walker(struct)
        self.namespace["_level"] = level_function(self.line, kind)
        src = ["def features(c):"]
        src.append("    level = _level(c)")
        src.append(f"    best = _walk_{struct}(c, 0)")
        src.append("    first = _LEVEL_FIRST[level]")
        src.append("    return level, _RELEASES[best if best > first else first]")
        self.namespace["_LEVEL_FIRST"] = tuple(self.level_first)
        self.namespace["_RELEASES"] = tuple(self.releases)
        _run(
            self.lines + src,
            self.namespace,
            f"<assetgate levels {self.line.line} {kind}>",
            self.line,
        )
        function: Callable[[Any], Features] = self.namespace["features"]
        return function

    def _walker(self, struct: str) -> bool:
        """Emit ``_walk_<struct>(c, best)``; return whether it can raise the version."""
        if struct in self.done:
            return True
        self.done.add(struct)
        body: list[str] = []
        for field in flat_specs(self.line, struct).values():
            name = _ident(field.name)
            since = self.ordinal.get(field.since, 0)
            type_name = field.type
            base = type_name.removeprefix("[]").removeprefix("*")
            if type_name.startswith("enum:"):
                enum = self.line.enums[type_name.removeprefix("enum:")]
                late = {
                    value: max(since, self.ordinal.get(first, 0))
                    for value, first in enum.since.items()
                    if value not in {enum.values[0], ""}
                    and max(since, self.ordinal.get(first, 0))
                }
                if late:
                    table = f"_E_{struct}_{name}"
                    self.namespace[table] = late
                    body.append(
                        f"    o = {table}.get(c.{name}, 0)\n    if o > best:\n        best = o"
                    )
            elif base in self.line.structs and base != struct and self._walker(base):
                if type_name.startswith("[]"):
                    body.append(
                        f"    if c.{name}:\n        for x in c.{name}:\n"
                        f"            if x is not None:\n                best = _walk_{base}(x, best)"
                    )
                elif type_name.startswith("*"):
                    body.append(
                        f"    if c.{name} is not None:\n        best = _walk_{base}(c.{name}, best)"
                    )
                else:
                    body.append(f"    best = _walk_{base}(c.{name}, best)")
                if since:
                    body.append(self._since(name, type_name, since))
            elif since:
                body.append(self._since(name, type_name, since))
        self.lines.append(f"def _walk_{struct}(c, best):")
        self.lines.extend(body or ["    pass"])
        self.lines.append("    return best")
        return bool(body)

    def _since(self, name: str, type_name: str, since: int) -> str:
        test = _set_test(self.line, type_name, f"c.{name}")
        return f"    if best < {since} and {test}:\n        best = {since}"


def _ident(name: str) -> str:
    if _IDENT.fullmatch(name) is None:  # the loader rejects such names; this is a guard
        msg = f"catalogue field name is not an identifier: {name!r}"
        raise ValueError(msg)
    return name


def _release_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("-", 1)[0].split("."))
