"""Every release at once: the matrix, the rollback floors, findings with their fixes.

:func:`check_matrix` judges an inventory against every release the catalogue
distinguishes (:meth:`~assetgate.catalogue.levels.Catalogue.releases`), or a range of them, with
the very pipeline of :func:`~assetgate.run.check.check`, so each row equals the report of a
single-target run. Releases that treat stored assets alike (the same release line,
switches, load-time checks and, in cluster mode, cluster outcomes) are judged once.

From the rows come, per cluster and for the whole inventory, the two floors: the lowest
release where nothing is lost, and the lowest where assets at most go offline (rolling
forward brings them back), with the assets that pin each floor. Each finding names the
releases it applies to, carries a stable code and the fixes of :mod:`assetgate.judge.fixes`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Final

import msgspec
from packaging.version import InvalidVersion, Version

from assetgate.catalogue.levels import load_catalogue
from assetgate.run.bulk import without_cyclic_gc
from assetgate.run.collect import parse_accept
from assetgate.run.matrix_build import Builder
from assetgate.run.matrix_model import (
    LOST,
    NOT_LOSSLESS,
    Floor,
    Matrix,
    MatrixCell,
    MatrixFinding,
    MatrixRow,
    Pin,
)
from assetgate.run.multi import judge_releases
from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Sequence

    from assetgate.catalogue.levels import Catalogue, ServerProfile
    from assetgate.inventory.read import Asset, Ignored, RecordError
    from assetgate.judge.gate import Mode
    from assetgate.run.progress import Progress

__all__ = [
    "ALL_RELEASES",
    "LOST",
    "Floor",
    "Matrix",
    "MatrixCell",
    "MatrixFinding",
    "MatrixRow",
    "Pin",
    "check_matrix",
    "is_release_set",
    "matrix_failures",
    "select_releases",
]

ALL_RELEASES: Final = "all"


def is_release_set(text: str) -> bool:
    """``all`` or a range ``A..B`` (either end may be left out) rather than a version."""
    return text.strip() == ALL_RELEASES or ".." in text


def select_releases(text: str, catalogue: Catalogue) -> list[str]:
    """The releases of ``all`` or ``A..B``, oldest first.

    A range holds every release the catalogue distinguishes from A to B, and A itself
    (standing for its range) when the catalogue does not name it.

    Raises:
        ValueError: a malformed range, or one that holds no release.
        InvalidServerVersion, UnknownServerVersion: an end is not a known release.
    """
    known = list(catalogue.releases())
    spec = text.strip()
    if spec == ALL_RELEASES:
        return known
    low_text, sep, high_text = spec.partition("..")
    if not sep or ".." in high_text:
        msg = f"invalid release range: {text!r} (use all, A..B, A.. or ..B)"
        raise ValueError(msg)
    low = catalogue.server(low_text).version.text if low_text.strip() else None
    high = catalogue.server(high_text).version.text if high_text.strip() else None
    if low is not None and high is not None and Version(low) > Version(high):
        msg = f"invalid release range: {text!r} ({low} is above {high})"
        raise ValueError(msg)
    chosen = [
        release
        for release in known
        if (low is None or Version(release) >= Version(low))
        and (high is None or Version(release) <= Version(high))
    ]
    if low is not None and low not in chosen:
        chosen.insert(0, low)
    return chosen


def check_matrix(
    inventory: Iterable[str | os.PathLike[str] | Asset | RecordError | Ignored],
    *,
    releases: str | Sequence[str] = ALL_RELEASES,
    mode: Mode = "cluster",
    accept: Sequence[str] = (),
    fail_on: Iterable[str] = (),
    catalogue: Catalogue | None = None,
    progress: Progress | None = None,
) -> Matrix:
    """Judge an inventory against many releases at once.

    Args:
        inventory: as for :func:`~assetgate.run.check.check`.
        releases: ``"all"``, a range ``"A..B"`` or the versions themselves.
        mode: ``"single"`` or ``"cluster"``.
        accept: ``RULE:ASSET`` exceptions, applied on every release.
        fail_on: what else fails a single-target run (each row's ``failing``).
        catalogue: the level catalogue (default: the packaged one).
        progress: called now and then with the phase and the records so far.

    The judging runs in this process (no ``workers`` yet).

    Raises:
        ValueError: a malformed range or acceptance.
        InvalidServerVersion, UnknownServerVersion: a release the catalogue lacks.
    """
    cat = catalogue if catalogue is not None else load_catalogue()
    if isinstance(releases, str):
        rows = select_releases(releases, cat)
    else:
        rows = sorted({cat.server(r).version.text for r in releases}, key=Version)
    if not rows:
        msg = "no release to judge"
        raise ValueError(msg)
    high = releases.partition("..")[2].strip() if isinstance(releases, str) else ""
    cap = cat.server(high).version.text if high else None
    rules = [parse_accept(item) for item in accept]
    # releases that treat stored assets alike are judged once
    groups: dict[bytes, list[str]] = defaultdict(list)
    for release in rows:
        groups[_behaviour(cat.server(release), mode)].append(release)
    ordered = sorted(groups.values(), key=lambda members: Version(members[0]))
    builder = Builder(rows, mode, cat, cap=cap)
    with without_cyclic_gc():
        results = judge_releases(
            inventory,
            [cat.server(members[0]) for members in ordered],
            mode,
            cat,
            rules=rules,
            fail_on=tuple(fail_on),
            light=True,
            progress=progress,
        )
        for members, result in zip(ordered, results, strict=True):
            for release in members:
                builder.add(release, result)
        return builder.build()


def matrix_failures(matrix: Matrix, floor_above: str | None = None) -> list[str]:
    """What fails a matrix run: each release's findings, then the floor rule.

    A release fails as a single-target run on it would (``failing``). With
    ``floor_above``, each cluster whose lossless floor is above that release, or
    none, fails too, and so does the release itself when it loses something (a floor
    below it would not help a rollback to it).
    """
    found = [
        f"{row.release}: {row.failing} finding(s)"
        for row in matrix.releases
        if row.failing
    ]
    if floor_above is None:
        return found
    limit = Version(floor_above)
    for floor in matrix.floors:
        name = shown_cluster(floor.cluster)
        if floor.lossless is None:
            found.append(f"floor-above={floor_above}: {name} has no lossless release")
        elif Version(floor.lossless) > limit:
            found.append(
                f"floor-above={floor_above}: {name}'s lowest lossless release is "
                f"{floor.lossless}"
            )
    row = _row_of(matrix.releases, floor_above)
    if row is not None:
        for cell in row.clusters:
            lost = sum(getattr(cell, state) for state in NOT_LOSSLESS)
            if lost or cell.outcome != "ok":
                found.append(
                    f"floor-above={floor_above}: {shown_cluster(cell.cluster)} "
                    f"loses {lost} asset(s) on {floor_above} (outcome {cell.outcome})"
                )
    return found


def _row_of(rows: Sequence[MatrixRow], release: str) -> MatrixRow | None:
    """The row whose patch range holds ``release``."""
    held = None
    for row in rows:
        if Version(row.release) <= Version(release):
            held = row
    if (
        held is not None
        and held.through is not None
        and Version(release) > Version(held.through)
    ):
        return None
    return held


def _behaviour(profile: ServerProfile, mode: Mode) -> bytes:
    """What decides how a release treats stored assets (releases alike are judged once)."""
    return msgspec.json.encode(
        (
            profile.line.fingerprint,
            profile.switches,
            [c for c in profile.checks if set(c.on) - {"create"}],
            profile.cluster_outcomes if mode == "cluster" else (),
        )
    )


def version_text(text: str) -> str:
    """``text`` as a release, or ``ValueError`` (for ``floor-above=``)."""
    try:
        return str(Version(text.strip().lstrip("v")))
    except InvalidVersion:
        msg = f"not a release: {text!r}"
        raise ValueError(msg) from None
