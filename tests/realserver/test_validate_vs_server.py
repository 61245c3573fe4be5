"""``assetgate.validate`` against real nats-server replies to create requests.

For every release line's binary the same create requests go to a real server
(one per version, fresh store), and the reply must be what ``validate``
predicted: the exact error, or acceptance with the same response metadata, the
same stored metadata (read back with STREAM.INFO / CONSUMER.INFO) and the same
silently dropped fields.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import TYPE_CHECKING, Any, Final

import msgspec
import pytest

import assetgate
from tests.realserver.conftest import Running
from tests.support import differential
from tests.support.natsserver import Client, NatsServer, raw_request

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.realserver.conftest import Servers

pytestmark = pytest.mark.realserver

VERSIONS: Final = ("2.10.26", "2.11.11", "2.12.8", "2.14.6", "2.15.1")
HEADER_VERSIONS: Final = ("2.12.8", "2.15.1")
API_LEVEL_HEADER: Final = "Nats-Required-Api-Level"
BASE_STREAM: Final = "CBASE"
BASE_CONFIG: Final = b'{"name":"CBASE","subjects":["cbase.>"]}'
INVALID_JSON: Final = 10025

# (case id, asset name, exact request body). A stream body is the config itself.
# Never `"storage":"any"`: it crashes 2.10 and 2.11 (nil pointer in setupStore).
STREAM_CASES: Final = (
    ("plain", "PLAIN", b'{"name":"PLAIN","subjects":["plain"]}'),
    ("allow_msg_ttl", "TTL", b'{"name":"TTL","subjects":["ttl"],"allow_msg_ttl":true}'),
    # Every server that knows subject_delete_marker_ttl accepts it alone (1 s is the
    # minimum) and turns allow_msg_ttl and allow_rollup_hdrs on by itself.
    (
        "subject_delete_marker_ttl",
        "SDM",
        b'{"name":"SDM","subjects":["sdm"],"subject_delete_marker_ttl":1000000000}',
    ),
    (
        "allow_msg_counter",
        "CNT",
        b'{"name":"CNT","subjects":["cnt"],"allow_msg_counter":true}',
    ),
    ("allow_atomic", "ATM", b'{"name":"ATM","subjects":["atm"],"allow_atomic":true}'),
    (
        "allow_msg_schedules",
        "SCH",
        b'{"name":"SCH","subjects":["sch"],"allow_msg_schedules":true}',
    ),
    (
        "persist_mode_async",
        "PMA",
        b'{"name":"PMA","subjects":["pma"],"persist_mode":"async"}',
    ),
    ("allow_batched", "BAT", b'{"name":"BAT","subjects":["bat"],"allow_batched":true}'),
    (
        "sources_consumer",
        "SRC",
        b'{"name":"SRC","subjects":["src"],"sources":[{"name":"CBASE","consumer":{"name":"srcc","deliver_subject":"dsub.srcc"}}]}',
    ),
    (
        "unknown_top_level",
        "UTOP",
        b'{"name":"UTOP","subjects":["utop"],"no_such_field":1}',
    ),
    (
        "unknown_nested",
        "UNEST",
        b'{"name":"UNEST","subjects":["unest"],"placement":{"zzz":1}}',
    ),
    ("type_max_msgs_string", "T1", b'{"name":"T1","subjects":["t1"],"max_msgs":"x"}'),
    ("retention_bogus", "E1", b'{"name":"E1","subjects":["e1"],"retention":"bogus"}'),
    ("retention_null", "E2", b'{"name":"E2","subjects":["e2"],"retention":null}'),
    ("discard_upper_new", "E3", b'{"name":"E3","subjects":["e3"],"discard":"NEW"}'),
    ("compression_zstd", "E5", b'{"name":"E5","subjects":["e5"],"compression":"zstd"}'),
    (
        "user_req_level_99",
        "L1",
        b'{"name":"L1","subjects":["l1"],"metadata":{"_nats.req.level":"99","_nats.ver":"x","_nats.level":"y","k":"v"}}',
    ),
    ("case_folded_keys", "K1", b'{"NAME":"K1","Subjects":["k1"]}'),
)

# (case id, consumer name, exact config); the request body is {"stream_name", "config"}.
CONSUMER_CASES: Final = (
    ("durable_pull", "CPLAIN", b'{"durable_name":"CPLAIN","ack_policy":"explicit"}'),
    (
        "pause_until_future",
        "CPAUSE",
        b'{"durable_name":"CPAUSE","ack_policy":"explicit","pause_until":"2999-01-01T00:00:00Z"}',
    ),
    (
        "pinned_client",
        "CPIN",
        b'{"durable_name":"CPIN","ack_policy":"explicit","priority_groups":["g"],"priority_policy":"pinned_client"}',
    ),
    (
        "prioritized",
        "CPRIO",
        b'{"durable_name":"CPRIO","ack_policy":"explicit","priority_groups":["g"],"priority_policy":"prioritized"}',
    ),
    # A push consumer: flow_control acks need one (a pull consumer gets 400/10218).
    (
        "flow_control_push",
        "CFLOW",
        b'{"durable_name":"CFLOW","deliver_subject":"push.cflow","ack_policy":"flow_control"}',
    ),
    (
        "unknown_field",
        "CUNK",
        b'{"durable_name":"CUNK","ack_policy":"explicit","no_such_field":1}',
    ),
    ("ack_policy_null", "CNULL", b'{"durable_name":"CNULL","ack_policy":null}'),
)

# Requests the server rejects after decoding, with a semantic check validate() does not
# model (an error other than 400/10025). For these only "not a 10025" is asserted.
# Observed: none with the request set above. (Examples of what would land here: a pull
# consumer with ack_policy flow_control, 400/10218 on 2.14+; a subject_delete_marker_ttl
# below one second.)
SEMANTIC: Final[frozenset[tuple[str, str]]] = frozenset()

# (case id, version) -> the disagreement, for cases where validate() is wrong.
XFAIL: Final[dict[tuple[str, str], str]] = {}

# A standalone server's storage limits (jetstream { max_file_store, max_memory_store })
# come before every config check; the defaults come from the machine, so these run
# against a server with small limits given, and validate is given them too.
LIMIT: Final = 1024 * 1024
LIMITS: Final = assetgate.ServerLimits(max_file_store=LIMIT, max_memory_store=LIMIT)
_LONG: Final = "d" * 4097
LIMIT_CASES: Final = (
    ("file_max_int64", {"name": "L1", "subjects": ["l1"], "max_bytes": 2**63 - 1}),
    (
        "memory_max_int64_before_description",
        {
            "name": "L2",
            "subjects": ["l2"],
            "storage": "memory",
            "max_bytes": 2**63 - 1,
            "description": _LONG,
        },
    ),
    ("file_at_limit", {"name": "L3", "subjects": ["l3"], "max_bytes": LIMIT}),
    ("file_over_limit", {"name": "L4", "subjects": ["l4"], "max_bytes": LIMIT + 1}),
    (
        "memory_over_limit_before_subjects",
        {
            "name": "L5",
            "subjects": ["a..b"],
            "storage": "memory",
            "max_bytes": LIMIT + 1,
        },
    ),
    ("negative_is_one_byte", {"name": "L6", "subjects": ["l6"], "max_bytes": -1}),
    (
        "sealed_before_limits",
        {"name": "L7", "subjects": ["l7"], "max_bytes": LIMIT + 1, "sealed": True},
    ),
    # without "storage" the create handler's check passes (Go's zero is neither file
    # nor memory): the limits meet the stream after checkStreamCfg, as a file stream
    (
        "no_storage_config_check_first",
        {"name": "L8", "subjects": ["l8"], "max_bytes": 2**31, "duplicate_window": 1},
    ),
    (
        "file_storage_limits_first",
        {
            "name": "L9",
            "subjects": ["l9"],
            "storage": "file",
            "max_bytes": 2**31,
            "duplicate_window": 1,
        },
    ),
    (
        "no_storage_replicas_first",
        {"name": "L10", "subjects": ["l10"], "max_bytes": 2**31, "num_replicas": 3},
    ),
    (
        "folded_storage_key_limits_first",
        {
            "name": "L11",
            "subjects": ["l11"],
            "STORAGE": "file",
            "max_bytes": 2**31,
            "num_replicas": 3,
        },
    ),
)

HEADER_VALUES: Final = ("1", " 1", "+1", "01", "-1", "", "1 ", "1.0", "abc", "99")

# Type-mismatch texts on 2.11.8 (the catalogue's go_json switch before 2.11.9 is a guess).
OLD_GO_JSON_VERSION: Final = "2.11.8"
TYPE_CASES: Final = (
    ("T1", b'{"name":"T1","subjects":["t1"],"max_msgs":"x"}'),
    ("T3", b'{"name":"T3","subjects":["t3"],"placement":{"cluster":5}}'),
    ("T6", b'{"name":"T6","subjects":["t6"],"metadata":{"a":1}}'),
)
# 2.11.8 words type errors like 2.11.9-2.12.8 (embedded StreamConfig in the path, no
# map key): the catalogue's go_json switch says so for the whole 2.11 line.

# Decode errors on the jsonv2-backed encoding/json (Go 1.27: 2.14.6+, `go version -m`):
# the first error in document order wins, enum and time errors included, and a type
# error's path is the JSON pointer (array indexes, keys as written, ~0 ~1 escapes; a
# last token of digits drops "Go struct field"). 2.14.5, the last Go 1.26 build, keeps
# the older rules. (case id, asset name, exact body), as in STREAM_CASES/CONSUMER_CASES.
GO_JSON_BOUNDARY: Final = ("2.14.5",)
DECODE_STREAM_CASES: Final = (
    (
        "path_index",
        "DP1",
        b'{"name":"DP1","sources":[{"name":"O","opt_start_seq":-1}]}',
    ),
    (
        "path_nested_index",
        "DP2",
        b'{"name":"DP2","sources":[{"name":"O"},{"name":"P","subject_transforms":[{"src":"a"},{"src":5}]}]}',
    ),
    ("path_last_index", "DP3", b'{"name":"DP3","subjects":["a",5]}'),
    ("path_struct_element", "DP4", b'{"name":"DP4","sources":[{"name":"O"},5]}'),
    ("path_struct_field", "DP5", b'{"name":"DP5","mirror":5}'),
    ("path_map_escapes", "DP6", b'{"name":"DP6","metadata":{"a/b~":1}}'),
    ("path_map_digits", "DP7", b'{"name":"DP7","metadata":{"12":1}}'),
    (
        "path_folded_keys",
        "DP8",
        b'{"name":"DP8","Sources":[{"name":"O","OPT_START_SEQ":-1}]}',
    ),
    ("compression_not_string", "DP9", b'{"name":"DP9","compression":5}'),
    (
        "type_before_enum",
        "DO1",
        b'{"name":"DO1","subjects":["do1"],"max_msg_size":2147483648,"compression":"zstd"}',
    ),
    (
        "enum_before_type",
        "DO2",
        b'{"name":"DO2","subjects":["do2"],"compression":"zstd","max_msg_size":2147483648}',
    ),
    (
        "type_before_time",
        "DO3",
        b'{"name":"DO3","max_msgs":1.5,"sources":[{"name":"O","opt_start_time":"x"}]}',
    ),
    (
        "time_before_type",
        "DO4",
        b'{"name":"DO4","sources":[{"name":"O","opt_start_time":"x"}],"max_msgs":1.5}',
    ),
    (
        "nested_type_before_enum",
        "DO5",
        b'{"name":"DO5","sources":[{"name":"O","opt_start_seq":-1}],"retention":"x"}',
    ),
    ("map_type_before_enum", "DO6", b'{"name":"DO6","metadata":{"a":1},"discard":"x"}'),
    ("unknown_before_enum", "DO7", b'{"name":"DO7","zz":1,"storage":"x"}'),
    ("enum_before_unknown", "DO8", b'{"name":"DO8","storage":"x","zz":1}'),
    ("type_before_enum_type", "DO9", b'{"name":"DO9","max_msgs":1.5,"storage":5}'),
)
DECODE_CONSUMER_CASES: Final = (
    (
        "type_before_enum",
        "DC1",
        b'{"durable_name":"DC1","opt_start_seq":-1,"replay_policy":"bogus"}',
    ),
    (
        "enum_before_type",
        "DC2",
        b'{"durable_name":"DC2","replay_policy":"bogus","opt_start_seq":-1}',
    ),
    (
        "type_before_time",
        "DC3",
        b'{"durable_name":"DC3","opt_start_seq":-1,"opt_start_time":"x"}',
    ),
    ("unknown_before_enum", "DC4", b'{"durable_name":"DC4","zz":1,"ack_policy":"x"}'),
    (
        "element_before_enum",
        "DC5",
        b'{"durable_name":"DC5","backoff":[1,"x"],"ack_policy":"x"}',
    ),
    ("path_last_index", "DC6", b'{"durable_name":"DC6","filter_subjects":["a",2]}'),
)


def _params(
    cases: tuple[tuple[str, str, bytes], ...], versions: tuple[str, ...]
) -> list[Any]:
    """One pytest param per (version, case), with the case's xfail mark if any."""
    out: list[Any] = []
    for version in versions:
        for case_id, name, body in cases:
            reason = XFAIL.get((case_id, version))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(
                pytest.param(
                    version, case_id, name, body, id=f"{version}-{case_id}", marks=marks
                )
            )
    return out


# --- comparing a reply with a prediction ---------------------------------------------------

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _path(path: str) -> list[str | int]:
    """Split ``sources[0].consumer`` into ``["sources", 0, "consumer"]``."""
    return [int(index) if index else key for key, index in _PATH_PART.findall(path)]


def _lookup(value: Any, key: str) -> tuple[bool, Any]:
    """Find ``key`` in a decoded JSON object as Go does: exact, else case-folded."""
    if not isinstance(value, dict):
        return False, None
    if key in value:
        return True, value[key]
    for other, item in value.items():
        if other.casefold() == key.casefold():
            return True, item
    return False, None


def _has_path(value: Any, parts: list[str | int]) -> bool:
    """Whether a decoded JSON value holds something at ``parts``."""
    for part in parts:
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                return False
            value = value[part]
        else:
            found, value = _lookup(value, part)
            if not found:
                return False
    return True


def _remove_path(value: Any, parts: list[str | int]) -> None:
    """Delete what is at ``parts`` (in place) if it is there."""
    for part in parts[:-1]:
        if isinstance(part, int):
            if not isinstance(value, list) or part >= len(value):
                return
            value = value[part]
        else:
            found, value = _lookup(value, part)
            if not found:
                return
    last = parts[-1]
    if isinstance(value, dict) and isinstance(last, str):
        for key in [k for k in value if k.casefold() == last.casefold()]:
            del value[key]


def _is_set(value: Any) -> bool:
    """A JSON value that is not a zero value, once emptied containers count as zero."""
    if isinstance(value, dict):
        return any(_is_set(item) for item in value.values())
    if isinstance(value, list):
        return bool(value)
    return value not in (None, False, 0, "")


def _set_fields(body: bytes, dropped: tuple[str, ...]) -> list[str]:
    """Top-level request keys with a non-zero value once the dropped fields are removed."""
    request = json.loads(body)
    for path in dropped:
        _remove_path(request, _path(path))
    return [key for key, value in request.items() if _is_set(value)]


def _assert_matches(
    running: Running,
    result: assetgate.Validation,
    reply: dict[str, Any],
    body: bytes,
    info_subject: str,
) -> None:
    """The reply is the predicted error, or the predicted acceptance in every detail."""
    if "error" in reply:
        assert result.accepted is False, (
            f"server rejected what validate accepted: {reply['error']}"
        )
        assert result.error is not None
        assert msgspec.structs.asdict(result.error) == reply["error"]
        return
    assert result.accepted is True, (
        f"server accepted what validate rejected: {result.error}"
    )
    config: dict[str, Any] = reply["config"]
    assert result.response_metadata == config.get("metadata")

    info = running.request(info_subject, b"")
    assert "error" not in info, info
    stored = differential.info_metadata(info["config"].get("metadata"), running.version)
    assert stored == result.stamped_metadata

    for path in result.dropped_fields:
        assert not _has_path(config, _path(path)), f"{path} was kept: {config}"
    for key in _set_fields(body, result.dropped_fields):
        assert _lookup(config, key)[0], (
            f"{key} is missing from the reply config: {config}"
        )


def _ensure_base_stream(running: Running) -> None:
    """Create the stream the consumers (and the sourcing stream) use; idempotent."""
    reply = running.request(f"$JS.API.STREAM.CREATE.{BASE_STREAM}", BASE_CONFIG)
    assert "error" not in reply, reply


# --- tests ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def limited(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[str], Running]]:
    """A server with 1 MiB of file and of memory storage; one version runs at a time."""
    current: dict[str, Running] = {}
    with contextlib.ExitStack() as outer:
        stack = outer.enter_context(contextlib.ExitStack())

        def get(version: str) -> Running:
            if version not in current:
                current.clear()
                stack.close()
                base = tmp_path_factory.mktemp(f"limited-{version}")
                server = stack.enter_context(
                    NatsServer(
                        version,
                        base / "store",
                        jetstream_config=(
                            f"max_file_store: {LIMIT}\n  max_memory_store: {LIMIT}"
                        ),
                    )
                )
                client = stack.enter_context(Client(server.url, timeout=5.0))
                current[version] = Running(server, client)
            return current[version]

        yield get


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("case_id", "config"), LIMIT_CASES, ids=[c for c, _ in LIMIT_CASES]
)
def test_stream_storage_limits_match_prediction(
    limited: Callable[[str], Running],
    version: str,
    case_id: str,
    config: dict[str, Any],
) -> None:
    """A create over a standalone server's given storage limits gets validate's reply."""
    running = limited(version)
    body = json.dumps(config).encode()
    reply = running.request(f"$JS.API.STREAM.CREATE.{config['name']}", body)
    if "error" not in reply:  # accepted: remove it again, it reserves storage
        running.request(f"$JS.API.STREAM.DELETE.{config['name']}", b"")
    result = assetgate.validate(body, kind="stream", server=version, limits=LIMITS)
    assert (case_id, reply.get("error")) == (case_id, _error_of(result))
    unknown = assetgate.validate(body, kind="stream", server=version)
    said = any(a.startswith("stream.storage_limits:") for a in unknown.assumed)
    assert (case_id, said) == (case_id, config["max_bytes"] > 0)


def _error_of(result: assetgate.Validation) -> dict[str, Any] | None:
    """The predicted error as the server's JSON (``None``: accepted)."""
    return None if result.error is None else msgspec.structs.asdict(result.error)


@pytest.mark.parametrize(
    ("version", "case_id", "name", "body"), _params(STREAM_CASES, VERSIONS)
)
def test_stream_create_matches_prediction(
    servers: Servers, version: str, case_id: str, name: str, body: bytes
) -> None:
    """A stream create reply (error, metadata, stored metadata, dropped fields) is the one validate predicts."""
    running = servers.get(version)
    if case_id == "sources_consumer":
        _ensure_base_stream(running)
    reply = running.request(f"$JS.API.STREAM.CREATE.{name}", body)
    if (case_id, version) in SEMANTIC:
        assert reply.get("error", {}).get("err_code", INVALID_JSON) != INVALID_JSON, (
            reply
        )
        return
    result = assetgate.validate(body, kind="stream", server=version)
    _assert_matches(running, result, reply, body, f"$JS.API.STREAM.INFO.{name}")


@pytest.mark.parametrize(
    ("version", "case_id", "name", "body"), _params(CONSUMER_CASES, VERSIONS)
)
def test_consumer_create_matches_prediction(
    servers: Servers, version: str, case_id: str, name: str, body: bytes
) -> None:
    """A consumer create reply (error, metadata, stored metadata, dropped fields) is the one validate predicts."""
    running = servers.get(version)
    _ensure_base_stream(running)
    request = b'{"stream_name":"' + BASE_STREAM.encode() + b'","config":' + body + b"}"
    reply = running.request(f"$JS.API.CONSUMER.CREATE.{BASE_STREAM}.{name}", request)
    if (case_id, version) in SEMANTIC:
        assert reply.get("error", {}).get("err_code", INVALID_JSON) != INVALID_JSON, (
            reply
        )
        return
    result = assetgate.validate(body, kind="consumer", server=version)
    _assert_matches(
        running, result, reply, body, f"$JS.API.CONSUMER.INFO.{BASE_STREAM}.{name}"
    )


@pytest.mark.parametrize("version", HEADER_VERSIONS)
@pytest.mark.parametrize(
    ("index", "value"),
    list(enumerate(HEADER_VALUES)),
    ids=[repr(v) for v in HEADER_VALUES],
)
def test_required_level_header_matches_prediction(
    servers: Servers, version: str, index: int, value: str
) -> None:
    """A stream create with exact Nats-Required-Api-Level header bytes gets the reply validate predicts."""
    running = servers.get(version)
    name = f"HDR{index}"
    body = f'{{"name":"{name}","subjects":["hdr.{index}"]}}'.encode()
    reply = raw_request(
        running.url,
        f"$JS.API.STREAM.CREATE.{name}",
        body,
        [(API_LEVEL_HEADER, value)],
        timeout=5.0,
    )
    result = assetgate.validate(
        body, kind="stream", server=version, api_level_header=value
    )
    _assert_matches(running, result, reply, body, f"$JS.API.STREAM.INFO.{name}")


@pytest.mark.parametrize(
    ("name", "body"), [pytest.param(name, body, id=name) for name, body in TYPE_CASES]
)
def test_type_mismatch_text_on_2_11_8(servers: Servers, name: str, body: bytes) -> None:
    """nats-server 2.11.8 words a type mismatch exactly as validate predicts (go_json before 2.11.9)."""
    running = servers.get(OLD_GO_JSON_VERSION)
    reply = running.request(f"$JS.API.STREAM.CREATE.{name}", body)
    result = assetgate.validate(body, kind="stream", server=OLD_GO_JSON_VERSION)
    assert "error" in reply, reply
    assert result.error is not None, "validate accepted a type mismatch"
    assert msgspec.structs.asdict(result.error) == reply["error"]


@pytest.mark.parametrize(
    ("version", "case_id", "name", "body"),
    _params(DECODE_STREAM_CASES, VERSIONS + GO_JSON_BOUNDARY),
)
def test_stream_decode_error_matches_prediction(
    servers: Servers, version: str, case_id: str, name: str, body: bytes
) -> None:
    """Which decode error a stream create reports, and its path, is the one validate predicts."""
    del case_id
    running = servers.get(version)
    reply = running.request(f"$JS.API.STREAM.CREATE.{name}", body)
    result = assetgate.validate(body, kind="stream", server=version)
    _assert_matches(running, result, reply, body, f"$JS.API.STREAM.INFO.{name}")


@pytest.mark.parametrize(
    ("version", "case_id", "name", "body"),
    _params(DECODE_CONSUMER_CASES, VERSIONS + GO_JSON_BOUNDARY),
)
def test_consumer_decode_error_matches_prediction(
    servers: Servers, version: str, case_id: str, name: str, body: bytes
) -> None:
    """Which decode error a consumer create reports, and its path, is the one validate predicts."""
    del case_id
    running = servers.get(version)
    _ensure_base_stream(running)
    request = b'{"stream_name":"' + BASE_STREAM.encode() + b'","config":' + body + b"}"
    reply = running.request(f"$JS.API.CONSUMER.CREATE.{BASE_STREAM}.{name}", request)
    result = assetgate.validate(body, kind="consumer", server=version)
    _assert_matches(
        running, result, reply, body, f"$JS.API.CONSUMER.INFO.{BASE_STREAM}.{name}"
    )


RESTART_CASES: Final = (
    (
        "counter_with_markers",
        {
            "name": "RC1",
            "subjects": ["rc1"],
            "allow_msg_counter": True,
            "subject_delete_marker_ttl": 60_000_000_000,
        },
    ),
    ("plain", {"name": "RC2", "subjects": ["rc2"]}),
)


@pytest.mark.parametrize("version", ["2.12.8", "2.14.6", "2.15.1"])
def test_lost_on_restart_matches_a_restarted_server(
    tmp_path: Path, version: str
) -> None:
    """A create validate says is lost at restart is gone after one; the others stay."""
    server = NatsServer(version, tmp_path / "store")
    predicted: dict[str, str | None] = {}
    with server:
        for _case, config in RESTART_CASES:
            data = json.dumps(config).encode()
            result = assetgate.validate(data, kind="stream", server=version)
            name = str(config["name"])
            predicted[name] = result.lost_on_restart
            reply = raw_request(server.url, f"$JS.API.STREAM.CREATE.{name}", data)
            assert ("error" not in reply, result.accepted) == (True, True), reply
    with server:  # the same store, started again
        observed = {
            name: "error" in raw_request(server.url, f"$JS.API.STREAM.INFO.{name}", b"")
            for name in predicted
        }
        log = server.log_text()
    assert {name: reason is not None for name, reason in predicted.items()} == observed
    for name, reason in predicted.items():
        if reason is not None:
            assert f'Error recreating stream "{name}": {reason}' in log
