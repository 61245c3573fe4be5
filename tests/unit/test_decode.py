"""Tests for assetgate.decoding.decode: Go encoding/json semantics per release line.

Expected texts come from real servers (/tmp/facts/probe.md, reference section 2.2).
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

import msgspec
import pytest

from assetgate import Decoded, decode
from assetgate.catalogue.model import CONFIG_STRUCT
from assetgate.decoding.decode import reproduces
from benchmarks.gen_inventory import generate
from tests.conftest import FIXTURES

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue, ReleaseLine

STREAM = "StreamConfigRequest"


def _line(catalogue: Catalogue, version: str) -> ReleaseLine:
    return catalogue.server(version).line


def _decode(
    catalogue: Catalogue,
    data: bytes | str,
    *,
    version: str = "2.12.8",
    struct: str = STREAM,
) -> Decoded:
    profile = catalogue.server(version)
    return decode(data, profile.line, struct, go_json=profile.switches.go_json)


def _config(result: Decoded) -> Any:
    assert result.config is not None
    return result.config


# --- keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "field", "expected"),
    [
        (b'{"NAME":"K1","Subjects":["k1"]}', "subjects", ["k1"]),
        (b'{"NAME":"K1","Subjects":["k1"]}', "name", "K1"),
        (
            b'{"name":"K4","subjects":["k4"],"\\u017fubjects":["k4b"]}',
            "subjects",
            ["k4b"],
        ),
        (
            '{"name":"K4U","subjects":["k4u"],"\u017fubjects":["k4ub"]}'.encode(),
            "subjects",
            ["k4ub"],
        ),
        ('{"name":"S","no_ac\u212a":true}'.encode(), "no_ack", True),
        (b'{"name":"K2","subjects":["k2"],"name":"K2b"}', "name", "K2b"),
        (b'{"name":"S","max_msgs":5,"MAX_MSGS":7}', "max_msgs", 7),
    ],
    ids=[
        "upper-name",
        "upper-subjects",
        "long-s-escaped",
        "long-s-raw",
        "kelvin-sign",
        "duplicate",
        "dup-folded",
    ],
)
def test_keys_fold_and_last_wins(
    catalogue: Catalogue, data: bytes, field: str, expected: object
) -> None:
    """Keys match case-insensitively with Go's folding (long s, Kelvin sign); the last duplicate wins."""
    result = _decode(catalogue, data)
    actual = (result.strict_error, getattr(_config(result), field))
    assert actual == (None, expected)


@pytest.mark.parametrize(
    ("data", "unknown"),
    [
        ('{"name":"S","ᴋey":1}'.encode(), "ᴋey"),
        ('{"name":"S","\u212aey":1}'.encode(), "\u212aey"),
    ],
    ids=["small-capital-k", "kelvin-no-field"],
)
def test_non_folding_keys_unknown(
    catalogue: Catalogue, data: bytes, unknown: str
) -> None:
    """Characters that do not fold onto a field name stay unknown fields."""
    result = _decode(catalogue, data)
    assert result.unknown_fields == (unknown,)


# --- null --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "field", "expected"),
    [
        (b'{"name":"S","max_msgs":null}', "max_msgs", 0),
        (b'{"name":"S","max_msgs":5,"max_msgs":null}', "max_msgs", 5),
        (b'{"name":"S","subjects":null}', "subjects", None),
        (b'{"name":"S","placement":null}', "placement", None),
        (b'{"name":"S","metadata":null}', "metadata", None),
        (b'{"name":"S","no_ack":null}', "no_ack", False),
        (b'{"name":"S","description":null}', "description", ""),
    ],
    ids=["int", "keeps-earlier", "slice", "pointer", "map", "bool", "string"],
)
def test_null_is_noop_for_plain_fields(
    catalogue: Catalogue, data: bytes, field: str, expected: object
) -> None:
    """`null` leaves a plain field as it was (Go's rule), without error."""
    result = _decode(catalogue, data)
    actual = (
        result.strict_error,
        result.lenient_error,
        getattr(_config(result), field),
    )
    assert actual == (None, None, expected)


@pytest.mark.parametrize(
    ("data", "struct", "version", "expected"),
    [
        (
            b'{"name":"S","retention":null}',
            STREAM,
            "2.12.8",
            'can not unmarshal "null"',
        ),
        (b'{"name":"S","storage":null}', STREAM, "2.12.8", 'can not unmarshal "null"'),
        (
            b'{"name":"C","ack_policy":null}',
            "ConsumerConfig",
            "2.12.8",
            'can not unmarshal "null"',
        ),
        (
            b'{"name":"C","priority_policy":null}',
            "ConsumerConfig",
            "2.11.11",
            "unknown priority policy: null",
        ),
        (
            b'{"name":"C","priority_policy":null}',
            "ConsumerConfig",
            "2.15.1",
            "unknown priority policy: null",
        ),
    ],
    ids=["retention", "storage", "ack-policy", "priority-2.11", "priority-2.15"],
)
def test_null_is_error_for_enums(
    catalogue: Catalogue, data: bytes, struct: str, version: str, expected: str
) -> None:
    """Enum fields hand `null` to their UnmarshalJSON, which refuses it, strict and lenient."""
    result = _decode(catalogue, data, version=version, struct=struct)
    actual = (result.strict_error, result.lenient_error, result.config)
    assert actual == (expected, expected, None)


# --- unknown fields ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "strict_error", "unknown"),
    [
        (
            b'{"name":"U1","subjects":["u1"],"zzz":1,"placement":{"qqq":1}}',
            'json: unknown field "zzz"',
            ("zzz", "placement.qqq"),
        ),
        (
            b'{"name":"U2","subjects":["u2"],"placement":{"qqq":1},"zzz":1}',
            'json: unknown field "qqq"',
            ("placement.qqq", "zzz"),
        ),
        (b'{"a\\"b":1}', 'json: unknown field "a\\"b"', ('a"b',)),
        ('{"naïve":1}'.encode(), 'json: unknown field "naïve"', ("naïve",)),
        (
            b'{"name":"S","sources":[{"name":"a","consumer":{"name":"x"}}],"placement":{"qqq":1}}',
            'json: unknown field "consumer"',
            ("sources[0].consumer", "placement.qqq"),
        ),
        (
            b'{"name":"S","mirror":{"name":"m","external":{"api":"a","zz":1}}}',
            'json: unknown field "zz"',
            ("mirror.external.zz",),
        ),
        (b'{"foo":1,"bar":2,"name":"a"}', 'json: unknown field "foo"', ("foo", "bar")),
    ],
    ids=[
        "probe-U1",
        "probe-U2",
        "go-quoting",
        "non-ascii-kept",
        "source-consumer",
        "deep",
        "reference",
    ],
)
def test_unknown_fields(
    catalogue: Catalogue, data: bytes, strict_error: str, unknown: tuple[str, ...]
) -> None:
    """Strict names the first unknown key in document order; every unknown path is listed."""
    result = _decode(catalogue, data)
    actual = (result.strict_error, result.lenient_error, result.unknown_fields)
    assert actual == (strict_error, None, unknown)


def test_source_consumer_known_from_2_14(catalogue: Catalogue) -> None:
    """The stream source `consumer` object is a known field from 2.14 on."""
    data = b'{"name":"S","sources":[{"name":"a","consumer":{"name":"x"}}]}'
    result = _decode(catalogue, data, version="2.14.6")
    assert (result.strict_error, result.unknown_fields) == (None, ())


def test_metadata_keys_never_unknown(catalogue: Catalogue) -> None:
    """Keys inside `metadata` (a map) are never unknown fields."""
    result = _decode(
        catalogue, b'{"name":"S","metadata":{"zzz":"1","_nats.req.level":"9"}}'
    )
    actual = (result.strict_error, result.unknown_fields, _config(result).metadata)
    assert actual == (None, (), {"zzz": "1", "_nats.req.level": "9"})


@pytest.mark.parametrize(
    ("data", "dropped"),
    [
        (b'{"name":"S","a":0,"b":"","c":null,"d":false,"e":[],"f":1}', ("f",)),
        (b'{"name":"S","a":{},"b":[[]]}', ("b",)),
        (b'{"name":"S","a":"0001-01-01T00:00:00Z"}', ()),
    ],
    ids=["scalars", "empty-vs-nested", "zero-time"],
)
def test_dropped_fields_are_non_zero(
    catalogue: Catalogue, data: bytes, dropped: tuple[str, ...]
) -> None:
    """dropped_fields lists only unknown keys whose value is not a JSON zero value."""
    assert _decode(catalogue, data).dropped_fields == dropped


# --- enums ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "struct", "version", "expected"),
    [
        (
            b'{"name":"E1","retention":"bogus"}',
            STREAM,
            "2.12.8",
            'can not unmarshal "\\"bogus\\""',
        ),
        (b'{"name":"E6","retention":5}', STREAM, "2.12.8", 'can not unmarshal "5"'),
        (
            b'{"name":"E4","storage":"any"}',
            STREAM,
            "2.12.8",
            'can not unmarshal "\\"any\\""',
        ),
        (
            b'{"name":"E5","compression":"zstd"}',
            STREAM,
            "2.12.8",
            "unknown compression algorithm",
        ),
        (
            b'{"name":"C","priority_policy":"prioritized"}',
            "ConsumerConfig",
            "2.11.11",
            'unknown priority policy: "prioritized"',
        ),
        (
            b'{"name":"C","ack_policy":"flow_control"}',
            "ConsumerConfig",
            "2.12.8",
            'can not unmarshal "\\"flow_control\\""',
        ),
        (
            b'{"name":"C","ack_policy":"EXPLICIT"}',
            "ConsumerConfig",
            "2.12.8",
            'can not unmarshal "\\"EXPLICIT\\""',
        ),
        (
            b'{"name":"S","persist_mode":"sync"}',
            STREAM,
            "2.12.8",
            'can not unmarshal "\\"sync\\""',
        ),
    ],
    ids=[
        "bogus-retention",
        "number-retention",
        "storage-any-2.12",
        "compression",
        "prioritized-2.11",
        "flow-control-2.12",
        "ack-upper-case",
        "persist-mode",
    ],
)
def test_enum_errors(
    catalogue: Catalogue, data: bytes, struct: str, version: str, expected: str
) -> None:
    """Unknown enum values abort decoding with the server's text, strict and lenient alike."""
    result = _decode(catalogue, data, version=version, struct=struct)
    actual = (result.strict_error, result.lenient_error, result.config)
    assert actual == (expected, expected, None)


@pytest.mark.parametrize(
    ("data", "version", "field", "expected"),
    [
        (b'{"name":"E3","discard":"NEW"}', "2.12.8", "discard", "new"),
        (b'{"name":"E3","discard":"Old"}', "2.11.11", "discard", "old"),
        (b'{"name":"E4","storage":"any"}', "2.11.11", "storage", "any"),
        (b'{"name":"S","persist_mode":""}', "2.12.8", "persist_mode", ""),
    ],
    ids=["discard-upper", "discard-mixed", "storage-any-2.11", "persist-empty"],
)
def test_enum_accepted_values(
    catalogue: Catalogue, data: bytes, version: str, field: str, expected: str
) -> None:
    """The discard enum is matched case-insensitively; 2.11 still decodes the internal "any" storage."""
    result = _decode(catalogue, data, version=version)
    actual = (result.strict_error, getattr(_config(result), field))
    assert actual == (None, expected)


@pytest.mark.parametrize(
    ("data", "struct", "expected"),
    [
        (
            b'{"name":"C","ack_policy":"expl\\u0069cit"}',
            "ConsumerConfig",
            'can not unmarshal "\\"expl\\\\u0069cit\\""',
        ),
        (
            b'{"name":"S","retention":"limit\\u0073"}',
            STREAM,
            'can not unmarshal "\\"limit\\\\u0073\\""',
        ),
    ],
    ids=["ack-policy", "retention"],
)
def test_escaped_enum_value_refused(
    catalogue: Catalogue, data: bytes, struct: str, expected: str
) -> None:
    """An enum value spelled with a unicode escape is refused with the raw token quoted (%q)."""
    result = _decode(catalogue, data, struct=struct)
    assert (result.strict_error, result.lenient_error) == (expected, expected)


def test_escaped_enum_value_error_text(catalogue: Catalogue) -> None:
    """On the Go-exact path too, the error quotes the raw token with its escape."""
    data = b'{"name":"C","ack_policy":"expl\\u0069cit","x":1}'
    result = _decode(catalogue, data, struct="ConsumerConfig")
    assert result.lenient_error == 'can not unmarshal "\\"expl\\\\u0069cit\\""'


# --- type mismatches -------------------------------------------------------------------------------

_T1 = b'{"name":"T1","subjects":["t1"],"max_msgs":"x"}'
_T2 = b'{"name":"T2","subjects":"t2"}'
_T3 = b'{"name":"T3","subjects":["t3"],"placement":{"cluster":5}}'
_T4 = b'{"name":"T4","subjects":["t4"],"max_msgs":1.5}'
_T5 = b'{"name":"T5","subjects":["t5"],"max_msg_size":3000000000}'
_T6 = b'{"name":"T6","subjects":["t6"],"metadata":{"a":1}}'

TYPE_ERRORS: list[tuple[bytes, str, str]] = [
    # Go 1.24 builds (2.11.11, 2.12.8): embedded struct in the path, innermost struct first
    (
        _T1,
        "2.11.11",
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.StreamConfig.max_msgs of type int64",
    ),
    (
        _T1,
        "2.12.8",
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.StreamConfig.max_msgs of type int64",
    ),
    (
        _T2,
        "2.12.8",
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.StreamConfig.subjects of type []string",
    ),
    (
        _T3,
        "2.11.11",
        "json: cannot unmarshal number into Go struct field Placement.StreamConfig.placement.cluster of type string",
    ),
    (
        _T4,
        "2.12.8",
        "json: cannot unmarshal number 1.5 into Go struct field StreamConfigRequest.StreamConfig.max_msgs of type int64",
    ),
    (
        _T5,
        "2.12.8",
        "json: cannot unmarshal number 3000000000 into Go struct field StreamConfigRequest.StreamConfig.max_msg_size of type int32",
    ),
    (
        _T6,
        "2.12.8",
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.metadata of type string",
    ),
    # Go 1.25 builds (2.14.6, 2.15.1): top struct, no embedded name, map keys in the path
    (
        _T1,
        "2.14.6",
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.max_msgs of type int64",
    ),
    (
        _T2,
        "2.15.1",
        "json: cannot unmarshal string into Go struct field StreamConfigRequest.subjects of type []string",
    ),
    (
        _T3,
        "2.14.6",
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.placement.cluster of type string",
    ),
    (
        _T4,
        "2.15.1",
        "json: cannot unmarshal number 1.5 into Go struct field StreamConfigRequest.max_msgs of type int64",
    ),
    (
        _T5,
        "2.15.1",
        "json: cannot unmarshal number 3000000000 into Go struct field StreamConfigRequest.max_msg_size of type int32",
    ),
    (
        _T6,
        "2.15.1",
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.metadata.a of type string",
    ),
    # top-level value of the wrong kind
    (
        b"[]",
        "2.12.8",
        "json: cannot unmarshal array into Go value of type server.StreamConfigRequest",
    ),
    (
        b'"x"',
        "2.15.1",
        "json: cannot unmarshal string into Go value of type server.StreamConfigRequest",
    ),
]


@pytest.mark.parametrize(
    ("data", "version", "expected"),
    TYPE_ERRORS,
    ids=[
        "T1-2.11",
        "T1-2.12",
        "T2-2.12",
        "T3-2.11",
        "T4-2.12",
        "T5-2.12",
        "T6-2.12",
        "T1-2.14",
        "T2-2.15",
        "T3-2.14",
        "T4-2.15",
        "T5-2.15",
        "T6-2.15",
        "array",
        "string",
    ],
)
def test_type_mismatch_texts(
    catalogue: Catalogue, data: bytes, version: str, expected: str
) -> None:
    """Type mismatches use the probed Go texts for that server's Go generation."""
    result = _decode(catalogue, data, version=version)
    assert (result.strict_error, result.lenient_error) == (expected, expected)


# Go 1.27 (jsonv2-backed encoding/json; 2.14.6+, binaries only): JSON-pointer paths
# with array indexes and keys as written; 2.14.5 (Go 1.26) and 2.12.8 keep the old texts.
JSONV2_TYPE_ERRORS: list[tuple[bytes, str, str]] = [
    (
        b'{"sources":[{"name":"O","opt_start_seq":-1}]}',
        "2.14.6",
        "json: cannot unmarshal number -1 into Go struct field StreamConfigRequest.sources.0.opt_start_seq of type uint64",
    ),
    (
        b'{"sources":[{"name":"O","opt_start_seq":-1}]}',
        "2.14.5",
        "json: cannot unmarshal number -1 into Go struct field StreamSource.StreamConfig.sources.opt_start_seq of type uint64",
    ),
    (
        b'{"sources":[{},{"subject_transforms":[{},{"src":5}]}]}',
        "2.15.1",
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.sources.1.subject_transforms.1.src of type string",
    ),
    (
        b'{"subjects":["a",5]}',
        "2.15.1",
        "json: cannot unmarshal number into StreamConfigRequest.subjects.1 of type string",
    ),
    (
        b'{"sources":[{},5]}',
        "2.15.1",
        "json: cannot unmarshal number into StreamConfigRequest.sources.1 of type server.StreamSource",
    ),
    (
        b'{"sources":[{},5]}',
        "2.12.8",
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.sources of type server.StreamSource",
    ),
    (
        b'{"mirror":5}',
        "2.12.8",
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.mirror of type server.StreamSource",
    ),
    (
        b'{"metadata":{"a/b~":1}}',
        "2.15.1",
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.metadata.a~1b~0 of type string",
    ),
    (
        b'{"metadata":{"x.12":1}}',
        "2.15.1",
        "json: cannot unmarshal number into StreamConfigRequest.metadata.x.12 of type string",
    ),
    (
        b'{"Sources":[{"OPT_START_SEQ":-1}]}',
        "2.15.1",
        "json: cannot unmarshal number -1 into Go struct field StreamConfigRequest.Sources.0.OPT_START_SEQ of type uint64",
    ),
    (
        b'{"compression":5}',
        "2.15.1",
        "json: cannot unmarshal number into Go value of type string",
    ),
    (
        b'{"compression":5}',
        "2.14.5",
        "json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.compression of type string",
    ),
]


@pytest.mark.parametrize(
    ("data", "version", "expected"),
    JSONV2_TYPE_ERRORS,
    ids=[
        "index-2.14.6",
        "index-2.14.5",
        "nested-index",
        "last-index",
        "struct-element",
        "struct-element-2.12",
        "struct-field-2.12",
        "pointer-escapes",
        "digits-last",
        "keys-as-written",
        "compression-inner",
        "compression-outer-2.14.5",
    ],
)
def test_type_mismatch_paths_by_go_generation(
    catalogue: Catalogue, data: bytes, version: str, expected: str
) -> None:
    """Type-error paths follow the Go generation: JSON pointers (indexes, keys as written) from Go 1.27 (2.14.6)."""
    result = _decode(catalogue, data, version=version)
    assert (result.strict_error, result.lenient_error) == (expected, expected)


_TYPE_1_5 = "json: cannot unmarshal number 1.5 into Go struct field {} of type int64"
_ENUM_X = 'can not unmarshal "\\"x\\""'
_TIME_X = 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'

# (document, version, strict error, lenient error): which of several errors wins.
ERROR_ORDER: list[tuple[bytes, str, str, str]] = [
    (
        b'{"max_msgs":1.5,"storage":"x"}',
        "2.14.6",
        _TYPE_1_5.format("StreamConfigRequest.max_msgs"),
        _TYPE_1_5.format("StreamConfigRequest.max_msgs"),
    ),
    (b'{"max_msgs":1.5,"storage":"x"}', "2.14.5", _ENUM_X, _ENUM_X),
    (b'{"storage":"x","max_msgs":1.5}', "2.15.1", _ENUM_X, _ENUM_X),
    (
        b'{"max_msgs":1.5,"sources":[{"opt_start_time":"x"}]}',
        "2.15.1",
        _TYPE_1_5.format("StreamConfigRequest.max_msgs"),
        _TYPE_1_5.format("StreamConfigRequest.max_msgs"),
    ),
    (
        b'{"max_msgs":1.5,"sources":[{"opt_start_time":"x"}]}',
        "2.12.8",
        _TIME_X,
        _TIME_X,
    ),
    (b'{"zz":1,"storage":"x"}', "2.15.1", 'json: unknown field "zz"', _ENUM_X),
    (b'{"zz":1,"storage":"x"}', "2.12.8", _ENUM_X, _ENUM_X),
    (
        b'{"zz":1,"max_msgs":1.5,"storage":"x"}',
        "2.15.1",
        'json: unknown field "zz"',
        _TYPE_1_5.format("StreamConfigRequest.max_msgs"),
    ),
]


@pytest.mark.parametrize(
    ("data", "version", "strict_error", "lenient_error"),
    ERROR_ORDER,
    ids=[
        "type-enum-2.14.6",
        "type-enum-2.14.5",
        "enum-type",
        "type-time",
        "type-time-2.12",
        "unknown-enum",
        "unknown-enum-2.12",
        "unknown-type-enum",
    ],
)
def test_which_decode_error_wins(
    catalogue: Catalogue,
    data: bytes,
    version: str,
    strict_error: str,
    lenient_error: str,
) -> None:
    """From Go 1.27 (2.14.6) the first error in the document wins; before, an enum or time error beats an earlier one."""
    result = _decode(catalogue, data, version=version)
    assert (result.strict_error, result.lenient_error) == (strict_error, lenient_error)


def test_consumer_type_error_beats_later_enum_on_go_1_27(catalogue: Catalogue) -> None:
    """C13: a consumer type error before a bad replay_policy wins on 2.14.6 (CreateConsumerRequest path)."""
    data = b'{"stream_name":"S","config":{"opt_start_seq":-1,"replay_policy":"bogus"}}'
    result = _decode(catalogue, data, version="2.14.6", struct="CreateConsumerRequest")
    assert result.strict_error == (
        "json: cannot unmarshal number -1 into Go struct field "
        "CreateConsumerRequest.config.opt_start_seq of type uint64"
    )


def test_type_mismatch_keeps_decoding(catalogue: Catalogue) -> None:
    """After a type mismatch Go goes on decoding: a later unknown field is still listed."""
    result = _decode(catalogue, b'{"max_msgs":"x","zzz":1}')
    assert result.unknown_fields == ("zzz",)


# --- syntax, streams, empty bodies -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "strict_error", "lenient_error", "offset"),
    [
        (b'{"name":"S1",', "unexpected EOF", "unexpected end of JSON input", None),
        (
            b'{"name":"S1" x',
            "invalid character 'x' after object key:value pair",
            "invalid character 'x' after object key:value pair",
            14,
        ),
        (
            b'{"name":"S"} x',
            "invalid character 'x' looking for beginning of value",
            "invalid character 'x' after top-level value",
            14,
        ),
    ],
    ids=["truncated", "garbage-in-object", "garbage-after-object"],
)
def test_syntax_errors(
    catalogue: Catalogue,
    data: bytes,
    strict_error: str,
    lenient_error: str,
    offset: int | None,
) -> None:
    """Strict (Decoder) and lenient (Unmarshal) syntax texts differ; strict keeps the offset."""
    result = _decode(catalogue, data)
    actual = (result.strict_error, result.lenient_error, result.syntax_offset)
    assert actual == (strict_error, lenient_error, offset)


def test_concatenated_objects_merge(catalogue: Catalogue) -> None:
    """Two concatenated objects decode into one config, the later keys on top (probe S2)."""
    result = _decode(catalogue, b'{"name":"S2"} {"subjects":["s2"]}')
    config = _config(result)
    actual = (result.strict_error, config.name, config.subjects)
    assert actual == (None, "S2", ["s2"])


@pytest.mark.parametrize("data", [b"", b"  \n"], ids=["empty", "blank"])
def test_empty_request_is_zero_config(catalogue: Catalogue, data: bytes) -> None:
    """An empty request body decodes to the zero config without error (from 2.11)."""
    result = _decode(catalogue, data)
    config = _config(result)
    actual = (result.strict_error, config.name, config.subjects)
    assert actual == (None, "", None)


def test_stored_context_reads_one_value(catalogue: Catalogue) -> None:
    """A stored config is read with Unmarshal: a second value is a syntax error."""
    line = _line(catalogue, "2.12.8")
    result = decode(
        b'{"name":"S"} {"subjects":["s"]}', line, "StreamConfig", context="stored"
    )
    expected = "invalid character '{' after top-level value"
    assert (result.strict_error, result.lenient_error) == (expected, expected)


def test_stored_context_empty_is_error(catalogue: Catalogue) -> None:
    """An empty stored config does not decode (Unmarshal: unexpected end of JSON input)."""
    line = _line(catalogue, "2.12.8")
    result = decode(b"", line, "StreamConfig", context="stored")
    assert result.lenient_error == "unexpected end of JSON input"


# --- times ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            '"2024-13-01T00:00:00Z"',
            'parsing time "2024-13-01T00:00:00Z": month out of range',
        ),
        (
            '"2024-02-30T00:00:00Z"',
            'parsing time "2024-02-30T00:00:00Z": day out of range',
        ),
        (
            '"2024-01-01T24:00:00Z"',
            'parsing time "2024-01-01T24:00:00Z": hour out of range',
        ),
        (
            '"2024-01-01"',
            'parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "2024-01-01" as "2006"',
        ),
        ("5", "Time.UnmarshalJSON: input is not a JSON string"),
    ],
    ids=["month", "day", "hour", "date-only", "number"],
)
def test_time_errors(catalogue: Catalogue, value: str, expected: str) -> None:
    """Bad times abort decoding with Go's time.Parse texts (probe C2 for the month)."""
    data = f'{{"name":"C","opt_start_time":{value}}}'.encode()
    result = _decode(catalogue, data, struct="ConsumerConfig")
    assert (result.strict_error, result.lenient_error) == (expected, expected)


@pytest.mark.parametrize(
    "value",
    [
        "2024-01-01T00:00:00+01:00",
        "2024-01-01T00:00:00.123456789Z",
        "0001-01-01T00:00:00Z",
    ],
    ids=["offset", "fraction", "zero"],
)
def test_time_kept_verbatim(catalogue: Catalogue, value: str) -> None:
    """Valid RFC 3339 times are kept as written (the server stores +01:00 verbatim)."""
    data = f'{{"name":"C","opt_start_time":"{value}"}}'.encode()
    result = _decode(catalogue, data, struct="ConsumerConfig")
    assert (result.strict_error, _config(result).opt_start_time) == (None, value)


# --- names and strings ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "struct", "expected"),
    [
        (b'{"name":"S","zzz":1}', STREAM, "S"),
        (b'{"durable_name":"D"}', "ConsumerConfig", "D"),
        (b'{"name":"S","max_msgs":"x"}', STREAM, "S"),
    ],
    ids=["unknown-field", "durable", "type-error"],
)
def test_name_found_even_on_error(
    catalogue: Catalogue, data: bytes, struct: str, expected: str
) -> None:
    """`name` (or `durable_name`) is reported even when the strict decode fails."""
    assert _decode(catalogue, data, struct=struct).name == expected


def test_lone_surrogate_value_becomes_replacement(catalogue: Catalogue) -> None:
    """A lone surrogate escape in a string value decodes to U+FFFD, as in Go."""
    result = _decode(catalogue, b'{"name":"\\ud800","zzz":1}')
    assert _config(result).name == "\ufffd"


def test_lone_surrogate_key_becomes_replacement(catalogue: Catalogue) -> None:
    """An unknown key with a lone surrogate escape is reported as U+FFFD (Go unquotes keys too)."""
    result = _decode(catalogue, b'{"name":"S","\\ud800":1}')
    actual = (result.strict_error, result.unknown_fields)
    assert actual == ('json: unknown field "\ufffd"', ("\ufffd",))


def test_invalid_utf8_becomes_replacement(catalogue: Catalogue) -> None:
    """Invalid UTF-8 bytes inside a string decode to U+FFFD, one per byte, as in Go."""
    result = _decode(catalogue, b'{"name":"S\xff\xfeX","subjects":["a\xc3"]}')
    config = _config(result)
    actual = (result.strict_error, config.name, config.subjects)
    assert actual == (None, "S\ufffd\ufffdX", ["a\ufffd"])


def test_invalid_utf8_in_unknown_field(catalogue: Catalogue) -> None:
    """Invalid UTF-8 inside an unknown field's value is just an unknown field."""
    result = _decode(catalogue, b'{"name":"S","x":"\xff\xfe"}')
    assert (result.strict_error, result.lenient_error) == (
        'json: unknown field "x"',
        None,
    )


# --- integers -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"first_seq":18446744073709551615}', None),
        (
            b'{"first_seq":18446744073709551616}',
            (
                "json: cannot unmarshal number 18446744073709551616 into Go struct field "
                "StreamConfigRequest.StreamConfig.first_seq of type uint64"
            ),
        ),
        (
            b'{"first_seq":-1}',
            (
                "json: cannot unmarshal number -1 into Go struct field "
                "StreamConfigRequest.StreamConfig.first_seq of type uint64"
            ),
        ),
        (b'{"max_msgs":-9223372036854775808}', None),
        (
            b'{"max_msgs":1e400}',
            (
                "json: cannot unmarshal number 1e400 into Go struct field "
                "StreamConfigRequest.StreamConfig.max_msgs of type int64"
            ),
        ),
        (b'{"max_msgs":-0}', None),
    ],
    ids=[
        "uint64-max",
        "uint64-overflow",
        "uint64-negative",
        "int64-min",
        "huge-float",
        "minus-zero",
    ],
)
def test_integer_bounds(
    catalogue: Catalogue, data: bytes, expected: str | None
) -> None:
    """Integers must fit their Go type exactly; floats never fit an integer field."""
    assert _decode(catalogue, data).strict_error == expected


# --- bad input never raises ------------------------------------------------------------------------------


def _huge_unknown() -> bytes:
    return b'{"name":"S","huge":"' + b"a" * 50_000_000 + b'"}'


@pytest.mark.parametrize(
    ("factory", "strict_error"),
    [
        (lambda: b"{", "unexpected EOF"),
        (
            lambda: b"\x00\x01",
            "invalid character '\\x00' looking for beginning of value",
        ),
        (
            lambda: b'{"name":1}',
            "json: cannot unmarshal number into Go struct field StreamConfigRequest.StreamConfig.name of type string",
        ),
        (_huge_unknown, 'json: unknown field "huge"'),
        (
            lambda: b"[" * 100_000 + b"]" * 100_000,
            "invalid character '[' exceeded max depth",
        ),
        (
            lambda: b'{"name":"S","x":' + b"[" * 9_000 + b"]" * 9_000 + b"}",
            'json: unknown field "x"',
        ),
        (lambda: b'{"name":"S","x":"\xff"}', 'json: unknown field "x"'),
    ],
    ids=[
        "truncated",
        "binary",
        "wrong-type",
        "50MB",
        "100k-deep",
        "9k-deep-unknown",
        "bad-utf8-unknown",
    ],
)
def test_bad_input_gives_result(
    catalogue: Catalogue, factory: Any, strict_error: str
) -> None:
    """Hostile input gives a Decoded with a clear error, never an exception."""
    result = _decode(catalogue, factory())
    assert result.strict_error == strict_error


def test_9k_deep_unknown_field_loads_leniently(catalogue: Catalogue) -> None:
    """9,000 levels inside an unknown field are valid for Go (limit 10,000): lenient loads it."""
    data = b'{"name":"S","x":' + b"[" * 9_000 + b"]" * 9_000 + b"}"
    result = _decode(catalogue, data)
    actual = (result.lenient_error, _config(result).name, result.dropped_fields)
    assert actual == (None, "S", ("x",))


def test_depth_limit_enforced_when_python_parses(catalogue: Catalogue) -> None:
    """10,001 levels (object + 10,000 arrays) is a Go syntax error even though Python parses it."""
    data = b'{"name":"S","x":' + b"[" * 10_000 + b"]" * 10_000 + b"}"
    result = _decode(catalogue, data)
    expected = "invalid character '[' exceeded max depth"
    actual = (result.strict_error, result.lenient_error, result.syntax_offset)
    assert actual == (expected, expected, 10_016)


def test_unknown_and_dropped_fields_are_listed_up_to_a_bound() -> None:
    """A config with more unknown keys than MAX_LISTED lists that many, then a count."""
    from assetgate.catalogue.levels import load_catalogue
    from assetgate.decoding.decode import MAX_LISTED

    extra = MAX_LISTED + 2500
    keys = ",".join(f'"u{i}":{i % 2}' for i in range(extra))
    line = load_catalogue().server("2.12.8").line
    decoded = decode(
        f'{{"name":"S","subjects":["a"],{keys}}}',
        line,
        "StreamConfig",
        context="stored",
    )
    assert decoded.unknown_fields[:2] == ("u0", "u1")
    assert len(decoded.unknown_fields) == MAX_LISTED + 1
    assert decoded.unknown_fields[-1] == "... 2,500 more"
    assert decoded.dropped_fields[-1] == f"... {extra // 2 - MAX_LISTED:,} more"
    assert decoded.strict_error == 'json: unknown field "u0"'


# --- lines that decode alike (reproduces) ----------------------------------------------


def _configs(kind: str) -> list[bytes]:
    """The configs of ``kind`` in a generated fleet and the fixture inventories."""
    lines = [*generate(2000, seed=11, bad_fraction=0.0)]
    for path in sorted((FIXTURES / "inventories").glob("*.jsonl")):
        lines.extend(path.read_bytes().splitlines())
    out: list[bytes] = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("kind") == kind:
            out.append(json.dumps(record.get("config")).encode())
    return out


@pytest.mark.parametrize("kind", ["stream", "consumer"])
def test_a_line_that_reproduces_another_decodes_its_clean_configs_alike(
    catalogue: Catalogue, kind: str
) -> None:
    """Where reproduces() holds, each config the older line decodes cleanly decodes alike on the newer."""
    struct = CONFIG_STRUCT[kind]
    pairs = [
        (older, newer)
        for older, newer in itertools.pairwise(catalogue.lines)
        if reproduces(older, newer, struct)
    ]
    compared = 0
    for config in _configs(kind):
        for older, newer in pairs:
            before = decode(config, older, struct, context="stored")
            if before.config is None or before.strict_error is not None:
                continue
            after = decode(config, newer, struct, context="stored")
            assert msgspec.to_builtins(after) == msgspec.to_builtins(before)
            compared += 1
    assert compared > 100


def test_reproduces_refuses_a_changed_zero_value_an_added_field_or_a_lost_value(
    catalogue: Catalogue,
) -> None:
    """An enum whose zero changes, a field added, or a value dropped: not alike."""
    line = catalogue.release_line("2.12")
    enum = line.enums["ack_policy"]
    moved = msgspec.structs.replace(enum, values=(*enum.values[1:], enum.values[0]))
    fewer = msgspec.structs.replace(enum, values=enum.values[:-1])
    spec = line.structs["ConsumerConfig"]
    extra = msgspec.structs.replace(spec, fields=(*spec.fields, spec.fields[0]))
    changed = [
        msgspec.structs.replace(line, enums={**line.enums, "ack_policy": moved}),
        msgspec.structs.replace(
            line, structs={**line.structs, "ConsumerConfig": extra}
        ),
    ]
    shrunk = msgspec.structs.replace(line, enums={**line.enums, "ack_policy": fewer})
    assert reproduces(line, line, "ConsumerConfig")
    assert [reproduces(line, other, "ConsumerConfig") for other in changed] == [
        False,
        False,
    ]
    assert (
        reproduces(line, shrunk, "ConsumerConfig"),
        reproduces(shrunk, line, "ConsumerConfig"),
    ) == (False, True)
