"""Tests for assetgate.requests.validate: the server's reply to create/update requests.

Expected replies are the real servers' texts from /tmp/facts/probe.md.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec
import pytest
import structlog

from assetgate import ApiError, InvalidArgument, ServerInfo, ServerLimits, validate
from tests.conftest import FIXTURES

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue
    from assetgate.requests.validate import Operation, Validation
    from assetgate.wire import AssetKind

_INVALID = "invalid JSON"
_VERSIONS_2_11_UP = ["2.11.11", "2.12.8", "2.14.6", "2.15.1"]


def _reply(
    catalogue: Catalogue,
    body: str | bytes,
    version: str,
    kind: AssetKind = "stream",
    **options: Any,
) -> str | None:
    """The error description the server sends, or None when it accepts."""
    result = validate(body, kind=kind, server=version, catalogue=catalogue, **options)
    if result.accepted:
        assert result.error is None
        return None
    assert result.error is not None
    return result.error.description


# (probe id, body, version, strict setting, expected description or None = accepted)
PROBE_STREAMS: list[tuple[str, str, str, bool | None, str | None]] = [
    ("P1", '{"name":"P1","subjects":["p1.>"]}', "2.10.26", None, None),
    ("P1", '{"name":"P1","subjects":["p1.>"]}', "2.15.1", True, None),
    (
        "E1",
        '{"name":"E1","subjects":["e1"],"retention":"bogus"}',
        "2.10.26",
        None,
        _INVALID,
    ),
    (
        "E1",
        '{"name":"E1","subjects":["e1"],"retention":"bogus"}',
        "2.11.11",
        None,
        'invalid JSON: can not unmarshal "\\"bogus\\""',
    ),
    (
        "E1",
        '{"name":"E1","subjects":["e1"],"retention":"bogus"}',
        "2.12.8",
        False,
        'invalid JSON: can not unmarshal "\\"bogus\\""',
    ),
    (
        "E2",
        '{"name":"E2","subjects":["e2"],"retention":null}',
        "2.15.1",
        None,
        'invalid JSON: can not unmarshal "null"',
    ),
    ("E3", '{"name":"E3","subjects":["e3"],"discard":"NEW"}', "2.10.26", None, None),
    ("E3", '{"name":"E3","subjects":["e3"],"discard":"NEW"}', "2.14.6", None, None),
    (
        "E4",
        '{"name":"E4","subjects":["e4"],"storage":"any"}',
        "2.12.8",
        None,
        'invalid JSON: can not unmarshal "\\"any\\""',
    ),
    (
        "E5",
        '{"name":"E5","subjects":["e5"],"compression":"zstd"}',
        "2.11.11",
        True,
        "invalid JSON: unknown compression algorithm",
    ),
    (
        "E5",
        '{"name":"E5","subjects":["e5"],"compression":"zstd"}',
        "2.10.26",
        None,
        _INVALID,
    ),
    (
        "E6",
        '{"name":"E6","subjects":["e6"],"retention":5}',
        "2.14.6",
        None,
        'invalid JSON: can not unmarshal "5"',
    ),
    ("K1", '{"NAME":"K1","Subjects":["k1"]}', "2.12.8", None, None),
    ("K2", '{"name":"K2","subjects":["k2"],"name":"K2"}', "2.15.1", None, None),
    ("K3", '{"name":"K3","subjects":["k3"],"max_msgs":null}', "2.12.8", None, None),
    (
        "K4",
        '{"name":"K4","subjects":["k4"],"\\u017fubjects":["k4b"]}',
        "2.12.8",
        True,
        None,
    ),
    (
        "K4U",
        '{"name":"K4U","subjects":["k4u"],"\u017fubjects":["k4ub"]}',
        "2.11.11",
        True,
        None,
    ),
    (
        "U1",
        '{"name":"U1","subjects":["u1"],"zzz":1,"placement":{"qqq":1}}',
        "2.10.26",
        None,
        None,
    ),
    (
        "U1",
        '{"name":"U1","subjects":["u1"],"zzz":1,"placement":{"qqq":1}}',
        "2.11.11",
        None,
        None,
    ),
    (
        "U1",
        '{"name":"U1","subjects":["u1"],"zzz":1,"placement":{"qqq":1}}',
        "2.11.11",
        True,
        'invalid JSON: json: unknown field "zzz"',
    ),
    (
        "U1",
        '{"name":"U1","subjects":["u1"],"zzz":1,"placement":{"qqq":1}}',
        "2.12.8",
        None,
        'invalid JSON: json: unknown field "zzz"',
    ),
    (
        "U1",
        '{"name":"U1","subjects":["u1"],"zzz":1,"placement":{"qqq":1}}',
        "2.12.8",
        False,
        None,
    ),
    (
        "U2",
        '{"name":"U2","subjects":["u2"],"placement":{"qqq":1},"zzz":1}',
        "2.15.1",
        None,
        'invalid JSON: json: unknown field "qqq"',
    ),
    ("S1", '{"name":"S1",', "2.10.26", None, _INVALID),
    (
        "S1",
        '{"name":"S1",',
        "2.11.11",
        None,
        "invalid JSON: unexpected end of JSON input",
    ),
    (
        "S1",
        '{"name":"S1",',
        "2.12.8",
        False,
        "invalid JSON: unexpected end of JSON input",
    ),
    ("S1", '{"name":"S1",', "2.11.11", True, "invalid JSON: unexpected EOF"),
    ("S1", '{"name":"S1",', "2.12.8", None, "invalid JSON: unexpected EOF"),
    ("S1", '{"name":"S1",', "2.15.1", True, "invalid JSON: unexpected EOF"),
    ("S2", '{"name":"S2"} {"subjects":["s2"]}', "2.11.11", None, None),
    ("S2", '{"name":"S2"} {"subjects":["s2"]}', "2.12.8", True, None),
    ("SA", "[]", "2.10.26", None, _INVALID),
    (
        "SA",
        "[]",
        "2.12.8",
        False,
        "invalid JSON: json: cannot unmarshal array into Go value of type server.StreamConfigRequest",
    ),
    ("S3", '{"name":"S3","subjects":["s3"],"x":[[[[[[]]]]]]}', "2.11.11", None, None),
    (
        "S3",
        '{"name":"S3","subjects":["s3"],"x":[[[[[[]]]]]]}',
        "2.14.6",
        None,
        'invalid JSON: json: unknown field "x"',
    ),
    ("T1", '{"name":"T1","subjects":["t1"],"max_msgs":"x"}', "2.10.26", None, _INVALID),
    (
        "T6",
        '{"name":"T6","subjects":["t6"],"metadata":{"a":1}}',
        "2.11.11",
        False,
        "invalid JSON: json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.metadata of type string",
    ),
    (
        "T6",
        '{"name":"T6","subjects":["t6"],"metadata":{"a":1}}',
        "2.15.1",
        True,
        "invalid JSON: json: cannot unmarshal number into Go struct field StreamConfigRequest.metadata.a of type string",
    ),
    (
        "L1",
        '{"name":"L1","subjects":["l1"],"metadata":{"_nats.req.level":"99"}}',
        "2.12.8",
        None,
        None,
    ),
]


@pytest.mark.parametrize(
    ("body", "version", "strict", "expected"),
    [row[1:] for row in PROBE_STREAMS],
    ids=[
        f"{row[0]}-{row[2]}-{'default' if row[3] is None else 'strict' if row[3] else 'lenient'}"
        for row in PROBE_STREAMS
    ],
)
def test_probe_stream_replies(
    catalogue: Catalogue,
    body: str,
    version: str,
    strict: bool | None,
    expected: str | None,
) -> None:
    """STREAM.CREATE replies match the real servers' (accepted, or the exact error text)."""
    assert _reply(catalogue, body, version, strict=strict) == expected


PROBE_CONSUMERS: list[tuple[str, str, str, str | None]] = [
    (
        "C1",
        '{"durable_name":"C1","deliver_policy":"by_start_time","opt_start_time":"2024-01-01T00:00:00+01:00","ack_policy":"explicit"}',
        "2.12.8",
        None,
    ),
    (
        "C2",
        '{"durable_name":"C2","deliver_policy":"by_start_time","opt_start_time":"2024-13-01T00:00:00Z","ack_policy":"explicit"}',
        "2.11.11",
        'invalid JSON: parsing time "2024-13-01T00:00:00Z": month out of range',
    ),
    (
        "C2",
        '{"durable_name":"C2","deliver_policy":"by_start_time","opt_start_time":"2024-13-01T00:00:00Z","ack_policy":"explicit"}',
        "2.10.26",
        _INVALID,
    ),
    (
        "C3",
        '{"name":"C3","ack_policy":null}',
        "2.15.1",
        'invalid JSON: can not unmarshal "null"',
    ),
    ("C3", '{"name":"C3","ack_policy":null}', "2.10.26", _INVALID),
    ("C4", '{"name":"C4","pause_until":"0001-01-01T00:00:00Z"}', "2.14.6", None),
    (
        "prio-null",
        '{"name":"C","priority_policy":null}',
        "2.12.8",
        "invalid JSON: unknown priority policy: null",
    ),
    (
        "prioritized",
        '{"name":"C","priority_policy":"prioritized","priority_groups":["g"]}',
        "2.11.11",
        'invalid JSON: unknown priority policy: "prioritized"',
    ),
    (
        "prioritized",
        '{"name":"C","priority_policy":"prioritized","priority_groups":["g"]}',
        "2.12.8",
        None,
    ),
    (
        "flow-control",
        '{"name":"C","ack_policy":"flow_control","deliver_subject":"dl.c"}',
        "2.12.8",
        'invalid JSON: can not unmarshal "\\"flow_control\\""',
    ),
    (
        "flow-control",
        '{"name":"C","ack_policy":"flow_control","deliver_subject":"dl.c"}',
        "2.14.6",
        None,
    ),
    (
        "sourcing",
        '{"name":"C","sourcing":true}',
        "2.12.8",
        'invalid JSON: json: unknown field "sourcing"',
    ),
]


@pytest.mark.parametrize(
    ("body", "version", "expected"),
    [row[1:] for row in PROBE_CONSUMERS],
    ids=[f"{row[0]}-{row[2]}" for row in PROBE_CONSUMERS],
)
def test_consumer_replies(
    catalogue: Catalogue, body: str, version: str, expected: str | None
) -> None:
    """CONSUMER.CREATE replies (server default strictness) match the servers' texts."""
    assert _reply(catalogue, body, version, kind="consumer") == expected


@pytest.mark.parametrize(
    ("version", "strict", "expected"),
    [
        (
            "2.12.8",
            None,
            "invalid JSON: invalid character 'x' after object key:value pair at offset 14",
        ),
        (
            "2.11.11",
            True,
            "invalid JSON: invalid character 'x' after object key:value pair at offset 14",
        ),
        (
            "2.11.11",
            None,
            "invalid JSON: invalid character 'x' after object key:value pair",
        ),
        (
            "2.12.8",
            False,
            "invalid JSON: invalid character 'x' after object key:value pair",
        ),
        ("2.10.26", None, _INVALID),
    ],
    ids=["2.12-default", "2.11-strict", "2.11-default", "2.12-lenient", "2.10"],
)
def test_syntax_error_offset_only_strict(
    catalogue: Catalogue, version: str, strict: bool | None, expected: str
) -> None:
    """A strict server appends ` at offset N` to syntax errors; the lenient fallback does not."""
    assert _reply(catalogue, '{"name":"S1" x', version, strict=strict) == expected


@pytest.mark.parametrize("version", _VERSIONS_2_11_UP)
def test_empty_body_decodes(catalogue: Catalogue, version: str) -> None:
    """From 2.11 an empty body decodes, then fails the name check (probe SE: 400/10056)."""
    assert (
        _reply(catalogue, "", version)
        == "stream name in subject does not match request"
    )


def test_empty_body_on_2_10(catalogue: Catalogue) -> None:
    """2.10.26 replies `invalid JSON` to an empty STREAM.CREATE body (probe SE)."""
    assert _reply(catalogue, "", "2.10.26") == _INVALID


def test_concatenated_objects_on_2_10(catalogue: Catalogue) -> None:
    """2.10.26 replies `invalid JSON` to two concatenated objects (probe S2)."""
    assert _reply(catalogue, '{"name":"S2"} {"subjects":["s2"]}', "2.10.26") == _INVALID


def test_concatenated_objects_stored_merged(catalogue: Catalogue) -> None:
    """Concatenated objects are accepted and merged from 2.11 (probe S2 stored subjects ["s2"])."""
    result = validate(
        '{"name":"S2"} {"subjects":["s2"]}',
        kind="stream",
        server="2.12.8",
        catalogue=catalogue,
    )
    assert (result.accepted, result.unknown_fields) == (True, ())


@pytest.mark.parametrize(
    ("version", "strict", "accepted", "unknown", "dropped"),
    [
        ("2.10.26", None, True, ("zzz", "placement.qqq"), ("zzz", "placement.qqq")),
        ("2.11.11", None, True, ("zzz", "placement.qqq"), ("zzz", "placement.qqq")),
        ("2.12.8", False, True, ("zzz", "placement.qqq"), ("zzz", "placement.qqq")),
        ("2.12.8", None, False, ("zzz", "placement.qqq"), ()),
    ],
    ids=["2.10", "2.11-default", "2.12-lenient", "2.12-default"],
)
def test_unknown_and_dropped_fields(
    catalogue: Catalogue,
    *,
    version: str,
    strict: bool | None,
    accepted: bool,
    unknown: tuple[str, ...],
    dropped: tuple[str, ...],
) -> None:
    """Every unknown path is listed; a lenient acceptance reports them as silently dropped."""
    body = '{"name":"U1","subjects":["u1"],"zzz":1,"placement":{"qqq":1}}'
    result = validate(
        body, kind="stream", server=version, strict=strict, catalogue=catalogue
    )
    assert (result.accepted, result.unknown_fields, result.dropped_fields) == (
        accepted,
        unknown,
        dropped,
    )


@pytest.mark.parametrize(
    ("version", "strict", "expected"),
    [
        ("2.10.26", None, ServerInfo(version="2.10.26", api_level=None, strict=False)),
        ("2.10.26", True, ServerInfo(version="2.10.26", api_level=None, strict=False)),
        ("2.11.11", None, ServerInfo(version="2.11.11", api_level=1, strict=False)),
        ("2.11.11", True, ServerInfo(version="2.11.11", api_level=1, strict=True)),
        ("2.12.8", None, ServerInfo(version="2.12.8", api_level=3, strict=True)),
        ("2.12.8", False, ServerInfo(version="2.12.8", api_level=3, strict=False)),
    ],
    ids=["2.10", "2.10-no-option", "2.11", "2.11-strict", "2.12", "2.12-lenient"],
)
def test_server_info(
    catalogue: Catalogue, version: str, strict: bool | None, expected: ServerInfo
) -> None:
    """The result names the server, its level and the effective strictness (none on 2.10)."""
    result = validate(
        "{}", kind="stream", server=version, strict=strict, catalogue=catalogue
    )
    assert result.server == expected


# --- header -------------------------------------------------------------------------------------

_HEADER_ERROR = ApiError(
    code=412, err_code=10185, description="JetStream minimum api level required"
)


@pytest.mark.parametrize(
    ("kind", "body", "version", "header", "expected"),
    [
        ("stream", '{"name":"S"}', "2.12.8", "4", _HEADER_ERROR),
        ("stream", '{"name":"S"}', "2.12.8", "1 ", _HEADER_ERROR),
        ("stream", '{"name":"S"}', "2.12.8", " 1", None),
        ("stream", '{"name":"S"}', "2.11.11", "99", None),
        ("consumer", '{"name":"C"}', "2.15.1", "abc", _HEADER_ERROR),
        (
            "consumer",
            '{"name":"C","ack_policy":null}',
            "2.15.1",
            "99",
            ApiError(
                code=400,
                err_code=10025,
                description='invalid JSON: can not unmarshal "null"',
            ),
        ),
    ],
    ids=[
        "too-high",
        "trailing-space",
        "leading-space",
        "ignored-2.11",
        "consumer",
        "consumer-decodes-first",
    ],
)
def test_required_level_header(
    catalogue: Catalogue,
    *,
    kind: AssetKind,
    body: str,
    version: str,
    header: str,
    expected: ApiError | None,
) -> None:
    """Nats-Required-Api-Level: 412/10185; consumer create decodes the body first."""
    result = validate(
        body, kind=kind, server=version, api_level_header=header, catalogue=catalogue
    )
    assert result.error == expected


def test_stream_header_checked_before_decoding(catalogue: Catalogue) -> None:
    """STREAM.CREATE answers 412 for an unmet header even when the body would not decode."""
    result = validate(
        '{"name":"S","zzz":1}',
        kind="stream",
        server="2.15.1",
        api_level_header="99",
        catalogue=catalogue,
    )
    assert result.error == _HEADER_ERROR


# --- existing assets -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "body", "existing", "expected"),
    [
        (
            "stream",
            '{"name":"S","subjects":["b"]}',
            '{"name":"S","subjects":["a"]}',
            ApiError(
                code=400,
                err_code=10058,
                description="stream name already in use with a different configuration",
            ),
        ),
        (
            "consumer",
            '{"name":"C","ack_policy":"all"}',
            '{"name":"C","ack_policy":"explicit"}',
            ApiError(code=400, err_code=10148, description="consumer already exists"),
        ),
    ],
    ids=["stream", "consumer"],
)
def test_create_over_different_existing(
    catalogue: Catalogue, kind: AssetKind, body: str, existing: str, expected: ApiError
) -> None:
    """Creating over an existing asset with a different config gives the server's error."""
    result = validate(
        body, kind=kind, server="2.12.8", existing=existing, catalogue=catalogue
    )
    assert result.error == expected


def test_update_over_different_existing(catalogue: Catalogue) -> None:
    """An update may change the config."""
    result = validate(
        '{"name":"S","subjects":["b"]}',
        kind="stream",
        server="2.12.8",
        op="update",
        existing='{"name":"S","subjects":["a"]}',
        catalogue=catalogue,
    )
    assert result.accepted is True


def test_mapping_input(catalogue: Catalogue) -> None:
    """A mapping is validated like its JSON encoding."""
    result = validate(
        {"name": "S", "allow_msg_ttl": True},
        kind="stream",
        server="2.11.11",
        catalogue=catalogue,
    )
    assert (result.accepted, result.required_level) == (True, 1)


def test_clean_property(catalogue: Catalogue) -> None:
    """`clean` is accepted with nothing dropped."""
    clean = validate(
        '{"name":"S"}', kind="stream", server="2.11.11", catalogue=catalogue
    )
    dropped = validate(
        '{"name":"S","zzz":1}', kind="stream", server="2.11.11", catalogue=catalogue
    )
    rejected = validate(
        '{"name":"S","zzz":1}', kind="stream", server="2.12.8", catalogue=catalogue
    )
    assert (clean.clean, dropped.clean, rejected.clean) == (True, False, False)


# --- soft mode -------------------------------------------------------------------------------------


def test_soft_mode_accepts_and_logs(catalogue: Catalogue) -> None:
    """soft=True on 2.12.8 accepts unknown fields and logs one warning per unknown field."""
    body = '{"name":"S","zzz":1,"placement":{"qqq":1}}'
    with structlog.testing.capture_logs() as logs:
        result = validate(
            body, kind="stream", server="2.12.8", soft=True, catalogue=catalogue
        )
    expected_logs = [
        {
            "event": "unknown_field_ignored",
            "log_level": "warning",
            "asset": "S",
            "kind": "stream",
            "field": field,
            "server_version": "2.12.8",
        }
        for field in ("zzz", "placement.qqq")
    ]
    assert (result.accepted, result.error, logs) == (True, None, expected_logs)


def test_soft_mode_clean_logs_nothing(catalogue: Catalogue) -> None:
    """soft=True with no unknown field logs nothing."""
    with structlog.testing.capture_logs() as logs:
        result = validate(
            '{"name":"S"}',
            kind="stream",
            server="2.12.8",
            soft=True,
            catalogue=catalogue,
        )
    assert (result.accepted, logs) == (True, [])


def test_soft_with_strict_is_fatal(catalogue: Catalogue) -> None:
    """soft=True with an explicit strict=True rejects the unknown field."""
    result = validate(
        '{"name":"S","zzz":1}',
        kind="stream",
        server="2.12.8",
        soft=True,
        strict=True,
        catalogue=catalogue,
    )
    expected = ApiError(
        code=400, err_code=10025, description='invalid JSON: json: unknown field "zzz"'
    )
    assert (result.accepted, result.error) == (False, expected)


def test_soft_mode_enum_still_fatal(catalogue: Catalogue) -> None:
    """soft=True does not help an unknown enum value: the lenient decode fails too."""
    body = '{"name":"C","ack_policy":"flow_control","deliver_subject":"dl.c"}'
    assert (
        _reply(catalogue, body, "2.12.8", kind="consumer", soft=True)
        == 'invalid JSON: can not unmarshal "\\"flow_control\\""'
    )


# --- bad input never raises -----------------------------------------------------------------------


def _deep(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


BAD_INPUTS: list[tuple[str, bytes]] = [
    ("invalid-json", b'{"name":'),
    ("binary", bytes(range(32))),
    (
        "wrong-types",
        b'{"name":["x"],"subjects":{"a":1},"max_msgs":true,"placement":"p"}',
    ),
    ("huge-unknown-string", b'{"name":"S","huge":"' + b"a" * 50_000_000 + b'"}'),
    ("nesting-100k", _deep(100_000)),
    ("nesting-9k-in-unknown", b'{"name":"S","x":' + _deep(9_000) + b"}"),
    ("bad-utf8-in-unknown", b'{"name":"S","x":"\xff\xfe"}'),
]


@pytest.mark.parametrize("version", ["2.10.26", "2.11.11", "2.12.8", "2.15.1"])
@pytest.mark.parametrize(
    ("case", "body"), BAD_INPUTS, ids=[case for case, _ in BAD_INPUTS]
)
def test_bad_input_gives_result(
    catalogue: Catalogue, case: str, body: bytes, version: str
) -> None:
    """Hostile stream bodies give an answer (accepted, or an `invalid JSON` reply), never a traceback."""
    result = validate(body, kind="stream", server=version, catalogue=catalogue)
    description = result.error.description if result.error else ""
    assert (case, result.accepted or description.startswith(_INVALID)) == (case, True)


@pytest.mark.parametrize("version", ["2.11.11", "2.12.8"])
def test_bad_input_consumer(catalogue: Catalogue, version: str) -> None:
    """A hostile consumer body also gives an answer."""
    result = validate(
        b'{"name":' + _deep(100_000),
        kind="consumer",
        server=version,
        catalogue=catalogue,
    )
    assert result.accepted is False


@pytest.mark.parametrize("version", ["2.10.26", "2.11.11", "2.12.8"])
def test_invalid_utf8_in_known_field(catalogue: Catalogue, version: str) -> None:
    """Invalid UTF-8 in a known string is replaced by U+FFFD (Go) and the config accepted."""
    result = validate(
        b'{"name":"S\xff","subjects":["a"]}',
        kind="stream",
        server=version,
        catalogue=catalogue,
    )
    assert result.accepted is True


def test_validate_is_thread_safe(catalogue: Catalogue) -> None:
    """Concurrent calls from eight threads give the same answers as sequential ones."""
    from concurrent.futures import ThreadPoolExecutor

    configs: list[tuple[bytes, AssetKind]] = [
        (b'{"name":"S%d","subjects":["s%d.>"],"allow_msg_ttl":true}' % (i, i), "stream")
        for i in range(50)
    ] + [(b'{"durable_name":"C%d","zzz":%d}' % (i, i), "consumer") for i in range(50)]
    versions = ["2.10.26", "2.11.11", "2.12.8", "2.15.1"]
    jobs = [(raw, kind, v) for raw, kind in configs for v in versions]

    def run(job: tuple[bytes, AssetKind, str]) -> Any:
        raw, kind, version = job
        return msgspec.to_builtins(
            validate(raw, kind=kind, server=version, catalogue=catalogue)
        )

    expected = [run(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        actual = list(pool.map(run, jobs))
    assert actual == expected


@pytest.mark.parametrize(
    ("pause_until", "level"),
    [
        pytest.param("2999-01-01T00:00:00Z", "1", id="pause"),
        pytest.param(None, "0", id="unpause"),
        pytest.param("0001-01-01T00:00:00Z", "0", id="zero-time"),
    ],
)
def test_pause_and_unpause_restamp_the_consumer(
    catalogue: Catalogue, pause_until: str | None, level: str
) -> None:
    """CONSUMER.PAUSE stores the config with the new pause_until and recomputes the level."""
    stored = b'{"durable_name":"C","metadata":{"_nats.req.level":"1"},"pause_until":"2999-01-01T00:00:00Z"}'
    config: dict[str, Any] = {"durable_name": "C"}
    if pause_until is not None:
        config["pause_until"] = pause_until
    result = validate(
        config,
        kind="consumer",
        server="2.12.8",
        op="update",
        existing=stored,
        catalogue=catalogue,
    )
    assert result.stamped_metadata == {"_nats.req.level": level}


@pytest.mark.parametrize(
    ("version", "crashes"),
    [
        ("2.10.26", True),
        ("2.11.11", True),
        ("2.11.12", False),
        ("2.12.3", True),
        ("2.12.4", False),
        ("2.14.0", False),
    ],
)
def test_null_source_crashes_until_fixed(
    catalogue: Catalogue, version: str, *, crashes: bool
) -> None:
    """``sources: [null]`` crashes each line until its fix (2.11.12, 2.12.4), then 10141."""
    result = validate(
        '{"name":"N","sources":[null]}',
        kind="stream",
        server=version,
        catalogue=catalogue,
    )
    error = result.error
    assert (result.server_crash is not None, error and error.err_code) == (
        crashes,
        None if crashes else 10141,
    )


def test_dotted_name_gets_no_reply(catalogue: Catalogue) -> None:
    """A create of a name with a dot is unanswered: no error, no crash, a reason."""
    result = validate(
        '{"name":"a.b","subjects":["x"]}',
        kind="stream",
        server="2.12.8",
        catalogue=catalogue,
    )
    assert (result.accepted, result.error, result.server_crash, result.no_reply) == (
        False,
        None,
        None,
        (
            "$JS.API.STREAM.CREATE.<name> has one token more per '.' in the name;"
            " no API handler receives it"
        ),
    )


@pytest.mark.parametrize(
    ("op", "err_code"), [("create", 10052), ("update", None)], ids=["create", "update"]
)
def test_sealed_is_refused_on_create_only(
    catalogue: Catalogue, op: Operation, err_code: int | None
) -> None:
    """The create handler refuses a sealed stream; an update is how a stream is sealed."""
    result = validate(
        '{"name":"S","subjects":["a"],"sealed":true}',
        kind="stream",
        server="2.12.8",
        op=op,
        existing='{"name":"S","subjects":["a"]}' if op == "update" else None,
        catalogue=catalogue,
    )
    error = result.error
    assert (error and error.err_code) == err_code


def _fast_path_configs() -> list[tuple[AssetKind, bytes]]:
    """Configs to compare the fast plan with the general path on: fixtures and a fleet."""
    from benchmarks.gen_inventory import generate

    out: list[tuple[AssetKind, bytes]] = []
    kinds: tuple[AssetKind, ...] = ("stream", "consumer")
    for kind in kinds:
        folder = FIXTURES / "configs" / f"{kind}s"
        out.extend(
            (kind, path.read_bytes().strip()) for path in sorted(folder.glob("*.json"))
        )
    for line in generate(400, seed=11, overlap_fraction=0.02):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("config"), dict):
            kind = "consumer" if record.get("kind") == "consumer" else "stream"
            if record.get("kind") == kind:
                out.append((kind, json.dumps(record["config"]).encode()))
    return out


@pytest.mark.parametrize("mode", ["single", "cluster"])
@pytest.mark.parametrize("server", ["2.10.26", "2.11.11", "2.12.8", "2.14.6", "2.15.1"])
def test_fast_plan_answers_as_the_general_path(
    catalogue: Catalogue, server: str, mode: Literal["single", "cluster"]
) -> None:
    """validate() on bytes (the fast plan when it can) equals it on the same mapping."""
    differ: list[tuple[str, bytes, Validation, Validation]] = []
    for kind, data in _fast_path_configs():
        fast = validate(data, kind=kind, server=server, mode=mode, catalogue=catalogue)
        general = validate(
            json.loads(data), kind=kind, server=server, mode=mode, catalogue=catalogue
        )
        if fast != general:
            differ.append((kind, data[:80], fast, general))
    assert differ == []


_HUGE = 2**63 - 1
_MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"name": "B1", "subjects": ["b1"], "max_bytes": _HUGE}, True),
        ({"name": "B1", "subjects": ["b1"], "max_bytes": -1}, False),
        ({"name": "B1", "subjects": ["b1"]}, False),
    ],
)
@pytest.mark.parametrize("as_text", [True, False])
def test_max_bytes_is_assumed_to_fit_without_limits(
    catalogue: Catalogue, config: dict[str, Any], said: bool, as_text: bool
) -> None:
    """Without the server's limits a positive max_bytes is accepted and named in assumed."""
    body: Any = json.dumps(config) if as_text else config  # fast plan and general path
    result = validate(body, kind="stream", server="2.12.8", catalogue=catalogue)
    assumed = [a for a in result.assumed if a.startswith("stream.storage_limits:")]
    assert (result.accepted, bool(assumed)) == (True, said)


@pytest.mark.parametrize("version", ["2.10.26", "2.11.11", "2.12.8", "2.15.1"])
@pytest.mark.parametrize(("storage", "err_code"), [("file", 10047), ("memory", 10028)])
def test_storage_limits_come_before_the_config_checks(
    catalogue: Catalogue, version: str, storage: str, err_code: int
) -> None:
    """With the server's limits given, max_bytes over them wins over a too-long description."""
    config = {
        "name": "B2",
        "subjects": ["b2"],
        "storage": storage,
        "max_bytes": _MIB + 1,
        "description": "d" * 4097,
    }
    limits = ServerLimits(max_file_store=_MIB, max_memory_store=_MIB)
    result = validate(
        config, kind="stream", server=version, catalogue=catalogue, limits=limits
    )
    assert (result.check, result.error and result.error.err_code) == (
        "stream.storage_limits",
        err_code,
    )
    at_limit = validate(
        {**config, "max_bytes": _MIB, "description": ""},
        kind="stream",
        server=version,
        catalogue=catalogue,
        limits=limits,
    )
    assert (at_limit.accepted, at_limit.assumed) == (True, ())


def test_storage_limits_are_not_checked_in_a_cluster(catalogue: Catalogue) -> None:
    """A cluster places the stream after its config checks: assumed, not refused."""
    result = validate(
        {"name": "B3", "subjects": ["b3"], "max_bytes": _HUGE},
        kind="stream",
        server="2.12.8",
        catalogue=catalogue,
        mode="cluster",
        limits=ServerLimits(max_file_store=_MIB),
    )
    assumed = [a for a in result.assumed if a.startswith("stream.storage_limits:")]
    assert (result.accepted, len(assumed)) == (True, 1)


def test_limits_must_be_server_limits(catalogue: Catalogue) -> None:
    """A limits argument of another type is the project's InvalidArgument."""
    with pytest.raises(InvalidArgument):
        validate(
            {"name": "B4"},
            kind="stream",
            server="2.12.8",
            catalogue=catalogue,
            limits={"max_file_store": 1},  # type: ignore[arg-type]
        )


# --- cluster mode: what a 3-node cluster answers otherwise (test_differential.py)

_COUNTER_MARKERS: dict[str, Any] = {
    "name": "FZ641",
    "discard": "old",
    "allow_msg_counter": True,
    "subject_delete_marker_ttl": 60_000_000_000,
    "num_replicas": 1,
}


@pytest.mark.parametrize("version", ["2.12.8", "2.14.6", "2.15.1"])
@pytest.mark.parametrize("as_text", [True, False])
def test_counter_with_markers_is_refused_by_a_cluster_only(
    catalogue: Catalogue, version: str, as_text: bool
) -> None:
    """A cluster's stream leader rechecks the defaulted allow_msg_ttl; a single server not."""
    body: Any = json.dumps(_COUNTER_MARKERS) if as_text else _COUNTER_MARKERS
    single = validate(body, kind="stream", server=version, catalogue=catalogue)
    cluster = validate(
        body, kind="stream", server=version, catalogue=catalogue, mode="cluster"
    )
    assert single.accepted
    assert (cluster.check, cluster.error) == (
        "stream.counter_ttl_rechecked",
        ApiError(
            code=500,
            err_code=10052,
            description="counter stream cannot use message TTLs",
        ),
    )


@pytest.mark.parametrize("version", ["2.10.26", "2.11.11", "2.12.8", "2.14.6"])
@pytest.mark.parametrize("as_text", [True, False])
def test_a_cluster_stores_a_mirror_without_its_duplicate_window(
    catalogue: Catalogue, version: str, as_text: bool
) -> None:
    """A cluster zeroes a mirror's duplicate_window as it decodes the assignment."""
    config = {
        "name": "FZ835",
        "duplicate_window": 3_600_000_000_000,
        "mirror": {"name": "ORIGIN", "filter_subject": ""},
    }
    body: Any = json.dumps(config) if as_text else config
    windows = [
        answer.stored_config.get("duplicate_window")  # type: ignore[union-attr]
        for answer in _in_both_modes(body, "stream", version, catalogue)
    ]
    assert windows == [3_600_000_000_000, 0]


_CBX: dict[str, Any] = {"name": "CBX", "subjects": ["cbx.>"], "num_replicas": 3}


def _in_both_modes(
    body: Any,
    kind: Literal["stream", "consumer"],
    version: str,
    catalogue: Catalogue,
    stream: dict[str, Any] | None = None,
) -> list[Validation]:
    """The answers of validate for a standalone server, then for a cluster."""
    return [
        validate(
            body,
            kind=kind,
            server=version,
            catalogue=catalogue,
            mode=mode,
            stream=stream,
        )
        for mode in ("single", "cluster")
    ]


@pytest.mark.parametrize(
    ("version", "levels"),
    [("2.11.11", ["1", "1"]), ("2.12.8", ["1", "0"]), ("2.15.1", ["1", "0"])],
)
@pytest.mark.parametrize("with_stream", [True, False])
@pytest.mark.parametrize("as_text", [True, False])
def test_a_cluster_stamps_the_defaulted_priority_timeout(
    catalogue: Catalogue,
    version: str,
    levels: list[str],
    with_stream: bool,
    as_text: bool,
) -> None:
    """A cluster stamps after the defaults zeroed a negative priority_timeout (2.12.0+)."""
    config = {"name": "c392", "deliver_policy": "last", "priority_timeout": -1}
    body: Any = json.dumps(config) if as_text else config
    stamped = [
        answer.stamped_metadata
        for answer in _in_both_modes(
            body, "consumer", version, catalogue, _CBX if with_stream else None
        )
    ]
    assert stamped == [{"_nats.req.level": level} for level in levels]


@pytest.mark.parametrize("version", ["2.10.26", "2.11.11", "2.12.8", "2.15.1"])
@pytest.mark.parametrize("as_text", [True, False])
def test_a_clusters_direct_consumer_is_answered_as_on_a_single_server(
    catalogue: Catalogue, version: str, as_text: bool
) -> None:
    """A direct consumer's create takes the standalone path in a cluster too."""
    config = {"name": "c99", "max_waiting": 0, "direct": True, "num_replicas": 3}
    body: Any = json.dumps(config) if as_text else config
    answers = _in_both_modes(body, "consumer", version, catalogue, _CBX)
    assert answers[0] == answers[1]
    assert (answers[1].check, answers[1].error and answers[1].error.err_code) == (
        "consumer.replicas_standalone",
        10074,
    )
    pulled = validate(
        {"name": "c98", "direct": True, "priority_timeout": -1, "deliver_subject": "d"},
        kind="consumer",
        server=version,
        catalogue=catalogue,
        mode="cluster",
    )
    single = validate(
        {"name": "c98", "direct": True, "priority_timeout": -1, "deliver_subject": "d"},
        kind="consumer",
        server=version,
        catalogue=catalogue,
    )
    assert pulled == single


@pytest.mark.parametrize(
    ("config", "mode", "said"),
    [
        ({"name": "P1", "num_replicas": 4}, "cluster", True),
        ({"name": "P1", "placement": {"cluster": "nope"}}, "cluster", True),
        ({"name": "P1", "placement": {"tags": ["a"]}}, "cluster", True),
        ({"name": "P1", "num_replicas": 1}, "cluster", False),
        ({"name": "P1"}, "cluster", False),
        ({"name": "P1", "placement": {"tags": ["a"]}}, "single", False),
    ],
)
@pytest.mark.parametrize("as_text", [True, False])
def test_a_cluster_is_assumed_to_place_the_stream(
    catalogue: Catalogue,
    config: dict[str, Any],
    mode: Literal["single", "cluster"],
    said: bool,
    as_text: bool,
) -> None:
    """Replicas or a placement in a cluster: assumed says the peers are assumed to exist."""
    body: Any = json.dumps(config) if as_text else config
    result = validate(
        body, kind="stream", server="2.12.8", catalogue=catalogue, mode=mode
    )
    assumed = [a for a in result.assumed if a.startswith("stream.placement:")]
    assert len(assumed) == int(said)
    assert "no suitable peers for placement" in "".join(assumed) or not said


_RESTART_LOST: Final = {
    "name": "CT",
    "subjects": ["ct"],
    "allow_msg_counter": True,
    "subject_delete_marker_ttl": 60_000_000_000,
}


@pytest.mark.parametrize("server", ["2.12.8", "2.14.6", "2.15.1"])
def test_an_accepted_create_can_be_lost_at_restart(
    catalogue: Catalogue, server: str
) -> None:
    """A single server accepts a counter stream with markers, then refuses it at start."""
    result = validate(_RESTART_LOST, kind="stream", server=server, catalogue=catalogue)
    assert (result.accepted, result.lost_on_restart, result.clean) == (
        True,
        "counter stream cannot use message TTLs (10052)",
        False,
    )


def test_a_plain_create_loads_at_restart(catalogue: Catalogue) -> None:
    """A plain accepted create is not said to be lost (both validate paths)."""
    for config in ({"name": "P", "subjects": ["p"]}, b'{"name":"P","subjects":["p"]}'):
        result = validate(config, kind="stream", server="2.12.8", catalogue=catalogue)
        assert (result.accepted, result.lost_on_restart, result.clean) == (
            True,
            None,
            True,
        )


def test_lost_on_restart_on_the_fast_path_too(catalogue: Catalogue) -> None:
    """The bytes of a plain config (the fast plan) give the same answer as a mapping."""
    data = json.dumps(_RESTART_LOST).encode()
    fast = validate(data, kind="stream", server="2.15.1", catalogue=catalogue)
    general = validate(
        _RESTART_LOST, kind="stream", server="2.15.1", catalogue=catalogue
    )
    assert fast.lost_on_restart == general.lost_on_restart is not None
