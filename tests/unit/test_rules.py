"""One vocabulary of rules: the same names in --fail-on, --accept and every format."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Final, get_args

import pytest

from assetgate.cli.common import parse_fail_on
from assetgate.cli.main import main
from assetgate.judge.accept import parse_accept
from assetgate.judge.fixes import CODES
from assetgate.judge.gate import STATES, Drift
from assetgate.judge.outcomes import OUTCOMES
from assetgate.judge.rules import ALIASES, FAIL_ON_NAMES, NO_ASSETS, RULES, about
from assetgate.report.formats import render
from assetgate.run.check import check, finding_rules
from tests.conftest import REPO

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue
    from assetgate.judge.gate import Mode
    from assetgate.run.check import Report

DEMO: Final = str(REPO / "fixtures/inventories/demo.jsonl")
NAMES: Final = frozenset(r.name for r in RULES)


@pytest.fixture(params=["single", "cluster"])
def demo(request: pytest.FixtureRequest, catalogue: Catalogue) -> Report:
    """The demo on 2.11.11: per-asset findings (single) and a crashed cluster."""
    mode: Mode = request.param
    return check([DEMO], target="2.11.11", catalogue=catalogue, mode=mode)


def test_rules_are_the_defined_states_outcomes_and_drift_flags() -> None:
    """The table names every finding state, outcome and drift flag, and nothing else."""
    by_group = {
        group: [r.name for r in RULES if r.group == group]
        for group in ("state", "outcome", "drift", "overlap", "record")
    }
    assert by_group == {
        "state": [s for s in STATES if s != "online"],
        "outcome": [o for o in OUTCOMES if o != "ok"],
        "drift": list(get_args(Drift)),
        "overlap": ["overlap"],
        "record": ["record-error", "ignored"],
    }


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_rule_is_a_fail_on_and_an_accept_name(name: str) -> None:
    """``--fail-on`` and ``--accept`` take each rule's name as it is."""
    assert (parse_fail_on(name), parse_accept(f"{name}:east/*")) == (
        (name,),
        (name, "east/*"),
    )


def test_older_spellings_are_read_as_their_rule() -> None:
    """``--fail-on errors,overlaps`` means record-error and overlap."""
    assert (parse_fail_on(",".join(ALIASES)), set(ALIASES.values()) <= NAMES) == (
        ("record-error", "overlap"),
        True,
    )


def test_sarif_rules_are_the_table(demo: Report) -> None:
    """SARIF declares the table's rules in order; each result names one, at its level."""
    log = json.loads(render(demo, "sarif"))
    run = log["runs"][0]
    declared = [r["id"] for r in run["tool"]["driver"]["rules"]]
    results = [
        (r["ruleId"], declared[r["ruleIndex"]], r["level"]) for r in run["results"]
    ]
    assert (declared, results) == (
        [r.name for r in RULES],
        [(rule, rule, about(rule).level) for rule, _, _ in results],
    )
    assert results


def test_junit_failure_types_are_rules(demo: Report) -> None:
    """Every JUnit failure or error carries a rule name as its type."""
    root = ET.fromstring(render(demo, "junit"))  # noqa: S314 (our own output)
    types = {e.get("type") for tag in ("failure", "error") for e in root.iter(tag)}
    assert (bool(types), types - NAMES) == (True, set())


def test_github_annotation_titles_name_rules(demo: Report) -> None:
    """Each GitHub annotation's title is ``assetgate RULE: title of the rule``."""
    lines = [
        line
        for line in render(demo, "github").splitlines()
        if line.startswith("::") and "title=assetgate " in line
    ]
    titles = [line.split("title=assetgate ", 1)[1].split("::", 1)[0] for line in lines]
    named = [title.split("%3A ", 1) for title in titles]  # ':' escaped in a property
    assert lines
    wrong = [
        (n, t)
        for n, t in named
        if n not in NAMES or about(n).title != t.replace("%3A", ":")
    ]
    assert wrong == []


def test_failing_findings_start_with_a_rule(demo: Report) -> None:
    """Each finding that fails a run is worded ``RULE: what``, with a table rule."""
    found = finding_rules(demo, FAIL_ON_NAMES)
    assert found
    assert [f for f in found if f.partition(": ")[0] not in FAIL_ON_NAMES] == []


def test_no_assets_is_a_finding_of_its_own(catalogue: Catalogue) -> None:
    """An inventory with nothing to judge fails with ``no-assets``, not a table rule."""
    report = check([], target="2.11.11", catalogue=catalogue)
    assert [f.partition(": ")[0] for f in finding_rules(report, ())] == [NO_ASSETS]


def test_matrix_codes_name_rules() -> None:
    """Every finding code of a matrix run belongs to a rule of the table."""
    assert {code.rule for code in CODES} <= NAMES


def test_check_help_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    """``check --help`` names every rule whole (no name broken at a hyphen)."""
    assert main(["check", "--help"]) == 0
    words = set(capsys.readouterr().out.replace(",", " ").replace(")", " ").split())
    assert sorted(NAMES - words) == []
