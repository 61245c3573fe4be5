"""The output formats: one module each, found here, and rendering by name.

A format is a module of this package with ``NAME``, ``ORDER`` (its place in
``--format``'s choices), ``SUFFIX`` (the extension of its golden file and of a scan's
``report.SUFFIX``) and ``render(report, *, fail_on)``; ``render_matrix(matrix)`` and
``render_rolling(rolling)`` when it can show a matrix or a rolling run. Adding a format
is adding a module (and its golden files): the command line, the scan and the golden
test take their lists from :data:`FORMATS`.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from assetgate.run.collect import Report
    from assetgate.run.matrix import Matrix
    from assetgate.run.rolling import Rolling

__all__ = [
    "FORMATS",
    "Format",
    "discover",
    "matrix_formats",
    "render",
    "render_matrix",
    "render_rolling",
    "rolling_formats",
]


class Format(NamedTuple):
    """One output format, as its module declares it."""

    name: str
    suffix: str
    check: Callable[..., str]
    matrix: Callable[[Matrix], str] | None
    rolling: Callable[[Rolling], str] | None

    @property
    def report_file(self) -> str:
        """The name of a scan's report file in this format (``report.sarif``)."""
        return f"report.{self.suffix}"


def discover(package: str, path: Iterable[str]) -> dict[str, Format]:
    """The format modules of ``package`` (found on ``path``), by name, in order."""
    modules = [
        importlib.import_module(f"{package}.{info.name}")
        for info in pkgutil.iter_modules(path)
    ]
    modules.sort(key=lambda module: (module.ORDER, module.NAME))
    return {
        module.NAME: Format(
            name=module.NAME,
            suffix=module.SUFFIX,
            check=module.render,
            matrix=getattr(module, "render_matrix", None),
            rolling=getattr(module, "render_rolling", None),
        )
        for module in modules
    }


FORMATS: Final = discover(__name__, __path__)
"""Every format by name, in ``--format``'s order (text first)."""


def _get(fmt: str, names: Iterable[str], what: str) -> Format:
    names = list(names)
    if fmt not in names:
        msg = f"unknown {what}format: {fmt!r} (one of {', '.join(names)})"
        raise ValueError(msg)
    return FORMATS[fmt]


def matrix_formats() -> tuple[str, ...]:
    """The formats that show a matrix run."""
    return tuple(name for name, f in FORMATS.items() if f.matrix is not None)


def rolling_formats() -> tuple[str, ...]:
    """The formats that show a rolling run."""
    return tuple(name for name, f in FORMATS.items() if f.rolling is not None)


def render(report: Report, fmt: str, *, fail_on: Iterable[str] | None = None) -> str:
    """Render a check report in the format named ``fmt``.

    Args:
        report: the result of :func:`assetgate.run.check.check`.
        fmt: a name of :data:`FORMATS`.
        fail_on: what fails the run (as ``check --fail-on``): when given, the text and
            Markdown formats list every finding that fails the run and at most
            :data:`~assetgate.report.common.FOLDED_SHOWN` per state of the others,
            counting the rest (a fleet's 60,000 ``stamp_missing`` drifts); ``None``
            lists every finding. The other formats always list every finding.

    Returns:
        The rendered report, ending with a newline.

    Raises:
        ValueError: ``fmt`` is not a known format.
    """
    return _get(fmt, FORMATS, "report ").check(report, fail_on=fail_on)


def render_matrix(matrix: Matrix, fmt: str) -> str:
    """A matrix run in ``fmt`` (``ValueError`` for a format that shows none)."""
    renderer = _get(fmt, matrix_formats(), "matrix ").matrix
    assert renderer is not None  # noqa: S101 - matrix_formats() has only these
    return renderer(matrix)


def render_rolling(rolling: Rolling, fmt: str) -> str:
    """A rolling run in ``fmt`` (``ValueError`` for a format that shows none)."""
    renderer = _get(fmt, rolling_formats(), "rolling ").rolling
    assert renderer is not None  # noqa: S101 - rolling_formats() has only these
    return renderer(rolling)
