"""The README's promises that a test can hold: the files it names exist."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from tests.conftest import REPO

if TYPE_CHECKING:
    from pathlib import Path


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


def test_the_rollback_excerpt_is_real_output() -> None:
    """Each line of the README's `--target all` excerpt is a line of the real output."""
    import contextlib
    import io

    from assetgate.cli.main import main

    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Can I roll back?", 1)[1]
    excerpt = section.split("```text\n", 1)[1].split("```", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(
            ["check", str(REPO / "fixtures/inventories/demo.jsonl"), "--target", "all"]
        )
    lines = set(out.getvalue().replace(str(REPO) + "/", "").splitlines())
    missing = [line for line in excerpt.splitlines() if line and line not in lines]
    assert (code, missing) == (1, [])


def test_the_rolling_excerpt_is_real_output() -> None:
    """Each line of the README's `--rolling` excerpt is a line of one of its two runs."""
    import contextlib
    import io

    from assetgate.cli.main import main

    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("### Step by step: a rolling upgrade or rollback", 1)[1]
    excerpt = section.split("```text\n", 1)[1].split("```", 1)[0]
    lines: set[str] = set()
    codes = []
    for change in ("2.15.1..2.12.8", "2.12.8..2.11.11"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            inventory = str(REPO / "fixtures/inventories/rolling.jsonl")
            codes.append(main(["check", inventory, "--rolling", change]))
        lines |= set(out.getvalue().splitlines())
    missing = [
        line
        for line in excerpt.splitlines()
        if line and line != "..." and line not in lines
    ]
    assert (codes, missing) == ([1, 1], [])


def test_the_ci_job_commands_run(tmp_path: Path) -> None:
    """The README's GitHub Actions job: its assetgate commands run as written."""
    import os
    import shlex
    import subprocess
    import sys

    text = (REPO / "README.md").read_text(encoding="utf-8")
    job = text.split("### In CI: a GitHub Actions job", 1)[1]
    yaml = job.split("```yaml\n", 1)[1].split("```", 1)[0]
    commands = [
        line.strip().removeprefix("run: ")
        for line in yaml.splitlines()
        if "assetgate check" in line
    ]
    assert len(commands) == 3
    inventory = tmp_path / "inventory.jsonl"
    inventory.write_bytes((REPO / "fixtures/inventories/golden.jsonl").read_bytes())
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    codes = []
    for command in commands:
        shell = command.replace(
            "assetgate ", f"{shlex.quote(sys.executable)} -m assetgate "
        )
        done = subprocess.run(  # noqa: S602 - the README's own shell lines
            shell, shell=True, cwd=tmp_path, env=env, capture_output=True, check=False
        )
        codes.append(done.returncode)
        if command.startswith(
            "assetgate check inventory.jsonl --target 2.12.8 --format github"
        ):
            assert done.stdout.startswith(b"::"), done.stdout[:200]
    assert codes == [1, 0, 0]  # the gate fails on findings; the rest always write
    assert summary.read_text(encoding="utf-8").startswith("## assetgate: target 2.12.8")
    sarif = json.loads((tmp_path / "assetgate.sarif").read_text(encoding="utf-8"))
    assert sarif["runs"][0]["results"]
