"""The owner of what is built from the catalogue: one registry of the caches that hold it.

Decoders, Struct types, compiled rules and hazards, bound config checks, plans and
server profiles are built once per release line (keyed by its fingerprint, or by the
catalogue or profile they come from) and kept for the life of the process. Each lives
in a plain dict that its module asks for here, by name and with what its keys hold, so
that one place lists them (:func:`caches`), measures them (:func:`sizes`) and empties
them (:func:`clear`). Lookups stay plain dict lookups, since some run per record; a
build happens under :data:`assetgate.catalogue.levels.BUILD_LOCK` where threads may
race (msgspec's first use of a type is not thread-safe).
"""

from __future__ import annotations

from typing import Any

__all__ = ["cache", "caches", "clear", "sizes"]

_REGISTRY: dict[str, tuple[dict[Any, Any], str]] = {}


def cache(name: str, *, keyed_by: str) -> dict[Any, Any]:
    """A new, empty cache registered as ``name`` (a module reloaded replaces its own)."""
    store: dict[Any, Any] = {}
    _REGISTRY[name] = (store, keyed_by)
    return store


def caches() -> dict[str, str]:
    """Every registered cache by name, with what its keys hold."""
    return {name: keyed_by for name, (_, keyed_by) in sorted(_REGISTRY.items())}


def sizes() -> dict[str, int]:
    """How many entries each cache holds."""
    return {name: len(store) for name, (store, _) in sorted(_REGISTRY.items())}


def clear() -> None:
    """Empty every cache: the next use rebuilds what it needs."""
    for store, _ in _REGISTRY.values():
        store.clear()
