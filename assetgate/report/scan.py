"""A scan's summary (:class:`~assetgate.run.aggregate.RunSummary`) as JSON, Markdown, text.

``summary.json`` and ``summary.md`` are written by every scan. When a scan is too large
for its driver to hold ``check``'s report (``--report summary``), its report file and
standard output are the summary too, in the ``--format`` asked for
(:data:`SUMMARY_FORMATS`), and they point to the Parquet tables for the rest.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

import msgspec

from assetgate.judge.gate import STATES, asset_id
from assetgate.report.common import (
    DIGEST_PREFIX,
    OUTCOME_HEAD,
    counts_line,
    drift_text,
    escape_terminal,
    fit_markdown,
    md_row,
    outcome_row,
    target_line,
)
from assetgate.report.common import escape_markdown as md
from assetgate.run.aggregate import SAMPLE
from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    from collections.abc import Callable

    from assetgate.judge.gate import Verdict
    from assetgate.run.aggregate import RunSummary

__all__ = [
    "FULL_REPORT_LINES",
    "REPORTS",
    "SUMMARY_FORMATS",
    "TABLES",
    "summary_json",
    "summary_markdown",
    "summary_text",
]

REPORTS: Final = ("auto", "full", "summary")
"""``--report``: ``full`` collects ``check``'s whole report to the driver, ``summary``
keeps only aggregates there, ``auto`` is ``full`` up to :data:`FULL_REPORT_LINES`."""

FULL_REPORT_LINES: Final = 200_000
"""Input lines up to which ``--report auto`` collects ``check``'s whole report (about
the memory ``check`` needs for it: a few hundred MB of driver Python at this size)."""


TABLES: Final = ("assets", "errors", "ignored", "overlaps")
"""The Parquet tables of a scan, each a folder of its output."""


def summary_json(summary: RunSummary, out: str = "") -> str:
    """``summary.json``: the summary's fields, sorted, two-space indented."""
    del out  # the JSON names no place: it sits in the output it describes
    body = msgspec.to_builtins(summary)
    return json.dumps(body, indent=2, sort_keys=True) + "\n"


def summary_markdown(summary: RunSummary, out: str = "") -> str:
    """``summary.md``: verdict, failing findings, counts, outcomes, first findings."""
    counts = msgspec.to_builtins(summary.summary)
    main = summary.main_finding
    failing = f"**Failing findings:** {summary.failing}"
    if main:
        failing += f"; the first: {md(main['finding'])}"
        failing += f" ({md(main['reason'])})" if main["reason"] else ""
    lines = [
        f"## assetgate scan: target {md(summary.target.version)}",
        "",
        f"Catalogue `{summary.catalogue.digest[:DIGEST_PREFIX]}`.",
        "",
        f"**Verdict:** {md(summary.verdict)}.",
        "",
        failing + ".",
        "",
        md_row(list(counts)),
        md_row(["---:"] * len(counts)),
        md_row([str(v) for v in counts.values()]),
        "",
        md_row(["cluster", "account", *STATES]),
        md_row(["---", "---", *(["---:"] * len(STATES))]),
    ]
    for row in summary.accounts:
        cells = [md(row["cluster"]), md(row["account"]), *(str(row[s]) for s in STATES)]
        lines.append(md_row(cells))
    if summary.outcomes:
        lines += ["", *OUTCOME_HEAD, *map(outcome_row, summary.outcomes)]
    if summary.findings:
        lines += [
            "",
            "| finding | assets | first | reason |",
            "| --- | ---: | --- | --- |",
        ]
        for rule, found in summary.findings.items():
            first = found["sample"][0]
            cells = [
                rule,
                str(found["count"]),
                md(asset_id(first)),
                md(_words(rule, first)),
            ]
            lines.append(md_row(cells))
    if out:
        lines += ["", f"Every asset, error, ignored record and overlap: `{md(out)}`."]
    return fit_markdown("\n".join(lines) + "\n")


def summary_text(summary: RunSummary, out: str = "") -> str:
    """The terminal report of a scan whose driver holds only aggregates."""
    esc = escape_terminal
    lines = [
        (
            f"assetgate scan: {esc(target_line(summary))}, "
            f"catalogue {summary.catalogue.digest[:DIGEST_PREFIX]}"
        ),
        counts_line(summary.summary),
        f"report: summary (first {SAMPLE} findings of each kind; all in the tables)",
    ]
    down = [c for c in summary.outcomes if c.outcome != "ok"]
    if down:
        lines += ["", "cluster outcomes"]
        for c in down:
            note = f"  [accepted {c.accepted}]" if c.accepted else ""
            lines.append(f"  {esc(shown_cluster(c.cluster))}: {c.outcome}{esc(note)}")
            lines.append(f"      {esc(c.reason or '')}")
    if summary.health["count"]:
        lines += ["", f"/healthz failures ({summary.health['count']})"]
        lines += [f"  {esc(h.asset)}: {esc(h.error)}" for h in summary.health["sample"]]
    for rule, found in summary.findings.items():
        sample = found["sample"]
        lines += ["", f"{rule} ({found['count']}, first {len(sample)})"]
        for verdict in sample:
            note = f"  [accepted {verdict.accepted}]" if verdict.accepted else ""
            lines.append(f"  {esc(asset_id(verdict))}{esc(note)}")
            words = _words(rule, verdict)
            if words:
                lines.append(f"      {esc(words)}")
    for acceptance in summary.acceptances:
        lines.append(
            f"accepted {esc(acceptance.rule)}:{esc(acceptance.asset)}: "
            f"{acceptance.matched} matched"
        )
    main = summary.main_finding
    lines += [
        "",
        f"failing findings: {summary.failing}"
        + (f"; the first: {esc(main['finding'])}" if main else ""),
    ]
    if out:
        lines.append(
            f"tables: {esc(out)}/{{{','.join(TABLES)}}} (Parquet, partitioned by cluster)"
        )
    lines += ["", f"verdict: {esc(summary.verdict)}"]
    return "\n".join(lines) + "\n"


def _words(rule: str, verdict: Verdict) -> str:
    """What a sampled finding says: the stamp's meaning for a drift flag, else the reason."""
    return drift_text(verdict) if rule == verdict.drift else verdict.reason or ""


SUMMARY_FORMATS: Final[dict[str, Callable[[RunSummary, str], str]]] = {
    "text": summary_text,
    "json": summary_json,
    "markdown": summary_markdown,
}
"""The formats a summary-only scan can print, by ``--format`` name."""
