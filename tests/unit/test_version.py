"""Tests for assetgate.version: parsing nats-server version strings."""

from __future__ import annotations

import re

import pytest
from packaging.version import Version

from assetgate import InvalidServerVersion, ServerVersion, parse_version


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2.12.8", ServerVersion(text="2.12.8", major=2, minor=12, patch=8)),
        ("v2.12.0", ServerVersion(text="2.12.0", major=2, minor=12, patch=0)),
        (
            "2.12.0-RC.1",
            ServerVersion(
                text="2.12.0-RC.1", major=2, minor=12, patch=0, prerelease="RC.1"
            ),
        ),
        (
            "2.15.0-dev",
            ServerVersion(
                text="2.15.0-dev", major=2, minor=15, patch=0, prerelease="dev"
            ),
        ),
        (
            "2.11.1-binary",
            ServerVersion(
                text="2.11.1-binary", major=2, minor=11, patch=1, prerelease="binary"
            ),
        ),
        (
            "2.10.26+build.5",
            ServerVersion(text="2.10.26+build.5", major=2, minor=10, patch=26),
        ),
    ],
    ids=["plain", "tag-v", "rc", "dev", "binary", "build-metadata"],
)
def test_parse_version_fields(text: str, expected: ServerVersion) -> None:
    """A SemVer string parses into its parts; the text drops a leading v only."""
    actual = parse_version(text)
    assert actual == expected


@pytest.mark.parametrize(
    ("text", "release", "line"),
    [
        ("2.12.0-RC.1", Version("2.12.0"), "2.12"),
        ("v2.14.6", Version("2.14.6"), "2.14"),
        ("2.15.0-dev", Version("2.15.0"), "2.15"),
    ],
    ids=["rc-counts-as-release", "tag", "dev"],
)
def test_release_ignores_prerelease(text: str, release: Version, line: str) -> None:
    """`release` compares major.minor.patch only (server's versionAtLeast); `line` is major.minor."""
    parsed = parse_version(text)
    assert (parsed.release, parsed.line) == (release, line)


@pytest.mark.parametrize(
    "text",
    [
        # not three numbers
        "2.12",
        "2",
        "2.12.0.1",
        # not numbers / empty
        "",
        "abc",
        "two.twelve.zero",
        # leading zeros are not SemVer
        "02.12.0",
        "2.012.0",
        # malformed pre-release / build parts
        "2.12.0-",
        "2.12.0-RC..1",
        "2.12.0+",
        "V2.12.0",
    ],
    ids=[
        "two-parts",
        "one-part",
        "four-parts",
        "empty",
        "word",
        "spelled",
        "leading-zero-major",
        "leading-zero-minor",
        "empty-prerelease",
        "empty-prerelease-part",
        "empty-build",
        "capital-v",
    ],
)
def test_invalid_version_raises(text: str) -> None:
    """A string that is not a SemVer 2.0 version raises InvalidServerVersion quoting it."""
    with pytest.raises(
        InvalidServerVersion, match=re.escape(f"invalid server version: {text!r}")
    ):
        parse_version(text)


def test_invalid_version_is_value_error() -> None:
    """InvalidServerVersion is a ValueError too (packaging's convention)."""
    with pytest.raises(ValueError, match=re.escape("invalid server version: 'x'")):
        parse_version("x")
