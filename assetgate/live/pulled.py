"""Single server or cluster: what ``assetgate pull`` records say about the servers.

``pull`` writes one ``kind: "server"`` record per server it asked, before any asset,
with the cluster the server named in its INFO (``""`` for a standalone server). A check
of such an inventory should judge it as the servers run: the offline wording and the
whole-cluster outcomes only apply to clustered JetStream. :func:`pulled_mode` reads the
leading server records of each file (nothing else) and says which mode they imply.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import msgspec

from assetgate.wire import DECODE_FAILURES

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable

    from assetgate.judge.gate import Mode

__all__ = ["PulledServers", "mode_notes", "pulled_mode", "servers_in_lines"]

_MAX_LEADING: Final = 100_000
"""Server records read per file at most (a fleet pull writes one per server)."""


class _ServerRecord(msgspec.Struct):
    kind: str
    cluster: str | None = None


_SERVER: Final = msgspec.json.Decoder(_ServerRecord)


class PulledServers(msgspec.Struct, frozen=True, kw_only=True):
    """The servers the pull records of an inventory name.

    Attributes:
        standalone: server records without a cluster (standalone servers).
        clustered: server records with a cluster name.
        mode: ``single`` when every server record is standalone, ``cluster`` when
            every one is clustered, ``None`` when there is none or they are mixed.
    """

    standalone: int = 0
    clustered: int = 0

    def __add__(self, other: PulledServers) -> PulledServers:
        """Both counts added (the records of several files)."""
        return PulledServers(
            standalone=self.standalone + other.standalone,
            clustered=self.clustered + other.clustered,
        )

    @property
    def mode(self) -> Literal["single", "cluster"] | None:
        """The mode every server record agrees on, if any."""
        if self.standalone and not self.clustered:
            return "single"
        if self.clustered and not self.standalone:
            return "cluster"
        return None


def pulled_mode(paths: Iterable[str | os.PathLike[str]]) -> PulledServers:
    """Count the leading ``kind: "server"`` records of each JSON Lines file.

    Reading stops at a file's first record of another kind (``pull`` writes the server
    records first), so a large inventory costs one line. Files that cannot be read, and
    lines that are not JSON objects, count as nothing: reading them is
    :func:`~assetgate.inventory.read.read_inventory`'s job, which reports them.
    """
    total = PulledServers()
    for path in paths:
        try:
            with Path(path).open("rb") as handle:
                total += servers_in_lines(handle)
        except OSError:
            continue
    return total


def servers_in_lines(lines: Iterable[bytes]) -> PulledServers:
    """Count the leading server records of one file's lines (see :func:`pulled_mode`)."""
    standalone = clustered = 0
    for count, line in enumerate(lines):
        if count >= _MAX_LEADING:
            break
        if not line.strip():
            continue
        if b'"server"' not in line:  # not a server record: no decode (lines can be big)
            break
        try:
            record = _SERVER.decode(line)
        except DECODE_FAILURES:
            break
        if record.kind != "server":
            break
        if record.cluster:
            clustered += 1
        else:
            standalone += 1
    return PulledServers(standalone=standalone, clustered=clustered)


def mode_notes(given: Mode | None, servers: PulledServers) -> tuple[Mode, list[str]]:
    """The mode to judge in, and what to tell the user about it (stderr lines).

    A given ``--mode`` wins, with a warning when the pull records contradict it;
    without one the records decide, and ``cluster`` stays the default when they do
    not (no records, or standalone and clustered servers mixed).
    """
    seen = servers.mode
    if given is not None:
        if seen is not None and seen != given:
            what = "standalone" if seen == "single" else "clustered"
            return given, [
                (
                    f"assetgate: warning: --mode {given}, but the inventory's pull records "
                    f"name {servers.standalone + servers.clustered} {what} server(s) "
                    f"(--mode {seen} judges them as they run)"
                )
            ]
        return given, []
    if seen is not None:
        return seen, [
            (
                f"assetgate: judging in mode {seen}: the inventory's pull records name "
                f"only {'standalone' if seen == 'single' else 'clustered'} servers"
            )
        ]
    if servers.standalone and servers.clustered:
        return "cluster", [
            (
                f"assetgate: warning: the inventory's pull records name {servers.standalone} "
                f"standalone and {servers.clustered} clustered server(s); judging in mode "
                "cluster (give --mode)"
            )
        ]
    return "cluster", []
