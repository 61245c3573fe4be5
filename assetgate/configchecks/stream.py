"""Stream checks: ``checkStreamCfg`` and the checks of ``addStream`` (server/stream.go).

One function per check, in the order the server makes them, each registered under the
id its ``[[checks]]`` entries in ``levels/`` use. A function returns ``None`` when the
config passes, else the values of its description template. Fields a release line
does not know read as their zero value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from assetgate.configchecks import register, register_default, register_note
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


# --- notes: defaults on load that change what the target does, not whether it loads

_DUPLICATE_WINDOW: Final = 120_000_000_000  # the server's default: two minutes
_SECOND: Final = 1_000_000_000


@register_note(
    "stream.note.sourced_duplicate_window",
    guard="c.sources and not c.duplicate_window and c.mirror is None",
)
def _sourced_window(
    config: Any, _context: Context, _spec: ConfigCheck
) -> Mapping[str, str] | None:
    """A sourced stream stored by 2.14+ has no duplicate window; older targets add one."""
    if config.sources and not config.duplicate_window and config.mirror is None:
        window = _DUPLICATE_WINDOW
        if 0 < config.max_age < window:
            window = config.max_age
        return {"window": go_duration(window)}
    return _PASS


def go_duration(nanos: int) -> str:
    """Go's ``time.Duration.String`` (``2m0s``, ``1h0m0s``, ``1.5s``, ``250ms``)."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < _SECOND:
        for unit, size in (("ms", 1_000_000), ("\u00b5s", 1_000), ("ns", 1)):
            if nanos >= size:
                return sign + _fraction(nanos, size) + unit
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = _fraction(rest, _SECOND) + "s"
    if hours or minutes:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def _fraction(value: int, size: int) -> str:
    whole, part = divmod(value, size)
    if not part:
        return str(whole)
    digits = str(part).rjust(len(str(size)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
