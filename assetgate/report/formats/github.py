"""GitHub Actions workflow commands: one annotation per finding, then the verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import unquote

from assetgate.judge.outcomes import OUTCOMES
from assetgate.judge.rules import about
from assetgate.report.common import (
    escape_terminal,
    verdict_line,
)
from assetgate.report.formats.sarif import SarifObject, sarif_results

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assetgate.run.collect import Report

__all__ = ["NAME", "ORDER", "SUFFIX", "render"]


NAME: Final = "github"
ORDER: Final = 5
SUFFIX: Final = "github.txt"
"""The golden file's extension, and the scan's ``report.SUFFIX``."""


# --- github --------------------------------------------------------------------------------

_GITHUB_LEVELS: Final = {"error": "error", "warning": "warning", "note": "notice"}


def render(report: Report, *, fail_on: Iterable[str] | None = None) -> str:
    """GitHub Actions workflow commands: one annotation per finding, then the verdict.

    Each SARIF result (:func:`~assetgate.report.formats.sarif.render`) becomes ``::error``, ``::warning`` or
    ``::notice`` with the record's ``file`` and ``line`` and the rule's title; accepted
    findings become notices that say so. The last line is the text report's verdict.
    """
    del fail_on  # every finding is listed: nothing is folded
    lines: list[str] = []
    for result in sarif_results(report):
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
    lines.append(f"verdict: {escape_terminal(verdict_line(report))}")
    return "\n".join(lines) + "\n"


def _github_ident(result: SarifObject) -> str | None:
    """The asset a result is about (its logical location), if it names one."""
    locations = result.get("locations")
    first = locations[0] if isinstance(locations, list) and locations else None
    logical = first.get("logicalLocations") if isinstance(first, dict) else None
    if isinstance(logical, list) and logical and isinstance(logical[0], dict):
        return str(logical[0].get("fullyQualifiedName"))
    return None


def _github_location(result: SarifObject) -> tuple[str, int | None] | None:
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
