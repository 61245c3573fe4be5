"""``assetgate.validate`` against real servers for creates that break a config check.

Each case breaks one of the server's semantic stream checks (``checkStreamCfg``; the
facts are ``[[checks]]`` in ``levels/``). Every release line's binary gets the same
create requests, and its reply must be what ``validate`` predicts, byte for byte: the
error (code, error code, description) or acceptance. Names and subjects are unique per
case (``CK...``, ``ck<n>.``), so the requests do not meet other tests' streams.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Final

import pytest

import assetgate
from tests.realserver.conftest import Servers
from tests.support import differential
from tests.support.natsserver import NatsServer, raw_request

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.realserver

VERSIONS: Final = (
    "2.10.26",
    "2.11.1",
    "2.11.6",
    "2.11.10",
    "2.11.11",
    "2.12.1",
    "2.12.8",
    "2.14.0",
    "2.14.6",
    "2.15.1",
)
_MS: Final = 1_000_000
_S: Final = 1_000_000_000


def _s(index: int, **config: Any) -> dict[str, Any]:
    """A stream config named CK<index> with subject ck<index>.> unless given."""
    return {"name": f"CK{index}", "subjects": [f"ck{index}.>"], **config}


def _mirror(index: int, **mirror: Any) -> dict[str, Any]:
    return {"name": f"CK{index}", "mirror": {"name": "ORIGIN", **mirror}}


def _source(index: int, *sources: dict[str, Any], **config: Any) -> dict[str, Any]:
    return {"name": f"CK{index}", "sources": list(sources), **config}


# (case id: the check it breaks, config)
STREAM_CASES: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("name_too_long", {"name": "N" * 256, "subjects": ["ck0.>"]}),
    ("description_too_long", _s(1, description="d" * 4097)),
    ("metadata_too_large", _s(2, metadata={"big": "v" * (128 * 1024)})),
    ("replicas_max", _s(3, num_replicas=6)),
    ("replicas_negative", _s(4, num_replicas=-1)),
    ("max_age_negative", _s(5, max_age=-1)),
    ("max_age_min", _s(6, max_age=50 * _MS)),
    ("duplicates_negative", _s(7, duplicate_window=-1)),
    ("duplicates_over_max_age", _s(8, max_age=_S, duplicate_window=2 * _S)),
    ("duplicates_min", _s(9, duplicate_window=50 * _MS)),
    ("rollup_deny_purge", _s(10, deny_purge=True, allow_rollup_hdrs=True)),
    ("discard_new_per_subject_policy", _s(11, discard_new_per_subject=True)),
    (
        "discard_new_per_subject_limit",
        _s(12, discard="new", discard_new_per_subject=True),
    ),
    ("counter_discard_new", _s(13, allow_msg_counter=True, discard="new")),
    ("counter_ttl", _s(14, allow_msg_counter=True, allow_msg_ttl=True)),
    ("counter_schedules", _s(15, allow_msg_counter=True, allow_msg_schedules=True)),
    ("counter_retention", _s(16, allow_msg_counter=True, retention="workqueue")),
    ("sdm_needs_ttl", _s(17, subject_delete_marker_ttl=_S)),
    ("sdm_min", _s(18, subject_delete_marker_ttl=500 * _MS, allow_msg_ttl=True)),
    ("sdm_negative", _s(19, subject_delete_marker_ttl=-1)),
    ("schedules_discard_new", _s(20, allow_msg_schedules=True, discard="new")),
    ("async_file_only", _s(21, persist_mode="async", storage="memory")),
    ("async_atomic", _s(22, persist_mode="async", allow_atomic=True)),
    ("mirror_first_seq", {**_mirror(23), "first_seq": 5}),
    ("mirror_subjects", {**_mirror(24), "subjects": ["ck24.>"]}),
    ("mirror_sources", {**_mirror(25), "sources": [{"name": "OTHER"}]}),
    (
        "mirror_filter_and_transforms",
        _mirror(
            26, filter_subject="a.>", subject_transforms=[{"src": "b.>", "dest": "c.>"}]
        ),
    ),
    (
        "mirror_transform_source",
        _mirror(27, subject_transforms=[{"src": "a..b", "dest": ">"}]),
    ),
    (
        "mirror_filters_overlap",
        _mirror(
            28,
            subject_transforms=[{"src": "a.>", "dest": ""}, {"src": "a.b", "dest": ""}],
        ),
    ),
    ("mirror_name", {"name": "CK29", "mirror": {"name": "bad.origin"}}),
    ("mirror_counters", {**_mirror(30), "allow_msg_counter": True}),
    ("mirror_atomic", {**_mirror(31), "allow_atomic": True}),
    ("mirror_schedules", {**_mirror(32), "allow_msg_schedules": True}),
    ("mirror_batch", {**_mirror(33), "allow_batched": True}),
    (
        "mirror_sdm",
        {**_mirror(34), "subject_delete_marker_ttl": _S, "allow_msg_ttl": True},
    ),
    ("sources_schedules", _source(35, {"name": "A"}, allow_msg_schedules=True)),
    ("source_invalid_name", _source(36, {"name": "bad.name"})),
    ("source_duplicate", _source(37, {"name": "A"}, {"name": "A"})),
    (
        "source_filter_and_transforms",
        _source(
            38,
            {
                "name": "A",
                "filter_subject": "a.>",
                "subject_transforms": [{"src": "b.>", "dest": "c.>"}],
            },
        ),
    ),
    (
        "source_transform_source",
        _source(
            39, {"name": "A", "subject_transforms": [{"src": "a..b", "dest": ">"}]}
        ),
    ),
    (
        "source_filters_overlap",
        _source(
            40,
            {
                "name": "A",
                "subject_transforms": [
                    {"src": "a.>", "dest": ""},
                    {"src": "a.b", "dest": ""},
                ],
            },
        ),
    ),
    (
        "external_deliver_wildcards",
        _source(
            41, {"name": "A", "external": {"api": "$JS.hub.API", "deliver": "d.*"}}
        ),
    ),
    ("external_api_wildcards", _source(42, {"name": "A", "external": {"api": "a.*"}})),
    (
        "external_api_overlap",
        _source(43, {"name": "A", "external": {"api": "$JS.API"}}),
    ),
    ("subjects_invalid", _s(44, subjects=["ck44..x"])),
    ("subjects_duplicate", _s(45, subjects=["ck45.a", "ck45.a"])),
    ("subjects_all_no_ack", _s(46, subjects=[">"])),
    ("subjects_jetstream_api", _s(47, subjects=["*.ck47"])),
    ("subjects_jetstream_api_subset", _s(48, subjects=["$JS.API.ck48"])),
    ("subjects_nrg", _s(49, subjects=["$NRG.ck49"])),
    ("subjects_system_api", _s(50, subjects=["$SYS.ck50"])),
    ("subjects_event_allowed", _s(51, subjects=["$JS.EVENT.ck51"])),
    ("subjects_overlap", _s(52, subjects=["ck52.>", "ck52.a"])),
    ("transform_source", _s(53, subject_transform={"src": "ck53..x", "dest": "y"})),
    ("republish_cycle", _s(54, republish={"src": ">", "dest": "ck54.x"})),
    ("placement_preferred", _s(55, placement={"preferred": "n1"})),
    ("name_invalid_slash", {"name": "CK56", "subjects": ["ck56.>"]}),
    ("sourced_duplicate_window", _source(57, {"name": "A"}, max_age=_S)),
    ("replicas_standalone", _s(58, num_replicas=3)),
    ("replicas_standalone_after_checks", _s(59, num_replicas=3, max_age=-5)),
    # the subjects default to [name] before the republish cycle test
    ("republish_default_subject", {"name": "CK75", "republish": {"dest": "CK75"}}),
    ("republish_all_to_all", {"name": "CK76", "republish": {"dest": ">"}}),
    ("republish_transform", _s(77, republish={"src": "ck77.>", "dest": "out"})),
    ("transform_dest", _s(78, subject_transform={"src": "tbd.>", "dest": "x"})),
    ("transform_no_dest", _s(79, subject_transform={"src": "a..b", "dest": ""})),
    (
        "transform_unknown_function",
        _s(80, subject_transform={"src": "ck80.*", "dest": "y.{{nope(1)}}"}),
    ),
    # 2.11.0-2.11.10 and 2.12.0-2.12.1 test the transform after the republish
    (
        "order_republish_transform",
        {
            "name": "CK81",
            "subjects": ["ck81"],
            "republish": {"src": ">", "dest": "ck81"},
            "subject_transform": {"src": "a..b", "dest": "x"},
        },
    ),
    # 2.10 builds the transform in addStream, after the standalone test
    (
        "order_replicas_transform",
        _s(82, num_replicas=3, subject_transform={"src": "a..b", "dest": "x"}),
    ),
    (
        "source_transform_dest",
        _source(83, {"name": "A", "subject_transforms": [{"src": "o.>", "dest": "x"}]}),
    ),
    (
        "mirror_transform_dest",
        _mirror(84, subject_transforms=[{"src": "o.>", "dest": "x"}]),
    ),
    (
        "mirror_transform_index",
        _mirror(85, subject_transforms=[{"src": "o.*", "dest": "x.{{wildcard(2)}}"}]),
    ),
    ("source_filter_invalid", _source(86, {"name": "A", "filter_subject": "a..b"})),
    ("mirror_filter_invalid", _mirror(87, filter_subject="a..b")),
    ("create_sealed", _s(88, sealed=True)),
    ("create_mirror_direct", _s(89, mirror_direct=True)),
    ("name_slash", {"name": "CK90/x", "subjects": ["ck90.>"]}),
    ("name_backslash", {"name": "CK91\\x", "subjects": ["ck91.>"]}),
    ("template_owner", _s(92, template_owner="T")),
    # 2.12.5: the filter checks apply to external sources too
    (
        "external_source_filter_and_transforms",
        _source(
            93,
            {
                "name": "A",
                "external": {"api": "$JS.hub.API"},
                "filter_subject": "a.>",
                "subject_transforms": [{"src": "b.>", "dest": "c.>"}],
            },
        ),
    ),
    (
        "external_source_transform_source",
        _source(
            94,
            {
                "name": "A",
                "external": {"api": "$JS.hub.API"},
                "subject_transforms": [{"src": "a..b", "dest": ""}],
            },
        ),
    ),
    # 2.10 refuses an empty transform source
    (
        "source_empty_transform_source",
        _source(95, {"name": "A", "subject_transforms": [{"src": "", "dest": "z.>"}]}),
    ),
    (
        "mirror_empty_transform_source",
        _mirror(96, subject_transforms=[{"src": "", "dest": "z.>"}]),
    ),
    # each mirror transform in turn: an overlap before a later invalid source
    (
        "mirror_overlap_before_invalid",
        _mirror(
            97,
            subject_transforms=[
                {"src": "m.>", "dest": ""},
                {"src": "m.x", "dest": ""},
                {"src": "b..d", "dest": ""},
            ],
        ),
    ),
    # 2.14: durable consumers of mirrors and sources
    (
        "mirror_consumer_name",
        {
            "name": "CK100",
            "mirror": {
                "name": "ORIGIN",
                "consumer": {"name": "c.x", "deliver_subject": "dlv.ck100"},
            },
        },
    ),
    (
        "source_consumer_no_deliver",
        _source(101, {"name": "A", "consumer": {"name": "c"}}),
    ),
    (
        "source_consumer_filter",
        _source(
            102,
            {
                "name": "A",
                "filter_subject": "o.a",
                "consumer": {"name": "c", "deliver_subject": "dlv.ck102"},
            },
        ),
    ),
    (
        "source_consumer_duplicate",
        _source(
            103,
            {
                "name": "A",
                "subject_transforms": [{"src": "a.>", "dest": "x.>"}],
                "consumer": {"name": "c", "deliver_subject": "dlv.ck103a"},
            },
            {
                "name": "A",
                "subject_transforms": [{"src": "b.>", "dest": "y.>"}],
                "consumer": {"name": "c", "deliver_subject": "dlv.ck103b"},
            },
        ),
    ),
    (
        "source_consumer_ok",
        _source(
            104,
            {"name": "A", "consumer": {"name": "c", "deliver_subject": "dlv.ck104"}},
        ),
    ),
    # 2.10 tests each source transform's overlaps before the next one's source
    (
        "source_overlap_before_invalid",
        _source(
            113,
            {
                "name": "A",
                "subject_transforms": [
                    {"src": "a.>", "dest": ""},
                    {"src": "a.b", "dest": ""},
                    {"src": "c..d", "dest": ""},
                ],
            },
        ),
    ),
    # pedantic mode (2.11+): the defaults the server would fill in are errors
    ("pedantic_duplicates", _s(105, max_age=60 * _S, pedantic=True)),
    ("pedantic_sdm_ttl", _s(106, subject_delete_marker_ttl=_S, pedantic=True)),
    (
        "pedantic_sdm_rollup",
        _s(107, subject_delete_marker_ttl=_S, allow_msg_ttl=True, pedantic=True),
    ),
    ("pedantic_limits", _s(108, max_msgs=-5, pedantic=True)),
    ("pedantic_schedules", _s(109, allow_msg_schedules=True, pedantic=True)),
    ("pedantic_republish_source", _s(110, republish={"dest": "out110"}, pedantic=True)),
    (
        "pedantic_republish_implicit",
        {
            "name": "CK111",
            "subjects": ["ck111.a"],
            "subject_transform": {"src": "ck111.a", "dest": "t111.a"},
            "republish": {"src": ">", "dest": ">"},
            "pedantic": True,
        },
    ),
    ("pedantic_ok", _s(112, pedantic=True)),
    # 2.10 checks every destination of a source before its transform sources
    (
        "source_destinations_first",
        _source(
            98,
            {
                "name": "A",
                "subject_transforms": [
                    {"src": "a..b", "dest": ""},
                    {"src": "c", "dest": "d..e"},
                ],
            },
        ),
    ),
    # an empty destination token: "... in " up to 2.12.4, the bare error from 2.12.5
    (
        "transform_dest_empty_token",
        _s(113, subject_transform={"src": "ck113.*", "dest": "x..y"}),
    ),
    (
        "mirror_transform_dest_empty_token",
        _mirror(114, subject_transforms=[{"src": ">", "dest": "x..y"}]),
    ),
    (
        "source_transform_dest_empty_token",
        _source(
            115, {"name": "A", "subject_transforms": [{"src": ">", "dest": "x..y"}]}
        ),
    ),
)


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """One server per release for this module alone.

    Its leading-wildcard subjects would meet other modules' streams (an overlap,
    10065) on the session's shared servers, whatever order the modules run in.
    """
    registry = Servers(tmp_path_factory)
    try:
        yield registry
    finally:
        registry.close()


def _stored(reply: dict[str, Any], predicted: assetgate.Validation) -> tuple[Any, Any]:
    """(the config the server reports, the one validate predicts), comparable."""
    served = reply.get("config") if "error" not in reply else None
    if served is None or predicted.stored_config is None:
        return served, predicted.stored_config
    return differential.stored_pair(served, predicted.stored_config)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("case", "config"), STREAM_CASES, ids=[c for c, _ in STREAM_CASES]
)
def test_stream_check_matches_server(
    own: Servers, version: str, case: str, config: dict[str, Any]
) -> None:
    """A create that breaks a stream check gets validate's predicted reply."""
    running = own.get(version)
    subject = f"$JS.API.STREAM.CREATE.{config['name']}"
    reply = running.request(subject, json.dumps(config).encode())
    if "error" not in reply:  # accepted: remove it again, the store stays small
        running.request(f"$JS.API.STREAM.DELETE.{config['name']}", b"")
    predicted = assetgate.validate(config, kind="stream", server=version)
    expected = differential.predicted_error(predicted)
    assert (case, reply.get("error")) == (case, expected)
    served, stored = _stored(reply, predicted)
    assert (case, stored) == (case, served)


@pytest.mark.parametrize("version", VERSIONS)
def test_dotted_name_gets_no_reply(own: Servers, version: str) -> None:
    """A create of a name with a dot is never answered, as validate's no_reply says."""
    running = own.get(version)
    config = {"name": "CK99.x", "subjects": ["ck99.>"]}
    with pytest.raises(TimeoutError):
        raw_request(
            running.url,
            "$JS.API.STREAM.CREATE.CK99.x",
            json.dumps(config).encode(),
            timeout=1.0,
        )
    predicted = assetgate.validate(config, kind="stream", server=version)
    assert (predicted.accepted, predicted.error, predicted.no_reply is not None) == (
        False,
        None,
        True,
    )


_CRASH_WAIT_S: Final = 5.0


@pytest.mark.parametrize(
    "version",
    ["2.10.26", "2.11.10", "2.11.11", "2.12.1", "2.12.3", "2.12.4", "2.12.8", "2.14.6"],
)
def test_null_source_crash(tmp_path: Path, version: str) -> None:
    """``"sources":[null]`` kills the server up to 2.11.11/2.12.3; later ones answer 10141."""
    config = {"name": "CKN", "sources": [None]}
    predicted = assetgate.validate(config, kind="stream", server=version)
    with NatsServer(version, tmp_path / "store") as server:
        try:
            reply = raw_request(
                server.url,
                "$JS.API.STREAM.CREATE.CKN",
                json.dumps(config).encode(),
                timeout=_CRASH_WAIT_S,
            )
        except (ConnectionError, TimeoutError):
            reply = None
        deadline = time.monotonic() + _CRASH_WAIT_S
        while server.running() and time.monotonic() < deadline:
            time.sleep(0.1)
        alive = server.running()
    expected = differential.predicted_error(predicted)
    assert (reply and reply.get("error"), alive, predicted.server_crash is None) == (
        expected,
        expected is not None,
        expected is not None,
    )


BASE_STREAMS: Final[dict[str, dict[str, Any]]] = {
    "CKB": {"name": "CKB", "subjects": ["ckb.>"]},
    "CKW": {"name": "CKW", "subjects": ["ckw.>"], "retention": "workqueue"},
    "CKL": {
        "name": "CKL",
        "subjects": ["ckl.>"],
        "consumer_limits": {"max_ack_pending": 10, "inactive_threshold": 60 * _S},
    },
    "CKM": {"name": "CKM", "subjects": ["ckm.>"], "storage": "memory"},
}


def _c(index: int, **config: Any) -> dict[str, Any]:
    """A pull consumer config named ck<index> (durable)."""
    return {"durable_name": f"ck{index}", "ack_policy": "explicit", **config}


def _push(index: int, **config: Any) -> dict[str, Any]:
    return _c(index, deliver_subject=f"dlv.ck{index}", **config)


# (case id, stream, config)
CONSUMER_CASES: Final[tuple[tuple[str, str, dict[str, Any]], ...]] = (
    ("plain_pull", "CKB", _c(1)),
    ("replicas_exceed_stream", "CKB", _c(2, num_replicas=3)),
    ("replicas_negative", "CKB", _c(3, num_replicas=-1)),
    ("backoff_negative", "CKB", _c(4, backoff=[-1], max_deliver=5)),
    ("ack_wait_negative", "CKB", _c(5, ack_wait=-1)),
    ("backoff_max_deliver", "CKB", _c(6, backoff=[_S, 2 * _S], max_deliver=2)),
    ("backoff_unlimited", "CKB", _c(7, backoff=[_S, 2 * _S])),
    (
        "backoff_over_max_deliver",
        "CKB",
        _c(8, backoff=[_S, 2 * _S, 3 * _S], max_deliver=2),
    ),
    ("description_too_long", "CKB", _c(9, description="d" * 4097)),
    ("push_wildcards", "CKB", _c(10, deliver_subject="dlv.*")),
    ("push_invalid_subject", "CKB", _c(11, deliver_subject="dlv..x")),
    ("push_cycle", "CKB", _c(12, deliver_subject="ckb.x")),
    ("push_max_waiting", "CKB", _push(13, max_waiting=5)),
    ("push_max_waiting_negative", "CKB", _push(14, max_waiting=-1)),
    (
        "push_ack_none_max_ack_pending",
        "CKB",
        _push(15, ack_policy="none", max_ack_pending=5),
    ),
    ("push_small_heartbeat", "CKB", _push(16, idle_heartbeat=50 * _MS)),
    ("pull_ack_none_workqueue", "CKW", _c(17, ack_policy="none")),
    ("pull_rate_limit", "CKB", _c(18, rate_limit_bps=1000)),
    ("pull_max_waiting_negative", "CKB", _c(19, max_waiting=-1)),
    ("pull_heartbeat", "CKB", _c(20, idle_heartbeat=_S)),
    ("pull_flow_control", "CKB", _c(21, flow_control=True)),
    ("pull_max_batch_negative", "CKB", _c(22, max_batch=-1)),
    ("pull_max_expires_small", "CKB", _c(23, max_expires=500_000)),
    ("pull_max_expires_negative", "CKB", _c(24, max_expires=-1)),
    ("max_ack_pending_stream_limit", "CKL", _c(25, max_ack_pending=20)),
    ("inactive_threshold_stream_limit", "CKL", _c(26, inactive_threshold=120 * _S)),
    ("direct_push", "CKB", {"name": "ck27", "direct": True}),
    ("filters_both", "CKB", _c(28, filter_subject="ckb.a", filter_subjects=["ckb.b"])),
    ("filter_invalid", "CKB", _c(29, filter_subject="ckb..a")),
    ("filter_empty", "CKB", _c(30, filter_subjects=["ckb.a", ""])),
    ("filters_overlap_subset", "CKB", _c(31, filter_subjects=["ckb.>", "ckb.a"])),
    ("filters_overlap_partly", "CKB", _c(32, filter_subjects=["ckb.*.x", "ckb.b.*"])),
    ("deliver_all_with_seq", "CKB", _c(33, opt_start_seq=5)),
    ("deliver_by_seq_without", "CKB", _c(34, deliver_policy="by_start_sequence")),
    ("deliver_by_time_without", "CKB", _c(35, deliver_policy="by_start_time")),
    (
        "deliver_last_per_subject_without_filter",
        "CKB",
        _c(36, deliver_policy="last_per_subject"),
    ),
    ("sample_frequency", "CKB", _c(37, sample_freq="abc")),
    ("flow_control_without_heartbeat", "CKB", _push(38, flow_control=True)),
    ("durable_name_mismatch", "CKB", _c(39, name="other")),
    ("metadata_too_large", "CKB", _c(40, metadata={"big": "v" * (128 * 1024)})),
    ("priority_without_group", "CKB", _c(41, priority_policy="overflow")),
    (
        "priority_empty_group",
        "CKB",
        _c(42, priority_policy="overflow", priority_groups=[""]),
    ),
    (
        "priority_invalid_group",
        "CKB",
        _c(43, priority_policy="overflow", priority_groups=["a b"]),
    ),
    (
        "priority_push",
        "CKB",
        _push(44, priority_policy="overflow", priority_groups=["g"]),
    ),
    ("priority_groups_without_policy", "CKB", _c(45, priority_groups=["g"])),
    ("pinned_ttl_without_policy", "CKB", _c(46, priority_timeout=5 * _S)),
    ("priority_ok", "CKB", _c(47, priority_policy="overflow", priority_groups=["g"])),
    ("flow_control_pull", "CKB", _c(48, ack_policy="flow_control")),
    (
        "flow_control_max_deliver",
        "CKB",
        _push(49, ack_policy="flow_control", max_deliver=3),
    ),
    ("flow_control_ack_wait", "CKB", _push(50, ack_policy="flow_control", ack_wait=_S)),
    ("flow_control_ok", "CKB", _push(51, ack_policy="flow_control")),
    # ephemeral consumers store an inactive threshold of 5 s; durables keep theirs
    ("ephemeral_inactive_threshold", "CKB", {"name": "ck52"}),
    ("ephemeral_negative_threshold", "CKB", {"name": "ck53", "inactive_threshold": -1}),
    ("legacy_ephemeral", "CKB", {}),
    ("durable_negative_threshold", "CKB", _c(54, inactive_threshold=-1)),
    # addConsumerWithAssignment, after checkConsumerCfg
    ("wq_ack_all", "CKW", _c(55, ack_policy="all")),
    ("wq_push_default_ack", "CKW", {"durable_name": "ck56", "deliver_subject": "d.56"}),
    ("wq_deliver_new", "CKW", _c(57, deliver_policy="new")),
    ("durable_too_long", "CKB", _c(58, durable_name="n" * 300)),
    ("name_too_long_file", "CKB", {"name": "m" * 300}),
    ("name_too_long_memory", "CKM", {"name": "k" * 300}),
    ("durable_bad_name", "CKB", _c(59, durable_name="ck59*")),
    ("name_bad", "CKB", {"name": "ck60>"}),
    # the create handler's path separator check comes before every other
    ("path_separator_name", "CKB", {"name": "ck61/x", "num_replicas": 3}),
    ("path_separator_durable", "CKB", _c(62, durable_name="ck62\\x")),
    ("sample_negative", "CKB", _c(63, sample_freq="-5")),
    ("sample_out_of_range", "CKB", _c(64, sample_freq="99999999999999999999%")),
    ("sample_out_of_range_first", "CKB", _c(65, sample_freq="-99999999999999999999x")),
    (
        "sample_negative_before_metadata",
        "CKB",
        _c(66, sample_freq="-1", metadata={"big": "v" * (128 * 1024)}),
    ),
    ("deliver_undefined", "CKB", _c(67, deliver_policy="undefined")),
    (
        "deliver_undefined_start",
        "CKB",
        _c(68, deliver_policy="undefined", opt_start_seq=5),
    ),
    # one loop tests each filter's validity, then its overlaps
    (
        "filters_overlap_before_invalid",
        "CKB",
        _c(69, filter_subjects=["ckb.a", "ckb..b", "ckb.a"]),
    ),
    (
        "filters_invalid_before_overlap",
        "CKB",
        _c(70, filter_subjects=["ckb..b", "ckb.a", "ckb.a"]),
    ),
    (
        "filters_partly_overlap_before_invalid",
        "CKB",
        _c(71, filter_subjects=["ckb.*.x", "ckb.b.*", "ckb..c"]),
    ),
    # negatives clamped before the checks from 2.12.0
    (
        "backoff_max_deliver_below_unlimited",
        "CKB",
        _c(72, max_deliver=-2, backoff=[_S]),
    ),
    (
        "flow_control_negative_heartbeat",
        "CKB",
        _push(73, flow_control=True, idle_heartbeat=-1),
    ),
    (
        "flow_control_negative_heartbeat_priority",
        "CKB",
        _push(
            74,
            flow_control=True,
            idle_heartbeat=-1,
            priority_policy="overflow",
            priority_groups=["g"],
        ),
    ),
)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("case", "stream", "config"), CONSUMER_CASES, ids=[c for c, _, _ in CONSUMER_CASES]
)
def test_consumer_check_matches_server(
    own: Servers, version: str, case: str, stream: str, config: dict[str, Any]
) -> None:
    """A create that breaks a consumer check gets validate's predicted reply."""
    running = own.get(version)
    stream_config = BASE_STREAMS[stream]
    running.request(
        f"$JS.API.STREAM.CREATE.{stream}", json.dumps(stream_config).encode()
    )
    # the name goes in the subject, as validate assumes; none: the legacy ephemeral one
    name = config.get("durable_name") or config.get("name")
    subject = f"$JS.API.CONSUMER.CREATE.{stream}" + (f".{name}" if name else "")
    body = json.dumps({"stream_name": stream, "config": config}).encode()
    reply = running.request(subject, body)
    if "error" not in reply:
        running.request(f"$JS.API.CONSUMER.DELETE.{stream}.{reply['name']}", b"")
    predicted = assetgate.validate(
        config, kind="consumer", server=version, stream=stream_config
    )
    expected = differential.predicted_error(predicted)
    assert (case, reply.get("error")) == (case, expected)
    served, stored = _stored(reply, predicted)
    assert (case, stored) == (case, served)
