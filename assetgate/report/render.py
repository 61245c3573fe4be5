"""Render a check :class:`~assetgate.run.check.Report` as text, JSON, Markdown, SARIF or JUnit.

Every renderer returns a string; nothing here prints, opens files or reads the
environment (``cli.py`` decides where a report goes). Output is deterministic: the same
report always renders to the same bytes, so that golden files and CI diffs stay stable.

Names, subjects and messages come from the inventory and are untrusted: each format
escapes them for its medium (terminal control sequences, Markdown table syntax, XML).
The JSON form is the report struct itself, with no renderer-specific fields.

Size: the five formats share the finding, escaping and wording helpers, so they live in
one module (over the ~400-line guide); split it into a package if a format grows.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import importlib.metadata
import os
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, TypeVar, assert_never
from urllib.parse import quote, unquote

import msgspec

from assetgate.judge.gate import STATES
from assetgate.judge.outcomes import OUTCOMES
from assetgate.judge.rules import RULES, about
from assetgate.run.check import accepted_rules, asset_id, failing_rules, failing_set

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from assetgate.judge.gate import Verdict
    from assetgate.judge.outcomes import ClusterOutcome
    from assetgate.run.check import ErrorEntry, Overlap, Report, Summary

__all__ = [
    "ReportFormat",
    "escape_markdown",
    "escape_terminal",
    "render",
    "render_github",
    "render_json",
    "render_junit",
    "render_markdown",
    "render_sarif",
    "render_text",
]


class ReportFormat(enum.StrEnum):
    """Report formats of ``check --format``."""

    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    SARIF = "sarif"
    JUNIT = "junit"
    GITHUB = "github"

    def __str__(self) -> str:
        """The value, as argparse shows it in ``choices``."""
        return self.value


def render(report: Report, fmt: str, *, fail_on: Iterable[str] | None = None) -> str:
    """Render a report in one of the :class:`ReportFormat` formats.

    Args:
        report: the result of :func:`assetgate.run.check.check`.
        fmt: a :class:`ReportFormat` or its value.
        fail_on: what fails the run (as ``check --fail-on``): when given, the text and
            Markdown formats list every finding that fails the run and at most
            :data:`FOLDED_SHOWN` per state of the others, counting the rest (a fleet's
            60,000 ``stamp_missing`` drifts); ``None`` lists every finding.

    Returns:
        The rendered report, ending with a newline.

    Raises:
        ValueError: ``fmt`` is not a known format.
    """
    try:
        kind = ReportFormat(fmt)
    except ValueError:
        allowed = ", ".join(ReportFormat)
        msg = f"unknown report format: {fmt!r} (one of {allowed})"
        raise ValueError(msg) from None
    match kind:
        case ReportFormat.TEXT:
            return render_text(report, fail_on=fail_on)
        case ReportFormat.JSON:
            return render_json(report)
        case ReportFormat.MARKDOWN:
            return render_markdown(report, fail_on=fail_on)
        case ReportFormat.SARIF:
            return render_sarif(report)
        case ReportFormat.JUNIT:
            return render_junit(report)
        case ReportFormat.GITHUB:
            return render_github(report)
        case _:  # pragma: no cover - exhaustive
            assert_never(kind)


# --- shared ------------------------------------------------------------------------------

_FINDING_STATES: Final = tuple(state for state in STATES if state != "online")
_DIGEST_PREFIX: Final = 12
# categories shown escaped: controls (C0, DEL, C1), format characters (bidi overrides,
# zero-width), line/paragraph separators and lone surrogates (which cannot be encoded)
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_SOURCE_LINE: Final = re.compile(
    r"(?P<path>.*):(?P<line>[0-9]+)(?:#[0-9]+)?", re.DOTALL
)


def escape_terminal(text: str) -> str:
    r"""Make untrusted text safe to show on a terminal, one line, nothing hidden.

    Control characters (C0, DEL, C1, hence ANSI escape sequences and newlines),
    Unicode format characters (bidi overrides, zero-width) and line separators become
    ``\xNN`` or ``\uNNNN``; everything else is kept as is.

    Args:
        text: the untrusted text.

    Returns:
        The text with every unsafe character replaced by a visible escape.
    """
    if text.isprintable() and text.isascii():
        return text
    return "".join(_escape_char(char) for char in text)


def _escape_char(char: str) -> str:
    if unicodedata.category(char) not in _UNSAFE_CATEGORIES:
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"  # noqa: PLR2004


_MARKDOWN_SPECIAL: Final = frozenset("\\|`*_[]~#")
_MARKDOWN_ENTITIES: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MARKDOWN_TABLE: Final = str.maketrans(
    {**{char: "\\" + char for char in _MARKDOWN_SPECIAL}, **_MARKDOWN_ENTITIES}
)


def escape_markdown(text: str) -> str:
    r"""Make untrusted text safe inside a GitHub-flavoured Markdown table cell.

    Control characters are escaped as by :func:`escape_terminal` first (so a newline
    cannot end the row); then ``&``, ``<`` and ``>`` become entities (no raw
    HTML), and the characters Markdown gives meaning to (``\ | ` * _ [ ] ~ #``) are
    backslash-escaped.

    Args:
        text: the untrusted text.

    Returns:
        The text as a literal cell value.
    """
    return escape_terminal(text).translate(_MARKDOWN_TABLE)


def _accepted_for(accepted: str | None, kind: str) -> bool:
    """Whether an acceptance ``RULE:ASSET`` covers this kind of finding."""
    if accepted is None:
        return False
    return bool(accepted_rules(accepted) & {kind, "*"})


def _reason(verdict: Verdict) -> str:
    """The server's reason verbatim; degraded assets have none, so name what is lost."""
    if verdict.reason is not None:
        return verdict.reason
    if verdict.dropped_fields:
        return f"loaded with fields dropped: {', '.join(verdict.dropped_fields)}"
    return verdict.state


def _finding_groups(report: Report) -> dict[str, list[Verdict]]:
    """Assets that are not online, then online ones with a level-stamp drift or a note.

    Grouped by state in :data:`STATES` order (online last), report order within.
    """
    groups: dict[str, list[Verdict]] = {s: [] for s in (*_FINDING_STATES, "online")}
    for verdict in report.assets:
        if verdict.state != "online" or verdict.drift is not None or verdict.notes:
            groups[verdict.state].append(verdict)
    return groups


FOLDED_SHOWN: Final = 10
"""Findings per state that the text and Markdown formats list when they do not fail
the run (``render(..., fail_on=...)``); the rest are counted."""
_FOLD_NOTE: Final = "... {count} more that do not fail the run (--show all lists them)"


def _folded(
    group: Sequence[Verdict], fail_on: Iterable[str] | None
) -> tuple[list[Verdict], int]:
    """The group's findings to list, and how many others are only counted."""
    if fail_on is None:
        return list(group), 0
    wanted = failing_set(fail_on)
    listed: list[Verdict] = []
    others = 0
    for verdict in group:
        if failing_rules(verdict, wanted):
            listed.append(verdict)
        elif others < FOLDED_SHOWN:
            listed.append(verdict)
            others += 1
        else:
            others += 1
    return listed, max(others - FOLDED_SHOWN, 0)


def _findings(report: Report) -> list[Verdict]:
    """The findings of :func:`_finding_groups`, one group after the other."""
    return [v for group in _finding_groups(report).values() for v in group]


def _accounts(report: Report) -> list[tuple[tuple[str, str], Counter[str]]]:
    """State counts per (cluster, account), sorted."""
    cells = Counter((v.cluster, v.account, v.state) for v in report.assets)
    counts: dict[tuple[str, str], Counter[str]] = {}
    for (cluster, account, state), count in cells.items():
        key = (cluster, account)
        if key not in counts:
            counts[key] = Counter()
        counts[key][state] = count
    return sorted(counts.items())


def _target_line(report: Report) -> str:
    target = report.target
    if target.clusters:
        pairs = ", ".join(f"{c}={v}" for c, v in sorted(target.clusters.items()))
        return f"target {target.version} ({pairs}), {target.mode} mode"
    level = "none" if target.api_level is None else str(target.api_level)
    return f"target {target.version} (API level {level}), {target.mode} mode"


def _drift_text(verdict: Verdict) -> str:
    stamp = repr(verdict.stamped_level)
    required = verdict.required_level
    match verdict.drift:
        case "stamp_missing":
            if required is None:  # a config that does not decode: its needs unknown
                return "no _nats.req.level stamp (the API level the config requires is not known)"
            return (
                f"no _nats.req.level stamp (the config requires API level {required})"
            )
        case "stamp_unparsable":
            return f"_nats.req.level {stamp} is not an API level"
        case "stamp_too_low":
            return f"_nats.req.level {stamp} is below the required API level {required}"
        case "stamp_too_high":
            return f"_nats.req.level {stamp} is above the required API level {required}"
        case None:
            return ""
        case _:  # pragma: no cover - exhaustive
            assert_never(verdict.drift)


def _overlap_name(overlap: Overlap) -> str:
    return f"{overlap.cluster}/{overlap.account}: {overlap.streams[0]} ~ {overlap.streams[1]}"


def _overlap_text(overlap: Overlap) -> str:
    first, second = overlap.subjects
    text = f"subjects {first!r} and {second!r} overlap"
    if overlap.offline:
        text += f" (offline: {', '.join(overlap.offline)})"
    return text


def _down(report: Report) -> list[ClusterOutcome]:
    """Clusters whose JetStream the target takes down as a whole."""
    return [c for c in report.clusters if c.outcome != "ok"]


def _cluster_name(outcome: ClusterOutcome) -> str:
    return outcome.cluster or "(unnamed cluster)"


def _own_text(verdict: Verdict) -> str:
    """What an ``unavailable`` asset would be with its cluster up."""
    reason = f": {verdict.own_reason}" if verdict.own_reason is not None else ""
    return f"with its cluster up: {verdict.own_state}{reason}"


def verdict_line(report: Report) -> str:
    """The report's verdict in one sentence (what the text report's ``verdict:`` says)."""
    return _verdict_line(report)


def _verdict_line(report: Report) -> str:
    down = _down(report)
    head = ""
    if down:
        named = ", ".join(f"{_cluster_name(c)} ({c.outcome})" for c in down)
        noun = "cluster" if len(down) == 1 else "clusters"
        head = f"{len(down)} {noun} down: {named}; "
    if report.health:
        head += f"/healthz fails ({_plural(len(report.health), 'asset', 'assets')} not recovered); "
    return head + _assets_line(report)


def _assets_line(report: Report) -> str:
    summary = report.summary
    parts = [f"{getattr(summary, state)} {state}" for state in _FINDING_STATES]
    parts = [part for part in parts if not part.startswith("0 ")]
    bad = summary.assets - summary.online
    if summary.assets == 0:
        return (
            f"no stream or consumer to judge in {_plural(summary.records, 'record', 'records')}"
            f" ({_plural(summary.errors, 'record error', 'record errors')}, "
            f"{summary.ignored} ignored): nothing was checked"
        )
    head = (
        f"{bad} of {summary.assets} assets not online ({', '.join(parts)})"
        if bad
        else f"all {summary.assets} assets online"
    )
    drift = sum(1 for v in report.assets if v.drift is not None)
    tail = [
        _plural(drift, "level-stamp drift", "level-stamp drifts"),
        _plural(summary.overlaps, "overlap", "overlaps"),
        _plural(summary.errors, "record error", "record errors"),
    ]
    accepted = f"; {summary.accepted} accepted" if summary.accepted else ""
    return f"{head}, {', '.join(tail)}{accepted}"


def _counts_line(summary: Summary) -> str:
    return (
        f"{_plural(summary.records, 'record', 'records')}: "
        f"{_plural(summary.assets, 'asset', 'assets')}, "
        f"{_plural(summary.errors, 'record error', 'record errors')}, "
        f"{summary.ignored} ignored"
    )


def _plural(count: int, one: str, many: str) -> str:
    return f"{'no' if count == 0 else count} {one if count == 1 else many}"


# --- text --------------------------------------------------------------------------------


def render_text(report: Report, *, fail_on: Iterable[str] | None = None) -> str:
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
            f"assetgate check: {esc(_target_line(report))}, "
            f"catalogue {report.catalogue.digest[:_DIGEST_PREFIX]}"
        ),
        (_counts_line(summary)),
        "",
        *_text_table(report),
        *_text_clusters(report),
        *_text_health(report),
    ]
    on_target = bool(report.target.clusters)
    for state, group in _finding_groups(report).items():
        if group:
            title = state
            if state == "online":
                noted = any(v.notes for v in group)
                title = "online, level stamp drifts" + (" or notes" if noted else "")
            lines += ["", f"{title} ({len(group)})"]
            listed, left = _folded(group, fail_on)
            for verdict in listed:
                _text_asset(verdict, lines, on_target=on_target)
            if left:
                lines.append(f"  {_FOLD_NOTE.format(count=left)}")
    if report.overlaps:
        lines += ["", f"overlaps ({len(report.overlaps)})"]
        for overlap in report.overlaps:
            note = f"  [accepted {overlap.accepted}]" if overlap.accepted else ""
            lines.append(f"  {esc(_overlap_name(overlap))}{esc(note)}")
            lines.append(f"      {esc(_overlap_text(overlap))}")
    if report.errors:
        lines += ["", f"errors ({len(report.errors)})"]
        notes: list[str] = []
        for error in _per_file(report.errors, "record errors", notes, "  ", esc):
            retry = "retriable" if error.retriable else "not retriable"
            note = f"  [accepted {error.accepted}]" if error.accepted else ""
            lines.append(
                f"  {esc(error.source)}: {esc(error.message)} ({retry}){esc(note)}"
            )
        lines += notes
    if report.ignored:
        lines += ["", f"ignored ({len(report.ignored)})"]
        notes = []
        for item in _per_file(report.ignored, "ignored records", notes, "  ", esc):
            note = f"  [accepted {item.accepted}]" if item.accepted else ""
            lines.append(f"  {esc(item.source)}: {esc(item.reason)}{esc(note)}")
        lines += notes
    lines += ["", f"verdict: {esc(_verdict_line(report))}"]
    return "\n".join(lines) + "\n"


def _text_table(report: Report) -> list[str]:
    header = ("cluster", "account", *STATES)
    rows = [
        (
            escape_terminal(cluster) or "-",
            escape_terminal(account),
            *tuple(str(counts[state]) for state in STATES),
        )
        for (cluster, account), counts in _accounts(report)
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
    lines = ["", f"clusters ({len(report.clusters)}, {len(_down(report))} down)"]
    for c in report.clusters:
        lines.append(f"  {esc(_cluster_name(c))}  {c.outcome}  on {esc(c.target)}")
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
            else _cluster_label(h.cluster)
        )
        lines.append(f"  {esc(where)}  /healthz on {esc(h.target)}: {esc(h.error)}")
    return lines


def _cluster_label(cluster: str) -> str:
    return cluster or "(unnamed cluster)"


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
        lines.append(f"      {verdict.drift}: {esc(_drift_text(verdict))}")
    if verdict.own_state is not None:
        lines.append(f"      {esc(_own_text(verdict))}")
    lines.extend(f"      note: {esc(note)}" for note in verdict.notes)
    if verdict.accepted is not None:
        lines.append(f"      [accepted {esc(verdict.accepted)}]")


# --- json --------------------------------------------------------------------------------


PER_FILE: Final = 20
"""Record errors (and ignored records) the text and Markdown reports list per input
file; the rest are counted in one line (JSON, SARIF and JUnit list every one)."""


class _HasSource(Protocol):
    @property
    def source(self) -> str: ...


_Sourced = TypeVar("_Sourced", bound=_HasSource)


def _per_file(
    entries: Sequence[_Sourced],
    what: str,
    notes: list[str],
    indent: str,
    esc: Callable[[str], str],
) -> list[_Sourced]:
    """The first :data:`PER_FILE` entries of each file; a note per file for the rest."""
    shown: list[_Sourced] = []
    left: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for entry in entries:
        path = _split_source(entry.source)[0]
        seen[path] += 1
        if seen[path] <= PER_FILE:
            shown.append(entry)
        else:
            left[path] += 1
    notes.extend(
        f"{indent}... {count} more {what} in {esc(path)} (--format json lists every one)"
        for path, count in left.items()
    )
    return shown


def render_json(report: Report) -> str:
    """The report struct as indented JSON (deterministic key order).

    Args:
        report: the report to render.

    Returns:
        The JSON document and a newline.
    """
    raw = msgspec.json.encode(report, order="deterministic")
    return msgspec.json.format(raw, indent=2).decode() + "\n"


# --- markdown ----------------------------------------------------------------------------


def render_markdown(report: Report, *, fail_on: Iterable[str] | None = None) -> str:
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
        f"## assetgate: {md(_target_line(report))}",
        "",
        f"Catalogue `{report.catalogue.digest[:_DIGEST_PREFIX]}`; {_counts_line(summary)}.",
        "",
        f"**Verdict:** {md(_verdict_line(report))}.",
        "",
        _md_row(["cluster", "account", *STATES]),
        _md_row(["---", "---", *("---:" for _ in STATES)]),
    ]
    for (cluster, account), counts in _accounts(report):
        cells = [md(cluster), md(account), *(str(counts[s]) for s in STATES)]
        lines.append(_md_row(cells))
    if report.health:
        lines += [
            "",
            "### Health checks failing",
            "",
            "| cluster | target | asset | /healthz error |",
            "| --- | --- | --- | --- |",
        ]
        lines.extend(
            _md_row([md(h.cluster), md(h.target), md(h.asset), md(h.error)])
            for h in report.health
        )
    if report.clusters:
        lines += [
            "",
            "### Clusters",
            "",
            "| cluster | target | outcome | reason | caused by |",
        ]
        lines.append("| --- | --- | --- | --- | --- |")
        for c in report.clusters:
            cells = [
                md(c.cluster),
                md(c.target),
                c.outcome,
                md(c.reason or ""),
                md(", ".join(c.assets)),
            ]
            lines.append(_md_row(cells))
    findings = _findings(report)
    if findings:
        lines += ["", "### Findings", "", "| state | asset | reason | notes |"]
        lines.append("| --- | --- | --- | --- |")
        for state, group in _finding_groups(report).items():
            listed, left = _folded(group, fail_on)
            for v in listed:
                notes = _notes(v, mixed=bool(report.target.clusters))
                cells = [
                    v.state,
                    md(asset_id(v)),
                    md(v.reason or ""),
                    md("; ".join(notes)),
                ]
                lines.append(_md_row(cells))
            if left:
                lines.append(_md_row([state, _FOLD_NOTE.format(count=left), "", ""]))
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
            lines.append(_md_row(cells))
    if report.errors:
        lines += ["", "### Record errors", "", "| source | message | retriable |"]
        lines.append("| --- | --- | --- |")
        folded: list[str] = []
        for e in _per_file(report.errors, "record errors", folded, "", md):
            retry = "yes" if e.retriable else "no"
            note = f" (accepted {e.accepted})" if e.accepted else ""
            lines.append(_md_row([md(e.source), md(e.message + note), retry]))
        lines += [_md_row([note, "", ""]) for note in folded]
    if report.ignored:
        lines += ["", "### Ignored records", "", "| source | reason |"]
        lines.append("| --- | --- |")
        folded = []
        for i in _per_file(report.ignored, "ignored records", folded, "", md):
            note = f" (accepted {i.accepted})" if i.accepted else ""
            lines.append(_md_row([md(i.source), md(i.reason + note)]))
        lines += [_md_row([note, ""]) for note in folded]
    return fit_markdown("\n".join(lines) + "\n")


MARKDOWN_LIMIT: Final = 1024 * 1024
"""GitHub's limit on a step summary (``$GITHUB_STEP_SUMMARY``), in bytes."""


def fit_markdown(text: str, *, tail: int = 0, limit: int = MARKDOWN_LIMIT) -> str:
    """``text`` cut at a line to stay within ``limit`` bytes, saying what it left out.

    A Markdown report over GitHub's step-summary limit is not shown at all, so the
    lines past the limit are left out (the last ``tail`` lines are kept: a verdict
    at the end) and a note says how many, and where the whole report is.
    """
    size = len(text.encode())
    if size <= limit:
        return text
    lines = text.splitlines()
    ending = lines[len(lines) - tail :] if tail else []
    body = lines[: len(lines) - tail] if tail else lines
    budget = limit - _FIT_ROOM - sum(len(line.encode()) + 1 for line in ending)
    kept: list[str] = []
    for line in body:
        budget -= len(line.encode()) + 1
        if budget < 0:
            break
        kept.append(line)
    note = _FIT_NOTE.format(left=len(body) - len(kept), size=size, limit=limit)
    return "\n".join([*kept, "", note, "", *ending]).rstrip("\n") + "\n"


_FIT_ROOM: Final = 300  # bytes for the note and blank lines
_FIT_NOTE: Final = (
    "*{left} more lines left out: the whole report is {size:,} bytes, over GitHub's "
    "step-summary limit of {limit:,}; `--format json` lists everything.*"
)


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _notes(verdict: Verdict, *, mixed: bool) -> list[str]:
    notes: list[str] = []
    if mixed:
        notes.append(f"on {verdict.target}")
    if verdict.dropped_fields:
        notes.append(f"dropped: {', '.join(verdict.dropped_fields)}")
    if verdict.own_state is not None:
        notes.append(_own_text(verdict))
    if verdict.drift is not None:
        notes.append(f"{verdict.drift}: {_drift_text(verdict)}")
    if verdict.accepted is not None:
        notes.append(f"accepted {verdict.accepted}")
    return notes


# --- sarif -------------------------------------------------------------------------------

_SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_VERSION: Final = "2.1.0"

_SARIF_INDEX: Final = {r.name: index for index, r in enumerate(RULES)}

_SarifObject = dict[str, object]


def render_sarif(report: Report) -> str:
    """SARIF 2.1.0 for code scanning: one run, one rule per finding kind.

    Args:
        report: the report to render.

    Returns:
        The SARIF log as indented JSON and a newline. Results come in report order:
        assets (state, then drift), overlaps, record errors. Accepted findings carry
        an external suppression.
    """
    rules = [
        {
            "id": r.name,
            "name": r.name,
            "shortDescription": {"text": r.title},
            "fullDescription": {"text": r.text},
            "defaultConfiguration": {"level": r.level},
            "help": {"text": r.text},
        }
        for r in RULES
    ]
    results = _sarif_results(report)
    log = {
        "$schema": _SARIF_SCHEMA,
        "version": _SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": sarif_driver(rules)},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return msgspec.json.format(msgspec.json.encode(log), indent=2).decode() + "\n"


def _sarif_results(report: Report) -> list[_SarifObject]:
    """Every finding as a SARIF result, in report order (see :func:`render_sarif`)."""
    streams = {
        (v.cluster, v.account, v.stream): v for v in report.assets if v.kind == "stream"
    }
    sources = {asset_id(v): v.source for v in report.assets}
    results = [_cluster_result(c, sources) for c in _down(report)]
    results += [r for verdict in report.assets for r in _asset_results(verdict)]
    results.extend(_overlap_result(overlap, streams) for overlap in report.overlaps)
    results.extend(_error_result(error) for error in report.errors)
    results.extend(
        _result(
            "ignored",
            item.reason,
            [_location(item.source)],
            item.source,
            item.accepted,
        )
        for item in report.ignored
    )
    return results


# --- github --------------------------------------------------------------------------------

_GITHUB_LEVELS: Final = {"error": "error", "warning": "warning", "note": "notice"}


def render_github(report: Report) -> str:
    """GitHub Actions workflow commands: one annotation per finding, then the verdict.

    Each SARIF result (:func:`render_sarif`) becomes ``::error``, ``::warning`` or
    ``::notice`` with the record's ``file`` and ``line`` and the rule's title; accepted
    findings become notices that say so. The last line is the text report's verdict.
    """
    lines: list[str] = []
    for result in _sarif_results(report):
        rule = str(result["ruleId"])
        level = _GITHUB_LEVELS[str(result["level"])]
        message = str(result["message"]["text"])  # type: ignore[index]
        if "suppressions" in result:
            level = "notice"
            justification = result["suppressions"][0]["justification"]  # type: ignore[index]
            message = f"{message} ({justification})"
        properties = [
            f"title={_github_property(f'assetgate {rule}: ' + about(rule).title)}"
        ]
        ident = _github_ident(result)
        if ident is not None and rule not in OUTCOMES:  # a cluster's names itself
            message = f"{ident}: {message}"
        location = _github_location(result)
        if location is not None:
            path, line = location
            properties.insert(0, f"file={_github_property(path)}")
            if line is not None:
                properties.insert(1, f"line={line}")
        lines.append(f"::{level} {','.join(properties)}::{_github_data(message)}")
    lines.append(f"verdict: {escape_terminal(_verdict_line(report))}")
    return "\n".join(lines) + "\n"


def _github_ident(result: _SarifObject) -> str | None:
    """The asset a result is about (its logical location), if it names one."""
    locations = result.get("locations")
    first = locations[0] if isinstance(locations, list) and locations else None
    logical = first.get("logicalLocations") if isinstance(first, dict) else None
    if isinstance(logical, list) and logical and isinstance(logical[0], dict):
        return str(logical[0].get("fullyQualifiedName"))
    return None


def _github_location(result: _SarifObject) -> tuple[str, int | None] | None:
    locations = result.get("locations")
    if not isinstance(locations, list) or not locations:
        return None
    physical = (
        locations[0].get("physicalLocation") if isinstance(locations[0], dict) else None
    )
    if not isinstance(physical, dict):
        return None
    path = unquote(str(physical["artifactLocation"]["uri"]))
    region = physical.get("region")
    line = region.get("startLine") if isinstance(region, dict) else None
    return path, line if isinstance(line, int) else None


def _github_data(text: str) -> str:
    """A workflow command's message: control characters and ``%`` escaped."""
    # control characters (ESC, BEL, CR, LF...) as escape_terminal shows them, so no
    # line ends early; then the runner's own escape character
    return escape_terminal(text).replace("%", "%25")


def _github_property(text: str) -> str:
    """A workflow command's property value: also ``:`` and ``,`` escaped."""
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


def _result(
    rule: str,
    text: str,
    locations: list[_SarifObject],
    key: str,
    accepted: str | None = None,
) -> _SarifObject:
    """One result; ``key`` identifies the finding across runs (partial fingerprint)."""
    fingerprint = hashlib.sha256(f"{rule}\x00{key}".encode()).hexdigest()
    result: _SarifObject = {
        "ruleId": rule,
        "ruleIndex": _SARIF_INDEX[rule],
        "level": about(rule).level,
        "message": {"text": text},
        "locations": locations,
        "partialFingerprints": {"assetgate/v1": fingerprint},
    }
    if _accepted_for(accepted, rule):
        justification = f"accepted {accepted}"
        result["suppressions"] = [{"kind": "external", "justification": justification}]
    return result


def _asset_results(verdict: Verdict) -> list[_SarifObject]:
    """The state finding and the drift finding of one asset, when there are any."""
    ident = asset_id(verdict)
    where = [_location(verdict.source, ident)]
    results: list[_SarifObject] = []
    if verdict.state != "online":
        text = _reason(verdict)
        results.append(_result(verdict.state, text, where, ident, verdict.accepted))
    if verdict.drift is not None:
        text = _drift_text(verdict)
        results.append(_result(verdict.drift, text, where, ident, verdict.accepted))
    return results


def _overlap_result(
    overlap: Overlap, streams: dict[tuple[str, str, str], Verdict]
) -> _SarifObject:
    """Located at the first stream, with the second as a related location."""
    where: list[_SarifObject] = []
    for name in overlap.streams:
        verdict = streams.get((overlap.cluster, overlap.account, name))
        ident = f"{overlap.cluster}/{overlap.account}/{name}"
        where.append(_location(None if verdict is None else verdict.source, ident))
    text = _overlap_text(overlap)
    result = _result(
        "overlap", text, where[:1], _overlap_name(overlap), overlap.accepted
    )
    result["relatedLocations"] = [{"id": 1, **where[1]}]
    return result


def _cluster_result(outcome: ClusterOutcome, sources: dict[str, str]) -> _SarifObject:
    """A cluster that goes down, located at the assets that cause it."""
    where = [_location(sources.get(ident), ident) for ident in outcome.assets]
    text = f"cluster {_cluster_name(outcome)}: {outcome.reason or outcome.outcome}"
    return _result(
        outcome.outcome, text, where[:1] or [{}], f"cluster/{outcome.cluster}"
    )


def _error_result(error: ErrorEntry) -> _SarifObject:
    result = _result(
        "record-error",
        error.message,
        [_location(error.source)],
        error.source,
        error.accepted,
    )
    result["properties"] = {"retriable": error.retriable}
    return result


def _location(source: str | None, ident: str | None = None) -> _SarifObject:
    """A physical location (file and line of ``source``) and the asset's logical one."""
    location: _SarifObject = {}
    if source is not None:
        path, line = _split_source(source)
        uri = quote(_relative(path).replace("\\", "/"), safe="/")
        physical: _SarifObject = {"artifactLocation": {"uri": uri}}
        if line is not None:
            physical["region"] = {"startLine": line}
        location["physicalLocation"] = physical
    if ident is not None:
        location["logicalLocations"] = [
            {"fullyQualifiedName": ident, "kind": "resource"}
        ]
    return location


def sarif_driver(rules: Sequence[Mapping[str, object]]) -> _SarifObject:
    """SARIF's ``tool.driver``: assetgate, its version, its home page and ``rules``.

    ``informationUri`` is the package's ``Homepage`` project URL (``[project.urls]``
    in ``pyproject.toml``); it is left out while the package declares none.
    """
    from assetgate import __version__

    driver: _SarifObject = {"name": "assetgate", "version": __version__}
    uri = home_page(_project_urls())
    if uri is not None:
        driver["informationUri"] = uri
    driver["rules"] = list(rules)
    return driver


def home_page(project_urls: Iterable[str]) -> str | None:
    """The ``Homepage`` URL among a distribution's ``Project-URL`` entries, if any."""
    for entry in project_urls:
        label, _, url = entry.partition(",")
        if label.strip().lower().replace("-", "").replace("_", "") == "homepage":
            return url.strip() or None
    return None


@functools.cache
def _project_urls() -> tuple[str, ...]:
    """The installed package's ``Project-URL`` metadata entries (none when not installed)."""
    try:
        metadata = importlib.metadata.metadata("assetgate")
    except importlib.metadata.PackageNotFoundError:
        return ()
    return tuple(metadata.get_all("Project-URL") or ())


def _relative(path: str) -> str:
    """An absolute path under the working directory, relative to it (as CI shows files)."""
    if not Path(path).is_absolute():
        return path
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative


def _split_source(source: str) -> tuple[str, int | None]:
    """``file:LINE`` or ``file:LINE#n`` -> (file, LINE); anything else -> (source, None)."""
    match = _SOURCE_LINE.fullmatch(source)
    if match is None or int(match["line"]) < 1:
        return source, None
    return match["path"], int(match["line"])


# --- junit -------------------------------------------------------------------------------

# characters XML 1.0 forbids that escape_terminal leaves alone (the rest it escapes)
_XML_FORBIDDEN: Final = re.compile("[\ufffe\uffff]")


def render_junit(report: Report) -> str:
    """JUnit XML: one suite per cluster/account, one test case per asset.

    Non-online assets fail (``type`` is the state), accepted ones are skipped;
    overlaps form the suite ``overlaps`` and record errors the suite ``inventory``.
    Untrusted text is escaped as by :func:`escape_terminal`, so that no character
    XML 1.0 forbids (nor a terminal escape sequence) reaches the document.

    Args:
        report: the report to render.

    Returns:
        The XML document with its declaration and a trailing newline.
    """
    root = ET.Element("testsuites", name="assetgate")
    if report.clusters:
        suite = _suite(root, "clusters")
        for c in report.clusters:
            case = _case(suite, "cluster", _cluster_name(c))
            if c.outcome != "ok":
                message = f"{c.outcome}: {c.reason}; caused by {', '.join(c.assets)}"
                _child(case, "failure", message, message=message, type=c.outcome)
    down = {c.cluster: c for c in _down(report)}
    by_account: dict[tuple[str, str], list[Verdict]] = {}
    for verdict in report.assets:
        by_account.setdefault((verdict.cluster, verdict.account), []).append(verdict)
    for (cluster, account), verdicts in sorted(by_account.items()):
        suite = _suite(root, f"{cluster}/{account}" if cluster else account)
        for v in verdicts:
            case = _case(suite, v.kind, asset_id(v), v.source)
            if v.state == "online":
                continue
            if _accepted_for(v.accepted, v.state):
                _child(case, "skipped", message=f"accepted {v.accepted}")
            else:
                message = f"{v.state}: {_reason(v)}"
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
            case = _case(suite, "overlap", _overlap_name(o))
            if o.accepted is not None:
                _child(case, "skipped", message=f"accepted {o.accepted}")
            else:
                _child(case, "failure", message=_overlap_text(o), type="overlap")
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
        path, line = _split_source(source)
        attributes["file"] = _xml(_relative(path))
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
