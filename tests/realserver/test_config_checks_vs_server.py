"""``assetgate.validate`` against real servers for creates that break a config check.

Each case breaks one of the server's semantic stream checks (``checkStreamCfg``; the
facts are ``[[checks]]`` in ``levels/``). Every release line's binary gets the same
create requests, and its reply must be what ``validate`` predicts, byte for byte: the
error (code, error code, description) or acceptance. Names and subjects are unique per
case (``CK...``, ``ck<n>.``), so the requests do not meet other tests' streams.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest

import assetgate

if TYPE_CHECKING:
    from tests.realserver.conftest import Servers

pytestmark = pytest.mark.realserver

VERSIONS: Final = (
    "2.10.26",
    "2.11.1",
    "2.11.6",
    "2.11.11",
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
)


def _reply(config: dict[str, Any]) -> dict[str, Any] | None:
    """The error of a reply as the server sends it, or None for acceptance."""
    return config.get("error")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("case", "config"), STREAM_CASES, ids=[c for c, _ in STREAM_CASES]
)
def test_stream_check_matches_server(
    servers: Servers, version: str, case: str, config: dict[str, Any]
) -> None:
    """A create that breaks a stream check gets validate's predicted reply."""
    running = servers.get(version)
    subject = f"$JS.API.STREAM.CREATE.{config['name']}"
    reply = running.request(subject, json.dumps(config).encode())
    if "error" not in reply:  # accepted: remove it again, the store stays small
        running.request(f"$JS.API.STREAM.DELETE.{config['name']}", b"")
    predicted = assetgate.validate(config, kind="stream", server=version)
    expected = (
        None
        if predicted.error is None
        else {
            "code": predicted.error.code,
            "err_code": predicted.error.err_code,
            "description": predicted.error.description,
        }
    )
    assert (case, reply.get("error")) == (case, expected)
