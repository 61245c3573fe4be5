"""The facts of ``assetgate.wire`` have one home: no other module spells them out."""

from __future__ import annotations

import re
from typing import Final

import pytest

from tests.conftest import REPO

_PACKAGE: Final = REPO / "assetgate"
_SPELLED: Final = {
    "Go's zero time": re.compile(r"0001-01-01T00:00:00Z\""),
    "the default account": re.compile(r"\"\$G\""),
    "the unnamed cluster's label": re.compile(r"[\"']\(unnamed cluster\)[\"']"),
    "the asset kinds": re.compile(r"Literal\[\"stream\", \"consumer\"\]"),
    "the decode failures": re.compile(
        r"msgspec\.DecodeError,\s*msgspec\.ValidationError"
    ),
    "the stream states that keep subjects": re.compile(
        r"\{\"online\", \"degraded\", \"offline\"\}"
    ),
}


@pytest.mark.parametrize("fact", sorted(_SPELLED))
def test_fact_is_spelled_in_one_module(fact: str) -> None:
    """Each shared fact is written once in the package, where it is defined."""
    homes = sorted(
        str(path.relative_to(_PACKAGE))
        for path in _PACKAGE.rglob("*.py")
        if _SPELLED[fact].search(path.read_text(encoding="utf-8"))
    )
    assert len(homes) == 1, homes
