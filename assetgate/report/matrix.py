"""The formats of a matrix run (``check --target all`` or ``A..B``).

Text and Markdown show one row per release and cluster, then the floors, then each
finding with the releases it applies to and its fixes. JSON is the
:class:`~assetgate.run.matrix.Matrix` itself. SARIF gives one result per finding, its rule
the finding's code (``docs/rules.md``); JUnit one test case per finding and per release.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Final

import msgspec

from assetgate.judge.fixes import CODES
from assetgate.judge.gate import STATES
from assetgate.judge.rules import about
from assetgate.report.render import (
    _case,
    _child,
    _count,
    _suite,
    escape_markdown,
    escape_terminal,
    fit_markdown,
    sarif_driver,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from assetgate.run.matrix import Floor, Matrix, MatrixFinding, MatrixRow

__all__ = ["render_matrix", "spans"]


def render_matrix(matrix: Matrix, fmt: str) -> str:
    """``matrix`` in ``fmt``: text, json, markdown, sarif or junit."""
    if fmt == "json":
        encoded = msgspec.json.encode(matrix)
        return msgspec.json.format(encoded, indent=2).decode() + "\n"
    if fmt == "markdown":
        return _markdown(matrix)
    if fmt == "sarif":
        return _sarif(matrix)
    if fmt == "junit":
        return _junit(matrix)
    return _text(matrix)


def spans(releases: Sequence[str], rows: Sequence[MatrixRow]) -> str:
    """``["2.10.0", "2.10.14", "2.12.0"]`` -> ``2.10.0-2.10.16, 2.12.0-2.12.0``.

    Consecutive rows are joined; each span ends with the last patch of its last row
    (``2.11.11+`` when later patches of the line are not known to differ).
    """
    wanted = set(releases)
    parts: list[str] = []
    start: MatrixRow | None = None
    last: MatrixRow | None = None
    for row in [*rows, None]:
        if row is not None and row.release in wanted:
            start = start or row
            last = row
            continue
        if start is not None and last is not None:
            parts.append(_span(start, last))
        start = last = None
    return ", ".join(parts)


def _span(start: MatrixRow, last: MatrixRow) -> str:
    """``A-B`` for the rows from ``start`` to ``last``; ``+``: later patches too."""
    if last.through is None:
        head = start.release if start is last else f"{start.release}-{last.release}"
        return f"{head}+"
    if start is last and last.through == start.release:
        return start.release
    return f"{start.release}-{last.through}"


def _label(row: MatrixRow) -> str:
    return spans([row.release], [row])


def _name(cluster: str | None) -> str:
    if cluster is None:
        return "inventory"
    return cluster or "(unnamed cluster)"


def _floor_line(floor: Floor) -> str:
    lossless = floor.lossless or "none"
    offline = floor.offline_only or "none"
    return f"{_name(floor.cluster)}: lossless {lossless}, offline-only {offline}"


_SHOWN_PINS: Final = 10
_NAMES: Final = 2  # the text table's left-aligned columns: release, cluster


def _pin_lines(floor: Floor, bullet: str) -> list[str]:
    lines = []
    for pin in floor.pins[:_SHOWN_PINS]:
        reason = f": {pin.reason}" if pin.reason else ""
        lines.append(
            f"{bullet}{pin.floor} pinned by {pin.asset} ({pin.state} on {pin.release}{reason})"
        )
    if len(floor.pins) > _SHOWN_PINS:
        lines.append(
            f"{bullet}... and {len(floor.pins) - _SHOWN_PINS} more (JSON has all)"
        )
    return lines


def _finding_head(finding: MatrixFinding, rows: Sequence[MatrixRow]) -> str:
    accepted = f" [accepted {finding.accepted}]" if finding.accepted else ""
    return (
        f"{finding.code} {finding.rule} {finding.asset} on "
        f"{spans(finding.releases, rows)}{accepted}"
    )


def _verdict(matrix: Matrix) -> str:
    failing = [row for row in matrix.releases if row.failing]
    floor = matrix.floor
    return (
        f"verdict: {len(failing)} of {len(matrix.releases)} releases with findings; "
        f"lowest lossless release: {floor.lossless or 'none'}, "
        f"lowest offline-only release: {floor.offline_only or 'none'}"
    )


def _text(matrix: Matrix) -> str:
    rows = matrix.releases
    summary = matrix.summary
    out = [
        (
            f"assetgate check: {summary.releases} releases, {rows[0].release} to "
            f"{rows[-1].through or rows[-1].release + '+'}, {matrix.mode} mode "
            f"(catalogue {matrix.catalogue.digest[:12]})"
        ),
        (
            f"inventory: {summary.records} records: {summary.assets} assets, "
            f"{summary.errors} errors, {summary.ignored} ignored"
        ),
        "",
    ]
    header = ["release", "cluster", *STATES, "outcome"]
    table = [header]
    for row in rows:
        for index, cell in enumerate(row.clusters):
            table.append(
                [
                    _label(row) if index == 0 else "",
                    _name(cell.cluster),
                    *(str(getattr(cell, state)) for state in STATES),
                    cell.outcome,
                ]
            )
    widths = [
        max(len(escape_terminal(line[i])) for line in table) for i in range(len(header))
    ]
    for line in table:
        cells = [escape_terminal(text) for text in line]
        out.append(
            "  ".join(
                cell.ljust(width)
                if i < _NAMES or i == len(cells) - 1
                else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
            ).rstrip()
        )
    out += [
        "",
        "floors (the lowest release where nothing is lost; where assets at most go offline):",
    ]
    for floor in [*matrix.floors, matrix.floor]:
        out.append("  " + escape_terminal(_floor_line(floor)))
        if floor.cluster is not None:
            out += [escape_terminal(line) for line in _pin_lines(floor, "    ")]
    out += ["", f"findings ({len(matrix.findings)}):"]
    for finding in matrix.findings:
        out.append("  " + escape_terminal(_finding_head(finding, rows)))
        if finding.reason:
            out.append("    " + escape_terminal(finding.reason))
        out += ["    fix: " + escape_terminal(fix.text) for fix in finding.fixes]
    for error in matrix.errors:
        out.append(escape_terminal(f"record error: {error.source}: {error.message}"))
    for item in matrix.ignored:
        out.append(escape_terminal(f"ignored: {item.source}: {item.reason}"))
    out += ["", _verdict(matrix)]
    return "\n".join(out) + "\n"


def _markdown(matrix: Matrix) -> str:
    rows = matrix.releases
    summary = matrix.summary
    out = [
        f"# assetgate check: {summary.releases} releases ({matrix.mode} mode)",
        "",
        (
            f"{summary.records} records: {summary.assets} assets, {summary.errors} "
            f"errors, {summary.ignored} ignored."
        ),
        "",
        "| release | cluster | " + " | ".join(STATES) + " | outcome |",
        "|---|---|" + "---:|" * len(STATES) + "---|",
    ]
    for row in rows:
        for cell in row.clusters:
            counts = " | ".join(str(getattr(cell, state)) for state in STATES)
            out.append(
                f"| {_label(row)} | {escape_markdown(_name(cell.cluster))} | {counts} | "
                f"{cell.outcome} |"
            )
    out += [
        "",
        "## Floors",
        "",
        "| cluster | lossless | offline-only | pinned by |",
        "|---|---|---|---|",
    ]
    for floor in [*matrix.floors, matrix.floor]:
        pinned = ", ".join(escape_markdown(asset) for asset in floor.pinned_by) or "-"
        out.append(
            f"| {escape_markdown(_name(floor.cluster))} | {floor.lossless or 'none'} | "
            f"{floor.offline_only or 'none'} | {pinned} |"
        )
    out += ["", f"## Findings ({len(matrix.findings)})", ""]
    for finding in matrix.findings:
        out.append(f"- **{escape_markdown(_finding_head(finding, rows))}**")
        if finding.reason:
            out.append(f"  - {escape_markdown(finding.reason)}")
        out += [f"  - fix: {escape_markdown(fix.text)}" for fix in finding.fixes]
    out += ["", _verdict(matrix)]
    return fit_markdown("\n".join(out) + "\n", tail=1)


def _sarif(matrix: Matrix) -> str:
    codes = [code.code for code in CODES]
    rules = [
        {
            "id": code.code,
            "name": code.rule,
            "shortDescription": {"text": code.title},
            "defaultConfiguration": {"level": about(code.rule).level},
            "helpUri": "docs/rules.md",
        }
        for code in CODES
    ]
    results = []
    for finding in matrix.findings:
        where = spans(finding.releases, matrix.releases)
        text = f"{finding.asset}: {finding.rule} on {where}"
        if finding.reason:
            text += f": {finding.reason}"
        if finding.fixes:
            text += ". Fix: " + "; ".join(fix.text for fix in finding.fixes)
        key = f"{finding.code}\x00{finding.asset}\x00{finding.reason}"
        result: dict[str, object] = {
            "ruleId": finding.code,
            "ruleIndex": codes.index(finding.code),
            "level": about(finding.rule).level,
            "message": {"text": escape_terminal(text)},
            "locations": [
                {"logicalLocations": [{"name": finding.asset, "kind": "resource"}]}
            ],
            "partialFingerprints": {
                "assetgate/v1": hashlib.sha256(key.encode()).hexdigest()
            },
            "properties": {
                "releases": finding.releases,
                "fixes": [msgspec.to_builtins(fix) for fix in finding.fixes],
            },
        }
        if finding.accepted:
            result["suppressions"] = [
                {"kind": "external", "justification": f"accepted {finding.accepted}"}
            ]
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": sarif_driver(rules)},
                "results": results,
            }
        ],
    }
    return msgspec.json.format(msgspec.json.encode(log), indent=2).decode() + "\n"


def _junit(matrix: Matrix) -> str:
    root = ET.Element("testsuites", name="assetgate")
    releases = _suite(root, "releases")
    for row in matrix.releases:
        case = _case(releases, "release", _label(row))
        if row.failing:
            _child(case, "failure", message=f"{row.failing} finding(s)", type="release")
    findings = _suite(root, "findings")
    for finding in matrix.findings:
        case = _case(
            findings,
            finding.cluster or "(unnamed cluster)",
            f"{finding.code} {finding.asset}",
        )
        where = spans(finding.releases, matrix.releases)
        message = f"{finding.rule} on {where}: {finding.reason or ''}".rstrip(": ")
        if finding.accepted:
            _child(case, "skipped", message=f"accepted {finding.accepted}")
        elif about(finding.rule).level != "note":
            _child(case, "failure", message=message, type=finding.code)
    _count(root, root.findall("testsuite"))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'
