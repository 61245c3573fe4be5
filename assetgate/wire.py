"""Go and NATS facts and the vocabulary every layer uses: zero time, ``$G``, kinds, states.

Each is stated here once. This module imports nothing of assetgate, so any module may
use it.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

__all__ = [
    "DECODE_FAILURES",
    "DEFAULT_ACCOUNT",
    "FAST_DECODE_FAILURES",
    "GO_ZERO_TIME",
    "OUTCOMES",
    "STATES",
    "UNNAMED_CLUSTER",
    "AssetKind",
    "Drift",
    "Mode",
    "Outcome",
    "State",
    "shown_cluster",
]

GO_ZERO_TIME: Final = "0001-01-01T00:00:00Z"
"""Go's zero ``time.Time`` as ``encoding/json`` writes it: a time that was never set."""

UNNAMED_CLUSTER: Final = "(unnamed cluster)"
"""How reports and findings name the cluster of records that name none (a single
server, or a pull without cluster names)."""

DEFAULT_ACCOUNT: Final = "$G"
"""The global account of a server without accounts; a record that names none is in it."""

AssetKind = Literal["stream", "consumer"]
"""The two kinds of JetStream asset."""

Mode = Literal["single", "cluster"]
"""A standalone server, or a cluster of them (some checks and wordings differ)."""

State = Literal[
    "online", "offline", "degraded", "unloadable", "detached", "unavailable"
]
"""What a release does with one stored asset (``assetgate.judge.gate``)."""

STATES: Final[tuple[State, ...]] = (
    "online",
    "offline",
    "degraded",
    "unloadable",
    "detached",
    "unavailable",
)
"""Every state, in report order."""

Drift = Literal["stamp_missing", "stamp_unparsable", "stamp_too_low", "stamp_too_high"]
"""How a stored ``_nats.req.level`` stamp differs from what the config needs."""

Outcome = Literal["ok", "crash", "meta_unavailable", "meta_state_lost"]
"""What a release does with a whole cluster (``assetgate.judge.outcomes``)."""

OUTCOMES: Final[tuple[Outcome, ...]] = (
    "ok",
    "meta_unavailable",
    "meta_state_lost",
    "crash",
)
"""Whole-cluster outcomes, least severe first."""

DECODE_FAILURES: Final = (msgspec.DecodeError, msgspec.ValidationError)
"""What msgspec raises for a document it cannot read into the wanted type."""

FAST_DECODE_FAILURES: Final = (*DECODE_FAILURES, UnicodeDecodeError, RecursionError)
"""What a fast msgspec read of untrusted bytes raises where Go may still read them:
besides :data:`DECODE_FAILURES`, invalid UTF-8 (Go substitutes U+FFFD) and nesting
beyond Python's recursion limit (Go allows 10,000 levels). Callers then take the slow,
Go-exact path or give up on the shortcut."""


def shown_cluster(name: str | None) -> str:
    """A cluster's name as reports and findings show it (:data:`UNNAMED_CLUSTER`)."""
    return name or UNNAMED_CLUSTER
