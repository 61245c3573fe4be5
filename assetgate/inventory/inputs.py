"""The inventory inputs of ``check``: files, directories and ``-`` (standard input).

A directory stands for the inventory files under it (``*.jsonl``, ``*.ndjson``,
``*.json``, recursively, in name order); ``-`` for the records on standard input, read
once, with sources ``-:LINE``. Everything else is a file path, which must exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from assetgate.inventory.read import read_inventory_bytes
from assetgate.live.pulled import PulledServers, servers_in_lines

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import BinaryIO

    from assetgate.inventory.read import InventoryEntry

__all__ = ["INVENTORY_SUFFIXES", "STDIN", "InputError", "Inputs", "expand_inputs"]

STDIN: Final = "-"
INVENTORY_SUFFIXES: Final = (".jsonl", ".ndjson", ".json")
"""The files a directory given as inventory stands for."""


class InputError(ValueError):
    """An inventory input that names nothing to read (a usage error)."""


@dataclass(frozen=True)
class Inputs:
    """The inputs expanded: file paths and standard input's records, in given order.

    Attributes:
        items: file paths (``str``) and, where ``-`` was given, its records.
        stdin_servers: the leading ``assetgate pull`` server records on standard input.
    """

    items: list[str | InventoryEntry]
    stdin_servers: PulledServers = field(default_factory=PulledServers)

    @property
    def paths(self) -> list[str]:
        """The file paths among the items."""
        return [item for item in self.items if isinstance(item, str)]


def expand_inputs(given: Sequence[str], stdin: BinaryIO) -> Inputs:
    """Expand ``-`` and directories; refuse what names nothing.

    Raises:
        InputError: a path that does not exist, a directory without inventory files,
            or ``-`` given twice.
    """
    items: list[str | InventoryEntry] = []
    servers = PulledServers()
    missing: list[str] = []
    if list(given).count(STDIN) > 1:
        msg = "standard input (-) can be read once"
        raise InputError(msg)
    for value in given:
        if value == STDIN:
            data = stdin.read()
            servers = servers_in_lines(data.splitlines())
            items.extend(read_inventory_bytes(data, STDIN))
            continue
        path = Path(value)
        if path.is_dir():
            found = sorted(
                str(child)
                for child in path.rglob("*")
                if child.suffix in INVENTORY_SUFFIXES and child.is_file()
            )
            if not found:
                suffixes = ", ".join(INVENTORY_SUFFIXES)
                msg = f"directory {value!r} holds no inventory file ({suffixes})"
                raise InputError(msg)
            items.extend(found)
        elif path.exists():
            items.append(value)
        else:
            missing.append(value)
    if missing:
        msg = f"inventory not found: {', '.join(map(repr, missing))}"
        raise InputError(msg)
    return Inputs(items=items, stdin_servers=servers)
