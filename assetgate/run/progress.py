"""Progress of long work on a terminal: one line on standard error, rewritten in place.

Only when standard error is a terminal; otherwise nothing is written (a CI log or a
pipe gets the report and nothing else).
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Final, TextIO, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["EVERY", "Progress", "terminal_progress"]

Progress: TypeAlias = "Callable[[str, int], None]"
"""A progress callback: the phase (``reading and judging``) and the records so far."""

EVERY: Final = 1024
"""How many records pass between two progress calls of a phase."""

_INTERVAL: Final = 0.2  # seconds between two redraws
_CLEAR: Final = "\r\x1b[K"


class _Line:
    """Draws ``assetgate: PHASE N records (R/s)`` at most five times a second."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def __call__(self, phase: str, records: int) -> None:
        now = time.monotonic()
        if now - self.last < _INTERVAL:
            return
        self.last = now
        rate = records / max(now - self.start, 1e-9)
        self.stream.write(
            f"{_CLEAR}assetgate: {phase}: {records:,} records ({rate:,.0f}/s)"
        )
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.stream.write(_CLEAR)
            self.stream.flush()


@contextlib.contextmanager
def terminal_progress(stream: TextIO) -> Iterator[Progress | None]:
    """A progress callback drawing on ``stream`` when it is a terminal, else ``None``.

    The line is cleared on leaving, so that what follows starts on a clean line.
    """
    if not stream.isatty():
        yield None
        return
    line = _Line(stream)
    try:
        yield line
    finally:
        line.clear()
