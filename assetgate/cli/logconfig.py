"""structlog setup for the command line (the library itself never configures logging)."""

from __future__ import annotations

import logging
import sys

import structlog

__all__ = ["configure_logging"]


def _stderr_logger(*_args: object) -> structlog.PrintLogger:
    return structlog.PrintLogger(file=sys.stderr)


def configure_logging(*, json: bool) -> None:
    """Send structlog events to stderr, as JSON lines or readable console lines."""
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        # sys.stderr as it is when a line is written (not when configured): the CLI
        # may be run in-process (tests, embedding) with stderr swapped in between
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )
