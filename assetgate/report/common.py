"""What the report formats share: escaping, wording, folding and sources.

Names, subjects and messages come from the inventory and are untrusted: each format
escapes them for its medium (terminal control sequences, Markdown table syntax, XML).
Nothing here prints, opens files or reads the environment.

Size: over the ~400-line guide because the wording every format shares (the verdict
sentence, findings, escaping, folding, sources) is stated once, here.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, TypeVar, assert_never

import msgspec

from assetgate.judge.gate import STATES
from assetgate.judge.rules import accepted_rules, failing_rules, failing_set
from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from assetgate.judge.gate import Verdict
    from assetgate.judge.outcomes import ClusterOutcome
    from assetgate.run.collect import Overlap, Report, Summary, TargetInfo

__all__ = [
    "DIGEST_PREFIX",
    "FINDING_STATES",
    "FOLDED_SHOWN",
    "FOLD_NOTE",
    "MARKDOWN_LIMIT",
    "OUTCOME_HEAD",
    "PER_FILE",
    "Targeted",
    "accepted_for",
    "account_counts",
    "assets_line",
    "cluster_name",
    "counts_line",
    "down_clusters",
    "drift_text",
    "escape_markdown",
    "escape_terminal",
    "finding_groups",
    "fit_markdown",
    "fold_findings",
    "md_row",
    "outcome_row",
    "overlap_name",
    "overlap_text",
    "own_text",
    "per_file",
    "plural",
    "pretty_json",
    "reason_text",
    "relative_path",
    "split_source",
    "target_line",
    "verdict_line",
    "verdict_notes",
    "verdict_words",
]


FINDING_STATES: Final = tuple(state for state in STATES if state != "online")
DIGEST_PREFIX: Final = 12
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


def accepted_for(accepted: str | None, kind: str) -> bool:
    """Whether an acceptance ``RULE:ASSET`` covers this kind of finding."""
    if accepted is None:
        return False
    return bool(accepted_rules(accepted) & {kind, "*"})


def reason_text(verdict: Verdict) -> str:
    """The server's reason verbatim; degraded assets have none, so name what is lost."""
    if verdict.reason is not None:
        return verdict.reason
    if verdict.dropped_fields:
        return f"loaded with fields dropped: {', '.join(verdict.dropped_fields)}"
    return verdict.state


def finding_groups(report: Report) -> dict[str, list[Verdict]]:
    """Assets that are not online, then online ones with a level-stamp drift or a note.

    Grouped by state in :data:`STATES` order (online last), report order within.
    """
    groups: dict[str, list[Verdict]] = {s: [] for s in (*FINDING_STATES, "online")}
    for verdict in report.assets:
        if verdict.state != "online" or verdict.drift is not None or verdict.notes:
            groups[verdict.state].append(verdict)
    return groups


FOLDED_SHOWN: Final = 10
"""Findings per state that the text and Markdown formats list when they do not fail
the run (``render(..., fail_on=...)``); the rest are counted."""
FOLD_NOTE: Final = "... {count} more that do not fail the run (--show all lists them)"


def fold_findings(
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


def account_counts(report: Report) -> list[tuple[tuple[str, str], Counter[str]]]:
    """State counts per (cluster, account), sorted."""
    cells = Counter((v.cluster, v.account, v.state) for v in report.assets)
    counts: dict[tuple[str, str], Counter[str]] = {}
    for (cluster, account, state), count in cells.items():
        key = (cluster, account)
        if key not in counts:
            counts[key] = Counter()
        counts[key][state] = count
    return sorted(counts.items())


class Targeted(Protocol):
    """Anything that names its target: a report, or a scan's summary."""

    @property
    def target(self) -> TargetInfo:
        """The target it was judged against."""
        ...


def target_line(report: Targeted) -> str:
    """The target line: the version, or each cluster's, and the mode."""
    target = report.target
    if target.clusters:
        pairs = ", ".join(f"{c}={v}" for c, v in sorted(target.clusters.items()))
        return f"target {target.version} ({pairs}), {target.mode} mode"
    level = "none" if target.api_level is None else str(target.api_level)
    return f"target {target.version} (API level {level}), {target.mode} mode"


def drift_text(verdict: Verdict) -> str:
    """What a verdict's drift flag means for its stamp, in words."""
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


def overlap_name(overlap: Overlap) -> str:
    """An overlap's name: ``cluster/account/A ~ B``."""
    return f"{overlap.cluster}/{overlap.account}: {overlap.streams[0]} ~ {overlap.streams[1]}"


def overlap_text(overlap: Overlap) -> str:
    """An overlap in words: the streams, their subjects and any offline side."""
    first, second = overlap.subjects
    text = f"subjects {first!r} and {second!r} overlap"
    if overlap.offline:
        text += f" (offline: {', '.join(overlap.offline)})"
    return text


def down_clusters(report: Report) -> list[ClusterOutcome]:
    """Clusters whose JetStream the target takes down as a whole."""
    return [c for c in report.clusters if c.outcome != "ok"]


def cluster_name(outcome: ClusterOutcome) -> str:
    """A cluster's name as reports show it (``(unnamed cluster)`` for none)."""
    return shown_cluster(outcome.cluster)


def own_text(verdict: Verdict) -> str:
    """What an ``unavailable`` asset would be with its cluster up."""
    reason = f": {verdict.own_reason}" if verdict.own_reason is not None else ""
    return f"with its cluster up: {verdict.own_state}{reason}"


def verdict_line(report: Report) -> str:
    """The report's verdict in one sentence (what the text report's ``verdict:`` says)."""
    drift = sum(1 for v in report.assets if v.drift is not None)
    return verdict_words(
        down_clusters(report), len(report.health), report.summary, drift
    )


def verdict_words(
    down: Sequence[ClusterOutcome], health: int, summary: Summary, drift: int
) -> str:
    """:func:`verdict_line` from its parts: down clusters, /healthz failures, counts.

    ``drift``: how many assets carry a level-stamp drift flag. A scan too large for
    its driver to hold the report words its verdict from aggregates with this.
    """
    head = ""
    if down:
        named = ", ".join(f"{cluster_name(c)} ({c.outcome})" for c in down)
        noun = "cluster" if len(down) == 1 else "clusters"
        head = f"{len(down)} {noun} down: {named}; "
    if health:
        head += f"/healthz fails ({plural(health, 'asset', 'assets')} not recovered); "
    return head + assets_line(summary, drift)


def assets_line(summary: Summary, drift: int) -> str:
    """The verdict sentence's account of the assets and what fails."""
    parts = [f"{getattr(summary, state)} {state}" for state in FINDING_STATES]
    parts = [part for part in parts if not part.startswith("0 ")]
    bad = summary.assets - summary.online
    if summary.assets == 0:
        return (
            f"no stream or consumer to judge in {plural(summary.records, 'record', 'records')}"
            f" ({plural(summary.errors, 'record error', 'record errors')}, "
            f"{summary.ignored} ignored): nothing was checked"
        )
    head = (
        f"{bad} of {summary.assets} assets not online ({', '.join(parts)})"
        if bad
        else f"all {summary.assets} assets online"
    )
    tail = [
        plural(drift, "level-stamp drift", "level-stamp drifts"),
        plural(summary.overlaps, "overlap", "overlaps"),
        plural(summary.errors, "record error", "record errors"),
    ]
    accepted = f"; {summary.accepted} accepted" if summary.accepted else ""
    return f"{head}, {', '.join(tail)}{accepted}"


def counts_line(summary: Summary) -> str:
    """The counts of records, assets per state, errors and ignored records."""
    return (
        f"{plural(summary.records, 'record', 'records')}: "
        f"{plural(summary.assets, 'asset', 'assets')}, "
        f"{plural(summary.errors, 'record error', 'record errors')}, "
        f"{summary.ignored} ignored"
    )


def plural(count: int, one: str, many: str) -> str:
    """``3 assets``, ``1 asset``."""
    return f"{'no' if count == 0 else count} {one if count == 1 else many}"


PER_FILE: Final = 20
"""Record errors (and ignored records) the text and Markdown reports list per input
file; the rest are counted in one line (JSON, SARIF and JUnit list every one)."""


class _HasSource(Protocol):
    @property
    def source(self) -> str: ...


_Sourced = TypeVar("_Sourced", bound=_HasSource)


def per_file(
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
        path = split_source(entry.source)[0]
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


def pretty_json(value: object, *, deterministic: bool = False) -> str:
    """``value`` as JSON indented by two spaces, with a final newline.

    ``deterministic``: keys of dicts sorted (msgspec's ``order="deterministic"``).
    """
    raw = (
        msgspec.json.encode(value, order="deterministic")
        if deterministic
        else msgspec.json.encode(value)
    )
    return msgspec.json.format(raw, indent=2).decode() + "\n"


def md_row(cells: Sequence[str]) -> str:
    """One Markdown table row of already escaped cells."""
    return "| " + " | ".join(cells) + " |"


OUTCOME_HEAD: Final = (
    "| cluster | target | outcome | reason | caused by |",
    "| --- | --- | --- | --- | --- |",
)
"""The head of the Markdown table of cluster outcomes (:func:`outcome_row`)."""


def outcome_row(outcome: ClusterOutcome) -> str:
    """A cluster's outcome as a row of the Markdown table under :data:`OUTCOME_HEAD`."""
    return md_row(
        [
            escape_markdown(outcome.cluster),
            escape_markdown(outcome.target),
            outcome.outcome,
            escape_markdown(outcome.reason or ""),
            escape_markdown(", ".join(outcome.assets)),
        ]
    )


def verdict_notes(verdict: Verdict, *, mixed: bool) -> list[str]:
    """The notes of a verdict's line: target, dropped fields, own state, drift, acceptance."""
    notes: list[str] = []
    if mixed:
        notes.append(f"on {verdict.target}")
    if verdict.dropped_fields:
        notes.append(f"dropped: {', '.join(verdict.dropped_fields)}")
    if verdict.own_state is not None:
        notes.append(own_text(verdict))
    if verdict.drift is not None:
        notes.append(f"{verdict.drift}: {drift_text(verdict)}")
    if verdict.accepted is not None:
        notes.append(f"accepted {verdict.accepted}")
    return notes


def relative_path(path: str) -> str:
    """An absolute path under the working directory, relative to it (as CI shows files)."""
    if not Path(path).is_absolute():
        return path
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative


def split_source(source: str) -> tuple[str, int | None]:
    """``file:LINE`` or ``file:LINE#n`` -> (file, LINE); anything else -> (source, None)."""
    match = _SOURCE_LINE.fullmatch(source)
    if match is None or int(match["line"]) < 1:
        return source, None
    return match["path"], int(match["line"])
