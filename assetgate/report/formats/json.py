"""The JSON format: the result structs themselves, deterministic key order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assetgate.report.common import pretty_json

if TYPE_CHECKING:
    from collections.abc import Iterable

    from assetgate.run.collect import Report
    from assetgate.run.matrix import Matrix
    from assetgate.run.rolling import (
        Rolling,
    )

__all__ = ["NAME", "ORDER", "SUFFIX", "render", "render_matrix", "render_rolling"]


NAME: Final = "json"
ORDER: Final = 1
SUFFIX: Final = "json"
"""The golden file's extension, and the scan's ``report.SUFFIX``."""


def render(report: Report, *, fail_on: Iterable[str] | None = None) -> str:
    """The report struct as indented JSON (deterministic key order).

    Args:
        report: the report to render.
        fail_on: ignored: this format lists every finding.

    Returns:
        The JSON document and a newline.
    """
    del fail_on  # every finding is listed: nothing is folded
    return pretty_json(report, deterministic=True)


def render_matrix(matrix: Matrix) -> str:
    """The matrix struct as indented JSON."""
    return pretty_json(matrix)


def render_rolling(rolling: Rolling) -> str:
    """The rolling struct as indented JSON."""
    return pretty_json(rolling)
