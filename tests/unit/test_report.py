"""Report rendering: structure of every format and escaping of hostile inventory names."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from assetgate.inventory.read import Ignored
from assetgate.judge.gate import STATES, Verdict
from assetgate.report.common import escape_markdown, escape_terminal
from assetgate.report.common import split_source as _split_source
from assetgate.report.formats import FORMATS, render
from assetgate.report.formats.json import render as render_json
from assetgate.report.formats.junit import render as render_junit
from assetgate.report.formats.markdown import render as render_markdown
from assetgate.report.formats.sarif import home_page, sarif_driver
from assetgate.report.formats.sarif import render as render_sarif
from assetgate.report.formats.text import render as render_text
from assetgate.run.check import (
    CatalogueInfo,
    ErrorEntry,
    InventoryInfo,
    Overlap,
    Report,
    Summary,
    TargetInfo,
    check,
)
from tests.conftest import REPO

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.judge.outcomes import ClusterOutcome

HOSTILE = "x|<script>\x1b[31m\nA]]>\x00`*_[y]"
HOSTILE_TERMINAL = "x|<script>\\x1b[31m\\x0aA]]>\\x00`*_[y]"
DIGEST = "0123456789abcdef" * 4


def _verdict(
    name: str,
    state: str = "online",
    *,
    line: int = 1,
    cluster: str = "east",
    account: str = "$G",
    stream: str | None = None,
    **fields: Any,
) -> Verdict:
    kind = "consumer" if stream is not None else "stream"
    return msgspec.convert(
        {
            "source": f"inv.jsonl:{line}",
            "cluster": cluster,
            "account": account,
            "kind": kind,
            "stream": stream or name,
            "name": name,
            "state": state,
            "reason": None,
            "target": "2.11.11",
            "stamped_level": None,
            "required_level": 0,
            "min_server_version": "2.10.0",
            **fields,
        },
        Verdict,
    )


def _report(
    assets: list[Verdict],
    *,
    overlaps: list[Overlap] | None = None,
    errors: list[ErrorEntry] | None = None,
    ignored: list[Ignored] | None = None,
    clusters: dict[str, str] | None = None,
    outcomes: list[ClusterOutcome] | None = None,
) -> Report:
    overlaps = overlaps or []
    errors = errors or []
    ignored = ignored or []
    counts = {state: sum(1 for v in assets if v.state == state) for state in STATES}
    return Report(
        target=TargetInfo(
            version="2.11.11", api_level=1, mode="cluster", clusters=clusters or {}
        ),
        catalogue=CatalogueInfo(digest=DIGEST),
        inventory=InventoryInfo(digest=DIGEST[::-1]),
        summary=Summary(
            records=len(assets) + len(errors) + len(ignored),
            assets=len(assets),
            errors=len(errors),
            ignored=len(ignored),
            overlaps=len(overlaps),
            accepted=sum(1 for v in assets if v.accepted)
            + sum(1 for o in overlaps if o.accepted),
            **counts,
        ),
        clusters=outcomes or [],
        assets=assets,
        overlaps=overlaps,
        errors=errors,
        ignored=ignored,
        accepted=[],
    )


LEVEL_REASON = "unsupported - required API level: 2, current API level: 1"


@pytest.fixture
def report() -> Report:
    """Every state, a drift, an acceptance, an overlap, an error and an ignored record."""
    return _report(
        [
            _verdict("ORDERS"),
            _verdict(
                "EVENTS", "offline", line=2, reason=LEVEL_REASON, stamped_level="2"
            ),
            _verdict(
                "OLD",
                "degraded",
                line=3,
                dropped_fields=("allow_msg_ttl",),
                drift="stamp_too_low",
                stamped_level="0",
                required_level=1,
            ),
            _verdict("BROKEN", "unloadable", line=4, reason="json: bad"),
            _verdict(
                "C1",
                "detached",
                line=5,
                stream="EVENTS",
                reason='stream "EVENTS" is offline: x',
                accepted="detached:east/*",
            ),
            _verdict(
                "S2", cluster="west", line=6, drift="stamp_missing", required_level=1
            ),
        ],
        overlaps=[
            Overlap(
                cluster="east",
                account="$G",
                streams=("EVENTS", "ORDERS"),
                subjects=("events.>", "events.a"),
                offline=("EVENTS",),
            )
        ],
        errors=[
            ErrorEntry(source="inv.jsonl:7", message="invalid JSON", retriable=False)
        ],
        ignored=[Ignored(source="inv.jsonl:8", reason="unknown kind 'kv'")],
    )


@pytest.fixture
def hostile() -> Report:
    """Untrusted names and messages with table, HTML, ANSI, newline, CDATA and NUL."""
    return _report(
        [
            _verdict(HOSTILE, "offline", account=HOSTILE, reason=f"bad {HOSTILE}"),
            _verdict(
                "S",
                account=HOSTILE,
                line=2,
                drift="stamp_unparsable",
                stamped_level=HOSTILE,
            ),
        ],
        overlaps=[
            Overlap(
                cluster="east",
                account=HOSTILE,
                streams=(HOSTILE, "S"),
                subjects=(HOSTILE, ">"),
                offline=(HOSTILE,),
            )
        ],
        errors=[ErrorEntry(source=f"{HOSTILE}:3", message=HOSTILE, retriable=True)],
    )


def _unsafe(text: str) -> list[str]:
    """Characters a terminal or XML parser must not see raw (newline is the separator)."""
    return re.findall("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]", text)


# --- dispatch ----------------------------------------------------------------------------


def test_formats_are_found_in_flag_order() -> None:
    """The format modules are found, and ``--format`` lists them in this order."""
    assert list(FORMATS) == [
        "text",
        "json",
        "markdown",
        "sarif",
        "junit",
        "github",
    ]


@pytest.mark.parametrize(
    ("fmt", "renderer"),
    [
        ("text", render_text),
        ("json", render_json),
        ("markdown", render_markdown),
        ("sarif", render_sarif),
        ("junit", render_junit),
    ],
)
def test_render_dispatches_to_the_format(
    report: Report, fmt: str, renderer: Any
) -> None:
    """`render` by name matches the format module's own ``render``."""
    expected = renderer(report)
    assert render(report, fmt) == expected
    assert expected.endswith("\n")


def test_render_rejects_an_unknown_format(report: Report) -> None:
    """An unknown format is a caller mistake, named in the message."""
    with pytest.raises(ValueError, match=re.escape("unknown report format: 'xml'")):
        render(report, "xml")


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_render_is_deterministic(report: Report, fmt: str) -> None:
    """The same report renders to the same text, also when rebuilt from its JSON."""
    again = msgspec.json.decode(render_json(report), type=Report)
    assert render(again, fmt) == render(report, fmt)


# --- escaping ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ORDERS", "ORDERS"),
        ("café ✓", "café ✓"),
        ("a\x1b[31mred", "a\\x1b[31mred"),
        ("a\nb\rc\td", "a\\x0ab\\x0dc\\x09d"),
        ("nul\x00", "nul\\x00"),
        ("del\x7f", "del\\x7f"),
        ("csi\x9b31m", "csi\\x9b31m"),  # C1 control
        ("rtl\u202eevil", "rtl\\u202eevil"),  # bidi override (Trojan Source)
        ("ls\u2028ps\u2029", "ls\\u2028ps\\u2029"),
        ("zw\u200b", "zw\\u200b"),
        ("lone\ud800", "lone\\ud800"),  # unencodable on stdout
        ("back\\slash", "back\\slash"),
    ],
)
def test_escape_terminal(raw: str, expected: str) -> None:
    """Controls, format characters and separators become visible escapes."""
    assert escape_terminal(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ORDERS", "ORDERS"),
        ("a|b", "a\\|b"),
        ("<script>&", "&lt;script&gt;&amp;"),
        (
            "`code` *b* _i_ [l](u) ~s~ #h",
            "\\`code\\` \\*b\\* \\_i\\_ \\[l\\](u) \\~s\\~ \\#h",
        ),
        ("a\nb", "a\\\\x0ab"),
        ("a\\|b", "a\\\\\\|b"),
    ],
)
def test_escape_markdown(raw: str, expected: str) -> None:
    """Table syntax, HTML and emphasis are neutralised; a newline cannot end a row."""
    assert escape_markdown(raw) == expected


# --- text --------------------------------------------------------------------------------


def test_text_layout(report: Report) -> None:
    """Header, state table, groups by state, overlaps, errors, ignored, verdict."""
    lines = render_text(report).splitlines()
    assert lines[0] == (
        "assetgate check: target 2.11.11 (API level 1), cluster mode, "
        "catalogue 0123456789ab"
    )
    assert lines[1] == "8 records: 6 assets, 1 record error, 1 ignored"
    assert lines[3:7] == [
        "cluster  account  online  offline  degraded  unloadable  detached  unavailable",
        "east     $G            1        1         1           1         1            0",
        "west     $G            1        0         0           0         0            0",
        "total                  2        1         1           1         1            0",
    ]
    text = "\n".join(lines)
    assert "offline (1)\n  east/$G/EVENTS  (inv.jsonl:2)\n      " + LEVEL_REASON in text
    assert "      dropped: allow_msg_ttl\n" in text
    assert "      stamp_too_low: _nats.req.level '0' is below" in text
    assert "      [accepted detached:east/*]" in text
    assert "online, level stamp drifts (1)\n  west/$G/S2" in text
    assert (
        "overlaps (1)\n  east/$G: EVENTS ~ ORDERS\n"
        "      subjects 'events.>' and 'events.a' overlap (offline: EVENTS)"
    ) in text
    assert "errors (1)\n  inv.jsonl:7: invalid JSON (not retriable)" in text
    assert "ignored (1)\n  inv.jsonl:8: unknown kind 'kv'" in text
    assert lines[-1] == (
        "verdict: 4 of 6 assets not online (1 offline, 1 degraded, 1 unloadable, "
        "1 detached), 2 level-stamp drifts, 1 overlap, 1 record error; 1 accepted"
    )
    assert "ORDERS  (" not in text  # online assets without drift are not listed


def test_text_all_online() -> None:
    """A clean report has one table row and a short verdict."""
    text = render_text(_report([_verdict("A"), _verdict("B")]))
    assert text.splitlines()[-1] == (
        "verdict: all 2 assets online, no level-stamp drifts, no overlaps, "
        "no record errors"
    )


def test_text_mixed_targets_show_each_assets_version() -> None:
    """With per-cluster targets the header lists them and each finding its version."""
    verdict = _verdict("A", "offline", reason="r", target="2.10.0")
    text = render_text(_report([verdict], clusters={"east": "2.10.0"}))
    assert text.startswith(
        "assetgate check: target 2.11.11 (east=2.10.0), cluster mode"
    )
    assert "  east/$G/A  (inv.jsonl:1)  on 2.10.0\n" in text


def test_text_escapes_hostile_names(hostile: Report) -> None:
    """No control character of an untrusted name reaches the terminal."""
    text = render_text(hostile)
    assert _unsafe(text) == []
    assert f"east/{HOSTILE_TERMINAL}/{HOSTILE_TERMINAL}" in text
    assert f"      bad {HOSTILE_TERMINAL}\n" in text


# --- json --------------------------------------------------------------------------------


def test_json_is_the_report_struct(report: Report) -> None:
    """The JSON form decodes back to the same report and has the documented keys."""
    out = render_json(report)
    assert msgspec.json.decode(out, type=Report) == report
    data = json.loads(out)
    assert list(data) == [
        "format",
        "target",
        "catalogue",
        "inventory",
        "summary",
        "clusters",
        "health",
        "assets",
        "overlaps",
        "errors",
        "ignored",
        "accepted",
    ]
    assert data["target"] == {
        "version": "2.11.11",
        "api_level": 1,
        "mode": "cluster",
        "clusters": {},
        "default": None,
    }
    assert data["summary"]["records"] == 8
    assert [a["state"] for a in data["assets"]][:2] == ["online", "offline"]
    assert out.startswith('{\n  "format": "assetgate-report/1",\n  "target": {')


def test_json_keeps_hostile_names_exactly(hostile: Report) -> None:
    """JSON escapes controls itself; the names round-trip unchanged."""
    out = render_json(hostile)
    assert _unsafe(out) == []
    assert json.loads(out)["assets"][0]["name"] == HOSTILE


# --- markdown ----------------------------------------------------------------------------


def _cells(row: str) -> list[str]:
    """Split a table row on unescaped pipes."""
    return re.split(r"(?<!\\)\|", row)[1:-1]


def test_markdown_tables(report: Report) -> None:
    """Heading, summary table, findings, overlaps and errors tables."""
    out = render_markdown(report)
    lines = out.splitlines()
    assert lines[0] == "## assetgate: target 2.11.11 (API level 1), cluster mode"
    header = "| cluster | account | online | offline | degraded | unloadable | detached"
    assert f"{header} | unavailable |" in lines
    assert "| east | $G | 1 | 1 | 1 | 1 | 1 | 0 |" in lines
    assert f"| offline | east/$G/EVENTS | {LEVEL_REASON} |  |" in lines
    assert (
        '| detached | east/$G/EVENTS/C1 | stream "EVENTS" is offline: x '
        "| accepted detached:east/\\* |"
    ) in lines
    assert (
        "| east/$G | EVENTS \\~ ORDERS | events.&gt; \\~ events.a | EVENTS |" in lines
    )
    assert "| inv.jsonl:7 | invalid JSON | no |" in lines
    for heading in ("### Findings", "### Overlaps", "### Record errors"):
        assert heading in lines


def test_markdown_escapes_hostile_names(hostile: Report) -> None:
    """Rows keep their column count; no raw HTML, pipes, controls or line breaks."""
    out = render_markdown(hostile)
    assert _unsafe(out) == []
    assert "<" not in out
    widths = {
        "| state": 4,
        "| account": 4,
        "| source": 3,
        "| cluster | account": 8,
        "| cluster | target": 5,
    }
    width = 0
    for line in out.splitlines():
        if not line.startswith("|"):
            continue
        width = next((w for h, w in widths.items() if line.startswith(h)), width)
        assert len(_cells(line)) == width, line


# --- sarif -------------------------------------------------------------------------------


def _sarif(report: Report) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(render_sarif(report))
    return data


def test_sarif_envelope_and_rules(report: Report) -> None:
    """Schema, version, one run, one rule per finding kind with descriptions."""
    data = _sarif(report)
    assert data["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert data["version"] == "2.1.0"
    assert len(data["runs"]) == 1
    driver = data["runs"][0]["tool"]["driver"]
    assert driver["name"] == "assetgate"
    assert [rule["id"] for rule in driver["rules"]] == [
        "offline",
        "degraded",
        "unloadable",
        "detached",
        "unavailable",
        "meta_unavailable",
        "meta_state_lost",
        "crash",
        "overlap",
        "record-error",
        "ignored",
        "stamp_missing",
        "stamp_unparsable",
        "stamp_too_low",
        "stamp_too_high",
    ]
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
        assert "helpUri" not in rule


def test_sarif_results(report: Report) -> None:
    """Rule ids, levels, verbatim reasons, locations and suppressions, in order."""
    run = _sarif(report)["runs"][0]
    results = run["results"]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("offline", "error"),
        ("degraded", "warning"),
        ("stamp_too_low", "warning"),
        ("unloadable", "error"),
        ("detached", "error"),
        ("stamp_missing", "note"),
        ("overlap", "error"),
        ("record-error", "error"),
        ("ignored", "note"),
    ]
    assert results[-1]["message"]["text"] == "unknown kind 'kv'"
    for result in results:
        assert rules[result["ruleIndex"]] == result["ruleId"]
        assert result["message"]["text"]
        assert result["locations"]
    assert results[0]["message"]["text"] == LEVEL_REASON
    assert results[0]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "inv.jsonl"},
        "region": {"startLine": 2},
    }
    assert results[0]["locations"][0]["logicalLocations"] == [
        {"fullyQualifiedName": "east/$G/EVENTS", "kind": "resource"}
    ]
    assert results[1]["message"]["text"] == "loaded with fields dropped: allow_msg_ttl"
    assert results[4]["suppressions"] == [
        {"kind": "external", "justification": "accepted detached:east/*"}
    ]
    assert [i for i, r in enumerate(results) if "suppressions" in r] == [4]
    overlap = results[6]
    assert overlap["locations"][0]["physicalLocation"]["region"] == {"startLine": 2}
    assert overlap["relatedLocations"][0]["physicalLocation"]["region"] == {
        "startLine": 1
    }
    assert results[7]["message"]["text"] == "invalid JSON"
    assert results[7]["properties"] == {"retriable": False}


def test_sarif_acceptance_of_a_drift_suppresses_only_the_drift() -> None:
    """`stamp_too_low:...` accepts the drift finding, not the asset's offline state."""
    verdict = _verdict(
        "A",
        "offline",
        reason="r",
        drift="stamp_too_low",
        stamped_level="0",
        required_level=1,
        accepted="stamp_too_low:*",
    )
    results = _sarif(_report([verdict]))["runs"][0]["results"]
    assert [("suppressions" in r) for r in results] == [False, True]
    assert render_junit(_report([verdict])).count("<failure ") == 1


def test_sarif_keeps_hostile_text_verbatim(hostile: Report) -> None:
    """SARIF message text is the reason verbatim (JSON escapes it)."""
    out = render_sarif(hostile)
    assert _unsafe(out) == []
    results = json.loads(out)["runs"][0]["results"]
    assert results[0]["message"]["text"] == f"bad {HOSTILE}"
    assert results[1]["ruleId"] == "stamp_unparsable"
    assert results[1]["level"] == "note"
    error = results[-1]["locations"][0]["physicalLocation"]
    assert error["artifactLocation"]["uri"] == (
        "x%7C%3Cscript%3E%1B%5B31m%0AA%5D%5D%3E%00%60%2A_%5By%5D"
    )
    assert error["region"] == {"startLine": 3}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("inv.jsonl:3", ("inv.jsonl", 3)),
        ("dir/inv.json:12#2", ("dir/inv.json", 12)),
        ("C:\\inv.jsonl:4", ("C:\\inv.jsonl", 4)),
        ("inv.jsonl", ("inv.jsonl", None)),
        ("inv.jsonl:x", ("inv.jsonl:x", None)),
        ("inv.jsonl:0", ("inv.jsonl:0", None)),
    ],
)
def test_split_source(source: str, expected: tuple[str, int | None]) -> None:
    """`file:LINE[#n]` gives a file and a line; anything else stays whole."""
    assert _split_source(source) == expected


# --- junit -------------------------------------------------------------------------------


def _counts(element: ET.Element) -> tuple[str | None, ...]:
    return tuple(element.get(k) for k in ("tests", "failures", "errors", "skipped"))


def test_junit_structure_and_counts(report: Report) -> None:
    """Suites per cluster/account, overlaps and inventory; counts add up."""
    out = render_junit(report)
    assert out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')
    root = ET.fromstring(out.encode())  # noqa: S314 - our own output
    assert _counts(root) == ("9", "4", "1", "2")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["east/$G", "west/$G", "overlaps", "inventory"]
    assert _counts(suites["east/$G"]) == ("5", "3", "0", "1")
    assert _counts(suites["overlaps"]) == ("1", "1", "0", "0")
    assert _counts(suites["inventory"]) == ("2", "0", "1", "1")
    cases = suites["east/$G"].findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("stream", "east/$G/ORDERS"),
        ("stream", "east/$G/EVENTS"),
        ("stream", "east/$G/OLD"),
        ("stream", "east/$G/BROKEN"),
        ("consumer", "east/$G/EVENTS/C1"),
    ]
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.attrib == {"message": f"offline: {LEVEL_REASON}", "type": "offline"}
    skipped = cases[4].find("skipped")
    assert skipped is not None
    assert skipped.get("message") == "accepted detached:east/*"
    error = suites["inventory"].find("testcase/error")
    assert error is not None
    assert error.attrib == {"message": "invalid JSON", "type": "record-error"}
    ignored = suites["inventory"].find("testcase/skipped")
    assert ignored is not None
    assert ignored.attrib == {"message": "ignored: unknown kind 'kv'"}


def test_junit_suite_without_cluster_is_named_by_account() -> None:
    """An empty cluster gives a suite named just by the account."""
    root = ET.fromstring(render_junit(_report([_verdict("A", cluster="")])))  # noqa: S314
    assert [s.get("name") for s in root.findall("testsuite")] == ["$G"]


def test_junit_escapes_hostile_names(hostile: Report) -> None:
    """The XML parses; no character XML 1.0 forbids or a terminal escape survives."""
    out = render_junit(hostile)
    assert _unsafe(out) == []
    assert "<script>" not in out
    root = ET.fromstring(out.encode())  # noqa: S314 - our own output
    assert _counts(root) == ("4", "2", "1", "0")
    case = root.find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == f"east/{HOSTILE_TERMINAL}/{HOSTILE_TERMINAL}"


def test_sarif_names_the_tool_version_rule_help_and_relative_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, catalogue: Catalogue
) -> None:
    """SARIF: driver.version, help per rule, and absolute paths under the cwd made relative."""
    from assetgate import __version__

    monkeypatch.chdir(tmp_path)
    inventory = tmp_path / "inv" / "fleet.jsonl"
    inventory.parent.mkdir()
    inventory.write_text(
        '{"kind":"stream","config":{"name":"S","subjects":["s"],"sealed":7}}\n',
        encoding="utf-8",
    )
    report = check([inventory], target="2.12.8", catalogue=catalogue)
    driver = json.loads(render(report, "sarif"))["runs"][0]["tool"]["driver"]
    assert driver["version"] == __version__
    assert all(
        rule["help"]["text"] == rule["fullDescription"]["text"]
        for rule in driver["rules"]
    )
    results = json.loads(render(report, "sarif"))["runs"][0]["results"]
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in results
    }
    assert uris == {"inv/fleet.jsonl"}


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ((), None),
        (("Source, https://example.org/src",), None),
        (
            ("Source, https://example.org/src", "Homepage, https://example.org/ag"),
            "https://example.org/ag",
        ),
        (("home-page , https://example.org/h ",), "https://example.org/h"),
        (("Homepage,",), None),
    ],
    ids=["none", "no-homepage", "homepage", "normalised-label", "empty-url"],
)
def test_home_page_is_the_homepage_project_url(
    entries: tuple[str, ...], expected: str | None
) -> None:
    """SARIF's informationUri is the package's Homepage project URL, when it has one."""
    assert home_page(entries) == expected


def test_sarif_driver_of_check_and_matrix_alike(catalogue: Catalogue) -> None:
    """The check and matrix SARIF logs name the same tool: name, version, home page."""
    from assetgate.report.formats import render_matrix
    from assetgate.run.matrix import check_matrix

    demo = REPO / "fixtures/inventories/demo.jsonl"
    single = json.loads(
        render(check([demo], target="2.12.8", catalogue=catalogue), "sarif")
    )
    matrix = json.loads(
        render_matrix(
            check_matrix([demo], releases="2.12.0..2.12.8", catalogue=catalogue),
            "sarif",
        )
    )
    drivers = [
        {k: v for k, v in log["runs"][0]["tool"]["driver"].items() if k != "rules"}
        for log in (single, matrix)
    ]
    tool = {k: v for k, v in sarif_driver([]).items() if k != "rules"}
    assert drivers == [tool, tool]
    assert set(drivers[0]) <= {"name", "version", "informationUri"}


def test_junit_cases_carry_file_line_time_and_a_failure_body(
    catalogue: Catalogue,
) -> None:
    """JUnit: file, line and time per case; the failure text names the cluster outcome."""
    report = check(
        [REPO / "fixtures/inventories/demo.jsonl"],
        target="2.11.11",
        catalogue=catalogue,
    )
    root = ET.fromstring(render(report, "junit").split("\n", 1)[1])  # noqa: S314 - our own output
    case = next(
        c for c in root.iter("testcase") if c.get("name") == "east/$G/H_FLOWACK"
    )
    assert (case.get("time"), case.get("line")) == ("0", "1")
    assert case.get("file", "").endswith("fixtures/inventories/demo.jsonl")
    failure = case.find("failure")
    assert failure is not None
    first, *rest = (failure.text or "").splitlines()
    assert first.startswith("east/$G/H_FLOWACK (")
    assert first.endswith("demo.jsonl:1)")
    assert rest == [
        "unavailable: no reply: every node exits",
        "its own state: online",
        (
            "cluster outcome: crash: panic: runtime error: invalid memory address or nil "
            "pointer dereference (in (*jetStream).processClusterCreateConsumer)"
        ),
    ]


def test_text_and_markdown_fold_record_errors_per_file(catalogue: Catalogue) -> None:
    """At most 20 record errors per file in text and Markdown; JSON keeps every one."""
    from assetgate.inventory.read import RecordError
    from assetgate.report.common import PER_FILE

    errors = [RecordError(source=f"a.jsonl:{n}", message="bad") for n in range(1, 46)]
    errors += [RecordError(source=f"b.jsonl:{n}", message="bad") for n in range(1, 4)]
    report = check(errors, target="2.12.8", catalogue=catalogue)
    text = render(report, "text")
    assert text.count("a.jsonl:") == PER_FILE
    assert text.count("b.jsonl:") == 3
    assert (
        "  ... 25 more record errors in a.jsonl (--format json lists every one)" in text
    )
    markdown = render(report, "markdown")
    assert markdown.count("| a.jsonl:") == PER_FILE
    assert (
        "| ... 25 more record errors in a.jsonl (--format json lists every one) |"
        in markdown
    )
    assert len(json.loads(render(report, "json"))["errors"]) == 48


def test_hostile_cluster_names_cannot_forge_a_verdict_line(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    """A down cluster named with ESC/newline: every verdict line stays one escaped line."""
    from assetgate.cli.main import main
    from assetgate.inventory.read import Asset
    from assetgate.report.formats import render_rolling
    from assetgate.run.rolling import check_rolling

    name = "east\x1b[31m\nFAKE: all clear\x07"
    records = [
        Asset(
            source="t:1",
            cluster=name,
            kind="stream",
            stream="H",
            name="H",
            config=json.dumps({"name": "H", "subjects": ["h"]}).encode(),
        ),
        Asset(
            source="t:2",
            cluster=name,
            kind="consumer",
            stream="H",
            name="C",
            config=json.dumps(
                {
                    "durable_name": "C",
                    "ack_policy": "flow_control",
                    "deliver_subject": "d",
                }
            ).encode(),
        ),
    ]
    report = check(records, target="2.12.8", catalogue=catalogue)
    rolling = check_rolling(records, start="2.15.1", end="2.12.8", catalogue=catalogue)
    for text in (
        render(report, "text"),
        render(report, "github"),
        render_rolling(rolling, "text"),
    ):
        assert not any(line.startswith("FAKE") for line in text.splitlines())
        assert "\x1b" not in text
        assert "\x07" not in text
    config = tmp_path / "evil.json"
    config.write_text('{"name":"S","subjects":["s"],"x\\u001b[31m\\nFAKE":1}', "utf-8")
    assert (
        main(["validate", "--server", "2.12.8", "--kind", "stream", str(config)]) == 1
    )
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert not any(line.startswith("FAKE") for line in out.splitlines())


def test_missing_stamp_of_a_config_that_does_not_decode(tmp_path: Path) -> None:
    """A missing stamp on a config whose needs are unknown says so, not "level None"."""
    config = '{"name":"S","subjects":["a"],"storage":' + "[" * 3 + "]" * 3 + "}"
    record = (
        '{"cluster":"c","account":"A","kind":"stream","stream":"S","name":"S",'
        f'"config":{config}}}\n'
    )
    path = tmp_path / "inventory.jsonl"
    path.write_text(record)
    text = render(check([path], target="2.12.8", mode="single"), "text")
    assert "stamp_missing: no _nats.req.level stamp (the API level the config" in text
    assert "None" not in text


def test_fit_markdown_cuts_at_a_line_and_says_what_it_left_out() -> None:
    """Markdown over the limit is cut at a line, keeps its tail, and names what is gone."""
    from assetgate.report.common import fit_markdown

    text = "# head\n" + "".join(f"| row {i} |\n" for i in range(100)) + "verdict\n"
    assert fit_markdown(text, limit=len(text.encode())) == text
    cut = fit_markdown(text, tail=1, limit=700)
    assert len(cut.encode()) <= 700
    assert cut.startswith("# head\n| row 0 |\n")
    assert cut.endswith("`--format json` lists everything.*\n\nverdict\n")
    kept = cut.count("| row ")
    size = f"{len(text.encode()):,}"
    assert f"*{100 - kept} more lines left out: the whole report is {size} bytes" in cut


def test_markdown_of_a_large_fleet_stays_under_the_step_summary_limit(
    tmp_path: Path,
) -> None:
    """A report whose failing findings exceed GitHub's 1 MiB limit is cut to fit it."""
    from assetgate.report.common import MARKDOWN_LIMIT
    from benchmarks.gen_inventory import generate

    path = tmp_path / "fleet.jsonl"
    path.write_bytes(b"".join(generate(12000, seed=3)))
    report = check([path], target="2.11.11", mode="cluster")
    whole = render_markdown(report, fail_on=()).encode()
    assert report.summary.unavailable > 5000
    assert len(whole) <= MARKDOWN_LIMIT
    assert b"more lines left out: the whole report is" in whole
    assert whole.startswith(b"## assetgate: target 2.11.11")


def test_a_format_is_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, report: Report
) -> None:
    """A module with NAME, ORDER, SUFFIX and render is a format: nothing else is needed."""
    from assetgate.report.formats import discover

    package = tmp_path / "extra_formats"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "count.py").write_text(
        'NAME = "count"\nORDER = 9\nSUFFIX = "count.txt"\n\n\n'
        "def render(report, *, fail_on=None):\n"
        '    return f"{report.summary.assets}\\n"\n',
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found = discover("extra_formats", [str(package)])
    count = found["count"]
    assert (
        list(found),
        count.report_file,
        count.check(report, fail_on=None),
        count.matrix,
    ) == (["count"], "report.count.txt", f"{report.summary.assets}\n", None)


def test_the_command_line_offers_every_format() -> None:
    """``check --format`` and ``scan --format`` offer exactly the formats found."""
    from assetgate.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    commands: dict[str, argparse.ArgumentParser] = dict(sub.choices or {})
    offered = {
        name: next(a for a in commands[name]._actions if a.dest == "format").choices
        for name in ("check", "scan")
    }
    assert offered == {"check": list(FORMATS), "scan": list(FORMATS)}
