"""JUnit XML: one test case per asset, record and finding."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from typing import TYPE_CHECKING, Final

from assetgate.judge.gate import asset_id
from assetgate.judge.rules import about
from assetgate.report.common import (
    accepted_for,
    cluster_name,
    down_clusters,
    escape_terminal,
    overlap_name,
    overlap_text,
    reason_text,
    relative_path,
    split_source,
)
from assetgate.report.matrix import (
    row_label,
    spans,
)
from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assetgate.judge.gate import Verdict
    from assetgate.judge.outcomes import ClusterOutcome
    from assetgate.run.collect import Report
    from assetgate.run.matrix import Matrix

__all__ = ["NAME", "ORDER", "SUFFIX", "render", "render_matrix"]


NAME: Final = "junit"
ORDER: Final = 4
SUFFIX: Final = "xml"
"""The golden file's extension, and the scan's ``report.SUFFIX``."""


# --- junit -------------------------------------------------------------------------------

# characters XML 1.0 forbids that escape_terminal leaves alone (the rest it escapes)
_XML_FORBIDDEN: Final = re.compile("[\ufffe\uffff]")


def render(report: Report, *, fail_on: Iterable[str] | None = None) -> str:
    """JUnit XML: one suite per cluster/account, one test case per asset.

    Non-online assets fail (``type`` is the state), accepted ones are skipped;
    overlaps form the suite ``overlaps`` and record errors the suite ``inventory``.
    Untrusted text is escaped as by :func:`escape_terminal`, so that no character
    XML 1.0 forbids (nor a terminal escape sequence) reaches the document.

    Args:
        report: the report to render.
        fail_on: ignored: this format lists every finding.

    Returns:
        The XML document with its declaration and a trailing newline.
    """
    del fail_on  # every finding is listed: nothing is folded
    root = ET.Element("testsuites", name="assetgate")
    if report.clusters:
        suite = _suite(root, "clusters")
        for c in report.clusters:
            case = _case(suite, "cluster", cluster_name(c))
            if c.outcome != "ok":
                message = f"{c.outcome}: {c.reason}; caused by {', '.join(c.assets)}"
                _child(case, "failure", message, message=message, type=c.outcome)
    down = {c.cluster: c for c in down_clusters(report)}
    by_account: dict[tuple[str, str], list[Verdict]] = {}
    for verdict in report.assets:
        by_account.setdefault((verdict.cluster, verdict.account), []).append(verdict)
    for (cluster, account), verdicts in sorted(by_account.items()):
        suite = _suite(root, f"{cluster}/{account}" if cluster else account)
        for v in verdicts:
            case = _case(suite, v.kind, asset_id(v), v.source)
            if v.state == "online":
                continue
            if accepted_for(v.accepted, v.state):
                _child(case, "skipped", message=f"accepted {v.accepted}")
            else:
                message = f"{v.state}: {reason_text(v)}"
                _child(
                    case,
                    "failure",
                    _failure_body(v, message, down),
                    message=message,
                    type=v.state,
                )
    if report.overlaps:
        suite = _suite(root, "overlaps")
        for o in report.overlaps:
            case = _case(suite, "overlap", overlap_name(o))
            if o.accepted is not None:
                _child(case, "skipped", message=f"accepted {o.accepted}")
            else:
                _child(case, "failure", message=overlap_text(o), type="overlap")
    if report.errors or report.ignored:
        suite = _suite(root, "inventory")
        for e in report.errors:
            case = _case(suite, "record", e.source, e.source)
            if e.accepted is not None:
                _child(case, "skipped", message=f"accepted {e.accepted}: {e.message}")
            else:
                _child(case, "error", e.message, message=e.message, type="record-error")
        for i in report.ignored:
            case = _case(suite, "record", i.source, i.source)
            accepted = f" (accepted {i.accepted})" if i.accepted else ""
            _child(case, "skipped", message=f"ignored: {i.reason}{accepted}")
    _count(root, root.findall("testsuite"))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


def _failure_body(
    verdict: Verdict, message: str, down: dict[str, ClusterOutcome]
) -> str:
    """A failure's text: the asset, its state and reason, and its cluster's outcome."""
    lines = [f"{asset_id(verdict)} ({verdict.source})", message]
    if verdict.own_state is not None:
        own = f": {verdict.own_reason}" if verdict.own_reason else ""
        lines.append(f"its own state: {verdict.own_state}{own}")
    outcome = down.get(verdict.cluster)
    if outcome is not None:
        lines.append(f"cluster outcome: {outcome.outcome}: {outcome.reason}")
    return "\n".join(lines)


def _xml(text: str) -> str:
    return _XML_FORBIDDEN.sub("", escape_terminal(text))


def _suite(root: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=_xml(name))


def _case(
    suite: ET.Element, classname: str, name: str, source: str | None = None
) -> ET.Element:
    """A test case; ``source`` (``file:LINE``) gives its ``file`` and ``line``."""
    attributes = {"classname": _xml(classname), "name": _xml(name), "time": "0"}
    if source is not None:
        path, line = split_source(source)
        attributes["file"] = _xml(relative_path(path))
        if line is not None:
            attributes["line"] = str(line)
    return ET.SubElement(suite, "testcase", attributes)


def _child(
    case: ET.Element, tag: str, body: str | None = None, **attributes: str
) -> None:
    """A failure, error or skipped element; ``body`` becomes its text."""
    element = ET.SubElement(
        case, tag, {key: _xml(value) for key, value in attributes.items()}
    )
    if body is not None:  # one escaped line per line: the text may hold newlines
        element.text = "\n".join(_xml(line) for line in body.split("\n"))


def _count(root: ET.Element, suites: Iterable[ET.Element]) -> None:
    """Set tests/failures/errors/skipped on each suite and on the root."""
    totals = Counter[str]()
    for suite in suites:
        cases = suite.findall("testcase")
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.find("failure") is not None),
            "errors": sum(1 for c in cases if c.find("error") is not None),
            "skipped": sum(1 for c in cases if c.find("skipped") is not None),
        }
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))


def render_matrix(matrix: Matrix) -> str:
    """A matrix run: a test case per release, and one per finding."""
    root = ET.Element("testsuites", name="assetgate")
    releases = _suite(root, "releases")
    for row in matrix.releases:
        case = _case(releases, "release", row_label(row))
        if row.failing:
            _child(case, "failure", message=f"{row.failing} finding(s)", type="release")
    findings = _suite(root, "findings")
    for finding in matrix.findings:
        case = _case(
            findings,
            shown_cluster(finding.cluster),
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
