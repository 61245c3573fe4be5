"""Stream checks: ``checkStreamCfg`` and the checks of ``addStream`` (server/stream.go).

One function per check, in the order the server makes them, each registered under the
id its ``[[checks]]`` entries in ``levels/`` use. A function returns ``None`` when the
config passes, else the values of its description template. Fields a release line
does not know read as their zero value.

Size: over the ~400-line guide because one function per server check, in the server's
order and with its texts per release; the checks the server runs as one function
(``checkStreamCfg``, ``addStream``) stay in one module.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Final

from msgspec.json import encode as _encode  # noqa: F401 - METADATA_GUARD calls it

from assetgate.decoding.goscan import go_quote
from assetgate.judge.configchecks import register, register_default, register_note
from assetgate.judge.mapping import (
    Generation,
    mapping_destination_error,
    subject_transform_error,
    validate_mapping_error,
)
from assetgate.judge.subjects import claimed_subjects, is_subset_match, subjects_collide

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from assetgate.catalogue.levels import ConfigCheck
    from assetgate.judge.configchecks import Context

__all__: list[str] = []

_PASS: Final = None
_FAIL: Final[Mapping[str, str]] = {}
_MS100: Final = 100_000_000
_SECOND: Final = 1_000_000_000
_DUPLICATE_WINDOW: Final = 120_000_000_000  # the server's default: two minutes
_MAX_NAME: Final = 255  # JSMaxNameLen
_MAX_DESCRIPTION: Final = 4 * 1024  # JSMaxDescriptionLen
_MAX_METADATA: Final = 128 * 1024  # JSMaxMetadataLen
_MAX_REPLICAS: Final = 5  # StreamMaxReplicas
_NAME_BAD: Final = {
    "": re.compile(r"[ \t\r\n\f.*>]"),  # isValidName
    "asset": re.compile(r"[ \t\r\n\f.*>\\/]"),  # isValidAssetName, 2.12.8
}
VALID_SUBJECT: Final = re.compile(r"(?!>\.)[^ \t\n\r\f.]+(?:\.(?!>\.)[^ \t\n\r\f.]+)*")
"""``IsValidSubject`` as one pattern (``fullmatch``): tokens not empty, no spaces, a
``>`` token only last."""
_NAME_PLAIN: Final = re.compile(r"[^ \t\r\n\f.*>\\/]{1,63}")
"""A name no release refuses: not empty, no character any release forbids, and at most
63 characters (at most 252 bytes: ``JSMaxNameLen`` is 255)."""
METADATA_GUARD: Final = f"c.metadata and len(_encode(c.metadata)) > {_MAX_METADATA}"
"""A guard of the metadata size checks: the JSON form of a dict is at least as long as
the UTF-8 bytes of its keys and values (``JSMaxMetadataLen``, 128 KiB)."""
_API_FIRST: Final = frozenset("$*>")  # the first characters that can reach an API
_API_NAMESPACES: Final = {
    "subset": ("$JS.>", "$JSC.>"),
    "collide": ("$JS.>", "$JSC.>", "$NRG.>"),
}


def is_valid_subject(subject: str) -> bool:
    """``IsValidSubject`` (server/sublist.go): no empty token, ``>`` only last."""
    return surely_valid(subject) or VALID_SUBJECT.fullmatch(subject) is not None


def surely_valid(subject: str) -> bool:
    """A quick pass of :func:`is_valid_subject` for ordinary subjects.

    True only for a valid subject: printable, no space, no empty token, ``>`` only
    last. False for some valid ones too (a tab-free but unprintable character), which
    the full test then decides.
    """
    return bool(subject) and (
        subject[0] != "."
        and subject[-1] != "."
        and subject.isprintable()
        and " " not in subject
        and ".." not in subject
        and ".>." not in subject
        and not subject.startswith(">.")
    )


def plain_subject(subject: str) -> bool:
    """A valid subject whose first token cannot reach an API namespace (a quick pass).

    Its first character is none of ``$ * >``, so it neither is ``>`` nor can it match
    or overlap the ``$JS``, ``$JSC``, ``$NRG`` or ``$SYS`` namespaces.
    """
    return subject[:1] not in "$*>" and surely_valid(subject)


def _is_literal(subject: str) -> bool:
    """``subjectIsLiteral``: no token is exactly ``*`` or ``>``."""
    return all(token not in {"*", ">"} for token in subject.split("."))


@functools.cache
def flags(variant: str) -> frozenset[str]:
    """A check entry's ``variant`` as its set of flags (``"asset mapping-2.12"``).

    Every check reads its variant through this, so a flag added to an entry is found
    whatever else the entry holds.
    """
    return frozenset(variant.split())


def _bad_name(name: str, variant: str) -> bool:
    pattern = _NAME_BAD["asset" if "asset" in flags(variant) else ""]
    return not name or pattern.search(name) is not None


def _generation(spec: ConfigCheck) -> Generation:
    """The subject transform rules a range uses (variant flag ``mapping-2.11`` ...)."""
    for flag in flags(spec.variant):
        if flag == "mapping-2.11":
            return "2.11"
        if flag == "mapping-2.12":
            return "2.12"
    return "2.10"


def _bare_empty(spec: ConfigCheck) -> bool:
    """A mapping error about an empty destination token has no `` in `` (2.12.5+)."""
    return "bare-empty" in flags(spec.variant)


# --- the create handler (jsStreamCreateRequest), before checkStreamCfg


@register("stream.create_path_separators", guard="'/' in c.name or '\\\\' in c.name")
def _path_separators(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A create whose name has a path separator is refused before any config check."""
    if context.op == "update":
        return _PASS
    return _FAIL if "/" in config.name or "\\" in config.name else _PASS


@register("stream.create_sealed", guard="c.sealed")
def _create_sealed(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A stream cannot be created sealed (an update seals it)."""
    return _FAIL if config.sealed and context.op != "update" else _PASS


@register("stream.create_mirror_direct", guard="c.mirror_direct and c.mirror is None")
def _create_mirror_direct(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """``mirror_direct`` needs a mirror on create (on load the server copies it)."""
    if context.op == "update":
        return _PASS
    return _FAIL if config.mirror_direct and config.mirror is None else _PASS


def storage_limit(config: Any, context: Context) -> int | None:
    """The server limit a create's ``max_bytes`` is held to, ``None`` if not known.

    ``max_memory_store`` for a memory stream, ``max_file_store`` for a file stream.
    """
    limits = context.limits
    if limits is None:
        return None
    if config.storage == "memory":
        return limits.max_memory_store
    return limits.max_file_store if config.storage == "file" else None


def _over_limits(config: Any, context: Context) -> Mapping[str, str] | None:
    """``checkBytesLimits`` of a standalone create: the storage's error, or ``None``.

    A negative ``max_bytes`` counts as one byte. No other stream is assumed to reserve
    storage.
    """
    if context.op == "update" or context.mode != "single":
        return None
    limit = storage_limit(config, context)
    wanted = 1 if config.max_bytes < 0 else config.max_bytes
    if limit is None or wanted <= limit:
        return None
    return {
        "error": "memory_resources"
        if config.storage == "memory"
        else "storage_resources"
    }


@register(
    "stream.storage_limits",
    guard="_ctx.limits is not None and _ctx.mode == 'single'",
    assumes=(
        "max_bytes fits the server's max_file_store or max_memory_store (by "
        "default 75% of the free disk or of the RAM) and the account's limits, "
        "which are not known (a standalone server refuses more with 500 "
        "'insufficient storage/memory resources available' before its config "
        "checks, a cluster with 400 'no suitable peers for placement, "
        "insufficient storage' after them; give a standalone server's limits for "
        "an exact answer)"
    ),
    assumes_when=(
        "_ctx.op == 'create' and c.max_bytes > 0 "
        "and (_ctx.mode != 'single' or storage_limit(c, _ctx) is None)"
    ),
)
def _storage_limits(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A standalone server refuses a create whose max_bytes exceeds its storage.

    ``jsNonClusteredStreamLimitsCheck``, before ``checkStreamCfg``, on the request as
    decoded: only a request that names its ``storage`` is held there (absent, it is
    Go's zero, neither file nor memory); ``stream.storage_limits_defaulted`` holds
    the others after the config checks.
    """
    if context.given is None or "storage" not in context.given:
        return _PASS
    return _over_limits(config, context)


# --- checkStreamCfg, in its order


@register("stream.name_invalid", guard="not _NAME_PLAIN.fullmatch(c.name)")
def _name(
    config: Any, _context: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Name required, without ``. * >`` or whitespace (and back or forward slashes from 2.12.8)."""
    return _FAIL if _bad_name(config.name, spec.variant) else _PASS


@register("stream.name_too_long", guard="not _NAME_PLAIN.fullmatch(c.name)")
def _name_length(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """Name at most 255 bytes."""
    return _FAIL if len(config.name.encode()) > _MAX_NAME else _PASS


@register("stream.description_too_long", guard="len(c.description) > 1024")
def _description(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """Description at most 4 KiB."""
    return _FAIL if len(config.description.encode()) > _MAX_DESCRIPTION else _PASS


@register(
    "stream.metadata_too_large",
    guard=METADATA_GUARD,
)
def _metadata(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """Metadata keys and values at most 128 KiB together."""
    return _FAIL if metadata_too_large(config.metadata) else _PASS


def metadata_too_large(metadata: Mapping[str, str] | None) -> bool:
    """``JSMaxMetadataLen``: the UTF-8 bytes of the keys and values over 128 KiB."""
    size = sum(len(k.encode()) + len(v.encode()) for k, v in (metadata or {}).items())
    return size > _MAX_METADATA


@register("stream.replicas_max", guard="c.num_replicas > 5")
def _replicas_max(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """At most five replicas."""
    return _FAIL if config.num_replicas > _MAX_REPLICAS else _PASS


@register("stream.replicas_negative", guard="c.num_replicas < 0")
def _replicas_neg(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """No negative replica count."""
    return _FAIL if config.num_replicas < 0 else _PASS


_LIMIT_KEYS: Final = (
    "max_msgs",
    "max_msgs_per_subject",
    "max_bytes",
    "max_msg_size",
    "max_consumers",
)


@register("stream.pedantic_limits", guard="c.pedantic")
def _pedantic_limits(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """Pedantic (2.12.0): a limit below -1 is an error, not clamped to -1."""
    if not getattr(config, "pedantic", False):
        return _PASS
    for key in _LIMIT_KEYS:
        if getattr(config, key) < -1:
            return {"err": f"{key} must be set to -1"}
    return _PASS


def _pedantic_window(config: Any, spec: ConfigCheck) -> Mapping[str, str] | None:
    """Pedantic: no duplicate window, and the server would default it to max_age.

    The server's own duplicate limit is assumed unset; ``sources`` (2.14.0): a
    stream with sources gets no default window.
    """
    if not getattr(config, "pedantic", False) or config.duplicate_window:
        return _PASS
    if config.mirror is not None or (
        "sources" in flags(spec.variant) and config.sources
    ):
        return _PASS
    if config.max_age and config.max_age < _DUPLICATE_WINDOW:
        return {"err": spec.texts["over_max_age"]}
    return _PASS


@register("stream.pedantic_duplicates_early", guard="c.pedantic")
def _pedantic_window_early(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Pedantic, before the max_age checks (2.11): no defaulted duplicate window."""
    return _pedantic_window(config, spec)


@register("stream.max_age_negative", guard="c.max_age < 0")
def _max_age_neg(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """No negative ``max_age`` (2.12.0; before, the 100 ms rule refused it)."""
    return _FAIL if config.max_age < 0 else _PASS


@register("stream.max_age_min", guard="c.max_age and c.max_age < 100000000")
def _max_age_min(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """A ``max_age`` that is set is at least 100 ms (``positive``: a positive one)."""
    low = 0 if spec.variant == "positive" else None
    age = config.max_age
    if age and age < _MS100 and (low is None or age > low):
        return _FAIL
    return _PASS


@register("stream.pedantic_duplicates", guard="c.pedantic")
def _pedantic_window_late(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Pedantic, after the max_age checks (2.12.0): no defaulted duplicate window."""
    return _pedantic_window(config, spec)


def _duplicates(config: Any, context: Context, variant: str) -> int:
    """The duplicate window after the defaults (``checkStreamCfg``; mirrors on load).

    ``sources`` (2.14.0): a stream with sources gets no default window; before, only
    a mirror went without one. On load a mirror's window is first set to 0
    (``fixCfgMirrorWithDedupWindow``).
    """
    window: int = config.duplicate_window
    if context.phase == "load" and config.mirror is not None:
        return 0
    if (
        window
        or config.mirror is not None
        or ("sources" in flags(variant) and config.sources)
    ):
        return window
    if config.max_age and config.max_age < _DUPLICATE_WINDOW:
        return int(config.max_age)
    return _DUPLICATE_WINDOW


@register("stream.duplicates_negative", guard="c.duplicate_window < 0 or c.max_age < 0")
def _dup_negative(
    config: Any, context: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """No negative duplicate window."""
    return _FAIL if _duplicates(config, context, spec.variant) < 0 else _PASS


@register(
    "stream.duplicates_over_max_age",
    guard="c.max_age and c.duplicate_window > c.max_age",
)
def _dup_over_age(
    config: Any, context: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """The duplicate window is not larger than ``max_age`` (the server's spelling)."""
    window = _duplicates(config, context, spec.variant)
    return _FAIL if config.max_age and window > config.max_age else _PASS


@register(
    "stream.duplicates_min",
    guard="0 < c.duplicate_window < 100000000 or 0 < c.max_age < 100000000",
)
def _dup_min(
    config: Any, context: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """A duplicate window that is set is at least 100 ms."""
    window = _duplicates(config, context, spec.variant)
    return _FAIL if 0 < window < _MS100 else _PASS


@register("stream.rollup_deny_purge", guard="c.deny_purge and c.allow_rollup_hdrs")
def _rollup(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """Roll-ups need the purge permission."""
    return _FAIL if config.deny_purge and config.allow_rollup_hdrs else _PASS


@register("stream.counter_discard_new", guard="c.allow_msg_counter")
def _counter_discard(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A counter stream cannot use discard new (2.12.0)."""
    return _FAIL if config.allow_msg_counter and config.discard == "new" else _PASS


@register("stream.counter_ttl", guard="c.allow_msg_counter")
def _counter_ttl(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """A counter stream cannot use message TTLs (2.12.0)."""
    return _FAIL if config.allow_msg_counter and config.allow_msg_ttl else _PASS


@register("stream.counter_schedules", guard="c.allow_msg_counter")
def _counter_schedules(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A counter stream cannot use message schedules (2.12.10, 2.14.2)."""
    if config.allow_msg_counter and getattr(config, "allow_msg_schedules", False):
        return _FAIL
    return _PASS


@register("stream.counter_retention", guard="c.allow_msg_counter")
def _counter_retention(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A counter stream uses limits retention only (2.12.0)."""
    return _FAIL if config.allow_msg_counter and config.retention != "limits" else _PASS


@register("stream.discard_new_per_subject_policy", guard="c.discard_new_per_subject")
def _per_subject_policy(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """Discard new per subject needs the discard new policy."""
    return (
        _FAIL if config.discard_new_per_subject and config.discard != "new" else _PASS
    )


@register("stream.discard_new_per_subject_limit", guard="c.discard_new_per_subject")
def _per_subject_limit(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """Discard new per subject needs ``max_msgs_per_subject`` > 0."""
    if config.discard_new_per_subject and config.max_msgs_per_subject <= 0:
        return _FAIL
    return _PASS


@register("stream.sdm_needs_ttl", guard="c.subject_delete_marker_ttl > 0")
def _sdm_needs_ttl(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """2.11.0-2.11.1: subject delete markers need message TTLs switched on."""
    if config.subject_delete_marker_ttl > 0 and not config.allow_msg_ttl:
        return _FAIL
    return _PASS


@register("stream.sdm_min", guard="0 < c.subject_delete_marker_ttl < 1000000000")
def _sdm_min(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """A subject delete marker TTL is at least one second (2.11.0)."""
    return _FAIL if 0 < config.subject_delete_marker_ttl < _SECOND else _PASS


@register("stream.pedantic_sdm", guard="c.pedantic and c.subject_delete_marker_ttl > 0")
def _pedantic_sdm(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Pedantic (2.11.2): markers need message TTLs and roll-ups switched on."""
    if not getattr(config, "pedantic", False) or config.subject_delete_marker_ttl <= 0:
        return _PASS
    if not config.allow_msg_ttl:
        return {"err": spec.texts["ttl"]}
    if not config.allow_rollup_hdrs:
        return {"err": spec.texts["rollup"]}
    return _PASS


@register("stream.sdm_negative", guard="c.subject_delete_marker_ttl < 0")
def _sdm_negative(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """No negative subject delete marker TTL (2.11.0)."""
    return _FAIL if config.subject_delete_marker_ttl < 0 else _PASS


@register("stream.schedules_discard_new", guard="c.allow_msg_schedules")
def _schedules_discard(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """Message schedules cannot use discard new (2.12.10, 2.14.2)."""
    return _FAIL if config.allow_msg_schedules and config.discard == "new" else _PASS


@register("stream.pedantic_schedules", guard="c.pedantic and c.allow_msg_schedules")
def _pedantic_schedules(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """Pedantic (2.12.0): message schedules need roll-ups switched on."""
    if (
        getattr(config, "pedantic", False)
        and getattr(config, "allow_msg_schedules", False)
        and not config.allow_rollup_hdrs
    ):
        return _FAIL
    return _PASS


@register("stream.async_file_only", guard="c.persist_mode == 'async'")
def _async_file(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """Async persist mode needs file storage (2.12.0)."""
    return (
        _FAIL if config.persist_mode == "async" and config.storage != "file" else _PASS
    )


@register("stream.async_replicated", guard="c.persist_mode == 'async'")
def _async_replicas(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """Async persist mode is not for replicated streams (2.12.0)."""
    return (
        _FAIL if config.persist_mode == "async" and config.num_replicas > 1 else _PASS
    )


@register("stream.async_atomic", guard="c.persist_mode == 'async'")
def _async_atomic(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """Async persist mode is not for atomic batch publish (2.12.0)."""
    return _FAIL if config.persist_mode == "async" and config.allow_atomic else _PASS


# mirrors: one check per reply, in the server's order


def _mirror_has(config: Any, context: Context, what: str) -> bool:
    mirror = config.mirror
    if mirror is None:
        return False
    if what == "first_seq":
        return bool(config.first_seq)
    if what == "subjects":  # removed on load before the checks
        return bool(config.subjects) and context.phase == "create"
    if what == "sources":
        return bool(config.sources)
    return bool(getattr(config, what, False))


def _mirror_check(check_id: str, what: str) -> None:
    def function(
        config: Any, context: Context, _s: ConfigCheck
    ) -> Mapping[str, str] | None:
        return _FAIL if _mirror_has(config, context, what) else _PASS

    function.__doc__ = f"A mirror cannot have {what}."
    register(check_id, guard="c.mirror is not None")(function)


for _id, _what in (
    ("stream.mirror_first_seq", "first_seq"),
    ("stream.mirror_subjects", "subjects"),
    ("stream.mirror_sources", "sources"),
    ("stream.mirror_counters", "allow_msg_counter"),
    ("stream.mirror_atomic", "allow_atomic"),
    ("stream.mirror_batch", "allow_batched"),
    ("stream.mirror_schedules", "allow_msg_schedules"),
):
    _mirror_check(_id, _what)


def _consumer_invalid(source: Any) -> bool:
    """2.14: a source's or mirror's durable consumer config the server refuses.

    A valid asset name, a literal valid deliver subject, and neither a start
    sequence, a start time nor a filter subject on the source.
    """
    consumer = source.consumer
    deliver = consumer.deliver_subject
    return (
        _bad_name(consumer.name, "asset")
        or not is_valid_subject(deliver)
        or not _is_literal(deliver)
        or bool(source.opt_start_seq)
        or source.opt_start_time is not None
        or bool(source.filter_subject)
    )


@register(
    "stream.mirror_consumer",
    guard="c.mirror is not None and getattr(c.mirror, 'consumer', None) is not None",
)
def _mirror_consumer(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A mirror's durable consumer config is valid (2.14.0)."""
    mirror = config.mirror
    if mirror is None or getattr(mirror, "consumer", None) is None:
        return _PASS
    return _FAIL if _consumer_invalid(mirror) else _PASS


@register("stream.mirror_filter_and_transforms", guard="c.mirror is not None")
def _mirror_filters(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A mirror has a filter or subject transforms, not both."""
    mirror = config.mirror
    if mirror is not None and mirror.filter_subject and mirror.subject_transforms:
        return _FAIL
    return _PASS


@register(
    "stream.mirror_sdm",
    guard="c.mirror is not None and c.subject_delete_marker_ttl > 0",
)
def _mirror_sdm(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """No subject delete markers on a mirror (2.11.0)."""
    if config.mirror is not None and config.subject_delete_marker_ttl > 0:
        return _FAIL
    return _PASS


@register(
    "stream.mirror_transforms",
    guard="c.mirror is not None and c.mirror.subject_transforms",
)
def _mirror_transforms(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Each mirror transform in turn: a valid source, destination, no overlap.

    ``legacy`` (2.10): an empty source is invalid too and the destination is not
    looked at here (``addStream`` does); ``subset`` (2.10.0-2.10.12): the overlap is
    a subset test, else ``SubjectsCollide``.
    """
    mirror = config.mirror
    transforms = () if mirror is None else mirror.subject_transforms or ()
    given = flags(spec.variant)
    legacy = "legacy" in given
    overlap = is_subset_match if "subset" in given else subjects_collide
    sources = [t.src for t in transforms]
    for outer, transform in enumerate(transforms):
        src = transform.src
        if (src or legacy) and not is_valid_subject(src):
            return {"error": "mirror_transform_source", "err": f"invalid subject {src}"}
        if not legacy:
            error = validate_mapping_error(
                src,
                transform.dest,
                _generation(spec),
                bare_empty=_bare_empty(spec),
            )
            if error is not None:
                return {"error": "mirror_transform_dest", "err": error}
        for inner, other in enumerate(sources):
            if inner != outer and overlap(src, other):
                return {"error": "mirror_filters_overlap"}
    return _PASS


@register("stream.mirror_name", guard="c.mirror is not None")
def _mirror_name(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """A local mirror's origin name is valid."""
    mirror = config.mirror
    if (
        mirror is not None
        and mirror.external is None
        and _bad_name(mirror.name, spec.variant)
    ):
        return _FAIL
    return _PASS


@register("stream.sources_schedules", guard="c.sources")
def _sources_schedules(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A sourcing stream cannot schedule messages (2.12.0)."""
    return (
        _FAIL
        if config.sources and getattr(config, "allow_msg_schedules", False)
        else _PASS
    )


def _source_key(source: Any) -> tuple[object, ...]:
    """What ``composeIName`` makes of a source, compared instead of hashed."""
    transforms = tuple(
        (t.src or ">", t.dest or ">") for t in source.subject_transforms or ()
    )
    consumer = getattr(source, "consumer", None)
    return (
        source.name,
        None if source.external is None else source.external.api,
        None if consumer is None else getattr(consumer, "name", None),
        transforms or ((source.filter_subject or ">", ">"),),
    )


@register("stream.sources", guard="c.sources")
def _sources(config: Any, _c: Context, spec: ConfigCheck) -> Mapping[str, str] | None:
    """Each source, in order: a valid name, not a duplicate, then its filters.

    The filter checks (one kind of filter, valid transforms, no overlap) skip
    external sources before 2.12.5 (``local``); ``legacy`` (2.10): every destination
    first, an empty source is invalid, each source's overlap right after it;
    ``consumer`` (2.14.0): then the source's durable consumer, valid and not reused.
    """
    given = flags(spec.variant)
    seen: set[tuple[object, ...]] = set()
    consumers: set[tuple[str, str | None, str]] = set()  # composeCName
    for source in config.sources or ():
        if source is None or _bad_name(source.name, spec.variant):
            return {"error": "source_invalid_name"}
        key = _source_key(source)
        if key in seen:
            return {"error": "source_duplicate"}
        seen.add(key)
        if "local" in given and source.external is not None:
            continue
        if source.filter_subject and source.subject_transforms:
            return {"error": "source_filter_and_transforms"}
        transforms = source.subject_transforms or ()
        found = (
            _source_filters_legacy(transforms)
            if "legacy" in given
            else _source_filters(transforms, _generation(spec), _bare_empty(spec))
        )
        if found is not None:
            return found
        if "consumer" in given and getattr(source, "consumer", None) is not None:
            if _consumer_invalid(source):
                return {"error": "source_consumer_invalid"}
            name = (source.name, _api(source), source.consumer.name)
            if name in consumers:
                return {"error": "source_consumer_duplicate"}
            consumers.add(name)
    return _PASS


def _api(source: Any) -> str | None:
    return None if source.external is None else str(source.external.api)


def _source_filters(
    transforms: Sequence[Any], generation: Generation, bare_empty: bool
) -> Mapping[str, str] | None:
    """2.11+: each transform's source and mapping, then the overlap of any two."""
    for transform in transforms:
        src = transform.src
        if src and not is_valid_subject(src):
            return {"error": "source_transform_source", "err": f"invalid subject {src}"}
        error = validate_mapping_error(
            src, transform.dest, generation, bare_empty=bare_empty
        )
        if error is not None:
            return {"error": "source_transform_dest", "err": error}
    sources = [t.src for t in transforms]
    for outer, first in enumerate(sources):
        for inner, second in enumerate(sources):
            if inner != outer and is_subset_match(first, second):
                return {"error": "source_filters_overlap"}
    return _PASS


def _source_filters_legacy(transforms: Sequence[Any]) -> Mapping[str, str] | None:
    """2.10: every destination, then each source (empty is invalid) and its overlaps."""
    for transform in transforms:
        if mapping_destination_error(transform.dest) is not None:
            return {"error": "source_transform_dest"}
    sources = [t.src for t in transforms]
    for outer, first in enumerate(sources):
        if not is_valid_subject(first):
            return {"error": "source_transform_source"}
        for inner, second in enumerate(sources):
            if inner != outer and is_subset_match(first, second):
                return {"error": "source_filters_overlap"}
    return _PASS


@register("stream.external_prefixes", guard="c.mirror is not None or c.sources")
def _externals(config: Any, _c: Context, spec: ConfigCheck) -> Mapping[str, str] | None:
    """External deliver and API prefixes are literal and do not overlap the API."""
    externals = [
        s.external for s in (config.sources or ()) if s is not None and s.external
    ]
    if config.mirror is not None and config.mirror.external is not None:
        externals.insert(0, config.mirror.external)
    for external in externals:
        prefix = external.deliver
        if prefix and not (is_valid_subject(prefix) and _is_literal(prefix)):
            return {"error": "external_deliver_wildcards", "prefix": prefix}
    for external in externals:
        prefix = external.api
        if not prefix:
            continue
        if not (is_valid_subject(prefix) and _is_literal(prefix)):
            return {"err": spec.texts["api_wildcards"].format(prefix=go_quote(prefix))}
        if subjects_collide(prefix, "$JS.API"):
            return {
                "error": "external_api_overlap",
                "prefix": prefix,
                "subject": "$JS.API",
            }
    return _PASS


@register(
    "stream.subjects",
    guard="c.subjects and (len(c.subjects) > 1 or not plain_subject(c.subjects[0]))",
)
def _subjects(
    config: Any, context: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """The subjects loop: each subject in order, the first problem it has.

    Valid, not a duplicate, ``>`` only with ``no_ack`` and R1, no JetStream API subject
    (``subset`` before 2.10.28/2.11.2, ``collide`` after: ``$NRG.>`` too) or system API
    subject without ``no_ack``, and no overlap with a later subject (``-inline``, from
    2.12.5; before, any two different subjects, after the loop). A mirror with
    subjects is refused before (create), or has them removed (load).
    """
    subjects = config.subjects or ()
    if config.mirror is not None:
        return _PASS
    texts = spec.texts
    if spec.variant == "legacy":
        return _subjects_legacy(subjects, texts)
    api, _, placement = spec.variant.partition("-")
    inline = placement == "inline"
    seen: set[str] = set()
    replicas = config.num_replicas or 1
    for index, stored in enumerate(subjects):
        subject = stored
        if not is_valid_subject(subject):
            if context.phase == "create":
                return {"err": texts["invalid"]}
            # on load the server first trims spaces (with a warning), else it gives up
            # with no reply code in its log line
            subject = subject.strip()
            if not is_valid_subject(subject):
                return {"err": texts["invalid"], "log": texts["invalid"]}
        if subject in seen:
            return {"err": texts["duplicate"]}
        if subject == ">":
            if not config.no_ack:
                return {"err": texts["all_no_ack"]}
            if replicas != 1:
                return {"err": texts["all_replicas"]}
        if not config.no_ack and subject[:1] in _API_FIRST:
            found = _api_subject(subject, api)
            if found is not None:
                return {"err": texts[found]}
        if not inline:
            seen.add(subject)
            continue
        for other in subjects[index + 1 :]:
            if subjects_collide(other, subject):
                return {
                    "err": texts["overlap"].format(
                        first=go_quote(subject), second=go_quote(other)
                    )
                }
        seen.add(subject)
    return _PASS if inline else _pairwise_overlap(subjects, texts)


def _pairwise_overlap(
    subjects: Sequence[str], texts: Mapping[str, str]
) -> Mapping[str, str] | None:
    """Before 2.12.5: any two different subjects that collide, in a later loop."""
    for subject in subjects:
        for other in subjects:
            if other != subject and subjects_collide(other, subject):
                first, second = go_quote(subject), go_quote(other)
                return {"err": texts["overlap"].format(first=first, second=second)}
    return _PASS


def _subjects_legacy(
    subjects: Sequence[str], texts: Mapping[str, str]
) -> Mapping[str, str] | None:
    """The subjects loop of 2.10.0-2.10.16.

    Duplicates, ``$JS.API.>`` (whatever ``no_ack``), validity; then the overlap of any
    two subjects, in a second loop.
    """
    seen: set[str] = set()
    for subject in subjects:
        if subject in seen:
            return {"err": texts["duplicate"]}
        if is_subset_match(subject, "$JS.API.>"):
            return {"err": texts["jetstream_api"]}
        if not is_valid_subject(subject):
            return {"err": texts["invalid"]}
        seen.add(subject)
    return _pairwise_overlap(subjects, texts)


def _api_subject(subject: str, variant: str) -> str | None:
    """``jetstream_api``/``system_api`` when a subject reaches an API namespace."""
    match = subjects_collide if variant == "collide" else is_subset_match
    for namespace in _API_NAMESPACES[variant]:
        if match(subject, namespace) and not is_subset_match(subject, "$JS.EVENT.>"):
            return "jetstream_api"
    if match(subject, "$SYS.>") and not is_subset_match(subject, "$SYS.ACCOUNT.>"):
        return "system_api"
    return None


def _stream_transform(config: Any, spec: ConfigCheck) -> Mapping[str, str] | None:
    """2.11+: the stream's subject transform has a valid source, then a valid mapping."""
    transform = config.subject_transform
    if transform is None:
        return _PASS
    src = transform.src
    if src and not is_valid_subject(src):
        return {"error": "transform_source", "err": f"invalid subject {src}"}
    error = validate_mapping_error(
        src, transform.dest, _generation(spec), bare_empty=_bare_empty(spec)
    )
    if error is not None:
        return {"error": "transform_dest", "err": error}
    return _PASS


@register("stream.transform_source", guard="c.subject_transform is not None")
def _transform_source(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """The stream's subject transform, before the republish checks (2.11.11, 2.12.2)."""
    return _stream_transform(config, spec)


def _subjects_of(config: Any) -> tuple[str, ...]:
    """The stream's subjects after their default (:func:`claimed_subjects`)."""
    return claimed_subjects(
        config.subjects, name=config.name, mirror=config.mirror, sources=config.sources
    )


def _is_implicit(config: Any, variant: str) -> bool:
    """Whether the republish is implicit (variant ``implicit``: 2.11.11, 2.12.2).

    ``>`` to ``>`` with a transform of the only subject republishes the
    transform's destination instead.
    """
    republish, transform = config.republish, config.subject_transform
    if "implicit" not in flags(variant) or republish is None or transform is None:
        return False
    subjects = _subjects_of(config)
    return (
        republish.dest == ">"
        and (republish.src or ">") == ">"
        and len(subjects) == 1
        and transform.src == subjects[0]
    )


def _republished(config: Any, variant: str) -> tuple[str, str, tuple[str, ...]] | None:
    """The republish source and destination as checked, and the stream's subjects.

    The source after its default (``>``), or both the transform's destination when
    the republish is implicit.
    """
    republish = config.republish
    if republish is None:
        return None
    if _is_implicit(config, variant):
        dest = config.subject_transform.dest
        return dest, dest, _subjects_of(config)
    return republish.src or ">", republish.dest, _subjects_of(config)


@register("stream.pedantic_republish", guard="c.pedantic and c.republish is not None")
def _pedantic_republish(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Pedantic: a republish source is given, and not made implicit by a transform."""
    republish = config.republish
    if not getattr(config, "pedantic", False) or republish is None:
        return _PASS
    if not republish.src:
        return {"err": spec.texts["empty_source"]}
    return (
        {"err": spec.texts["implicit"]} if _is_implicit(config, spec.variant) else _PASS
    )


@register("stream.republish_cycle", guard="c.republish is not None")
def _republish_cycle(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """A republish destination does not overlap the stream's subjects."""
    found = _republished(config, spec.variant)
    if found is None:
        return _PASS
    _source, destination, subjects = found
    if any(subjects_collide(destination, subject) for subject in subjects):
        return _FAIL
    return _PASS


@register("stream.republish_transform", guard="c.republish is not None")
def _republish_transform(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """The republish source and destination make a valid subject transform."""
    found = _republished(config, spec.variant)
    if found is None:
        return _PASS
    source, destination, _subjects = found
    if subject_transform_error(source, destination, _generation(spec)) is None:
        return _PASS
    return {"src": source, "dest": destination}


@register("stream.transform_after_republish", guard="c.subject_transform is not None")
def _transform_late(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """The stream's subject transform, after the republish checks (2.11.0-2.11.10, 2.12.0-2.12.1)."""
    return _stream_transform(config, spec)


@register(
    "stream.placement_preferred",
    guard="c.placement is not None and c.placement.preferred",
)
def _preferred(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """No preferred server in a placement (2.11.0)."""
    placement = config.placement
    if placement is not None and placement.preferred:
        return _FAIL
    return _PASS


# --- addStream, after checkStreamCfg


@register(
    "stream.placement",
    guard="False",
    assumes=(
        "the cluster has num_replicas peers that meet the placement (the placement's "
        "cluster, else the meta leader's, and every placement tag) with room for "
        "max_bytes, which are not known (a cluster without them answers 400 'no "
        "suitable peers for placement' after the config checks, with ', tags not "
        "matched [...]' for a tag no peer has)"
    ),
    assumes_when=(
        "_ctx.mode == 'cluster' and _ctx.op == 'create' and (c.num_replicas > 1 "
        "or (c.placement is not None and bool(c.placement.cluster or c.placement.tags)))"
    ),
)
def _placement_met(
    _config: Any, _context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A cluster places a new stream (``selectPeerGroup``): assumed to succeed."""
    return _PASS


@register(
    "stream.counter_ttl_rechecked",
    guard="_ctx.mode == 'cluster' and c.allow_msg_counter"
    " and c.subject_delete_marker_ttl > 0",
)
def _counter_ttl_rechecked(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A cluster's stream leader checks the defaulted config again.

    A delete marker TTL turns ``allow_msg_ttl`` on after the counter checks of the
    first pass, so a counter stream with markers fails ``stream.counter_ttl`` there.
    """
    if context.mode != "cluster" or not config.allow_msg_counter:
        return _PASS
    return _FAIL if config.subject_delete_marker_ttl > 0 else _PASS


@register(
    "stream.replicas_standalone", guard="_ctx.mode == 'single' and c.num_replicas > 1"
)
def _standalone(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A standalone server refuses a replicated stream (on load too)."""
    if context.mode == "single" and config.num_replicas > 1:
        return _FAIL
    return _PASS


@register(
    "stream.storage_limits_defaulted",
    guard="_ctx.limits is not None and _ctx.mode == 'single'",
)
def _storage_limits_defaulted(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """The limits again in ``addStreamWithAssignment``, the storage defaulted to file.

    After ``checkStreamCfg`` and the standalone replicas check (``checkAllLimits``): a
    request without ``storage`` meets the limits here, as a file stream. One that
    names it was already held to them by ``stream.storage_limits``, alike.
    """
    return _over_limits(config, context)


@register("stream.template_owner", guard="c.template_owner")
def _template_owner(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A stream naming a template the account does not have (2.10-2.12; addStream)."""
    if context.op == "update":
        return _PASS
    return _FAIL if getattr(config, "template_owner", "") else _PASS


@register(
    "stream.mirror_add_filters",
    guard="c.mirror is not None"
    " and (c.mirror.filter_subject or c.mirror.subject_transforms)",
)
def _mirror_add_filters(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """``addStream``: a mirror's filter is a valid subject, its transforms valid."""
    mirror = config.mirror
    if mirror is None:
        return _PASS
    return _add_filters(mirror, spec, "transform_source", "src")


@register("stream.source_add_filters", guard="c.sources")
def _source_add_filters(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """``addStream``: each source's filter is a valid subject, its transforms valid."""
    for source in config.sources or ():
        if source is not None:
            failed = _add_filters(source, spec, "filter", "filter")
            if failed is not None:
                return failed
    return _PASS


def _add_filters(
    origin: Any, spec: ConfigCheck, bad_source: str, placeholder: str
) -> Mapping[str, str] | None:
    """``addStream`` on a mirror's or a source's filter and transforms, in turn.

    A transform's invalid source is worded by ``texts[bad_source]`` (its value in
    ``{placeholder}``): the mirror's and the sources' texts differ.
    """
    texts = spec.texts
    transforms = origin.subject_transforms or ()
    if not transforms:
        subject = origin.filter_subject
        if subject and not is_valid_subject(subject):
            return {"err": texts["filter"].format(filter=subject)}
        return None
    for transform in transforms:
        src, dest = transform.src, transform.dest
        if src and not is_valid_subject(src):
            return {"err": texts[bad_source].format_map({placeholder: src})}
        error = subject_transform_error(src, dest, _generation(spec))
        if error is not None:
            return {"err": texts["transform"].format(src=src, dest=dest, err=error)}
    return None


@register("stream.transform_add", guard="c.subject_transform is not None")
def _transform_add(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """2.10: ``addStream`` builds the stream's subject transform (no destination: none)."""
    transform = config.subject_transform
    if transform is None:
        return _PASS
    error = subject_transform_error(transform.src, transform.dest, _generation(spec))
    if error is None:
        return _PASS
    return {"src": transform.src, "dest": transform.dest, "err": error}


# --- defaults the server fills in before it stores a config (setStreamConfigDefaults
# at the top of checkStreamCfg), in its order


@register_default("stream.default.replicas")
def _replicas(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """``num_replicas`` 0 becomes 1."""
    if not stored.get("num_replicas"):
        stored["num_replicas"] = 1


_UNLIMITED: Final = (
    "max_msgs",
    "max_msgs_per_subject",
    "max_bytes",
    "max_msg_size",
    "max_consumers",
)


@register_default("stream.default.limits")
def _limits(stored: dict[str, Any], _context: Context, spec: ConfigCheck) -> None:
    """Limits of 0 become -1 (unlimited); from 2.12.0 (``clamp``) also those below -1."""
    for key in _UNLIMITED:
        value = stored.get(key, 0)
        if value == 0 or (spec.variant == "clamp" and value < -1):
            stored[key] = -1


@register_default("stream.default.duplicate_window")
def _window(stored: dict[str, Any], _context: Context, spec: ConfigCheck) -> None:
    """A zero duplicate window becomes min(2m, max_age), except on mirrors.

    ``sources`` (2.14.0): nor on streams with sources.
    """
    if stored.get("duplicate_window") or stored.get("mirror") is not None:
        return
    if "sources" in flags(spec.variant) and stored.get("sources"):
        return
    age = stored.get("max_age") or 0
    stored["duplicate_window"] = (
        age if 0 < age < _DUPLICATE_WINDOW else _DUPLICATE_WINDOW
    )


@register_default("stream.default.subject_delete_markers")
def _markers(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """A marker TTL switches message TTLs and roll-ups on, and the purge denial off."""
    if stored.get("subject_delete_marker_ttl", 0) > 0:
        stored["allow_msg_ttl"] = True
        if not stored.get("allow_rollup_hdrs"):
            stored["allow_rollup_hdrs"], stored["deny_purge"] = True, False


@register_default("stream.default.schedules")
def _schedules(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """Message schedules switch roll-ups on and the purge denial off (2.12.0)."""
    if stored.get("allow_msg_schedules") and not stored.get("allow_rollup_hdrs"):
        stored["allow_rollup_hdrs"], stored["deny_purge"] = True, False


@register_default("stream.default.subjects")
def _own_subject(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """No subjects, mirror or sources: the stream's name is its subject."""
    bare = stored.get("mirror") is None and not stored.get("sources")
    if bare and not stored.get("subjects"):
        stored["subjects"] = [stored.get("name", "")]


@register_default("stream.default.republish_source")
def _republish(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """An empty republish source becomes ``>``."""
    republish = stored.get("republish")
    if republish is not None and not republish.get("src"):
        republish["src"] = ">"


@register_default("stream.default.empty_placement")
def _placement(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """An empty placement is dropped (2.11.9)."""
    placement = stored.get("placement")
    if placement is not None and not any(placement.values()):
        stored["placement"] = None


@register_default("stream.default.mirror_duplicate_window")
def _mirror_window(
    stored: dict[str, Any], context: Context, _spec: ConfigCheck
) -> None:
    """A cluster stores a mirror without its duplicate window (every node decodes it so)."""
    if context.mode == "cluster" and stored.get("mirror") is not None:
        stored["duplicate_window"] = 0


# --- notes: defaults on load that change what the target does, not whether it loads


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
