"""Stream checks: ``checkStreamCfg`` and the checks of ``addStream`` (server/stream.go).

One function per check, in the order the server makes them, each registered under the
id its ``[[checks]]`` entries in ``levels/`` use. A function returns ``None`` when the
config passes, else the values of its description template. Fields a release line
does not know read as their zero value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from assetgate.configchecks import register, register_default
from assetgate.subjects import is_subset_match, subjects_collide

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assetgate.configchecks import Context
    from assetgate.levels import ConfigCheck

__all__: list[str] = []

_PASS: Final = None
_FAIL: Final[Mapping[str, str]] = {}
_API_FIRST: Final = frozenset("$*>")  # the first characters that can reach an API
_API_NAMESPACES: Final = {
    "subset": ("$JS.>", "$JSC.>"),
    "collide": ("$JS.>", "$JSC.>", "$NRG.>"),
}


@register("stream.subjects_api_overlap", guard="not c.no_ack and c.subjects")
def _api_overlap(
    config: Any, _context: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """A subject that reaches the JetStream API needs ``no_ack`` (``$JS.EVENT.>`` aside).

    ``subset``: refused only when the subject lies inside an API namespace; ``collide``
    (2.10.28, 2.11.2): refused when it can match any API subject, ``$NRG.>`` included.
    """
    if config.no_ack:
        return _PASS
    namespaces = _API_NAMESPACES[spec.variant]
    for subject in config.subjects or ():
        if subject[:1] not in _API_FIRST:
            continue  # no API namespace can match: a quick skip, not the rule
        if subject == ">":
            continue  # its own check: capturing all subjects
        for namespace in namespaces:
            if spec.variant == "collide":
                hit = subjects_collide(subject, namespace)
            else:
                hit = is_subset_match(subject, namespace)
            if hit and not is_subset_match(subject, "$JS.EVENT.>"):
                return _FAIL
    return _PASS


# --- defaults the server fills in before it stores a config (setStreamConfigDefaults
# at the top of checkStreamCfg), in its order


@register_default("stream.default.replicas")
def _replicas(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """``num_replicas`` 0 becomes 1."""
    if not stored.get("num_replicas"):
        stored["num_replicas"] = 1
