"""The README's promises that a test can hold: the files it names exist."""

from __future__ import annotations

import re

from tests.conftest import REPO


def test_every_fixture_path_in_the_readme_exists() -> None:
    """Each fixtures/... path the README names is a file in the repository."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    paths = sorted(set(re.findall(r"fixtures/[\w./-]+\.(?:jsonl|json)\b", text)))
    assert paths
    assert [p for p in paths if not (REPO / p).is_file()] == []


def test_the_licence_is_the_one_pyproject_names() -> None:
    """LICENSE holds the Apache License 2.0 that pyproject.toml declares."""
    licence = (REPO / "LICENSE").read_text(encoding="utf-8")
    project = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert (
        'license = "Apache-2.0"' in project,
        "Version 2.0, January 2004" in licence,
    ) == (
        True,
        True,
    )
