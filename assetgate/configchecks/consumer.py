"""Consumer checks: ``checkConsumerCfg`` and ``addConsumerWithAssignment`` (server/consumer.go).

One function per check, in the order the server makes them, each registered under the
id its ``[[checks]]`` entries in ``levels/`` use. A function returns ``None`` when the
config passes, else the values of its description template. Fields a release line
does not know read as their zero value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from assetgate.configchecks import register, register_default

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assetgate.configchecks import Context
    from assetgate.levels import ConfigCheck

__all__: list[str] = []

_PASS: Final = None
_FAIL: Final[Mapping[str, str]] = {}
_NO_POLICY: Final = frozenset({"", "none"})


def _policy_none(config: Any) -> bool:
    return getattr(config, "priority_policy", "") in _NO_POLICY


@register("consumer.priority_groups_policy_none", guard="c.priority_groups")
def _groups_without_policy(
    config: Any, _context: Context, _spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Priority groups need a priority policy (``checkConsumerCfg``, 2.12.0)."""
    if getattr(config, "priority_groups", None) and _policy_none(config):
        return _FAIL
    return _PASS


@register("consumer.pinned_ttl_policy_none", guard="c.priority_timeout")
def _pinned_ttl_without_policy(
    config: Any, _context: Context, _spec: ConfigCheck
) -> Mapping[str, str] | None:
    """A priority timeout needs a priority policy (``checkConsumerCfg``, 2.12.0)."""
    if getattr(config, "priority_timeout", 0) and _policy_none(config):
        return _FAIL
    return _PASS


# --- defaults the server fills in before it stores a config (setConsumerConfigDefaults),
# in its order


@register_default("consumer.default.max_deliver")
def _max_deliver(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """``max_deliver`` 0 becomes -1 (unlimited)."""
    if not stored.get("max_deliver"):
        stored["max_deliver"] = -1
