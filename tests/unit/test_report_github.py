"""Tests for ``check --format github``: GitHub Actions workflow-command annotations."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Final

from assetgate.cli.main import main
from assetgate.inventory.read import Asset
from assetgate.report.formats import render
from assetgate.report.formats.sarif import render as render_sarif
from assetgate.run.check import check
from tests.conftest import REPO

if TYPE_CHECKING:
    import pytest

    from assetgate.catalogue.levels import Catalogue

DEMO: Final = REPO / "fixtures/inventories/demo.jsonl"
COMMAND: Final = re.compile(r"::(error|warning|notice) (?P<props>[^:]*)::(?P<data>.*)")


def test_one_annotation_per_sarif_result_with_its_file_and_line(
    catalogue: Catalogue,
) -> None:
    """Every SARIF result is one annotation at the same file and line, verdict last."""
    report = check([DEMO], target="2.11.11", catalogue=catalogue)
    lines = render(report, "github").splitlines()
    results = json.loads(render_sarif(report))["runs"][0]["results"]
    assert len(lines) == len(results) + 1
    assert lines[-1].startswith("verdict: 1 cluster down: east (crash)")
    levels = {"error": "error", "warning": "warning", "note": "notice"}
    for line, result in zip(lines, results, strict=False):
        match = COMMAND.fullmatch(line)
        assert match is not None, line
        assert match[1] == levels[result["level"]]
        physical = result["locations"][0].get("physicalLocation")
        if physical is not None:
            uri = physical["artifactLocation"]["uri"]
            assert f"file={uri.replace(':', '%3A')}" in match["props"]
            start = physical.get("region", {}).get("startLine")
            assert (f"line={start}" in match["props"]) == (start is not None)
        assert f"title=assetgate {result['ruleId']}%3A " in match["props"]


def test_hostile_names_stay_on_one_line(catalogue: Catalogue) -> None:
    """Newlines, other control characters, % and commas in names cannot end a line."""
    name = "S%0A,x\nevil"
    asset = Asset(
        source="inv\n,1.jsonl:3",
        kind="stream",
        stream=name,
        name=name,
        config=json.dumps({"name": name, "subjects": ["a"], "sealed": 7}).encode(),
    )
    report = check([asset], target="2.12.8", catalogue=catalogue)
    lines = render(report, "github").splitlines()
    results = json.loads(render_sarif(report))["runs"][0]["results"]
    assert len(lines) == len(results) + 1  # no line broken by a name
    assert "S%250A,x\\x0aevil" in lines[0]  # data: % and control characters escaped
    assert "file=inv\\x0a%2C1.jsonl,line=3" in lines[0]  # property: also , and :


def test_accepted_findings_become_notices(catalogue: Catalogue) -> None:
    """An accepted finding is a notice saying which acceptance covers it."""
    report = check([DEMO], target="2.12.8", accept=["*:west/*"], catalogue=catalogue)
    west = [line for line in render(report, "github").splitlines() if "west/" in line]
    assert west
    assert all(line.startswith("::notice ") for line in west)
    assert all("(accepted " in line for line in west)


def test_cli_github_format_and_its_limits(capsys: pytest.CaptureFixture[str]) -> None:
    """Exit status as for any format; a matrix run refuses it (usage error)."""
    assert main(["check", str(DEMO), "--target", "2.11.11", "--format", "github"]) == 1
    assert capsys.readouterr().out.startswith("::error file=")
    assert main(["check", str(DEMO), "--target", "all", "--format", "github"]) == 2
    assert "--format github takes one target" in capsys.readouterr().err
