"""A bulk run without the cyclic garbage collector (reference counting still frees).

A check keeps a verdict and a hash per asset; the cyclic collector finds no cycles
among them but walks its containers at every full collection: 10-17 % of a one-process
check of 300,000 assets (seven full passes, 0.7 s of 7.7 s). ``check``, the matrix and
the command line run their work inside :func:`without_cyclic_gc`. The setting is the
process's, so runs that overlap (threads, or a command around a library call) count
themselves in and out, and the collector is turned back on only when the last of them
ends and only if it was on when the first began.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["without_cyclic_gc"]


class _Runs:
    """The bulk runs in progress, and whether the collector was on before the first."""

    lock = threading.Lock()
    running = 0
    restore = False


@contextlib.contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """Run the body with the cyclic collector off; restore it after the last such run."""
    with _Runs.lock:
        if _Runs.running == 0:
            _Runs.restore = gc.isenabled()
            gc.disable()
        _Runs.running += 1
    try:
        yield
    finally:
        with _Runs.lock:
            _Runs.running -= 1
            if _Runs.running == 0 and _Runs.restore:
                gc.enable()
