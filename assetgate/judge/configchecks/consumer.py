"""Consumer checks: ``checkConsumerCfg`` and ``addConsumerWithAssignment`` (server/consumer.go).

One function per check, in the order the server makes them, each registered under the
id its ``[[checks]]`` entries in ``levels/`` use. A function returns ``None`` when the
config passes, else the values of its description template. Fields a release line
does not know read as their zero value.

Size: over the ~400-line guide because one function per server check, in the server's
order and with its texts per release; the checks the server runs as one function
(``checkConsumerCfg``, ``addConsumerWithAssignment``) stay in one module.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Final

from msgspec.json import encode as _encode  # noqa: F401 - METADATA_GUARD calls it

from assetgate.decoding.goscan import go_atoi, go_atoi_error, go_quote
from assetgate.judge.configchecks import register, register_default
from assetgate.judge.configchecks.stream import (
    METADATA_GUARD,
    go_duration,
    is_valid_subject,
    metadata_too_large,
)
from assetgate.judge.subjects import is_subset_match, subjects_collide

if TYPE_CHECKING:
    from collections.abc import Mapping

    from assetgate.catalogue.levels import ConfigCheck
    from assetgate.judge.configchecks import Context

__all__: list[str] = []

_PASS: Final = None
_FAIL: Final[Mapping[str, str]] = {}
_NO_POLICY: Final = frozenset({"", "none"})
_SECOND: Final = 1_000_000_000
_MS: Final = 1_000_000
_ACK_WAIT: Final = 30 * _SECOND  # JsAckWaitDefault
_MAX_ACK_PENDING: Final = 1000  # JsDefaultMaxAckPending
_MAX_WAITING: Final = 512  # JSWaitQueueDefaultMax
_MAX_DESCRIPTION: Final = 4 * 1024
_MAX_NAME: Final = 255  # JSMaxNameLen, in bytes
_DELETE_WAIT: Final = 5 * _SECOND  # JsDeleteWaitTimeDefault
_NAME_BAD: Final = re.compile(r"[ \t\r\n\f.*>\\/]")  # isValidAssetName
_OLD_NAME_BAD: Final = re.compile(r"[ \t\r\n\f.*>]")  # isValidName (to 2.12.7)
_WQ_ACKS: Final = frozenset({"explicit", "flow_control"})
_GROUP: Final = re.compile(r"^[a-zA-Z0-9/_=-]{1,16}$")  # validGroupName
_START_BAD: Final = "consumer delivery policy is deliver {policy}, but optional start {what} is also set"
_NOT_SET: Final = (
    "consumer delivery policy is deliver {policy}, but optional {what} is not set"
)
_POLICY_WORDS: Final = {
    "all": "all",
    "last": "last",
    "last_per_subject": "last per subject",
    "new": "new",
    "by_start_sequence": "by start sequence",
    "by_start_time": "by start time",
}


def _policy_none(config: Any) -> bool:
    return getattr(config, "priority_policy", "") in _NO_POLICY


def _clamps(spec: ConfigCheck) -> bool:
    """2.12.0+ (variant ``clamp``): negative values are set to their default first."""
    return spec.variant == "clamp"


def _max_deliver(config: Any, *, clamp: bool) -> int:
    """``max_deliver`` after the defaults: 0 is -1, and below -1 too when ``clamp``.

    ``clamp``: the release clamps negatives before its checks (2.12.0+).
    """
    value: int = config.max_deliver
    return -1 if value == 0 or (clamp and value < -1) else value


def _ack_wait(config: Any) -> int:
    """``ack_wait`` after the defaults: 30 s for explicit and all, else ``backoff[0]``."""
    backoff = config.backoff or ()
    if backoff:
        return int(backoff[0])
    if not config.ack_wait and config.ack_policy in {"explicit", "all"}:
        return _ACK_WAIT
    return int(config.ack_wait)


def _heartbeat(config: Any, *, clamp: bool = False) -> int:
    """``idle_heartbeat`` after the defaults (a flow-control ack policy sets 1 s).

    ``clamp``: the release sets a negative heartbeat to 0 before its checks (2.12.0+).
    """
    if config.ack_policy == "flow_control":
        return _SECOND
    value = int(config.idle_heartbeat)
    return 0 if clamp and value < 0 else value


def _subject_name(config: Any, context: Context) -> str:
    """The consumer's name as the server checks it.

    On create, the name in the request subject, which the create handler copies into
    ``name``: assumed to be ``durable_name``, else ``name``, as clients send it
    (``CONSUMER.CREATE.<stream>.<name>``; neither: the legacy ephemeral subject, no
    name). Stored, ``name``.
    """
    if context.phase == "create":
        return str(config.durable_name or config.name)
    return str(config.name)


def _max_ack_pending(config: Any, context: Context) -> int:
    """``max_ack_pending`` after the defaults (the stream's limit, else 1000)."""
    value: int = config.max_ack_pending
    if value:
        return value
    stream = context.stream
    if stream is not None and stream.consumer_limits.max_ack_pending:
        return int(stream.consumer_limits.max_ack_pending)
    return 0 if config.ack_policy == "none" else _MAX_ACK_PENDING


def _stream(context: Context) -> Any:
    return context.stream


def _fail_if(condition: object) -> Mapping[str, str] | None:
    return _FAIL if condition else _PASS


# --- the create handler (jsConsumerCreateRequest), before addConsumer


@register(
    "consumer.create_path_separators",
    guard="'/' in c.durable_name + c.name or '\\\\' in c.durable_name + c.name",
)
def _path_separators(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A create whose subject names the consumer with a path separator, before all else."""
    name = _subject_name(config, context)
    return _fail_if("/" in name or "\\" in name)


@register(
    "consumer.replicas_standalone", guard="_ctx.mode == 'single' and c.num_replicas > 1"
)
def _standalone(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A standalone server refuses a replicated consumer (create only)."""
    return _fail_if(context.mode == "single" and config.num_replicas > 1)


# --- checkConsumerCfg, in its order


@register("consumer.name_invalid", guard="_NAME_BAD.search(c.name + c.durable_name)")
def _name(config: Any, context: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """A name without dots, wildcards, slashes or whitespace (2.12.8).

    On create the name is the subject's, so a bad durable name fails here first.
    """
    name = _subject_name(config, context)
    return _fail_if(name and _NAME_BAD.search(name))


@register("consumer.durable_invalid", guard="_NAME_BAD.search(c.name + c.durable_name)")
def _durable(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """A durable name without dots, wildcards, slashes or whitespace (2.12.8)."""
    return _fail_if(config.durable_name and _NAME_BAD.search(config.durable_name))


@register(
    "consumer.replicas_exceed_stream", guard="c.num_replicas > 1", needs_stream=True
)
def _replicas_stream(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """No more replicas than the stream."""
    stream = _stream(context)
    return _fail_if(
        config.num_replicas > 0 and config.num_replicas > max(stream.num_replicas, 1)
    )


@register("consumer.replicas_negative", guard="c.num_replicas < 0")
def _replicas_negative(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """No negative replica count."""
    return _fail_if(config.num_replicas < 0)


@register("consumer.replicas_match_stream", guard="c.num_replicas", needs_stream=True)
def _replicas_match(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """An interest or work-queue stream's consumers have its replicas (not on load)."""
    stream = _stream(context)
    if context.phase == "load" or stream.retention not in {"interest", "workqueue"}:
        return _PASS
    replicas = config.num_replicas
    return _fail_if(replicas and replicas != max(stream.num_replicas, 1))


@register("consumer.backoff_negative", guard="c.backoff")
def _backoff_negative(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """No negative backoff (2.12.0)."""
    return _fail_if(any(value < 0 for value in config.backoff or ()))


@register("consumer.ack_wait_negative", guard="c.ack_wait < 0 or c.backoff")
def _ack_wait_negative(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """No negative ``ack_wait`` once the defaults are in (2.12.0)."""
    return _fail_if(_ack_wait(config) < 0)


def _flow_control_check(check_id: str, failing: Any) -> None:
    def function(
        config: Any, context: Context, _s: ConfigCheck
    ) -> Mapping[str, str] | None:
        if config.ack_policy != "flow_control":
            return _PASS
        return _fail_if(failing(config, context))

    function.__doc__ = f"The flow-control ack policy's rule {check_id} (2.14.0)."
    register(check_id, guard="c.ack_policy == 'flow_control'")(function)


# 10219 (flow control) and the 1 s heartbeat rule are not modelled: without pedantic
# mode (never on load) setConsumerConfigDefaults switches both on first.
for _id, _failing in (
    ("consumer.flow_control_push", lambda c, _x: not c.deliver_subject),
    ("consumer.flow_control_max_ack_pending", lambda c, x: _max_ack_pending(c, x) <= 0),
    ("consumer.flow_control_ack_wait", lambda c, _x: bool(c.ack_wait or c.backoff)),
    (
        "consumer.flow_control_max_deliver",
        lambda c, _x: _max_deliver(c, clamp=True) > 0,
    ),
):
    _flow_control_check(_id, _failing)


@register("consumer.backoff_max_deliver", guard="c.backoff")
def _backoff_deliver(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """No more backoff values than deliveries.

    ``strict`` (2.10.0-2.10.13): ``max_deliver`` must exceed the count, unlimited
    included; ``equal`` (2.10.14-2.10.22): a limited one must exceed it; later it may
    equal it. ``clamp`` (2.12.0): a ``max_deliver`` below -1 is -1 (unlimited) first.
    """
    count = len(config.backoff or ())
    limit = _max_deliver(config, clamp=_clamps(spec))
    if not count:
        return _PASS
    if spec.variant == "strict":  # 2.10.0-2.10.13: even an unlimited max_deliver
        return _fail_if(limit <= count)
    if limit == -1:
        return _PASS
    return _fail_if(count >= limit if spec.variant == "equal" else count > limit)


@register("consumer.description_too_long", guard="len(c.description) > 1024")
def _description(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """A description of at most 4 KiB."""
    return _fail_if(len(config.description.encode()) > _MAX_DESCRIPTION)


@register(
    "consumer.push_wildcards",
    guard="c.deliver_subject and ('*' in c.deliver_subject or '>' in c.deliver_subject)",
)
def _push_wildcards(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A push consumer's deliver subject is literal."""
    subject = config.deliver_subject
    return _fail_if(subject and any(t in {"*", ">"} for t in subject.split(".")))


@register(
    "consumer.push_invalid_subject",
    guard="c.deliver_subject and not is_valid_subject(c.deliver_subject)",
)
def _push_invalid(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A push consumer's deliver subject is a valid subject."""
    return _fail_if(
        config.deliver_subject and not is_valid_subject(config.deliver_subject)
    )


@register("consumer.push_cycle", guard="c.deliver_subject", needs_stream=True)
def _push_cycle(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A deliver subject the stream would store again forms a cycle."""
    subject = config.deliver_subject
    stream = _stream(context)
    if not subject:
        return _PASS
    subjects = list(stream.subjects or []) or [stream.name]
    return _fail_if(any(is_subset_match(subject, s) for s in subjects))


@register("consumer.push_max_waiting", guard="c.deliver_subject and c.max_waiting")
def _push_waiting(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """A push consumer sets no ``max_waiting`` (a negative one is cleared from 2.12.0)."""
    waiting = config.max_waiting
    if _clamps(spec) and waiting < 0:
        waiting = 0
    return _fail_if(config.deliver_subject and waiting != 0)


@register(
    "consumer.push_max_ack_pending_ack_none",
    guard="c.deliver_subject and c.ack_policy == 'none'",
)
def _push_ack_none(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A push consumer without acks sets no ``max_ack_pending``."""
    if not config.deliver_subject or config.ack_policy != "none":
        return _PASS
    return _fail_if(_max_ack_pending(config, context) > 0)


@register(
    "consumer.push_small_heartbeat",
    guard="c.deliver_subject and 0 < c.idle_heartbeat < 100000000",
)
def _push_heartbeat(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A push consumer's heartbeat is at least 100 ms."""
    return _fail_if(config.deliver_subject and 0 < _heartbeat(config) < 100 * _MS)


@register(
    "consumer.pull_ack_none_workqueue",
    guard="not c.deliver_subject and c.ack_policy == 'none'",
    needs_stream=True,
)
def _pull_wq(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A pull consumer on a work-queue stream acknowledges."""
    stream = _stream(context)
    return _fail_if(
        not config.deliver_subject
        and config.ack_policy == "none"
        and stream.retention == "workqueue"
    )


def _pull_check(check_id: str, guard: str, failing: Any, doc: str) -> None:
    def function(
        config: Any, _c: Context, spec: ConfigCheck
    ) -> Mapping[str, str] | None:
        if config.deliver_subject:
            return _PASS
        return _fail_if(failing(config, spec))

    function.__doc__ = doc
    register(check_id, guard=f"not c.deliver_subject and ({guard})")(function)


for _id, _guard, _failing, _doc in (
    (
        "consumer.pull_rate_limit",
        "c.rate_limit_bps",
        lambda c, _s: c.rate_limit_bps > 0,
        "A pull consumer has no rate limit.",
    ),
    (
        "consumer.pull_max_waiting_negative",
        "c.max_waiting < 0",
        lambda c, s: c.max_waiting < 0 and not _clamps(s),
        "A pull consumer's max_waiting is not negative (cleared from 2.12.0).",
    ),
    (
        "consumer.pull_heartbeat",
        "c.idle_heartbeat > 0",
        lambda c, _s: c.idle_heartbeat > 0,
        "A pull consumer has no heartbeat.",
    ),
    (
        "consumer.pull_flow_control",
        "c.flow_control",
        lambda c, _s: c.flow_control,
        "A pull consumer has no flow control.",
    ),
    (
        "consumer.pull_max_batch_negative",
        "c.max_batch < 0",
        lambda c, s: c.max_batch < 0 and not _clamps(s),
        "A pull consumer's max_batch is not negative (cleared from 2.12.0).",
    ),
    (
        "consumer.pull_max_expires_small",
        "c.max_expires and c.max_expires < 1000000",
        lambda c, s: (
            (0 < c.max_expires < _MS) or (c.max_expires < 0 and not _clamps(s))
        ),
        "A pull consumer's max_expires is at least 1 ms (a negative one is cleared from 2.12.0).",
    ),
):
    _pull_check(_id, _guard, _failing, _doc)


@register("consumer.max_ack_pending_stream_limit", guard="True", needs_stream=True)
def _ack_pending_limit(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """No more ``max_ack_pending`` than the stream's consumer limit."""
    limit = _stream(context).consumer_limits.max_ack_pending
    if limit > 0 and _max_ack_pending(config, context) > limit:
        return {"limit": str(limit)}
    return _PASS


@register("consumer.inactive_threshold_stream_limit", guard="True", needs_stream=True)
def _inactive_limit(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """No longer ``inactive_threshold`` than the stream's consumer limit."""
    limit = _stream(context).consumer_limits.inactive_threshold
    threshold = config.inactive_threshold or limit
    if limit > 0 and threshold > limit:
        return {"limit": go_duration(limit)}
    return _PASS


@register("consumer.direct_push", guard="c.direct")
def _direct_push(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """A direct consumer is a push consumer."""
    return _fail_if(config.direct and not config.deliver_subject)


@register("consumer.direct_ephemeral", guard="c.direct")
def _direct_ephemeral(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A direct consumer is ephemeral."""
    return _fail_if(config.direct and config.durable_name)


@register("consumer.filters_both", guard="c.filter_subject and c.filter_subjects")
def _filters_both(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """``filter_subject`` or ``filter_subjects``, not both."""
    return _fail_if(config.filter_subject and config.filter_subjects)


# The server's loop over the filters tests each one's validity, then its overlaps with
# the others, so an overlap reported before a later invalid filter wins. Registered
# before filter_invalid (made first by the server): this check stops at the first
# invalid or empty filter, and filter_invalid, made next, gives that reply.
@register(
    "consumer.filters_overlap", guard="c.filter_subjects and len(c.filter_subjects) > 1"
)
def _filters_overlap(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Filters do not overlap (``subset`` or ``collide``, by release)."""
    # the consumers of a stream often share their filters: the answer is remembered
    return _fail_if(_filters_collide(tuple(config.filter_subjects or ()), spec.variant))


@functools.lru_cache(maxsize=4096)
def _filters_collide(filters: tuple[str, ...], variant: str) -> bool:
    """Whether the server's loop stops at an overlap, not at an invalid filter."""
    if "" in filters:  # refused before the loop
        return False
    for index, subject in enumerate(filters):
        if not is_valid_subject(subject):
            return False
        if variant == "collide":  # symmetric: the earlier ones were tested already
            if any(subjects_collide(subject, other) for other in filters[index + 1 :]):
                return True
        elif any(
            is_subset_match(subject, other)
            for other_index, other in enumerate(filters)
            if other_index != index
        ):
            return True
    return False


@register(
    "consumer.filter_invalid",
    guard="(c.filter_subject and not is_valid_subject(c.filter_subject)) or "
    "(c.filter_subjects and not all(map(is_valid_subject, c.filter_subjects)))",
)
def _filter_invalid(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """Filters are valid subjects, and none in ``filter_subjects`` is empty."""
    if config.filter_subject and not is_valid_subject(config.filter_subject):
        return {"err": "invalid subject"}
    filters = list(config.filter_subjects or [])
    if "" in filters:
        return {"error": "consumer_empty_filter"}
    if any(not is_valid_subject(f) for f in filters):
        return {"err": "invalid subject"}
    return _PASS


@register(
    "consumer.deliver_policy_start",
    guard="c.opt_start_seq or c.opt_start_time is not None or c.deliver_policy in ('last_per_subject', 'by_start_sequence', 'by_start_time')",
)
def _deliver_policy(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """The deliver policy and the optional start agree."""
    policy = config.deliver_policy
    words = _POLICY_WORDS.get(policy)
    if words is None:
        return _PASS
    seq, start = config.opt_start_seq, config.opt_start_time is not None
    if policy in {"all", "last", "last_per_subject", "new"}:
        if seq > 0:
            return {"err": _START_BAD.format(policy=words, what="sequence")}
        if start:
            return {"err": _START_BAD.format(policy=words, what="time")}
        if policy == "last_per_subject" and not (
            config.filter_subject or config.filter_subjects
        ):
            return {"err": _NOT_SET.format(policy=words, what="filter subject")}
    elif policy == "by_start_sequence":
        if seq == 0:
            return {"err": _NOT_SET.format(policy=words, what="start sequence")}
        if start:
            return {"err": _START_BAD.format(policy=words, what="time")}
    elif not start:
        return {"err": _NOT_SET.format(policy=words, what="start time")}
    elif seq != 0:
        return {"err": _START_BAD.format(policy=words, what="start sequence")}
    return _PASS


@register("consumer.sample_frequency", guard="c.sample_freq")
def _sampling(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """A sampling frequency is a whole, non-negative number of percent (Go ``Atoi``)."""
    if not config.sample_freq:
        return _PASS
    text = config.sample_freq.removesuffix("%")
    value = go_atoi(text)
    if value is None:
        return {"err": f"strconv.Atoi: parsing {go_quote(text)}: {go_atoi_error(text)}"}
    # a negative one passes the server's reply a nil error, which it formats as <nil>
    return {"err": "<nil>"} if value < 0 else _PASS


@register(
    "consumer.flow_control_heartbeat_required",
    guard="c.flow_control and _heartbeat(c) <= 0",
)
def _fc_heartbeat(
    config: Any, _c: Context, spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Flow control needs heartbeats (``clamp``, 2.12.0: a negative one is 0 first)."""
    return _fail_if(
        config.flow_control and _heartbeat(config, clamp=_clamps(spec)) == 0
    )


@register(
    "consumer.durable_name_mismatch",
    guard="c.durable_name and c.name and c.name != c.durable_name",
)
def _mismatch(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """``durable_name`` and ``name`` agree when both are set."""
    return _fail_if(
        config.durable_name and config.name and config.name != config.durable_name
    )


@register(
    "consumer.metadata_too_large",
    guard=METADATA_GUARD,
)
def _metadata(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """Metadata of at most 128 KiB."""
    return _fail_if(metadata_too_large(config.metadata))


@register("consumer.priority_push", guard="c.priority_policy not in ('', 'none')")
def _priority_push(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """Priority groups are for pull consumers (2.11.7)."""
    return _fail_if(not _policy_none(config) and config.deliver_subject)


@register(
    "consumer.priority_policy_without_group",
    guard="c.priority_policy not in ('', 'none')",
)
def _policy_without_group(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A priority policy needs a group (2.11.0)."""
    return _fail_if(not _policy_none(config) and not config.priority_groups)


@register("consumer.priority_group_name", guard="c.priority_policy not in ('', 'none')")
def _group_names(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """Group names are not empty and match ``validGroupName`` (2.11.0)."""
    if _policy_none(config):
        return _PASS
    for group in config.priority_groups or ():
        if not group:
            return {"error": "consumer_empty_group"}
        if _GROUP.match(group) is None:
            return {"error": "consumer_invalid_group"}
    return _PASS


@register("consumer.priority_groups_policy_none", guard="c.priority_groups")
def _groups_without_policy(
    config: Any, _context: Context, _spec: ConfigCheck
) -> Mapping[str, str] | None:
    """Priority groups need a priority policy (``checkConsumerCfg``, 2.12.0)."""
    if getattr(config, "priority_groups", None) and _policy_none(config):
        return _FAIL
    return _PASS


@register("consumer.pinned_ttl_policy_none", guard="c.priority_timeout > 0")
def _pinned_ttl_without_policy(
    config: Any, _context: Context, _spec: ConfigCheck
) -> Mapping[str, str] | None:
    """A priority timeout needs a priority policy (``checkConsumerCfg``, 2.12.0)."""
    if getattr(config, "priority_timeout", 0) > 0 and _policy_none(config):
        return _FAIL
    return _PASS


@register("consumer.stream_placement_preferred", guard="True", needs_stream=True)
def _stream_preferred(
    _config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """The stream's placement names no preferred server (2.11.0)."""
    placement = _stream(context).placement
    return _fail_if(placement is not None and getattr(placement, "preferred", ""))


# --- addConsumerWithAssignment, after checkConsumerCfg, in its order (the stream's
# max_consumers and, on a work-queue stream, the other consumers' filters are not
# modelled: they need the stream's consumers)


def _on_workqueue(config: Any, context: Context) -> bool:
    """The work-queue rules apply: not to direct consumers, nor sourcing ones (2.14.0)."""
    return (
        _stream(context).retention == "workqueue"
        and not config.direct
        and not getattr(config, "sourcing", False)
    )


@register(
    "consumer.wq_explicit_ack", guard="c.ack_policy not in _WQ_ACKS", needs_stream=True
)
def _wq_ack(config: Any, context: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """A work-queue stream's consumers ack explicitly (or, 2.14.0, with flow control)."""
    return _fail_if(
        config.ack_policy not in _WQ_ACKS and _on_workqueue(config, context)
    )


@register(
    "consumer.wq_deliver_all", guard="c.deliver_policy != 'all'", needs_stream=True
)
def _wq_all(config: Any, context: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """A work-queue stream's consumers deliver all."""
    return _fail_if(config.deliver_policy != "all" and _on_workqueue(config, context))


@register("consumer.durable_too_long", guard="len(c.durable_name) > 63")
def _durable_long(
    config: Any, _c: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A durable name of at most 255 bytes (``JSMaxNameLen``)."""
    return _fail_if(len(config.durable_name.encode()) > _MAX_NAME)


@register(
    "consumer.bad_durable_name",
    guard="_OLD_NAME_BAD.search(c.durable_name or c.name)",
)
def _bad_name(config: Any, _c: Context, _s: ConfigCheck) -> Mapping[str, str] | None:
    """The consumer's name has no dot, wildcard or whitespace (``isValidName``).

    Its name is the durable name, else the name (a legacy ephemeral without one gets a
    valid random name).
    """
    name = config.durable_name or config.name
    return _fail_if(name and _OLD_NAME_BAD.search(name))


@register(
    "consumer.store_name_too_long",
    guard="len(c.durable_name or c.name) > 63",
    needs_stream=True,
    assumes="a file system whose file names hold at most 255 bytes (ext4, xfs, btrfs, "
    "tmpfs), and a single server (a cluster's reply is not modelled)",
)
def _store_name(
    config: Any, context: Context, _s: ConfigCheck
) -> Mapping[str, str] | None:
    """A file store cannot make the directory of a consumer named over 255 bytes."""
    if (
        context.mode != "single"
        or config.direct
        or config.mem_storage
        or _stream(context).storage == "memory"
    ):
        return _PASS
    return _fail_if(len((config.durable_name or config.name).encode()) > _MAX_NAME)


# --- defaults the server fills in before it stores a config (setConsumerConfigDefaults),
# in its order


@register_default("consumer.default.name")
def _default_name(
    stored: dict[str, Any], _context: Context, _spec: ConfigCheck
) -> None:
    """A durable consumer is named after it (a different ``name`` is replaced).

    Observed on every release for ``CONSUMER.CREATE.<stream>.<durable>``.
    """
    if stored.get("durable_name"):
        stored["name"] = stored["durable_name"]


@register_default("consumer.default.max_deliver")
def _default_max_deliver(
    stored: dict[str, Any], _context: Context, spec: ConfigCheck
) -> None:
    """``max_deliver`` 0 becomes -1 (unlimited); from 2.12.0 also below -1."""
    value = stored.get("max_deliver", 0)
    if value == 0 or (_clamps(spec) and value < -1):
        stored["max_deliver"] = -1


_CLAMPED: Final = (
    "max_waiting",
    "max_batch",
    "max_expires",
    "max_bytes",
    "idle_heartbeat",
    "inactive_threshold",
    "priority_timeout",
)


@register_default("consumer.default.negatives")
def _negatives(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """Negative values are set to 0, and ``max_ack_pending`` below -1 to -1 (2.12.0)."""
    for key in _CLAMPED:
        if stored.get(key, 0) < 0:
            stored[key] = 0
    if stored.get("max_ack_pending", 0) < -1:
        stored["max_ack_pending"] = -1


@register_default("consumer.default.max_waiting")
def _default_waiting(
    stored: dict[str, Any], _context: Context, _spec: ConfigCheck
) -> None:
    """A pull consumer's ``max_waiting`` 0 becomes 512."""
    if not stored.get("deliver_subject") and stored.get("max_waiting", 0) == 0:
        stored["max_waiting"] = _MAX_WAITING


@register_default("consumer.default.ack_wait")
def _default_ack_wait(
    stored: dict[str, Any], _context: Context, _spec: ConfigCheck
) -> None:
    """``ack_wait`` 0 becomes 30 s for explicit and all acks; a backoff sets it."""
    if not stored.get("ack_wait") and stored.get("ack_policy") in {"explicit", "all"}:
        stored["ack_wait"] = _ACK_WAIT
    backoff = stored.get("backoff") or ()
    if backoff:
        stored["ack_wait"] = backoff[0]


@register_default("consumer.default.stream_limits")
def _default_limits(
    stored: dict[str, Any], context: Context, _spec: ConfigCheck
) -> None:
    """``max_ack_pending`` and ``inactive_threshold`` 0 take the stream's limits."""
    stream = context.stream
    limits = None if stream is None else stream.consumer_limits
    if limits is None:
        return
    if not stored.get("max_ack_pending"):
        stored["max_ack_pending"] = limits.max_ack_pending
    if not stored.get("inactive_threshold"):
        stored["inactive_threshold"] = limits.inactive_threshold


@register_default(
    "consumer.default.max_ack_pending",
    assumes="no server or account max_ack_pending limit",
)
def _default_pending(
    stored: dict[str, Any], _context: Context, spec: ConfigCheck
) -> None:
    """``max_ack_pending`` 0 becomes 1000 for explicit and all acks.

    ``any`` (2.14.0): for every ack policy but none.
    """
    policy = stored.get("ack_policy")
    acked = policy != "none" if spec.variant == "any" else policy in {"explicit", "all"}
    if acked and not stored.get("max_ack_pending"):
        stored["max_ack_pending"] = _MAX_ACK_PENDING


@register_default("consumer.default.pinned_ttl")
def _default_pinned(
    stored: dict[str, Any], _context: Context, _spec: ConfigCheck
) -> None:
    """A pinned-client policy without a timeout gets two minutes (2.11.0)."""
    if stored.get("priority_policy") == "pinned_client" and not stored.get(
        "priority_timeout"
    ):
        stored["priority_timeout"] = 120 * _SECOND


@register_default("consumer.default.flow_control")
def _default_fc(stored: dict[str, Any], _context: Context, _spec: ConfigCheck) -> None:
    """The flow-control ack policy sets flow control and a 1 s heartbeat (2.14.0)."""
    if stored.get("ack_policy") == "flow_control":
        stored["flow_control"] = True
        stored["idle_heartbeat"] = _SECOND


@register_default("consumer.default.ephemeral_inactive_threshold")
def _default_ephemeral(
    stored: dict[str, Any], _context: Context, _spec: ConfigCheck
) -> None:
    """An ephemeral consumer without a positive ``inactive_threshold`` gets 5 s.

    ``updateInactiveThreshold``, once the consumer is made; a durable keeps its value.
    """
    if not stored.get("durable_name") and stored.get("inactive_threshold", 0) <= 0:
        stored["inactive_threshold"] = _DELETE_WAIT
