"""The ported subject transform checks: the server's error texts, byte for byte."""

from __future__ import annotations

import pytest

from assetgate.judge.mapping import (
    Generation,
    mapping_destination_error,
    subject_transform_error,
    validate_mapping_error,
)

_RANGE = "invalid mapping destination: wildcard index out of range"


@pytest.mark.parametrize(
    ("source", "destination", "generation", "expected"),
    [
        # valid: no destination is no transform; no source is '>'
        ("a..b", "", "2.12", None),
        ("", "z.>", "2.10", None),
        ("o.*", "x.$1", "2.11", None),
        ("o.*", "x.{{wildcard(1)}}", "2.12", None),
        ("o.*.*", "x.{{partition(3,1,2)}}", "2.12", None),
        # a '>' on one side only, or a '*' in the destination (binary: tbd.> to x)
        ("tbd.>", "x", "2.12", "invalid subject"),
        ("o", "x.*", "2.10", "invalid subject"),
        ("o.*", "x.$2", "2.12", f"{_RANGE} in $2: [2]"),
        ("o.*", "x.{{wildcard(2)}}", "2.11", f"{_RANGE} in {{{{wildcard(2)}}}}: [2]"),
        # a function on a source without wildcards
        ("o", "x.{{wildcard(1)}}", "2.12", f"{_RANGE} in {{{{wildcard(1)}}}}"),
        ("o.>", "x.{{wildcard(1)}}.>", "2.11", f"{_RANGE} in {{{{wildcard(1)}}}}"),
        # random() is a 2.12 function
        ("o", "x.{{random(5)}}", "2.12", None),
        (
            "o",
            "x.{{random(5)}}",
            "2.11",
            "invalid mapping destination: unknown function in {{random(5)}}",
        ),
        (
            "o.*",
            "x.{{wildcard()}}",
            "2.12",
            (
                "invalid mapping destination: not enough arguments passed to the"
                " function in {{wildcard()}}"
            ),
        ),
        (
            "o.*",
            "x.{{splitfromleft(1)}}",
            "2.12",
            (
                "invalid mapping destination: not enough arguments passed to the"
                " function in {{splitfromleft(1)}}"
            ),
        ),
    ],
)
def test_subject_transform_error(
    source: str, destination: str, generation: Generation, expected: str | None
) -> None:
    """NewSubjectTransform's answer for one source and destination."""
    assert subject_transform_error(source, destination, generation) == expected


@pytest.mark.parametrize(
    ("source", "destination", "generation", "expected"),
    [
        ("o.>", "x", "2.12", "invalid subject"),
        ("o", "a..b", "2.11", "invalid mapping destination: invalid transform in "),
        ("o", "a b", "2.12", "invalid mapping destination: invalid transform"),
        (
            "o.*",
            "x.{{left(1,2)}}",
            "2.12",
            "invalid mapping destination: unknown function in {{left(1,2)}}",
        ),
        ("o", "", "2.12", None),
    ],
)
def test_validate_mapping_error(
    source: str, destination: str, generation: Generation, expected: str | None
) -> None:
    """ValidateMapping (2.11+): the token scan first, then NewSubjectTransform."""
    assert validate_mapping_error(source, destination, generation) == expected


@pytest.mark.parametrize(
    ("destination", "bare_empty", "expected"),
    [
        ("x..y", False, "invalid mapping destination: invalid transform in "),
        ("x..y", True, "invalid mapping destination: invalid transform"),
        ("x.>.y", True, "invalid mapping destination: invalid transform in y"),
    ],
)
def test_validate_mapping_empty_token(
    destination: str, bare_empty: bool, expected: str
) -> None:
    """An empty destination token ends in ' in ' unless the release words it bare (2.12.5+)."""
    got = validate_mapping_error("o.*", destination, "2.12", bare_empty=bare_empty)
    assert got == expected


@pytest.mark.parametrize(
    ("destination", "expected"),
    [
        ("x", None),
        ("", None),
        ("d..e", "invalid mapping destination: invalid subject in "),
        ("x.>.y", "invalid mapping destination: invalid subject in y"),
        ("x.{{foo(1)}}", "invalid mapping destination: unknown function in {{foo(1)}}"),
    ],
)
def test_mapping_destination_error(destination: str, expected: str | None) -> None:
    """ValidateMappingDestination (2.10): the destination alone, 2.10's wording."""
    assert mapping_destination_error(destination) == expected
