"""Tests for assetgate.judge.metadata: Atoi, required levels, stored and returned metadata."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from assetgate import (
    ApiError,
    decode,
    go_atoi,
    header_accepted,
    supports_required_level,
    validate,
)
from assetgate.decoding.goscan import go_atoi_error
from assetgate.judge.metadata import (
    CREATED_LEVEL_KEY,
    CREATED_VERSION_KEY,
    REQUIRED_LEVEL_KEY,
    config_features,
    required_level,
    response_metadata,
    stored_metadata,
)

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue
    from assetgate.wire import AssetKind


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 1),
        ("+1", 1),
        ("01", 1),
        ("-1", -1),
        ("9223372036854775807", 9223372036854775807),
        ("-9223372036854775808", -9223372036854775808),
        # refused by strconv.Atoi
        (" 1", None),
        ("1 ", None),
        ("1.0", None),
        ("abc", None),
        ("", None),
        ("+", None),
        ("9223372036854775808", None),
        ("0x1", None),
        ("1_0", None),
        ("\uff11", None),
    ],
    ids=repr,
)
def test_go_atoi(text: str, expected: int | None) -> None:
    """go_atoi follows Go strconv.Atoi on 64 bits: sign, ASCII digits, in range."""
    assert go_atoi(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("-5", None),
        ("", "invalid syntax"),
        ("+", "invalid syntax"),
        ("1_0", "invalid syntax"),
        ("\uff11", "invalid syntax"),
        ("9223372036854775808", "value out of range"),
        ("-9223372036854775809", "value out of range"),
        ("18446744073709551615x", "invalid syntax"),  # fits 64 bits before the x
        ("18446744073709551616x", "value out of range"),  # overflows before it
        ("000000000000000000000001x", "invalid syntax"),
    ],
    ids=repr,
)
def test_go_atoi_error(text: str, expected: str | None) -> None:
    """go_atoi_error names Go's error: digits that overflow before a non-digit are a range error."""
    assert go_atoi_error(text) == expected


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (None, True),
        ({}, True),
        ({REQUIRED_LEVEL_KEY: ""}, True),
        ({REQUIRED_LEVEL_KEY: "1"}, True),
        ({REQUIRED_LEVEL_KEY: "3"}, True),
        ({REQUIRED_LEVEL_KEY: "4"}, False),
        ({REQUIRED_LEVEL_KEY: "text"}, False),
        ({REQUIRED_LEVEL_KEY: "-1"}, True),
        ({REQUIRED_LEVEL_KEY: "+1"}, True),
        ({REQUIRED_LEVEL_KEY: " 1"}, False),
        ({REQUIRED_LEVEL_KEY: "1.0"}, False),
        ({REQUIRED_LEVEL_KEY: "9223372036854775807"}, False),
    ],
    ids=[
        "nil",
        "empty-map",
        "empty-value",
        "one",
        "own-level",
        "above",
        "text",
        "minus",
        "plus",
        "space",
        "float",
        "max-int",
    ],
)
def test_supports_required_level(
    metadata: dict[str, str] | None, expected: bool
) -> None:
    """TestGetAndSupportsRequiredApiLevel vectors (plus Atoi edge cases) on a level-3 server."""
    assert supports_required_level(metadata, 3) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, True),
        ("1", True),
        ("+1", True),
        ("01", True),
        (" 1", True),
        ("-1", True),
        ("", True),
        ("3", True),
        ("1 ", False),
        ("1.0", False),
        ("abc", False),
        ("99", False),
        ("4", False),
    ],
    ids=repr,
)
def test_header_accepted_on_2_12(
    catalogue: Catalogue, value: str | None, expected: bool
) -> None:
    """Nats-Required-Api-Level on 2.12.8 (level 3): the probed accept/refuse table."""
    assert header_accepted(value, catalogue.server("2.12.8")) is expected


@pytest.mark.parametrize("version", ["2.10.26", "2.11.11"], ids=["2.10", "2.11"])
@pytest.mark.parametrize("value", ["1 ", "1.0", "abc", "99"], ids=repr)
def test_header_ignored_before_2_12(
    catalogue: Catalogue, version: str, value: str
) -> None:
    """Servers before 2.12 ignore the header entirely."""
    assert header_accepted(value, catalogue.server(version)) is True


# --- required level: zero values never count ---------------------------------------------


def _level(
    catalogue: Catalogue, body: str, kind: AssetKind, version: str = "2.15.1"
) -> int:
    result = validate(body, kind=kind, server=version, catalogue=catalogue)
    assert result.accepted, result.error
    return result.required_level


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ('{"name":"S"}', "stream"),
        ('{"name":"S","allow_msg_ttl":false}', "stream"),
        ('{"name":"S","subject_delete_marker_ttl":0}', "stream"),
        ('{"name":"S","allow_msg_counter":false,"allow_atomic":false}', "stream"),
        ('{"name":"S","persist_mode":"default"}', "stream"),
        ('{"name":"S","persist_mode":""}', "stream"),
        ('{"name":"S","allow_batched":false}', "stream"),
        ('{"name":"C"}', "consumer"),
        ('{"name":"C","pause_until":"0001-01-01T00:00:00Z"}', "consumer"),
        ('{"name":"C","pause_until":null}', "consumer"),
        ('{"name":"C","priority_policy":"none"}', "consumer"),
        ('{"name":"C","priority_timeout":0}', "consumer"),
        ('{"name":"C","priority_groups":[]}', "consumer"),
        ('{"name":"C","ack_policy":"explicit"}', "consumer"),
        ('{"name":"C","sourcing":true}', "consumer"),
    ],
    ids=[
        "plain-stream",
        "ttl-false",
        "sdm-zero",
        "counters-false",
        "persist-default",
        "persist-empty",
        "batched-false",
        "plain-consumer",
        "pause-zero-time",
        "pause-null",
        "priority-none",
        "priority-timeout-zero",
        "priority-groups-empty",
        "ack-explicit",
        "sourcing-no-rule",
    ],
)
def test_zero_values_do_not_count(
    catalogue: Catalogue, body: str, kind: AssetKind
) -> None:
    """Fields left at (or set to) their zero value do not raise the level."""
    assert _level(catalogue, body, kind) == 0


def test_negative_sdm_ttl_does_not_count(catalogue: Catalogue) -> None:
    """A negative subject_delete_marker_ttl needs no level (a create is refused)."""
    body = b'{"name":"S","subject_delete_marker_ttl":-1}'
    result = validate(body, kind="stream", server="2.15.1", catalogue=catalogue)
    needs = config_features(body, "stream", catalogue)
    assert (result.error, needs) == (
        ApiError(
            code=500,
            err_code=10052,
            description="subject delete marker TTL must not be negative",
        ),
        (0, "2.11.0"),
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0001-01-01T00:00:00Z", 0),
        ("0001-01-01T00:00:00+00:00", 0),
        ("1970-01-01T00:00:00Z", 1),
        ("2024-01-01T00:00:00+01:00", 1),
    ],
    ids=["zero-time", "zero-time-offset", "unix-epoch", "future"],
)
def test_pause_until_level(catalogue: Catalogue, value: str, expected: int) -> None:
    """pause_until needs level 1 for any non-zero instant, even the Unix epoch (probe C4/C5)."""
    body = f'{{"name":"C","pause_until":"{value}"}}'
    assert _level(catalogue, body, "consumer") == expected


def test_required_level_is_max_of_rules(catalogue: Catalogue) -> None:
    """Several features: the level is the highest matching rule."""
    body = '{"name":"S","allow_msg_ttl":true,"allow_atomic":true,"allow_batched":true}'
    assert _level(catalogue, body, "stream") == 4


def test_required_level_uses_server_line_rules(catalogue: Catalogue) -> None:
    """The level is computed with the responding server's rules (prioritized: 1 on 2.12)."""
    body = '{"name":"C","priority_policy":"prioritized","priority_groups":["a"]}'
    assert _level(catalogue, body, "consumer", version="2.12.8") == 1


def test_required_level_function_direct(catalogue: Catalogue) -> None:
    """required_level() over a decoded config returns the highest rule level."""
    line = catalogue.server("2.14.6").line
    result = validate(
        '{"name":"S","allow_msg_counter":true}',
        kind="stream",
        server="2.14.6",
        catalogue=catalogue,
    )
    assert result.accepted
    config = decode(
        b'{"name":"S","allow_msg_counter":true}', line, "StreamConfig"
    ).config
    assert required_level(config, line, "stream") == 2


# --- stored metadata --------------------------------------------------------------------------

_USER_KEYS = '{"name":"L1","subjects":["l1"],"metadata":{"_nats.req.level":"99","_nats.ver":"x","_nats.level":"y","k":"v"}}'


@pytest.mark.parametrize(
    ("version", "stored", "reply"),
    [
        (
            "2.10.26",
            {"_nats.req.level": "99", "_nats.ver": "x", "_nats.level": "y", "k": "v"},
            {"_nats.req.level": "99", "_nats.ver": "x", "_nats.level": "y", "k": "v"},
        ),
        (
            "2.11.11",
            {"_nats.req.level": "0", "k": "v"},
            {
                "_nats.level": "1",
                "_nats.req.level": "0",
                "_nats.ver": "2.11.11",
                "k": "v",
            },
        ),
        (
            "2.12.8",
            {"_nats.req.level": "0", "k": "v"},
            {
                "_nats.level": "3",
                "_nats.req.level": "0",
                "_nats.ver": "2.12.8",
                "k": "v",
            },
        ),
        (
            "2.15.1",
            {"_nats.req.level": "0", "k": "v"},
            {
                "_nats.level": "5",
                "_nats.req.level": "0",
                "_nats.ver": "2.15.1",
                "k": "v",
            },
        ),
    ],
    ids=["2.10-verbatim", "2.11", "2.12", "2.15"],
)
def test_user_versioning_keys(
    catalogue: Catalogue, version: str, stored: dict[str, str], reply: dict[str, str]
) -> None:
    """User _nats.* keys: kept verbatim on 2.10, overwritten/dropped from 2.11 (probe L1)."""
    result = validate(_USER_KEYS, kind="stream", server=version, catalogue=catalogue)
    assert (result.stamped_metadata, result.response_metadata) == (stored, reply)


@pytest.mark.parametrize(
    ("version", "stored", "reply"),
    [
        ("2.10.26", None, None),
        (
            "2.11.11",
            {"_nats.req.level": "0"},
            {"_nats.req.level": "0", "_nats.ver": "2.11.11", "_nats.level": "1"},
        ),
        (
            "2.14.6",
            {"_nats.req.level": "0"},
            {"_nats.req.level": "0", "_nats.ver": "2.14.6", "_nats.level": "4"},
        ),
    ],
    ids=["2.10", "2.11", "2.14"],
)
def test_plain_create_metadata(
    catalogue: Catalogue,
    version: str,
    stored: dict[str, str] | None,
    reply: dict[str, str] | None,
) -> None:
    """A plain create stores only _nats.req.level; the reply adds _nats.ver and _nats.level."""
    result = validate(
        '{"name":"P1","subjects":["p1.>"]}',
        kind="stream",
        server=version,
        catalogue=catalogue,
    )
    assert (result.stamped_metadata, result.response_metadata) == (stored, reply)


def test_stored_metadata_drops_dynamic_keys(catalogue: Catalogue) -> None:
    """TestJetStreamSetStaticStreamMetadataRemoveDynamicFields: only _nats.req.level remains."""
    request = {"_nats.ver": "dynamic-version", "_nats.level": "dynamic-version"}
    actual = stored_metadata(request, profile=catalogue.server("2.12.8"), level=0)
    assert actual == {REQUIRED_LEVEL_KEY: "0"}


def test_stored_metadata_overwrites_previous_level(catalogue: Catalogue) -> None:
    """A request's {req: previous-level} is overwritten with the computed level."""
    actual = stored_metadata(
        {REQUIRED_LEVEL_KEY: "previous-level"},
        profile=catalogue.server("2.11.11"),
        level=0,
    )
    assert actual == {REQUIRED_LEVEL_KEY: "0"}


def test_response_metadata_keeps_stored(catalogue: Catalogue) -> None:
    """TestJetStreamSetDynamicStreamMetadata: the reply is stored keys plus the dynamic ones."""
    stored = {REQUIRED_LEVEL_KEY: "0"}
    actual = response_metadata(stored, catalogue.server("2.12.8"))
    assert (actual, stored) == (
        {REQUIRED_LEVEL_KEY: "0", "_nats.ver": "2.12.8", "_nats.level": "3"},
        {REQUIRED_LEVEL_KEY: "0"},
    )


_SAME = '{"name":"S","subjects":["a"]}'


@pytest.mark.parametrize(
    ("request_body", "existing", "stored"),
    [
        (_SAME, _SAME, None),
        (
            '{"name":"S","subjects":["a"],"metadata":{"_nats.req.level":"0","_nats.ver":"2.11.0","_nats.level":"1"}}',
            _SAME,
            None,
        ),
        (
            '{"name":"S","subjects":["a"],"metadata":{"_nats.req.level":"-1"}}',
            '{"name":"S","subjects":["a"],"metadata":{"_nats.req.level":"previous-level"}}',
            {"_nats.req.level": "previous-level"},
        ),
        (
            _SAME,
            '{"name":"S","subjects":["a"],"metadata":{"_nats.req.level":"previous-level"}}',
            {"_nats.req.level": "previous-level"},
        ),
    ],
    ids=[
        "no-key",
        "upgrade-with-versioning-keys",
        "previous-level",
        "request-without-metadata",
    ],
)
def test_idempotent_create_copies_metadata(
    catalogue: Catalogue,
    request_body: str,
    existing: str,
    stored: dict[str, str] | None,
) -> None:
    """Re-creating an identical asset keeps the stored metadata as it is (copyStreamMetadata)."""
    result = validate(
        request_body,
        kind="stream",
        server="2.12.8",
        existing=existing,
        catalogue=catalogue,
    )
    assert (result.accepted, result.stamped_metadata) == (True, stored)


def test_idempotent_create_reply_without_stored_level(catalogue: Catalogue) -> None:
    """An upgraded 2.10 stream re-created on 2.12 replies with only the two dynamic keys."""
    result = validate(
        _SAME, kind="stream", server="2.12.8", existing=_SAME, catalogue=catalogue
    )
    assert result.response_metadata == {"_nats.ver": "2.12.8", "_nats.level": "3"}


def test_update_recomputes_level_down(catalogue: Catalogue) -> None:
    """An update stores the level of the new config, even when it goes down (2 -> 0)."""
    existing = '{"name":"S","subjects":["a"],"allow_msg_counter":true,"metadata":{"_nats.req.level":"2"}}'
    result = validate(
        _SAME,
        kind="stream",
        server="2.12.8",
        op="update",
        existing=existing,
        catalogue=catalogue,
    )
    assert (result.required_level, result.stamped_metadata) == (
        0,
        {"_nats.req.level": "0"},
    )


def test_update_first_stores_level(catalogue: Catalogue) -> None:
    """The first update of a stream without metadata stores _nats.req.level."""
    result = validate(
        _SAME,
        kind="stream",
        server="2.12.8",
        op="update",
        existing=_SAME,
        catalogue=catalogue,
    )
    assert result.stamped_metadata == {"_nats.req.level": "0"}


def test_created_version_on_create(catalogue: Catalogue) -> None:
    """Create records the created-version keys of the responding server."""
    result = validate(_SAME, kind="stream", server="2.12.8", catalogue=catalogue)
    assert result.created_metadata == {
        CREATED_VERSION_KEY: "2.12.8",
        CREATED_LEVEL_KEY: "3",
    }


def test_created_version_on_2_10(catalogue: Catalogue) -> None:
    """On 2.10 the created level is empty (no API level)."""
    result = validate(_SAME, kind="stream", server="2.10.26", catalogue=catalogue)
    assert result.created_metadata == {
        CREATED_VERSION_KEY: "2.10.26",
        CREATED_LEVEL_KEY: "",
    }


def test_created_version_preserved_on_update(catalogue: Catalogue) -> None:
    """Update carries the created-version keys over from the existing asset."""
    existing = (
        '{"name":"S","subjects":["a"],"metadata":{"_nats.created.server.version":"2.12.1",'
        '"_nats.created.server.api_level":"2"}}'
    )
    result = validate(
        _SAME,
        kind="stream",
        server="2.14.6",
        op="update",
        existing=existing,
        catalogue=catalogue,
    )
    assert result.created_metadata == {
        CREATED_VERSION_KEY: "2.12.1",
        CREATED_LEVEL_KEY: "2",
    }


def test_created_version_turned_off(catalogue: Catalogue) -> None:
    """created_version=False leaves the created-version keys out."""
    result = validate(
        _SAME,
        kind="stream",
        server="2.12.8",
        created_version=False,
        catalogue=catalogue,
    )
    assert result.created_metadata is None


# --- minimum server version ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "kind", "version", "level", "minimum"),
    [
        (
            '{"name":"C","priority_policy":"prioritized","priority_groups":["a"]}',
            "consumer",
            "2.12.8",
            1,
            "2.12.0",
        ),
        (
            (
                '{"name":"S","sources":[{"name":"a",'
                '"consumer":{"name":"x","deliver_subject":"d.x"}}]}'
            ),
            "stream",
            "2.14.6",
            0,
            "2.14.0",
        ),
        ('{"name":"S","allow_batched":true}', "stream", "2.14.6", 4, "2.14.0"),
        ('{"name":"S","subjects":["a"]}', "stream", "2.12.8", 0, "2.10.0"),
        ('{"name":"S","allow_msg_ttl":true}', "stream", "2.12.8", 1, "2.11.0"),
        ('{"name":"S","persist_mode":"async"}', "stream", "2.12.8", 2, "2.12.0"),
        (
            '{"name":"C","ack_policy":"flow_control","deliver_subject":"dl.c"}',
            "consumer",
            "2.15.1",
            4,
            "2.14.0",
        ),
    ],
    ids=[
        "prioritized",
        "source-consumer",
        "batched",
        "plain",
        "ttl",
        "async",
        "flow-control",
    ],
)
def test_min_server_version(
    catalogue: Catalogue,
    *,
    body: str,
    kind: AssetKind,
    version: str,
    level: int,
    minimum: str,
) -> None:
    """The earliest release knowing every field and value used, beyond what the level says."""
    result = validate(body, kind=kind, server=version, catalogue=catalogue)
    assert (result.accepted, result.required_level, result.min_server_version) == (
        True,
        level,
        minimum,
    )


def test_min_server_version_of_template_owner(catalogue: Catalogue) -> None:
    """A template_owner create is refused (no such template) yet known since 2.10.0."""
    result = validate(
        '{"name":"S","template_owner":"T"}',
        kind="stream",
        server="2.12.8",
        catalogue=catalogue,
    )
    error = result.error
    assert (error, result.min_server_version) == (
        ApiError(code=500, err_code=10049, description="stream not owned by template"),
        "2.10.0",
    )


def test_min_server_version_for_rejected(catalogue: Catalogue) -> None:
    """A config the server rejects for an unknown field still gets its minimum release."""
    result = validate(
        '{"name":"S","allow_batched":true}',
        kind="stream",
        server="2.12.8",
        catalogue=catalogue,
    )
    assert (result.accepted, result.min_server_version) == (False, "2.14.0")


def test_min_server_version_none_when_unknown_everywhere(catalogue: Catalogue) -> None:
    """A field no release knows gives no minimum release."""
    result = validate(
        '{"name":"S","zzz":1}', kind="stream", server="2.11.11", catalogue=catalogue
    )
    assert result.min_server_version is None
