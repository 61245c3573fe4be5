"""What the formats of a matrix run (``check --target all`` or ``A..B``) share.

Text and Markdown show one row per release and cluster, then the floors, then each
finding with the releases it applies to and its fixes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    from collections.abc import Sequence

    from assetgate.run.matrix import Floor, Matrix, MatrixFinding, MatrixRow

__all__ = [
    "NAME_COLUMNS",
    "SHOWN_PINS",
    "cluster_label",
    "finding_head",
    "floor_line",
    "matrix_verdict",
    "pin_lines",
    "row_label",
    "spans",
]


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


def row_label(row: MatrixRow) -> str:
    """A row's releases: ``2.12.0-2.12.3``."""
    return spans([row.release], [row])


def cluster_label(cluster: str | None) -> str:
    """A cluster's name in a matrix (``all``, ``(unnamed cluster)``)."""
    if cluster is None:
        return "inventory"
    return shown_cluster(cluster)


def floor_line(floor: Floor) -> str:
    """A floor in one line: the lossless and the offline-only release."""
    lossless = floor.lossless or "none"
    offline = floor.offline_only or "none"
    return (
        f"{cluster_label(floor.cluster)}: lossless {lossless}, offline-only {offline}"
    )


SHOWN_PINS: Final = 10
NAME_COLUMNS: Final = 2  # the text table's left-aligned columns: release, cluster


def pin_lines(floor: Floor, bullet: str) -> list[str]:
    """The assets that pin a floor, with their reasons (the first few)."""
    lines = []
    for pin in floor.pins[:SHOWN_PINS]:
        reason = f": {pin.reason}" if pin.reason else ""
        lines.append(
            f"{bullet}{pin.floor} pinned by {pin.asset} ({pin.state} on {pin.release}{reason})"
        )
    if len(floor.pins) > SHOWN_PINS:
        lines.append(
            f"{bullet}... and {len(floor.pins) - SHOWN_PINS} more (JSON has all)"
        )
    return lines


def finding_head(finding: MatrixFinding, rows: Sequence[MatrixRow]) -> str:
    """A finding's heading: code, rule, asset and the releases it applies to."""
    accepted = f" [accepted {finding.accepted}]" if finding.accepted else ""
    return (
        f"{finding.code} {finding.rule} {finding.asset} on "
        f"{spans(finding.releases, rows)}{accepted}"
    )


def matrix_verdict(matrix: Matrix) -> str:
    """The matrix's verdict line."""
    failing = [row for row in matrix.releases if row.failing]
    floor = matrix.floor
    return (
        f"verdict: {len(failing)} of {len(matrix.releases)} releases with findings; "
        f"lowest lossless release: {floor.lossless or 'none'}, "
        f"lowest offline-only release: {floor.offline_only or 'none'}"
    )
