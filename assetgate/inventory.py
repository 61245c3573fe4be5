"""Read inventories of JetStream assets: what operators already have, one record at a time.

Formats are detected per record (KIP-915: a record of a kind the gate does not know is
ignored and counted, never fatal; KIP-467: a malformed record becomes an error that
names its source, and the run goes on). Every input record ends up as exactly one
:class:`Asset`, :class:`RecordError` or :class:`Ignored`.

The config of each asset is kept as the raw JSON bytes it had in the input
(``msgspec.Raw``), so that the gate decodes exactly what the server would read:
duplicate keys, key case and unknown fields survive.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["Asset", "Ignored", "RecordError"]

AssetKind = Literal["stream", "consumer"]


class Asset(msgspec.Struct, frozen=True, kw_only=True):
    """One stream or consumer as stored on a server.

    Attributes:
        source: where the record came from, ``file:line`` (``file:line#n`` for the n-th
            entry of a list page or document on that line, counting from 1).
        cluster: the cluster name ("" when unknown).
        account: the account name (``$G`` when unknown).
        kind: ``stream`` or ``consumer``.
        stream: the stream's name (for a stream, its own name).
        name: the asset's name.
        config: the stored config, raw JSON bytes as in the input.
        created: the creation time (RFC 3339) when the input has it.
        observed_state: what the source says the server did with it (``offline`` from a
            list page's ``offline`` map, ``missing`` from its ``missing`` list), if anything.
        observed_reason: the server's offline reason, when observed.
        server_version: the version of the server that reported it, when known.
    """

    source: str
    cluster: str = ""
    account: str = "$G"
    kind: AssetKind
    stream: str
    name: str
    config: bytes
    created: str | None = None
    observed_state: str | None = None
    observed_reason: str | None = None
    server_version: str | None = None


class RecordError(msgspec.Struct, frozen=True, kw_only=True):
    """A record that could not be read: its source, why, and whether retrying may help."""

    source: str
    message: str
    retriable: bool = False


class Ignored(msgspec.Struct, frozen=True, kw_only=True):
    """A well-formed record of a kind the gate does not know (counted, not fatal)."""

    source: str
    reason: str
