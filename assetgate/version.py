"""Parse nats-server version strings the way the server writes and compares them.

The server's VERSION constant is SemVer 2.0 (``2.12.15``, ``2.12.0-RC.1``,
``2.15.0-dev``, ``2.11.1-binary``); tags add a leading ``v``. The server's own
``versionAtLeast`` compares only major.minor.patch, so a pre-release counts as its
release: ``2.12.0-RC.1`` is judged as 2.12.0. assetgate follows that policy.
"""

from __future__ import annotations

import re
from typing import Final, cast

import msgspec
from packaging.version import Version

from assetgate.decoding.goscan import go_atoi
from assetgate.errors import InvalidServerVersion

__all__ = ["ServerVersion", "parse_version"]

# SemVer 2.0 core with optional pre-release and build parts, as the server validates.
_SEMVER: Final = re.compile(
    r"v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?",
    re.ASCII,  # Go's \d is ASCII only
)


class ServerVersion(msgspec.Struct, frozen=True, order=False):
    """A parsed nats-server version.

    ``text`` is the version as the server prints it (no leading ``v``);
    ``release`` orders versions by major.minor.patch only.
    """

    text: str
    major: int
    minor: int
    patch: int
    prerelease: str = ""

    @property
    def release(self) -> Version:
        """The release number the server compares (pre-release ignored)."""
        return Version(f"{self.major}.{self.minor}.{self.patch}")

    @property
    def line(self) -> str:
        """The release line, ``major.minor``."""
        return f"{self.major}.{self.minor}"


def parse_version(text: str) -> ServerVersion:
    """Parse a nats-server version such as ``2.12.0``, ``v2.12.0`` or ``2.12.0-RC.1``.

    Raises:
        InvalidServerVersion: the text is not a SemVer 2.0 version.
    """
    match = _SEMVER.fullmatch(text.strip())
    # each number as the server's versionComponents reads it (strconv.Atoi: in range)
    numbers = [] if match is None else [go_atoi(part) for part in match.groups()[:3]]
    if match is None or None in numbers:
        msg = f"invalid server version: {text!r}"
        raise InvalidServerVersion(msg)
    major, minor, patch = cast("list[int]", numbers)
    return ServerVersion(
        text=text.strip().removeprefix("v"),
        major=major,
        minor=minor,
        patch=patch,
        prerelease=match.group(4) or "",
    )
