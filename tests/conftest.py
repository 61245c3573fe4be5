"""Shared test paths and the session-scoped level catalogue.

Tests always load the repository's ``levels/`` explicitly (never the packaged copy),
so that an edit to the catalogue is tested before it is installed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

import assetgate
from assetgate.catalogue.levels import checksum_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from assetgate.catalogue.levels import Catalogue

__all__ = ["FIXTURES", "LEVELS", "REPO", "write_checksums"]

REPO: Final = Path(__file__).resolve().parent.parent
FIXTURES: Final = REPO / "fixtures"
LEVELS: Final = REPO / "levels"


def write_checksums(folder: Path) -> None:
    """Rewrite ``folder/CHECKSUMS`` for the release files it holds now."""
    files = {path.name: path.read_bytes() for path in folder.glob("*.toml")}
    (folder / "CHECKSUMS").write_text(checksum_text(files), encoding="utf-8")


@pytest.fixture(scope="session")
def catalogue() -> Catalogue:
    """The repository's level catalogue, loaded from ``levels/`` explicitly."""
    return assetgate.load_catalogue(LEVELS)


@pytest.fixture
def levels_copy(tmp_path: Path) -> Path:
    """A writable copy of the repository's ``levels/`` folder (CHECKSUMS included)."""
    target = tmp_path / "levels"
    shutil.copytree(LEVELS, target)
    return target


@pytest.fixture
def rechecksum() -> Callable[[Path], None]:
    """A function that rewrites CHECKSUMS of a catalogue folder after an edit."""
    return write_checksums
