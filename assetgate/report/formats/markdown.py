"""The Markdown format: GitHub-flavoured, within the 1 MiB step-summary limit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assetgate.judge.gate import STATES, asset_id
from assetgate.report.common import (
    DIGEST_PREFIX,
    FOLD_NOTE,
    OUTCOME_HEAD,
    account_counts,
    counts_line,
    escape_markdown,
    finding_groups,
    fit_markdown,
    fold_findings,
    md_row,
    outcome_row,
    per_file,
    target_line,
    verdict_line,
    verdict_notes,
)
from assetgate.report.matrix import (
    cluster_label,
    finding_head,
    matrix_verdict,
    row_label,
)
from assetgate.report.rolling import (
    LEADER,
    conclusion,
    effect_text,
    heading,
    record_lines,
    rolling_verdict,
    step_nodes,
)
from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assetgate.run.collect import Report
    from assetgate.run.matrix import Matrix
    from assetgate.run.rolling import (
        Rolling,
    )

__all__ = ["NAME", "ORDER", "SUFFIX", "render", "render_matrix", "render_rolling"]


NAME: Final = "markdown"
ORDER: Final = 2
SUFFIX: Final = "md"
"""The golden file's extension, and the scan's ``report.SUFFIX``."""


def render(report: Report, *, fail_on: Iterable[str] | None = None) -> str:
    """A Markdown summary for ``$GITHUB_STEP_SUMMARY``; untrusted text is escaped.

    Args:
        report: the report to render.
        fail_on: fold the findings that do not fail the run (see :func:`render`).

    Returns:
        A heading, the per-account state table, and tables of findings, overlaps and
        record errors (each only when not empty).
    """
    md = escape_markdown
    summary = report.summary
    lines = [
        f"## assetgate: {md(target_line(report))}",
        "",
        f"Catalogue `{report.catalogue.digest[:DIGEST_PREFIX]}`; {counts_line(summary)}.",
        "",
        f"**Verdict:** {md(verdict_line(report))}.",
        "",
        md_row(["cluster", "account", *STATES]),
        md_row(["---", "---", *("---:" for _ in STATES)]),
    ]
    for (cluster, account), counts in account_counts(report):
        cells = [md(cluster), md(account), *(str(counts[s]) for s in STATES)]
        lines.append(md_row(cells))
    if report.health:
        lines += [
            "",
            "### Health checks failing",
            "",
            "| cluster | target | asset | /healthz error |",
            "| --- | --- | --- | --- |",
        ]
        lines.extend(
            md_row([md(h.cluster), md(h.target), md(h.asset), md(h.error)])
            for h in report.health
        )
    if report.clusters:
        lines += ["", "### Clusters", "", *OUTCOME_HEAD]
        lines += map(outcome_row, report.clusters)
    groups = finding_groups(report)
    if any(groups.values()):
        lines += ["", "### Findings", "", "| state | asset | reason | notes |"]
        lines.append("| --- | --- | --- | --- |")
        for state, group in groups.items():
            listed, left = fold_findings(group, fail_on)
            for v in listed:
                notes = verdict_notes(v, mixed=bool(report.target.clusters))
                cells = [
                    v.state,
                    md(asset_id(v)),
                    md(v.reason or ""),
                    md("; ".join(notes)),
                ]
                lines.append(md_row(cells))
            if left:
                lines.append(md_row([state, FOLD_NOTE.format(count=left), "", ""]))
    if report.overlaps:
        lines += ["", "### Overlaps", "", "| account | streams | subjects | offline |"]
        lines.append("| --- | --- | --- | --- |")
        for o in report.overlaps:
            offline = ", ".join(o.offline) or "-"
            if o.accepted:
                offline += f" (accepted {o.accepted})"
            cells = [
                md(f"{o.cluster}/{o.account}"),
                md(" ~ ".join(o.streams)),
                md(" ~ ".join(o.subjects)),
                md(offline),
            ]
            lines.append(md_row(cells))
    if report.errors:
        lines += ["", "### Record errors", "", "| source | message | retriable |"]
        lines.append("| --- | --- | --- |")
        folded: list[str] = []
        for e in per_file(report.errors, "record errors", folded, "", md):
            retry = "yes" if e.retriable else "no"
            note = f" (accepted {e.accepted})" if e.accepted else ""
            lines.append(md_row([md(e.source), md(e.message + note), retry]))
        lines += [md_row([note, "", ""]) for note in folded]
    if report.ignored:
        lines += ["", "### Ignored records", "", "| source | reason |"]
        lines.append("| --- | --- |")
        folded = []
        for i in per_file(report.ignored, "ignored records", folded, "", md):
            note = f" (accepted {i.accepted})" if i.accepted else ""
            lines.append(md_row([md(i.source), md(i.reason + note)]))
        lines += [md_row([note, ""]) for note in folded]
    return fit_markdown("\n".join(lines) + "\n")


def render_matrix(matrix: Matrix) -> str:
    """A matrix run: the table per release, the floors, each finding and its fixes."""
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
                f"| {row_label(row)} | {escape_markdown(cluster_label(cell.cluster))} | {counts} | "
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
            f"| {escape_markdown(cluster_label(floor.cluster))} | {floor.lossless or 'none'} | "
            f"{floor.offline_only or 'none'} | {pinned} |"
        )
    out += ["", f"## Findings ({len(matrix.findings)})", ""]
    for finding in matrix.findings:
        out.append(f"- **{escape_markdown(finding_head(finding, rows))}**")
        if finding.reason:
            out.append(f"  - {escape_markdown(finding.reason)}")
        out += [f"  - fix: {escape_markdown(fix.text)}" for fix in finding.fixes]
    out += ["", matrix_verdict(matrix)]
    return fit_markdown("\n".join(out) + "\n", tail=1)


def _rolling_lines(rolling: Rolling) -> list[str]:
    out = [f"# assetgate: {escape_markdown(heading(rolling))}", ""]
    for cluster in rolling.clusters:
        name = escape_markdown(shown_cluster(cluster.cluster))
        out += [
            f"## Cluster {name}",
            "",
            "| step | nodes | leader kept on newer | leader moved to older | what happens |",
            "|---:|---|---|---|---|",
        ]
        for step in cluster.steps:
            what = "<br>".join(
                escape_markdown(LEADER[leader] + effect_text(effect))
                for leader, effect in step.effects
            )
            out.append(
                f"| {step.step} | {step_nodes(step)} | {step.leader_newer} | "
                f"{step.leader_older} | {what or 'ok'} |"
            )
        out += ["", escape_markdown(conclusion(cluster, rolling)), ""]
    records = record_lines(rolling)
    if records:
        out += [f"- {escape_markdown(line)}" for line in records] + [""]
    out.append(f"**{escape_markdown(rolling_verdict(rolling))}**")
    return out


def render_rolling(rolling: Rolling) -> str:
    """A rolling run: per cluster, one line per step, then the first that goes wrong."""
    return fit_markdown("\n".join(_rolling_lines(rolling)) + "\n", tail=1)
