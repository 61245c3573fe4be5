"""SARIF 2.1.0 for code scanning: one run, one rule per finding kind."""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING, Final
from urllib.parse import quote

import msgspec

from assetgate.judge.fixes import CODES
from assetgate.judge.gate import asset_id
from assetgate.judge.rules import RULES, about
from assetgate.report.common import (
    accepted_for,
    cluster_name,
    down_clusters,
    drift_text,
    escape_terminal,
    overlap_name,
    overlap_text,
    pretty_json,
    reason_text,
    relative_path,
    split_source,
)
from assetgate.report.matrix import (
    spans,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from assetgate.judge.gate import Verdict
    from assetgate.judge.outcomes import ClusterOutcome
    from assetgate.run.collect import ErrorEntry, Overlap, Report
    from assetgate.run.matrix import Matrix

__all__ = ["NAME", "ORDER", "SUFFIX", "render", "render_matrix"]


NAME: Final = "sarif"
ORDER: Final = 3
SUFFIX: Final = "sarif"
"""The golden file's extension, and the scan's ``report.SUFFIX``."""


_SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_VERSION: Final = "2.1.0"

_SARIF_INDEX: Final = {r.name: index for index, r in enumerate(RULES)}

SarifObject = dict[str, object]
"""A SARIF object (results, locations) as JSON-ready data."""


def render(report: Report, *, fail_on: Iterable[str] | None = None) -> str:
    """SARIF 2.1.0 for code scanning: one run, one rule per finding kind.

    Args:
        report: the report to render.
        fail_on: ignored: this format lists every finding.

    Returns:
        The SARIF log as indented JSON and a newline. Results come in report order:
        assets (state, then drift), overlaps, record errors. Accepted findings carry
        an external suppression.
    """
    del fail_on  # every finding is listed: nothing is folded
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
    results = sarif_results(report)
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
    return pretty_json(log)


def sarif_results(report: Report) -> list[SarifObject]:
    """Every finding as a SARIF result, in report order (see :func:`render`)."""
    streams = {
        (v.cluster, v.account, v.stream): v for v in report.assets if v.kind == "stream"
    }
    sources = {asset_id(v): v.source for v in report.assets}
    results = [_cluster_result(c, sources) for c in down_clusters(report)]
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


def _result(
    rule: str,
    text: str,
    locations: list[SarifObject],
    key: str,
    accepted: str | None = None,
) -> SarifObject:
    """One result; ``key`` identifies the finding across runs (partial fingerprint)."""
    fingerprint = hashlib.sha256(f"{rule}\x00{key}".encode()).hexdigest()
    result: SarifObject = {
        "ruleId": rule,
        "ruleIndex": _SARIF_INDEX[rule],
        "level": about(rule).level,
        "message": {"text": text},
        "locations": locations,
        "partialFingerprints": {"assetgate/v1": fingerprint},
    }
    if accepted_for(accepted, rule):
        justification = f"accepted {accepted}"
        result["suppressions"] = [{"kind": "external", "justification": justification}]
    return result


def _asset_results(verdict: Verdict) -> list[SarifObject]:
    """The state finding and the drift finding of one asset, when there are any."""
    ident = asset_id(verdict)
    where = [_location(verdict.source, ident)]
    results: list[SarifObject] = []
    if verdict.state != "online":
        text = reason_text(verdict)
        results.append(_result(verdict.state, text, where, ident, verdict.accepted))
    if verdict.drift is not None:
        text = drift_text(verdict)
        results.append(_result(verdict.drift, text, where, ident, verdict.accepted))
    return results


def _overlap_result(
    overlap: Overlap, streams: dict[tuple[str, str, str], Verdict]
) -> SarifObject:
    """Located at the first stream, with the second as a related location."""
    where: list[SarifObject] = []
    for name in overlap.streams:
        verdict = streams.get((overlap.cluster, overlap.account, name))
        ident = f"{overlap.cluster}/{overlap.account}/{name}"
        where.append(_location(None if verdict is None else verdict.source, ident))
    text = overlap_text(overlap)
    result = _result(
        "overlap", text, where[:1], overlap_name(overlap), overlap.accepted
    )
    result["relatedLocations"] = [{"id": 1, **where[1]}]
    return result


def _cluster_result(outcome: ClusterOutcome, sources: dict[str, str]) -> SarifObject:
    """A cluster that goes down, located at the assets that cause it."""
    where = [_location(sources.get(ident), ident) for ident in outcome.assets]
    text = f"cluster {cluster_name(outcome)}: {outcome.reason or outcome.outcome}"
    return _result(
        outcome.outcome, text, where[:1] or [{}], f"cluster/{outcome.cluster}"
    )


def _error_result(error: ErrorEntry) -> SarifObject:
    result = _result(
        "record-error",
        error.message,
        [_location(error.source)],
        error.source,
        error.accepted,
    )
    result["properties"] = {"retriable": error.retriable}
    return result


def _location(source: str | None, ident: str | None = None) -> SarifObject:
    """A physical location (file and line of ``source``) and the asset's logical one."""
    location: SarifObject = {}
    if source is not None:
        path, line = split_source(source)
        uri = quote(relative_path(path).replace("\\", "/"), safe="/")
        physical: SarifObject = {"artifactLocation": {"uri": uri}}
        if line is not None:
            physical["region"] = {"startLine": line}
        location["physicalLocation"] = physical
    if ident is not None:
        location["logicalLocations"] = [
            {"fullyQualifiedName": ident, "kind": "resource"}
        ]
    return location


def sarif_driver(rules: Sequence[Mapping[str, object]]) -> SarifObject:
    """SARIF's ``tool.driver``: assetgate, its version, its home page and ``rules``.

    ``informationUri`` is the package's ``Homepage`` project URL (``[project.urls]``
    in ``pyproject.toml``); it is left out while the package declares none.
    """
    from assetgate import __version__

    driver: SarifObject = {"name": "assetgate", "version": __version__}
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
    import importlib.metadata  # about 10 ms: imported when SARIF is written, not at start

    try:
        metadata = importlib.metadata.metadata("assetgate")
    except importlib.metadata.PackageNotFoundError:
        return ()
    return tuple(metadata.get_all("Project-URL") or ())


def render_matrix(matrix: Matrix) -> str:
    """A matrix run: one result per finding, its rule the finding's code."""
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
    return pretty_json(log)
