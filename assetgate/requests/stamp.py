"""Stamp a config's metadata the way a server version would, plus created-version keys.

For services that create assets themselves (or through a proxy) and want the metadata
nats-server stores, and ADR-44's created-version keys the released server never wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assetgate.errors import InvalidConfig
from assetgate.requests.validate import validate

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assetgate.catalogue.levels import Catalogue
    from assetgate.requests.validate import Operation
    from assetgate.wire import AssetKind

__all__ = ["stamp"]


def stamp(
    config: bytes | str | Mapping[str, Any],
    *,
    kind: AssetKind,
    server: str,
    op: Operation = "create",
    existing: bytes | str | Mapping[str, Any] | None = None,
    created_version: bool = True,
    catalogue: Catalogue | None = None,
) -> dict[str, str]:
    """The metadata to store for ``config`` created or updated on ``server``.

    The server's own keys come first (``_nats.req.level`` from that version's rules,
    user keys kept, dynamic keys dropped; on 2.10 the user's map verbatim); with
    ``created_version`` the ADR-44 keys ``_nats.created.server.version`` and
    ``_nats.created.server.api_level`` are added on create and carried over from
    ``existing`` on update. The config is decoded leniently, as a non-strict server does.

    Raises:
        InvalidConfig: the server could not decode the config at all.
    """
    result = validate(
        config,
        kind=kind,
        server=server,
        op=op,
        existing=existing,
        strict=False,
        created_version=created_version,
        catalogue=catalogue,
    )
    if not result.accepted:
        detail = result.error.description if result.error else "rejected"
        msg = f"cannot stamp {kind} config: {detail}"
        raise InvalidConfig(msg)
    out = dict(result.stamped_metadata or {})
    if result.created_metadata:
        out.update(result.created_metadata)
    return out
