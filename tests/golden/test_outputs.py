"""Rendered reports of the golden inventory, compared with ``fixtures/expected``.

Set ``ASSETGATE_REGEN_GOLDEN=1`` to rewrite the expected files from the current output
(then review the diff). The inventory is passed as a path relative to the repository
root, so that sources in the reports do not depend on where the checkout lives.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

import msgspec
import pytest

from assetgate.report.formats import FORMATS, render
from assetgate.run.check import CatalogueInfo, Report, check
from tests.conftest import FIXTURES, REPO

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue

pytestmark = pytest.mark.golden

INVENTORY: Final = "fixtures/inventories/golden.jsonl"
EXTENSIONS: Final = {name: fmt.suffix for name, fmt in FORMATS.items()}
PINNED: Final = "c" * 64
REGENERATE: Final = os.environ.get("ASSETGATE_REGEN_GOLDEN") == "1"


@pytest.fixture
def report(catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch) -> Report:
    """The golden inventory checked for 2.11.11 in cluster mode, from the repo root.

    The catalogue digest is pinned, so that a catalogue edit that changes no verdict
    does not change the goldens.
    """
    monkeypatch.chdir(REPO)
    report = check([INVENTORY], target="2.11.11", mode="cluster", catalogue=catalogue)
    return msgspec.structs.replace(report, catalogue=CatalogueInfo(digest=PINNED))


def test_golden_inventory_covers_the_cases(report: Report) -> None:
    """Every state 2.11.11 can produce, an overlap with an offline side, an error, an ignore."""
    summary = report.summary
    assert summary.records == summary.assets + summary.errors + summary.ignored
    assert {v.state for v in report.assets} == {
        "online",
        "offline",
        "unloadable",
        "detached",
    }  # degraded needs a target without offline support (2.10.x, 2.11.0-2.11.8)
    assert {v.drift for v in report.assets} >= {
        "stamp_missing",
        "stamp_unparsable",
        "stamp_too_low",
        "stamp_too_high",
    }
    assert [o.offline for o in report.overlaps] == [("ORDERS_BATCH",)]
    assert (summary.errors, summary.ignored) == (1, 1)


@pytest.mark.parametrize("fmt", list(FORMATS), ids=str)
def test_rendered_report_matches_golden(report: Report, fmt: str) -> None:
    """The rendered report equals ``fixtures/expected/golden.<ext>``."""
    actual = render(report, fmt)
    assert str(REPO) not in actual
    path = FIXTURES / "expected" / f"golden.{EXTENSIONS[fmt]}"
    if REGENERATE:
        path.write_text(actual, encoding="utf-8", newline="\n")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected


@pytest.mark.parametrize("fmt", list(FORMATS), ids=str)
def test_demo_report_matches_golden(
    catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """The README's main job (demo inventory, 2.11.11) renders as ``fixtures/expected/demo.<ext>``."""
    monkeypatch.chdir(REPO)
    report = check(
        ["fixtures/inventories/demo.jsonl"],
        target="2.11.11",
        mode="cluster",
        catalogue=catalogue,
    )
    actual = render(
        msgspec.structs.replace(report, catalogue=CatalogueInfo(digest=PINNED)), fmt
    )
    path = FIXTURES / "expected" / f"demo.{EXTENSIONS[fmt]}"
    if REGENERATE:
        path.write_text(actual, encoding="utf-8", newline="\n")
    assert actual == path.read_text(encoding="utf-8")
