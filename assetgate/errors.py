"""Exceptions callers catch: a broken catalogue, an unknown server version, bad input.

An offline or unloadable asset is a result, never an exception.
"""

from __future__ import annotations

__all__ = [
    "AssetgateError",
    "CatalogueError",
    "InvalidArgument",
    "InvalidConfig",
    "InvalidServerVersion",
    "InvalidSubject",
    "UnknownServerVersion",
]


class AssetgateError(Exception):
    """Base class of every error assetgate raises on purpose."""


class CatalogueError(AssetgateError, ValueError):
    """The level catalogue is inconsistent; ``problems`` lists every problem found."""

    def __init__(self, problems: list[str]) -> None:
        """Keep every problem so that one run reports all of them."""
        self.problems = list(problems)
        super().__init__("invalid level catalogue:\n  " + "\n  ".join(self.problems))

    def __reduce__(self) -> tuple[type[CatalogueError], tuple[list[str]]]:
        """Pickle with the problem list (Spark ships worker errors pickled)."""
        return (CatalogueError, (self.problems,))


class InvalidServerVersion(AssetgateError, ValueError):
    """A string that is not a nats-server version (``2.12.0``, ``v2.12.0-RC.1``)."""


class UnknownServerVersion(AssetgateError, ValueError):
    """A well-formed version of a release line the catalogue does not describe."""


class InvalidSubject(AssetgateError, ValueError):
    """A subject or subject filter that is not well formed."""


class InvalidConfig(AssetgateError, ValueError):
    """A config the server could not decode at all (for :func:`assetgate.stamp`)."""


class InvalidArgument(AssetgateError, ValueError):
    """A Python API argument outside what the function accepts (a kind, an operation)."""
