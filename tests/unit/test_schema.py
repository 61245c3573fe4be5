"""Tests for the JSON Schemas of assetgate's JSON outputs (``assetgate schema``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import jsonschema  # type: ignore[import-untyped]  # no stubs; tests only
import msgspec
import pytest

from assetgate.cli.main import main
from assetgate.report.formats import render
from assetgate.report.schema import SCHEMAS, json_schema
from assetgate.run.check import check, make_plan
from assetgate.run.matrix import check_matrix
from assetgate.run.rolling import check_rolling
from tests.conftest import REPO

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue

DEMO = REPO / "fixtures/inventories/demo.jsonl"
ROLLING = REPO / "fixtures/inventories/rolling.jsonl"


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_published_schema_is_the_generated_one(name: str) -> None:
    """``docs/schema/NAME.json`` equals what ``assetgate schema NAME`` prints."""
    published = (REPO / "docs" / "schema" / f"{name}.json").read_text(encoding="utf-8")
    assert published == json_schema(name)
    jsonschema.Draft202012Validator.check_schema(json.loads(published))


def _plain(value: object) -> Any:
    """As a JSON reader sees it (lists, not tuples)."""
    return json.loads(msgspec.json.encode(value))


def _outputs(catalogue: Catalogue) -> dict[str, list[Any]]:
    report = check([DEMO], target="2.11.11", catalogue=catalogue)
    golden = check(
        [REPO / "fixtures/inventories/golden.jsonl"],
        target="2.12.8",
        catalogue=catalogue,
    )
    return {
        "report": [json.loads(render(r, "json")) for r in (report, golden)],
        "matrix": [_plain(check_matrix([DEMO], releases="all", catalogue=catalogue))],
        "rolling": [
            _plain(check_rolling([ROLLING], start=a, end=b, catalogue=catalogue))
            for a, b in (("2.15.1", "2.12.8"), ("2.11.11", "2.12.8"))
        ],
        "plan": [_plain(make_plan(report))],
    }


def test_real_outputs_validate_against_their_schema(catalogue: Catalogue) -> None:
    """Real reports, matrices, rolling predictions and plans are valid and say which."""
    for name, documents in _outputs(catalogue).items():
        schema = json.loads(json_schema(name))
        validator = jsonschema.Draft202012Validator(schema)
        for document in documents:
            errors = [e.message for e in validator.iter_errors(document)]
            assert errors == [], (name, errors[:3])
            assert document["format"] == SCHEMAS[name][1]


def test_a_broken_report_does_not_validate(catalogue: Catalogue) -> None:
    """The schema is not vacuous: a wrong type or a missing key is an error."""
    report = json.loads(
        render(check([DEMO], target="2.11.11", catalogue=catalogue), "json")
    )
    validator = jsonschema.Draft202012Validator(json.loads(json_schema("report")))
    report["summary"]["assets"] = "29"
    del report["target"]
    messages = sorted(e.message for e in validator.iter_errors(report))
    assert messages == [
        "'29' is not of type 'integer'",
        "'target' is a required property",
    ]


def test_cli_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``assetgate schema NAME [-o FILE]``; an unknown name is a usage error."""
    assert main(["schema", "rolling"]) == 0
    assert capsys.readouterr().out == json_schema("rolling")
    out = tmp_path / "plan.schema.json"
    assert main(["schema", "plan", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == json_schema("plan")
    assert main(["schema", "nope"]) == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err
