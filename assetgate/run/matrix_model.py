"""The result of a matrix run (``check --target all``): rows, floors, findings.

:mod:`assetgate.run.matrix` makes it and re-exports it; ``check --target all --format
json`` serialises :class:`Matrix`.
"""

from __future__ import annotations

from typing import Final

import msgspec

from assetgate.inventory.read import Ignored  # noqa: TC001 - msgspec resolves it at runtime
from assetgate.judge.fixes import Fix  # noqa: TC001 - msgspec resolves it at runtime
from assetgate.judge.gate import Mode  # noqa: TC001 - msgspec resolves it at runtime
from assetgate.run.collect import (  # noqa: TC001 - msgspec resolves them at runtime
    Acceptance,
    CatalogueInfo,
    ErrorEntry,
    InventoryInfo,
)

__all__ = [
    "LOST",
    "NOT_LOSSLESS",
    "Floor",
    "Matrix",
    "MatrixCell",
    "MatrixFinding",
    "MatrixRow",
    "Pin",
    "Summary",
]

LOST: Final = frozenset({"degraded", "unloadable", "detached", "unavailable"})
"""States that lose an asset (or what it stores) until something is changed."""
NOT_LOSSLESS: Final = LOST | {"offline"}


class MatrixCell(msgspec.Struct, frozen=True, kw_only=True):
    """One cluster on one release: the count of each state and the cluster outcome."""

    cluster: str
    outcome: str
    online: int
    offline: int
    degraded: int
    unloadable: int
    detached: int
    unavailable: int


class MatrixRow(msgspec.Struct, frozen=True, kw_only=True):
    """One release (``release`` to ``through``: the patches that behave alike).

    ``through`` is ``None`` when later patches of the line are not known to differ;
    ``failing`` counts the findings that fail a single-target run on it.
    """

    release: str
    through: str | None
    api_level: int | None
    clusters: list[MatrixCell]
    overlaps: int
    failing: int


class Pin(msgspec.Struct, frozen=True, kw_only=True):
    """An asset that keeps a floor where it is: what it does on the release below."""

    asset: str
    floor: str
    release: str
    state: str
    reason: str | None


class Floor(msgspec.Struct, frozen=True, kw_only=True):
    """The rollback floors of a cluster (``cluster`` ``None``: the whole inventory).

    Attributes:
        lossless: the lowest judged release where every asset is online and the
            cluster outcome is ok; ``None`` when none is.
        offline_only: the lowest judged release where assets at most go offline.
        pinned_by: the assets that keep ``lossless`` up: those not online on the
            judged release just below it (on the newest one when it is ``None``).
        pins: what each pinning asset does there, for both floors.
    """

    cluster: str | None
    lossless: str | None
    offline_only: str | None
    pinned_by: list[str]
    pins: list[Pin]


class MatrixFinding(msgspec.Struct, frozen=True, kw_only=True):
    """One finding and the releases it applies to.

    ``rule`` is what ``--fail-on`` and ``--accept`` name (a state, a drift flag, a
    cluster outcome or ``overlap``); ``asset`` an asset id, a cluster name (outcomes)
    or ``cluster/account A ~ B`` (overlaps). The assets a cluster outcome makes
    ``unavailable`` are not findings of their own: the rows count them and the
    cluster's finding names the cause.
    """

    code: str
    rule: str
    asset: str
    cluster: str
    reason: str | None
    check: str | None
    releases: list[str]
    fixes: list[Fix]
    accepted: str | None = None


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """Counts that do not depend on the release: ``records == assets + errors + ignored``."""

    records: int
    assets: int
    errors: int
    ignored: int
    releases: int


MATRIX_FORMAT: Final = "assetgate-matrix/1"
"""The ``format`` of a matrix (JSON Schema: ``assetgate schema matrix``)."""


class Matrix(msgspec.Struct, frozen=True, kw_only=True):
    """The result of :func:`check_matrix`; ``check --target all --format json``."""

    format: str = MATRIX_FORMAT
    mode: Mode
    catalogue: CatalogueInfo
    inventory: InventoryInfo
    summary: Summary
    releases: list[MatrixRow]
    floor: Floor
    floors: list[Floor]
    findings: list[MatrixFinding]
    errors: list[ErrorEntry]
    ignored: list[Ignored]
    accepted: list[Acceptance]
