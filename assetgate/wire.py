"""Go and NATS facts every layer uses: Go's zero time, the default account, asset kinds.

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
    "AssetKind",
]

GO_ZERO_TIME: Final = "0001-01-01T00:00:00Z"
"""Go's zero ``time.Time`` as ``encoding/json`` writes it: a time that was never set."""

DEFAULT_ACCOUNT: Final = "$G"
"""The global account of a server without accounts; a record that names none is in it."""

AssetKind = Literal["stream", "consumer"]
"""The two kinds of JetStream asset."""

DECODE_FAILURES: Final = (msgspec.DecodeError, msgspec.ValidationError)
"""What msgspec raises for a document it cannot read into the wanted type."""

FAST_DECODE_FAILURES: Final = (*DECODE_FAILURES, UnicodeDecodeError, RecursionError)
"""What a fast msgspec read of untrusted bytes raises where Go may still read them:
besides :data:`DECODE_FAILURES`, invalid UTF-8 (Go substitutes U+FFFD) and nesting
beyond Python's recursion limit (Go allows 10,000 levels). Callers then take the slow,
Go-exact path or give up on the shortcut."""
