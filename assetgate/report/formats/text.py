"""The text format: a terminal report (the default)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assetgate.judge.gate import STATES, asset_id
from assetgate.report.common import (
    DIGEST_PREFIX,
    FOLD_NOTE,
    account_counts,
    cluster_name,
    counts_line,
    down_clusters,
    drift_text,
    escape_terminal,
    finding_groups,
    fold_findings,
    overlap_name,
    overlap_text,
    own_text,
    per_file,
    target_line,
    verdict_line,
)
from assetgate.report.matrix import (
    NAME_COLUMNS,
    cluster_label,
    finding_head,
    floor_line,
    matrix_verdict,
    pin_lines,
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
    step_states,
)
from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assetgate.judge.gate import Verdict
    from assetgate.run.collect import Report
    from assetgate.run.matrix import Matrix
    from assetgate.run.rolling import (
        Rolling,
    )

__all__ = ["NAME", "ORDER", "SUFFIX", "render", "render_matrix", "render_rolling"]


NAME: Final = "text"
ORDER: Final = 0
SUFFIX: Final = "txt"
"""The golden file's extension, and the scan's ``report.SUFFIX``."""


def render(report: Report, *, fail_on: Iterable[str] | None = None) -> str:
    """A terminal-readable report (80-100 columns); untrusted text is escaped.

    Args:
        report: the report to render.
        fail_on: fold the findings that do not fail the run (see :func:`render`).

    Returns:
        Header, per-account state table, findings by state, overlaps, errors, the
        ignored count and a one-line verdict.
    """
    esc = escape_terminal
    summary = report.summary
    lines = [
        (
            f"assetgate check: {esc(target_line(report))}, "
            f"catalogue {report.catalogue.digest[:DIGEST_PREFIX]}"
        ),
        (counts_line(summary)),
        "",
        *_text_table(report),
        *_text_clusters(report),
        *_text_health(report),
    ]
    on_target = bool(report.target.clusters)
    for state, group in finding_groups(report).items():
        if group:
            title = state
            if state == "online":
                noted = any(v.notes for v in group)
                title = "online, level stamp drifts" + (" or notes" if noted else "")
            lines += ["", f"{title} ({len(group)})"]
            listed, left = fold_findings(group, fail_on)
            for verdict in listed:
                _text_asset(verdict, lines, on_target=on_target)
            if left:
                lines.append(f"  {FOLD_NOTE.format(count=left)}")
    if report.overlaps:
        lines += ["", f"overlaps ({len(report.overlaps)})"]
        for overlap in report.overlaps:
            note = f"  [accepted {overlap.accepted}]" if overlap.accepted else ""
            lines.append(f"  {esc(overlap_name(overlap))}{esc(note)}")
            lines.append(f"      {esc(overlap_text(overlap))}")
    if report.errors:
        lines += ["", f"errors ({len(report.errors)})"]
        notes: list[str] = []
        for error in per_file(report.errors, "record errors", notes, "  ", esc):
            retry = "retriable" if error.retriable else "not retriable"
            note = f"  [accepted {error.accepted}]" if error.accepted else ""
            lines.append(
                f"  {esc(error.source)}: {esc(error.message)} ({retry}){esc(note)}"
            )
        lines += notes
    if report.ignored:
        lines += ["", f"ignored ({len(report.ignored)})"]
        notes = []
        for item in per_file(report.ignored, "ignored records", notes, "  ", esc):
            note = f"  [accepted {item.accepted}]" if item.accepted else ""
            lines.append(f"  {esc(item.source)}: {esc(item.reason)}{esc(note)}")
        lines += notes
    lines += ["", f"verdict: {esc(verdict_line(report))}"]
    return "\n".join(lines) + "\n"


def _text_table(report: Report) -> list[str]:
    header = ("cluster", "account", *STATES)
    rows = [
        (
            escape_terminal(cluster) or "-",
            escape_terminal(account),
            *tuple(str(counts[state]) for state in STATES),
        )
        for (cluster, account), counts in account_counts(report)
    ]
    if len(rows) > 1:
        rows.append(("total", "", *(str(getattr(report.summary, s)) for s in STATES)))
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    out = []
    for row in (header, *rows):
        names = [
            cell.ljust(width) for cell, width in zip(row[:2], widths[:2], strict=True)
        ]
        numbers = [
            cell.rjust(width) for cell, width in zip(row[2:], widths[2:], strict=True)
        ]
        out.append("  ".join(names + numbers).rstrip())
    return out


def _text_clusters(report: Report) -> list[str]:
    """Whole-cluster outcomes (cluster mode): one line per cluster, details when down."""
    if not report.clusters:
        return []
    esc = escape_terminal
    lines = [
        "",
        f"clusters ({len(report.clusters)}, {len(down_clusters(report))} down)",
    ]
    for c in report.clusters:
        lines.append(f"  {esc(cluster_name(c))}  {c.outcome}  on {esc(c.target)}")
        if c.reason is not None:
            lines.append(f"      {esc(c.reason)}")
        if c.assets:
            lines.append(f"      caused by: {esc(', '.join(c.assets))}")
    return lines


def _text_health(report: Report) -> list[str]:
    """Servers whose ``/healthz`` fails because an asset was not recovered."""
    if not report.health:
        return []
    esc = escape_terminal
    lines = ["", f"health checks failing ({len(report.health)})"]
    for h in report.health:
        where = (
            h.cluster or "(single server)"
            if report.target.mode == "single"
            else shown_cluster(h.cluster)
        )
        lines.append(f"  {esc(where)}  /healthz on {esc(h.target)}: {esc(h.error)}")
    return lines


def _text_asset(verdict: Verdict, lines: list[str], *, on_target: bool) -> None:
    """Append an asset's lines; ``on_target``: name its target (targets per cluster)."""
    esc = escape_terminal
    head = f"  {esc(asset_id(verdict))}  ({esc(verdict.source)})"
    lines.append(f"{head}  on {esc(verdict.target)}" if on_target else head)
    if verdict.reason is not None:
        lines.append(f"      {esc(verdict.reason)}")
    if verdict.dropped_fields:
        dropped = ", ".join(verdict.dropped_fields)
        lines.append(f"      dropped: {esc(dropped)}")
    if verdict.drift is not None:
        lines.append(f"      {verdict.drift}: {esc(drift_text(verdict))}")
    if verdict.own_state is not None:
        lines.append(f"      {esc(own_text(verdict))}")
    lines.extend(f"      note: {esc(note)}" for note in verdict.notes)
    if verdict.accepted is not None:
        lines.append(f"      [accepted {esc(verdict.accepted)}]")


def render_matrix(matrix: Matrix) -> str:
    """A matrix run: the table per release, the floors, each finding and its fixes."""
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
                    row_label(row) if index == 0 else "",
                    cluster_label(cell.cluster),
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
                if i < NAME_COLUMNS or i == len(cells) - 1
                else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
            ).rstrip()
        )
    out += [
        "",
        "floors (the lowest release where nothing is lost; where assets at most go offline):",
    ]
    for floor in [*matrix.floors, matrix.floor]:
        out.append("  " + escape_terminal(floor_line(floor)))
        if floor.cluster is not None:
            out += [escape_terminal(line) for line in pin_lines(floor, "    ")]
    out += ["", f"findings ({len(matrix.findings)}):"]
    for finding in matrix.findings:
        out.append("  " + escape_terminal(finding_head(finding, rows)))
        if finding.reason:
            out.append("    " + escape_terminal(finding.reason))
        out += ["    fix: " + escape_terminal(fix.text) for fix in finding.fixes]
    for error in matrix.errors:
        out.append(escape_terminal(f"record error: {error.source}: {error.message}"))
    for item in matrix.ignored:
        out.append(escape_terminal(f"ignored: {item.source}: {item.reason}"))
    out += ["", matrix_verdict(matrix)]
    return "\n".join(out) + "\n"


def _rolling_lines(rolling: Rolling) -> list[str]:
    out = [
        f"assetgate: {heading(rolling)}",
        (
            f"inventory: {rolling.records} records, {rolling.assets} assets, "
            f"{rolling.errors} errors, {rolling.ignored} ignored"
        ),
    ]
    for cluster in rolling.clusters:
        out.append(f"cluster {escape_terminal(shown_cluster(cluster.cluster))}")
        for step in cluster.steps:
            out.append(
                f"  step {step.step}  {step_nodes(step):<28} {step_states(step)}"
            )
            shown: tuple[str, ...] = ()
            for leader, effect in step.effects:
                out.append(
                    "           "
                    + escape_terminal(LEADER[leader] + effect_text(effect))
                )
                if effect.assets and effect.assets != shown:
                    shown = effect.assets
                    more = len(shown) - 5
                    tail = f" and {more} more" if more > 0 else ""
                    names = escape_terminal(", ".join(shown[:5]))
                    out.append(f"             assets: {names}{tail}")
        out.append("  " + escape_terminal(conclusion(cluster, rolling)))
    out += [escape_terminal(line) for line in record_lines(rolling)]
    out.append(escape_terminal(rolling_verdict(rolling)))
    return out


def render_rolling(rolling: Rolling) -> str:
    """A rolling run: per cluster, one line per step, then the first that goes wrong."""
    return "\n".join(_rolling_lines(rolling)) + "\n"
