"""Tests for assetgate.catalogue.levels: loading the catalogue and per-version answers."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec
import pytest

from assetgate import (
    CatalogueError,
    InvalidServerVersion,
    UnknownServerVersion,
    load_catalogue,
    validate,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue


def test_repo_catalogue_lines(catalogue: Catalogue) -> None:
    """The repository catalogue describes the release lines 2.10, 2.11, 2.12, 2.14, 2.15."""
    actual = tuple(line.line for line in catalogue.lines)
    assert actual == ("2.10", "2.11", "2.12", "2.14", "2.15")


def test_repo_catalogue_newest(catalogue: Catalogue) -> None:
    """The newest release line is 2.15."""
    assert catalogue.newest.line == "2.15"


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2.10.0", None),
        ("2.10.26", None),
        ("2.11.0", 1),
        ("2.11.9", 1),
        ("2.11.17", 1),
        ("2.12.0", 2),
        ("2.12.4", 2),
        ("2.12.5", 3),
        ("2.12.8", 3),
        ("2.12.15", 3),
        ("2.14.0", 4),
        ("2.14.6", 4),
        ("2.15.0", 5),
        ("2.15.1", 5),
    ],
    ids=str,
)
def test_api_level_per_version(
    catalogue: Catalogue, version: str, expected: int | None
) -> None:
    """JSApiLevel per release: none on 2.10, 1 on 2.11, 2 then 3 (2.12.5+) on 2.12, 4, 5."""
    assert catalogue.server(version).api_level == expected


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2.10.26", "none"),
        ("2.11.0", "none"),
        ("2.11.8", "none"),
        ("2.11.9", "gen1"),
        ("2.11.10", "gen1"),
        ("2.11.11", "gen2"),
        ("2.11.17", "gen2"),
        ("2.12.0", "gen1"),
        ("2.12.1", "gen2"),
        ("2.12.8", "gen2"),
        ("2.14.0", "gen2"),
        ("2.15.1", "gen2"),
    ],
    ids=str,
)
def test_offline_generation_per_patch(
    catalogue: Catalogue, version: str, expected: str
) -> None:
    """Offline wording: none before 2.11.9, gen1 on 2.11.9/2.11.10/2.12.0, gen2 from 2.11.11/2.12.1."""
    assert catalogue.server(version).switches.offline == expected


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2.10.26", False),
        ("2.11.0", False),
        ("2.11.11", False),
        ("2.12.0", True),
        ("2.12.8", True),
        ("2.14.6", True),
        ("2.15.1", True),
    ],
    ids=str,
)
def test_strict_default(catalogue: Catalogue, version: str, expected: bool) -> None:
    """Strict API decoding is off by default before 2.12 and on from 2.12.0."""
    assert catalogue.server(version).switches.strict_api_default is expected


@pytest.mark.parametrize(
    ("version", "expected"),
    [("2.10.26", False), ("2.11.0", True), ("2.12.0", True), ("2.15.1", True)],
    ids=str,
)
def test_strict_option_exists(
    catalogue: Catalogue, version: str, expected: bool
) -> None:
    """The `jetstream { strict }` option exists from 2.11 (2.10 refuses to start with it)."""
    assert catalogue.server(version).switches.strict_api_option is expected


@pytest.mark.parametrize(
    ("version", "expected"),
    [("2.11.17", False), ("2.12.0", True), ("2.15.1", True)],
    ids=str,
)
def test_required_level_header_switch(
    catalogue: Catalogue, version: str, expected: bool
) -> None:
    """Nats-Required-Api-Level is enforced from 2.12.0 only."""
    assert catalogue.server(version).switches.required_level_header is expected


def test_prerelease_counts_as_its_release(catalogue: Catalogue) -> None:
    """2.12.0-RC.1 is judged as 2.12.0: API level 2 and gen1 offline wording."""
    profile = catalogue.server("2.12.0-RC.1")
    actual = (profile.api_level, profile.switches.offline, profile.version.text)
    assert actual == (2, "gen1", "2.12.0-RC.1")


@pytest.mark.parametrize(
    ("version", "text", "level"),
    [
        ("v2.12.0", "2.12.0", 2),
        ("2.15.0-dev", "2.15.0-dev", 5),
        ("2.11.1-binary", "2.11.1-binary", 1),
    ],
    ids=["tag-v", "dev", "binary"],
)
def test_version_spellings(
    catalogue: Catalogue, version: str, text: str, level: int
) -> None:
    """Tags with v, -dev builds and -binary builds resolve to their line's profile."""
    profile = catalogue.server(version)
    assert (profile.version.text, profile.api_level) == (text, level)


@pytest.mark.parametrize(
    "version",
    ["2.13.0", "2.9.9", "2.16.0", "3.0.0", "1.4.0"],
    ids=["no-2.13-line", "older", "newer", "major-3", "ancient"],
)
def test_unknown_version_raises(catalogue: Catalogue, version: str) -> None:
    """A well-formed version outside the catalogue raises UnknownServerVersion naming 2.15."""
    expected = (
        f"unknown server version: {version!r}: the catalogue describes release lines "
        "2.10 to 2.15 (newest known line: 2.15)"
    )
    with pytest.raises(UnknownServerVersion, match=re.escape(expected)):
        catalogue.server(version)


@pytest.mark.parametrize(
    "version",
    [
        "abc",
        "2.12",
        "",
        "2.12.0.1",
        "2.12.x",
        "2.12.9223372036854775808",
        "2.12." + "9" * 5000,
        "2.1\uff12.0",
        "2.12.0-RC.1\uff12",
    ],
    ids=[
        "word",
        "two-parts",
        "empty",
        "four-parts",
        "x-patch",
        "patch-past-int64",
        "patch-past-int-limit",
        "fullwidth-digit",
        "prerelease-fullwidth-digit",
    ],
)
def test_invalid_version_raises(catalogue: Catalogue, version: str) -> None:
    """A string that is not a version raises InvalidServerVersion, not UnknownServerVersion."""
    with pytest.raises(
        InvalidServerVersion, match=re.escape(f"invalid server version: {version!r}")
    ):
        catalogue.server(version)


def test_release_line_lookup(catalogue: Catalogue) -> None:
    """release_line() finds a line by name and raises for an unknown one, listing the known."""
    assert catalogue.release_line("2.12").line == "2.12"
    expected = "unknown release line: '2.13' (known: 2.10, 2.11, 2.12, 2.14, 2.15)"
    with pytest.raises(UnknownServerVersion, match=re.escape(expected)):
        catalogue.release_line("2.13")


@pytest.mark.parametrize("line", ["2.10", "2.11", "2.12", "2.14", "2.15"])
def test_checks_in_force_are_those_the_line_makes(
    catalogue: Catalogue, line: str
) -> None:
    """A line's checks in force are exactly those some distinguished release of it makes."""
    made = {
        msgspec.json.encode(check)
        for release in catalogue.releases()
        if release.startswith(line + ".")
        for check in catalogue.server(release).checks
    }
    in_force = catalogue.release_line(line).checks_in_force()
    assert sorted(map(msgspec.json.encode, in_force)) == sorted(made)


@pytest.mark.parametrize(
    ("line", "fields", "absent"),
    [
        ("2.10", ("template_owner", "metadata"), ("allow_msg_ttl",)),
        (
            "2.11",
            ("allow_msg_ttl", "subject_delete_marker_ttl"),
            ("allow_msg_counter",),
        ),
        (
            "2.12",
            ("allow_msg_counter", "persist_mode", "template_owner"),
            ("allow_batched",),
        ),
        ("2.14", ("allow_batched",), ("template_owner",)),
        ("2.15", ("allow_batched",), ("template_owner",)),
    ],
    ids=str,
)
def test_stream_fields_fold(
    catalogue: Catalogue, line: str, fields: tuple[str, ...], absent: tuple[str, ...]
) -> None:
    """Each line's StreamConfig is the fold of the deltas (template_owner removed in 2.14)."""
    known = {
        field.name
        for field in catalogue.release_line(line).structs["StreamConfig"].fields
    }
    actual = (all(f in known for f in fields), any(f in known for f in absent))
    assert actual == (True, False)


# --- loading a broken or extended copy ---------------------------------------------


def test_edited_file_without_checksum_is_refused(levels_copy: Path) -> None:
    """A release file edited without updating CHECKSUMS gives a CatalogueError naming it."""
    path = levels_copy / "2.15.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    with pytest.raises(CatalogueError) as info:
        load_catalogue(levels_copy)
    expected = [
        "2.15.toml: checksum mismatch (the file was edited without updating CHECKSUMS)"
    ]
    assert info.value.problems == expected


def test_missing_checksums_is_refused(levels_copy: Path) -> None:
    """A catalogue folder without CHECKSUMS is refused with a hint how to write it."""
    (levels_copy / "CHECKSUMS").unlink()
    with pytest.raises(CatalogueError) as info:
        load_catalogue(levels_copy)
    expected = [
        "CHECKSUMS: missing (write it with `assetgate levels --write-checksums`)"
    ]
    assert info.value.problems == expected


def test_unlisted_and_vanished_files(levels_copy: Path) -> None:
    """A file absent from CHECKSUMS and a CHECKSUMS entry without file are both reported."""
    (levels_copy / "2.15.toml").rename(levels_copy / "2.16.toml")
    with pytest.raises(CatalogueError) as info:
        load_catalogue(levels_copy)
    problems = info.value.problems
    assert problems[:2] == [
        "2.16.toml: not listed in CHECKSUMS",
        "CHECKSUMS: lists '2.15.toml', which does not exist",
    ]


_DUPLICATE_RULE = """
[[rules]]
id = "stream.allow_msg_ttl"
struct = "StreamConfig"
field = "allow_msg_ttl"
when = "set"
level = 1
"""

_UNKNOWN_FIELD_RULE = """
[[rules]]
id = "stream.nope"
struct = "StreamConfig"
field = "nope"
when = "set"
level = 1
"""

_BAD_HAZARD_FIX = """
[[hazards]]
id = "stream.nope"
struct = "StreamConfig"
field = "name"
when = "contains"
value = "."
effect = "no_reply"
text = "x"
fixed = ["two.twelve"]
"""

_OVERLAPPING_RANGE = """
[[versions]]
from = "2.15.0"
"""

_BAD_ALIAS = """
[enums.deliver_policy]
alias = { newest = "latest" }
"""


@pytest.mark.parametrize(
    ("addition", "expected"),
    [
        (
            _DUPLICATE_RULE,
            ["2.15.toml: rule 'stream.allow_msg_ttl': duplicate rule id"],
        ),
        (_UNKNOWN_FIELD_RULE, ["2.15.toml: rule 'stream.nope': unknown field 'nope'"]),
        (
            _OVERLAPPING_RANGE,
            ["2.15.toml: version range from '2.15.0' overlaps an earlier range"],
        ),
        (
            _BAD_HAZARD_FIX,
            ["2.15.toml: hazard 'stream.nope': not a release in fixed: ['two.twelve']"],
        ),
        (
            _BAD_ALIAS,
            ["2.15.toml: alias deliver_policy='newest': 'latest' is not a value"],
        ),
    ],
    ids=[
        "duplicate-rule-id",
        "rule-unknown-field",
        "overlapping-range",
        "hazard-bad-fixed",
        "enum-alias-unknown-value",
    ],
)
def test_single_problem_reported(
    levels_copy: Path,
    rechecksum: Callable[[Path], None],
    addition: str,
    expected: list[str],
) -> None:
    """Each inconsistency (with checksums rewritten) is reported as one exact problem."""
    path = levels_copy / "2.15.toml"
    path.write_text(path.read_text(encoding="utf-8") + addition, encoding="utf-8")
    rechecksum(levels_copy)
    with pytest.raises(CatalogueError) as info:
        load_catalogue(levels_copy)
    assert info.value.problems == expected


def test_every_problem_reported_at_once(levels_copy: Path) -> None:
    """A catalogue with several problems lists them all in one CatalogueError."""
    path = levels_copy / "2.15.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text + _DUPLICATE_RULE + _UNKNOWN_FIELD_RULE + _OVERLAPPING_RANGE,
        encoding="utf-8",
    )
    with pytest.raises(CatalogueError) as info:
        load_catalogue(levels_copy)
    expected = [
        "2.15.toml: checksum mismatch (the file was edited without updating CHECKSUMS)",
        "2.15.toml: version range from '2.15.0' overlaps an earlier range",
        "2.15.toml: rule 'stream.allow_msg_ttl': duplicate rule id",
        "2.15.toml: rule 'stream.nope': unknown field 'nope'",
    ]
    assert info.value.problems == expected


def test_catalogue_error_message_lists_problems() -> None:
    """CatalogueError's message lists every problem on its own indented line."""
    error = CatalogueError(["a: one", "b: two"])
    assert str(error) == "invalid level catalogue:\n  a: one\n  b: two"


_FUTURE_LINE = """\
line = "2.16"
note = "Synthetic future release for tests."

[[versions]]
from = "2.16.0"
api_level = 6

[structs.StreamConfig.add]
allow_foo = "bool"

[[rules]]
id = "stream.allow_foo"
struct = "StreamConfig"
field = "allow_foo"
when = "set"
level = 6
note = "Synthetic feature."
"""


@pytest.fixture
def future_catalogue(
    levels_copy: Path, rechecksum: Callable[[Path], None]
) -> Catalogue:
    """The repository catalogue plus a synthetic 2.16 line (level 6, field allow_foo)."""
    (levels_copy / "2.16.toml").write_text(_FUTURE_LINE, encoding="utf-8")
    rechecksum(levels_copy)
    return load_catalogue(levels_copy)


def test_future_line_level_fields_rule(future_catalogue: Catalogue) -> None:
    """A new release file alone gives 2.16.0 its level, its field and its rule."""
    profile = future_catalogue.server("2.16.0")
    fields = {field.name for field in profile.line.structs["StreamConfig"].fields}
    rules = {rule.id: rule.level for rule in profile.line.rules}
    actual = (profile.api_level, "allow_foo" in fields, rules.get("stream.allow_foo"))
    assert actual == (6, True, 6)


def test_future_line_validate_stamps_level(future_catalogue: Catalogue) -> None:
    """Validating on 2.16.0 accepts allow_foo and stamps _nats.req.level "6"."""
    result = validate(
        '{"name":"S","allow_foo":true}',
        kind="stream",
        server="2.16.0",
        catalogue=future_catalogue,
    )
    actual = (result.accepted, result.required_level, result.stamped_metadata)
    assert actual == (True, 6, {"_nats.req.level": "6"})


def test_future_field_unknown_on_older_line(future_catalogue: Catalogue) -> None:
    """2.15.1 (strict by default) rejects allow_foo as an unknown field."""
    result = validate(
        '{"name":"S","allow_foo":true}',
        kind="stream",
        server="2.15.1",
        catalogue=future_catalogue,
    )
    error = result.error
    actual = (result.accepted, error.description if error else None)
    assert actual == (False, 'invalid JSON: json: unknown field "allow_foo"')


def test_future_line_newest(future_catalogue: Catalogue) -> None:
    """Unknown-version errors then name 2.16 as the newest known line."""
    with pytest.raises(
        UnknownServerVersion, match=re.escape("(newest known line: 2.16)")
    ):
        future_catalogue.server("2.17.0")
