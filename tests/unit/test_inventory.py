"""Tests for assetgate.inventory.read: formats, detection, accounting, raw configs, streaming.

The example files in ``fixtures/inventories/formats/`` are small hand-made instances of
each format; field names follow nats-server 2.12 (``server/jetstream_api.go``,
``server/stream.go``, ``server/consumer.go``, ``server/monitor.go``).
"""

from __future__ import annotations

import errno
import io
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

import pytest

from assetgate.inventory import read as inventory
from assetgate.inventory.read import (
    MAX_LINE_BYTES,
    Asset,
    Ignored,
    InventoryEntry,
    RecordError,
    read_inventory,
    read_inventory_bytes,
    read_inventory_stream,
    read_records,
)
from benchmarks.gen_inventory import generate
from tests.conftest import FIXTURES

if TYPE_CHECKING:
    import os
    from pathlib import Path

FORMATS: Final = FIXTURES / "inventories" / "formats"
JSZ_EMPTY: Final = (
    "/jsz document without stream details: request"
    " /jsz?accounts=true&streams=true&consumers=true&config=true"
)
LEVEL_4: Final = "unsupported - required API level: 4, current API level: 2"

Summary = tuple[str | bool | None, ...]


def _summary(entry: InventoryEntry) -> Summary:
    """An entry without its config: what the format tests compare."""
    if isinstance(entry, Asset):
        return (
            entry.source,
            entry.account,
            entry.cluster,
            entry.kind,
            entry.stream,
            entry.name,
            entry.created,
            entry.observed_state,
            entry.observed_reason,
            entry.server_version,
        )
    if isinstance(entry, RecordError):
        return (entry.source, "error", entry.message, entry.retriable)
    return (entry.source, "ignored", entry.reason)


def _read_fixture(name: str) -> list[InventoryEntry]:
    path = FORMATS / name
    return list(read_inventory_bytes(path.read_bytes(), name))


def _sources(entries: list[InventoryEntry]) -> list[str]:
    return [entry.source for entry in entries]


def _asset(source: str, *fields: str | None) -> Summary:
    """An Asset summary in field order, from account to server_version."""
    assert len(fields) == 9
    return (source, *fields)


def _error(source: str, message: str, *, retriable: bool = False) -> Summary:
    return (source, "error", message, retriable)


def _ignored(source: str, reason: str) -> Summary:
    return (source, "ignored", reason)


# --- each format ------------------------------------------------------------------------

ORDERS_CREATED: Final = "2025-06-02T09:14:03.551018Z"
EXPECTED: Final[dict[str, list[Summary]]] = {
    "canonical.jsonl": [
        _asset(
            "canonical.jsonl:1",
            "ORDERS_ACC",
            "east",
            "stream",
            "ORDERS",
            "ORDERS",
            ORDERS_CREATED,
            None,
            None,
            None,
        ),
        _asset(
            "canonical.jsonl:2",
            "ORDERS_ACC",
            "east",
            "consumer",
            "ORDERS",
            "WORKERS",
            None,
            None,
            None,
            None,
        ),
        _asset(
            "canonical.jsonl:3",
            "$G",
            "",
            "stream",
            "EVENTS",
            "EVENTS",
            None,
            "offline",
            "unsupported - required API level: 2, current API level: 1",
            "2.10.29",
        ),
        _ignored("canonical.jsonl:4", "unknown kind 'kv'"),
    ],
    "stream-info.jsonl": [
        _asset(
            "stream-info.jsonl:1",
            "$G",
            "east",
            "stream",
            "ORDERS",
            "ORDERS",
            ORDERS_CREATED,
            None,
            None,
            None,
        ),
        _error(
            "stream-info.jsonl:2",
            f"stream info response is an error: stream is offline: {LEVEL_4}"
            " (err_code 10194, code 500); the config is not in the response",
        ),
        _error(
            "stream-info.jsonl:3",
            "stream info response is an error: JetStream system temporarily"
            " unavailable (err_code 10008, code 503)",
            retriable=True,
        ),
    ],
    "nats-stream-info.json": [
        _asset(
            "nats-stream-info.json:1",
            "$G",
            "west",
            "stream",
            "EVENTS",
            "EVENTS",
            "2025-07-14T12:00:00.123456Z",
            None,
            None,
            None,
        ),
    ],
    "consumer-info.jsonl": [
        _asset(
            "consumer-info.jsonl:1",
            "$G",
            "east",
            "consumer",
            "ORDERS",
            "WORKERS",
            "2025-06-02T09:15:00Z",
            None,
            None,
            None,
        ),
        _error(
            "consumer-info.jsonl:2",
            "consumer info response is an error: consumer is offline: unsupported"
            " - required API level: 3, current API level: 1 (err_code 10195,"
            " code 500); the config is not in the response",
        ),
        _error(
            "consumer-info.jsonl:3",
            "consumer info response is an error: consumer not found"
            " (err_code 10014, code 404)",
        ),
    ],
    "stream-list.jsonl": [
        _asset(
            "stream-list.jsonl:1#1",
            "$G",
            "east",
            "stream",
            "AUDIT",
            "AUDIT",
            "2025-01-01T00:00:00Z",
            None,
            None,
            None,
        ),
        _asset(
            "stream-list.jsonl:1#2",
            "$G",
            "east",
            "stream",
            "ORDERS",
            "ORDERS",
            ORDERS_CREATED,
            "missing",
            None,
            None,
        ),
        _error(
            "stream-list.jsonl:1#3",
            "stream 'COUNTERS' is listed as offline by the server (unsupported -"
            " required API level: 2, current API level: 1); its config is not in"
            " the page",
        ),
        _error(
            "stream-list.jsonl:1#4",
            "stream 'SLOW' is listed as missing by the server (it did not answer in"
            " time); its config is not in the page",
            retriable=True,
        ),
        _ignored("stream-list.jsonl:2#1", "list page without entries"),
    ],
    "consumer-list.jsonl": [
        _asset(
            "consumer-list.jsonl:1#1",
            "$G",
            "",
            "consumer",
            "ORDERS",
            "WORKERS",
            "2025-06-02T09:15:00Z",
            None,
            None,
            None,
        ),
        _asset(
            "consumer-list.jsonl:1#2",
            "$G",
            "",
            "consumer",
            "ORDERS",
            "AUDITOR",
            "2025-06-03T00:00:00Z",
            None,
            None,
            None,
        ),
        _error(
            "consumer-list.jsonl:1#3",
            "consumer 'PINNED' of stream 'ORDERS' is listed as offline by the server"
            " (unsupported - required API level: 1, current API level: 0); its"
            " config is not in the page",
        ),
    ],
    "jsz-sys.jsonl": [
        _asset(
            "jsz-sys.jsonl:1#1",
            "$G",
            "east",
            "stream",
            "METRICS",
            "METRICS",
            "2025-02-01T00:00:00Z",
            None,
            None,
            "2.12.8",
        ),
        _asset(
            "jsz-sys.jsonl:1#2",
            "$G",
            "east",
            "consumer",
            "METRICS",
            "SCRAPER",
            "2025-02-01T00:01:00Z",
            None,
            None,
            "2.12.8",
        ),
    ],
    "array.json": [
        _asset(
            "array.json:1#1",
            "A",
            "",
            "stream",
            "ALPHA",
            "ALPHA",
            None,
            None,
            None,
            None,
        ),
        _asset(
            "array.json:1#2",
            "A",
            "",
            "consumer",
            "ALPHA",
            "READER",
            None,
            None,
            None,
            None,
        ),
        _ignored("array.json:1#3", "unknown kind 'object_store'"),
    ],
}
ORDERS_ACCOUNT: Final = "ADVDTT5W6ZBEK5PXGW7GS4QGXZBCRZL3MEQRTOCYBGT3XCGX3EGQPPAG"
EXPECTED["jsz.json"] = [
    _asset(
        "jsz.json:1#1",
        ORDERS_ACCOUNT,
        "east",
        "stream",
        "ORDERS",
        "ORDERS",
        ORDERS_CREATED,
        None,
        None,
        None,
    ),
    _asset(
        "jsz.json:1#2",
        ORDERS_ACCOUNT,
        "east",
        "consumer",
        "ORDERS",
        "WORKERS",
        "2025-06-02T09:15:00Z",
        None,
        None,
        None,
    ),
    _asset(
        "jsz.json:1#3",
        ORDERS_ACCOUNT,
        "east",
        "consumer",
        "ORDERS",
        "AUDITOR",
        "2025-06-03T00:00:00Z",
        None,
        None,
        None,
    ),
    _asset(
        "jsz.json:1#4",
        "$G",
        "west",
        "stream",
        "COUNTERS",
        "COUNTERS",
        "2025-09-09T09:09:09Z",
        None,
        None,
        None,
    ),
    # no cluster of its own: meta_cluster.name
    _asset(
        "jsz.json:1#5",
        "$G",
        "east",
        "stream",
        "LOCAL",
        "LOCAL",
        "2025-09-10T00:00:00Z",
        None,
        None,
        None,
    ),
]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_format_fixture(name: str) -> None:
    """Each example file yields exactly the expected assets, errors and ignored."""
    assert [_summary(entry) for entry in _read_fixture(name)] == EXPECTED[name]


def test_every_format_fixture_is_tested() -> None:
    """Every example file in the formats folder has expectations (mixed: below)."""
    on_disk = {path.name for path in FORMATS.iterdir()}
    assert on_disk == {*EXPECTED, "mixed.jsonl"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_configs_are_slices_of_the_input(name: str) -> None:
    """Every config is a byte-exact piece of its input file, not a re-encoding."""
    data = (FORMATS / name).read_bytes()
    configs = [e.config for e in _read_fixture(name) if isinstance(e, Asset)]
    assert configs
    assert [config in data for config in configs] == [True] * len(configs)


def test_read_inventory_reads_paths_in_order() -> None:
    """Paths are read in order with the path as given at the start of each source."""
    paths: list[str | os.PathLike[str]] = [
        FORMATS / "array.json",
        str(FORMATS / "canonical.jsonl"),
    ]
    entries = list(read_inventory(paths))
    assert _sources(entries) == [
        f"{FORMATS}/array.json:1#1",
        f"{FORMATS}/array.json:1#2",
        f"{FORMATS}/array.json:1#3",
        f"{FORMATS}/canonical.jsonl:1",
        f"{FORMATS}/canonical.jsonl:2",
        f"{FORMATS}/canonical.jsonl:3",
        f"{FORMATS}/canonical.jsonl:4",
    ]


def test_stream_info_entry_is_complete() -> None:
    """A STREAM.INFO response becomes one full Asset (config bytes as in the line)."""
    line = (
        b'{"type":"io.nats.jetstream.api.v1.stream_info_response","total":0,'
        b'"config":{"name":"S","subjects":["s"]},"created":"2025-01-01T00:00:00Z",'
        b'"state":{"messages":1},"cluster":{"name":"c1","leader":"n1"}}'
    )
    assert read_records(line, "f:7") == [
        Asset(
            source="f:7",
            cluster="c1",
            kind="stream",
            stream="S",
            name="S",
            config=b'{"name":"S","subjects":["s"]}',
            created="2025-01-01T00:00:00Z",
        )
    ]


# --- accounting and line numbers --------------------------------------------------------


def test_mixed_file_accounts_for_every_record() -> None:
    """Each non-blank line yields entries; counts match the records they hold."""
    entries = _read_fixture("mixed.jsonl")
    assets = [e.source for e in entries if isinstance(e, Asset)]
    errors = [e.source for e in entries if isinstance(e, RecordError)]
    ignored = [e.source for e in entries if isinstance(e, Ignored)]
    lines = (FORMATS / "mixed.jsonl").read_bytes().split(b"\n")
    non_blank = {n for n, line in enumerate(lines, 1) if line.strip()}
    # 11 non-blank lines; line 9 is an array of 3, line 10 a page of 1 plus 1 offline
    assert len(non_blank) == 11
    assert len(entries) == len(assets) + len(errors) + len(ignored) == 14
    assert {int(s.split(":")[1].split("#")[0]) for s in _sources(entries)} == non_blank
    assert assets == [
        "mixed.jsonl:1",
        "mixed.jsonl:3",
        "mixed.jsonl:9#1",
        "mixed.jsonl:9#2",
        "mixed.jsonl:10#1",
        "mixed.jsonl:12",
    ]
    assert errors == [
        "mixed.jsonl:4",
        "mixed.jsonl:10#2",
        "mixed.jsonl:11",
        "mixed.jsonl:13",
    ]
    assert ignored == [
        "mixed.jsonl:6",
        "mixed.jsonl:7",
        "mixed.jsonl:8",
        "mixed.jsonl:9#3",
    ]


def test_bad_lines_keep_their_line_numbers() -> None:
    """Blank lines count for numbering but yield nothing; bad lines are errors in place."""
    data = (
        b'{"kind":"stream","config":{"name":"A"}}\n'
        b"\n"
        b"  \t \r\n"
        b"{bad\n"
        b'{"kind":"stream","config":{"name":"B"}}\r\n'
        b'{"kind":"stream","config":{"name":"C"}}'
    )
    entries = list(read_inventory_bytes(data, "inv.jsonl"))
    assert [_summary(e)[:2] for e in entries] == [
        ("inv.jsonl:1", "$G"),
        ("inv.jsonl:4", "error"),
        ("inv.jsonl:5", "$G"),
        ("inv.jsonl:6", "$G"),
    ]
    assert entries[1] == RecordError(
        source="inv.jsonl:4",
        message="invalid JSON: JSON is malformed: object keys must be strings (byte 1)",
    )


def test_first_line_cut_short_in_json_lines_falls_back() -> None:
    """A truncated first line of a JSON Lines file is one error; later lines still read."""
    data = (
        b'{"kind":"stream","config":{"name":"A"\n'
        b'{"kind":"stream","config":{"name":"B"}}\n'
        b'{"kind":"stream","config":{"name":"C"}}\n'
    )
    entries = list(read_inventory_bytes(data, "f"))
    assert [_summary(e) for e in entries[:1]] == [
        _error("f:1", "invalid JSON: JSON is malformed: expected ',' or '}' (line 2)")
    ]
    assert [(e.source, isinstance(e, Asset)) for e in entries[1:]] == [
        ("f:2", True),
        ("f:3", True),
    ]


def test_broken_pretty_document_is_one_error_at_its_line() -> None:
    """A pretty-printed document that does not parse is one error naming where it breaks."""
    data = b'\n{\n  "kind": "stream",\n  "config": {"name": "A"}\n  oops\n}\n'
    entries = list(read_inventory_bytes(data, "p.json"))
    assert entries == [
        RecordError(
            source="p.json:2",
            message="invalid JSON: JSON is malformed: expected ',' or '}' (line 5)",
        )
    ]


def _pretty(name: str, **extra: str) -> bytes:
    record = {"kind": "stream", "config": {"name": name, "subjects": [f"{name}.>"]}}
    return json.dumps({**record, **extra}, indent=2).encode() + b"\n"


def test_concatenated_pretty_documents_are_read_one_by_one() -> None:
    """Documents one after another (``nats stream info --json`` of several): each read."""
    first, second = _pretty("A"), _pretty("B")
    data = first + second + b'{"kind":"stream","config":{"name":"C"}}\n'
    entries = list(read_inventory_bytes(data, "s.json"))
    lines = first.count(b"\n")
    assert [(e.source, getattr(e, "name", None)) for e in entries] == [
        ("s.json:1", "A"),
        (f"s.json:{lines + 1}", "B"),
        (f"s.json:{2 * lines + 1}", "C"),
    ]


def test_a_broken_document_in_a_stream_does_not_take_the_rest() -> None:
    """One missing comma is one error at the document's line; the next ones are read."""
    first = _pretty("A")
    broken = _pretty("B").replace(b'"kind": "stream",', b'"kind": "stream"', 1)
    data = first + broken + _pretty("C")
    entries = list(read_inventory_bytes(data, "s.json"))
    lines = first.count(b"\n")
    assert [(e.source, type(e).__name__) for e in entries] == [
        ("s.json:1", "Asset"),
        (f"s.json:{lines + 1}", "RecordError"),
        (f"s.json:{2 * lines + 1}", "Asset"),
    ]
    assert isinstance(entries[1], RecordError)
    assert entries[1].message.endswith(f"(line {lines + 3})")


def test_pretty_document_after_blank_lines_and_bom() -> None:
    """A BOM and leading blank lines are skipped; the source is the document's line."""
    data = b'\xef\xbb\xbf\n\n  {\n "kind": "stream",\n "config": {"name": "A"}\n}\n'
    entries = list(read_inventory_bytes(data, "p.json"))
    assert [_summary(e)[:6] for e in entries] == [
        ("p.json:3", "$G", "", "stream", "A", "A"),
    ]


def test_pretty_jsz_file_from_disk() -> None:
    """The pretty-printed /jsz example read from disk is one document at line 1."""
    entries = list(read_inventory([FORMATS / "jsz.json"]))
    prefix = f"{FORMATS}/"
    assert [
        (e.source.removeprefix(prefix), *_summary(e)[1:]) for e in entries
    ] == EXPECTED["jsz.json"]


def test_pretty_array_over_many_lines() -> None:
    """A JSON array spread over lines is read whole; elements are numbered."""
    data = b'[\n  {"kind": "stream", "config": {"name": "A"}},\n  7\n]\n'
    assert [_summary(e)[:2] for e in read_inventory_bytes(data, "a")] == [
        ("a:1#1", "$G"),
        ("a:1#2", "ignored"),
    ]


# --- raw configs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "name"),
    [
        (b'{"name":"ORDERS","name":"ORDERS2"}', "ORDERS2"),
        (b'{"NAME":"upper","name":"ORDERS"}', "ORDERS"),
        (b'{"name":"ORDERS","Subjects":["a"],"future_field":{"x":[1,2]}}', "ORDERS"),
        (b'{ "name" : "ORDERS" ,\t"max_age":1e9 }', "ORDERS"),
        (b'{"name":"\\u004fRDERS","subjects":["\\u00e9"]}', "ORDERS"),
        (b'{"name":"ORDERS","description":"caf\xe9 \xff"}', "ORDERS"),
        (b'{"name":"OR\xffDERS"}', "OR\ufffdDERS"),
    ],
    ids=[
        "duplicate-name",
        "key-case",
        "unknown-fields",
        "whitespace-and-floats",
        "escapes",
        "invalid-utf8-in-value",
        "invalid-utf8-in-name",
    ],
)
def test_config_bytes_are_kept_exactly(config: bytes, name: str) -> None:
    """The config is the input's bytes; the name is what Go's decoder would read."""
    line = b'{"kind":"stream","config":' + config + b',"account":"A"}'
    assert read_records(line, "f:1") == [
        Asset(
            source="f:1",
            account="A",
            kind="stream",
            stream=name,
            name=name,
            config=config,
        )
    ]


def test_consumer_name_falls_back_to_durable_name() -> None:
    """A canonical consumer is named by config name, else durable_name."""
    lines = [
        b'{"kind":"consumer","stream":"S","config":{"name":"N","durable_name":"D"}}',
        b'{"kind":"consumer","stream":"S","config":{"durable_name":"D"}}',
    ]
    names = [
        e.name
        for line in lines
        for e in read_records(line, "f")
        if isinstance(e, Asset)
    ]
    assert names == ["N", "D"]


# --- malformed and unknown records ------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"kind":"consumer","config":{"durable_name":"D"}}', "consumer record has no stream - at `$.stream`"),
        (b'{"kind":"consumer","stream":"S","config":{}}', "consumer config has no name or durable_name - at `$.config`"),
        (b'{"kind":"stream"}', "Object missing required field `config` - at `$`"),
        (b'{"kind":"stream","config":null}', "Expected `object`, got `null` - at `$.config`"),
        (b'{"kind":"stream","config":["a"]}', "Expected `object`, got `array` - at `$.config`"),
        (b'{"kind":"stream","config":{"subjects":["a"]}}', "stream config has no name - at `$.config.name`"),
        (b'{"kind":"stream","config":{"name":5}}', "Expected `str`, got `int` - at `$.config.name`"),
        (b'{"kind":"stream","stream":"B","config":{"name":"A"}}', "stream 'B' differs from its config's name 'A' - at `$.stream`"),
        (b'{"kind":1,"config":{"name":"A"}}', "Expected `str | null`, got `int` - at `$.kind`"),
        (b'{"kind":"stream","config":{"name":"A"},"cluster":{"name":"c"}}', "Expected `str | null`, got `object` - at `$.cluster`"),
        (b'{"kind":"stream","config":{"name":"A"},"account":"\xff"}', "invalid UTF-8 in a string - at `$.account`"),
        (b'{"kind":"stream","config":{"name":"A"}} x', "invalid JSON: JSON is malformed: trailing characters (byte 41)"),
        (b'{"kind":"stream",', "invalid JSON: Input data was truncated"),
        (b"[" * 100_000 + b"]" * 100_000, "JSON nested too deeply to read"),
        (b'{"kind":"stream","config":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "JSON nested too deeply to read"),
    ],
    ids=[
        "consumer-without-stream",
        "consumer-without-name",
        "no-config",
        "null-config",
        "array-config",
        "stream-without-name",
        "name-not-a-string",
        "stream-differs",
        "kind-not-a-string",
        "cluster-object-in-canonical",
        "invalid-utf8-outside-config",
        "trailing-garbage",
        "truncated",
        "deep-array",
        "deep-config",
    ],
)  # fmt: skip
def test_malformed_record_is_an_error(line: bytes, message: str) -> None:
    """A malformed record is one error naming its source, not retriable."""
    assert read_records(line, "f:3") == [RecordError(source="f:3", message=message)]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"kind":"kv","config":{"bucket":"b"}}', "unknown kind 'kv'"),
        (b'{"kind":"object_store","config":{}}', "unknown kind 'object_store'"),
        (b'{"kind":null,"config":{}}', "unknown kind None"),
        (b'{"type":"io.nats.jetstream.advisory.v1.api_audit","server":"n1"}', "record type 'io.nats.jetstream.advisory.v1.api_audit' is not read"),
        (b'{"type":"io.nats.jetstream.api.v1.stream_names_response","streams":["A"]}', "io.nats.jetstream.api.v1.stream_names_response carries names, no configs"),
        (b'{"server_id":"N1","version":"2.12.8","jetstream":{}}', "JSON object in no known inventory format"),
        (b'{"type":7}', "JSON object in no known inventory format"),
        (b"42", "JSON number is not an inventory record"),
        (b"1e400", "JSON number is not an inventory record"),
        (b'"text \xff"', "JSON string is not an inventory record"),
        (b"true", "JSON boolean is not an inventory record"),
        (b"null", "JSON null is not an inventory record"),
    ],
    ids=[
        "kv",
        "object-store",
        "null-kind",
        "advisory",
        "names-page",
        "varz",
        "type-not-a-string",
        "number",
        "huge-number",
        "string",
        "boolean",
        "null",
    ],
)  # fmt: skip
def test_unknown_record_is_ignored(line: bytes, reason: str) -> None:
    """Valid JSON in no known format (or of an unknown kind) is ignored with a reason."""
    assert read_records(line, "f:2") == [Ignored(source="f:2", reason=reason)]


@pytest.mark.parametrize(
    ("err_code", "code", "retriable"),
    [
        (10194, 500, False),
        (10195, 500, False),
        (10059, 404, False),
        (10008, 503, True),
        (10118, 500, True),
        (10119, 500, True),
    ],
    ids=[
        "stream-unsupported",
        "consumer-unsupported",
        "not-found",
        "cluster-unavailable",
        "stream-peers-offline",
        "consumer-peers-offline",
    ],
)
def test_api_error_retriable(err_code: int, code: int, retriable: bool) -> None:
    """Only transient API errors are retriable; an unsupported config never is."""
    line = (
        b'{"type":"io.nats.jetstream.api.v1.stream_info_response","error":'
        b'{"code":%d,"err_code":%d,"description":"d"}}' % (code, err_code)
    )
    (entry,) = read_records(line, "f:1")
    assert isinstance(entry, RecordError)
    assert entry.retriable is retriable


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"[]", "empty JSON array"),
        (b'{"streams":[]}', "list page without entries"),
        (
            b'{"server_id":"N1","streams":0,"consumers":0}',
            JSZ_EMPTY,
        ),
        (
            b'{"server_id":"N1","streams":0,"account_details":[{"name":"$G"}]}',
            JSZ_EMPTY,
        ),
    ],
    ids=["array", "list-page", "jsz-without-accounts", "jsz-without-streams"],
)
def test_empty_container_counts_as_one_ignored(line: bytes, reason: str) -> None:
    """A container without entries is still accounted for, as one ignored entry."""
    assert read_records(line, "f:2") == [Ignored(source="f:2#1", reason=reason)]


def test_untyped_error_response() -> None:
    """An error response without a type is still an error, as is a malformed one."""
    assert read_records(b'{"error":{"code":404,"err_code":10059,"description":"stream not found"}}', "f") == [
        RecordError(source="f", message="API response is an error: stream not found (err_code 10059, code 404)")
    ]  # fmt: skip
    assert read_records(b'{"error":"boom"}', "f") == [
        RecordError(
            source="f",
            message="API response carries a malformed error: Expected `object`,"
            " got `str` - at `$.error`",
        )
    ]


def test_read_records_blank_input_yields_nothing() -> None:
    """Blank input is no record at all."""
    assert read_records(b" \r\n\t", "f") == []


def test_nested_containers_number_their_entries_flat() -> None:
    """Entries of a page inside an array share one count; empty parts are counted."""
    line = (
        b'[{"streams":[{"config":{"name":"A"},"state":{}}]},[],'
        b'{"kind":"stream","config":{"name":"B"}}]'
    )
    assert [_summary(e)[:2] for e in read_records(line, "f:1")] == [
        ("f:1#1", "$G"),
        ("f:1#2", "ignored"),
        ("f:1#3", "$G"),
    ]


def test_page_entry_errors_stay_with_their_entry() -> None:
    """A bad entry of a list page is an error of its own; the others are read."""
    line = (
        b'{"type":"io.nats.jetstream.api.v1.consumer_list_response",'
        b'"consumers":[{"name":"C","config":{}},7,{"stream_name":"S","name":"D",'
        b'"config":{"ack_policy":"none"}}],"missing":["E"]}'
    )
    assert [_summary(e) for e in read_records(line, "f:1")] == [
        _error("f:1#1", "consumer info has no stream_name - at `$.consumers[0].stream_name`"),
        _error("f:1#2", "Expected `object`, got `int` - at `$.consumers[1]`"),
        ("f:1#3", "$G", "", "consumer", "S", "D", None, None, None, None),
        _error(
            "f:1#4",
            "consumer 'E' of stream 'S' is listed as missing by the server (it did"
            " not answer in time); its config is not in the page",
            retriable=True,
        ),
    ]  # fmt: skip


def test_page_with_malformed_offline_map() -> None:
    """A malformed ``offline`` map is one error; the page's entries are still read."""
    line = b'{"streams":[{"config":{"name":"A"},"state":{}}],"offline":{"B":1}}'
    assert [_summary(e)[:3] for e in read_records(line, "f:1")] == [
        ("f:1#1", "error", "Expected `str`, got `int` - at `$.offline[...]`"),
        ("f:1#2", "$G", ""),
    ]


def test_jsz_without_configs_names_each_asset() -> None:
    """/jsz without config=true: each stream and consumer is an error naming it."""
    line = (
        b'{"server_id":"N","streams":1,"account_details":[{"name":"$G","id":"$G",'
        b'"stream_detail":[{"name":"S","state":{},"consumer_detail":'
        b'[{"stream_name":"S","name":"C"}],"direct_consumer_detail":'
        b'[{"stream_name":"S","name":"C"}]}]}, 5]}'
    )
    hint = "request /jsz?accounts=true&streams=true&consumers=true&config=true"
    assert [_summary(e) for e in read_records(line, "j:1")] == [
        _error("j:1#1", "Expected `object`, got `int` - at `$.account_details[1]`"),
        _error(
            "j:1#2",
            f"stream 'S' has no config - at `$.account_details[0].stream_detail[0]"
            f".config` ({hint})",
        ),
        _error(
            "j:1#3",
            "consumer 'C' of stream 'S' has no config - at `$.account_details[0]"
            f".stream_detail[0].consumer_detail[0].config` ({hint})",
        ),
        _ignored("j:1#4", "direct consumer (not a stored asset)"),
    ]


def test_single_account_detail_and_wrapped_errors() -> None:
    """/jsz?acc= (one AccountDetail) is read; a $SYS response error is an error."""
    detail = (
        b'{"name":"tag","id":"ACC","stream_detail":[{"name":"S","cluster":'
        b'{"name":"c"},"config":{"name":"S"}}]}'
    )
    assert [_summary(e)[:4] for e in read_records(detail, "a:1")] == [
        ("a:1#1", "ACC", "c", "stream"),
    ]
    wrapped = b'{"server":{"name":"n1","ver":"2.11.0"},"error":{"code":500,"description":"x"}}'
    assert read_records(wrapped, "w:1") == [
        RecordError(source="w:1#1", message="API response is an error: x (err_code 0, code 500)"),
    ]  # fmt: skip
    other = b'{"server":{"name":"n1"},"data":{"now":"x","connections":[]}}'
    assert read_records(other, "w:2") == [
        Ignored(source="w:2#1", reason="server API response without /jsz data"),
    ]


# --- files, limits and streaming --------------------------------------------------------


def test_read_inventory_is_lazy() -> None:
    """Nothing is opened before the iterator is advanced; a missing file is one error."""
    entries = read_inventory(["/nonexistent/inventory.jsonl"])
    assert isinstance(entries, Iterator)
    assert list(entries) == [
        RecordError(
            source="/nonexistent/inventory.jsonl",
            message="cannot open inventory: No such file or directory (ENOENT)",
        )
    ]


def test_directory_is_an_error(tmp_path: Path) -> None:
    """A directory is not an inventory file: one error, not retriable."""
    assert list(read_inventory([tmp_path])) == [
        RecordError(
            source=str(tmp_path),
            message="cannot open inventory: Is a directory (EISDIR)",
        )
    ]


@pytest.mark.parametrize(
    ("error", "message", "retriable"),
    [
        (OSError(errno.EIO, "Input/output error"), "Input/output error (EIO)", True),
        (OSError(errno.EAGAIN, "Try again"), "Try again (EAGAIN)", True),
        (TimeoutError(errno.ETIMEDOUT, "Timed out"), "Timed out (ETIMEDOUT)", True),
        (PermissionError(errno.EACCES, "Permission denied"), "Permission denied (EACCES)", False),
        (FileNotFoundError(errno.ENOENT, "No such file"), "No such file (ENOENT)", False),
        (OSError("no errno"), "no errno", False),
    ],
    ids=["eio", "eagain", "timeout", "permission", "missing", "no-errno"],
)  # fmt: skip
def test_open_error_retriable(
    monkeypatch: pytest.MonkeyPatch, error: OSError, message: str, retriable: bool
) -> None:
    """Transient open errors are retriable; a missing file or permission is not."""

    def fail(*_: object) -> None:
        raise error

    monkeypatch.setattr(inventory, "open", fail, raising=False)
    assert list(read_inventory(["inv.jsonl"])) == [
        RecordError(
            source="inv.jsonl",
            message=f"cannot open inventory: {message}",
            retriable=retriable,
        )
    ]


class _FailingReader(io.BytesIO):
    """Reads its first line, then fails like a disk would."""

    def readline(self, size: int | None = -1, /) -> bytes:
        if self.tell():
            raise OSError(errno.EIO, "Input/output error")
        return super().readline(size)


def test_read_error_mid_file_is_retriable() -> None:
    """An I/O error after some lines is one retriable error at the next line."""
    stream = _FailingReader(b'{"kind":"stream","config":{"name":"A"}}\nmore\n')
    assert [_summary(e) for e in read_inventory_stream(stream, "s")][1:] == [
        _error("s:2", "cannot read inventory: Input/output error (EIO)", retriable=True)
    ]


class _CountingFile(io.FileIO):
    """A file that counts the bytes the buffered reader above it asks for."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")
        self.bytes_read = 0

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # typeshed declares the wider WriteableBuffer
        count = super().readinto(buffer)
        self.bytes_read += count or 0
        return count or 0


def test_reading_one_record_does_not_read_the_whole_file(tmp_path: Path) -> None:
    """The reader is lazy: the first record costs about one buffer, not the file."""
    path = tmp_path / "big.jsonl"
    line = b'{"kind":"stream","config":{"name":"S%06d","subjects":["s.>"]}}\n'
    path.write_bytes(b"".join(line % n for n in range(200_000)))
    raw = _CountingFile(path)
    with io.BufferedReader(raw, buffer_size=64 * 1024) as stream:
        entries = read_inventory_stream(stream, "big")
        first = next(entries)
        assert isinstance(first, Asset)
        assert (first.source, first.name) == ("big:1", "S000000")
        assert raw.bytes_read <= 64 * 1024 < path.stat().st_size // 100
        assert sum(1 for _ in entries) == 199_999


def test_line_over_64_mib_is_an_error_and_reading_goes_on(tmp_path: Path) -> None:
    """An over-long line is one error; the next line keeps its number."""
    path = tmp_path / "long.jsonl"
    with path.open("wb") as out:
        out.write(b'{"kind":"stream","config":{"name":"A","description":"')
        out.write(b"x" * MAX_LINE_BYTES)
        out.write(b'"}}\n{"kind":"stream","config":{"name":"B"}}\n')
    entries = [_summary(e)[:2] for e in read_inventory([path])]
    assert entries == [(f"{path}:1", "error"), (f"{path}:2", "$G")]
    first = next(iter(read_inventory([path])))
    assert first == RecordError(
        source=f"{path}:1", message="line too long: 67108864 bytes or more, not read"
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            b'{"config":{"subjects":["a"]},"state":{}}',
            [_error("f", "stream config has no name - at `$.config.name`")],
        ),
        (
            b'{"stream_name":"S","config":{"ack_policy":"none"}}',
            [_error("f", "consumer info has no name - at `$.name`")],
        ),
        (
            b'{"error":{"code":500,"description":"\xff"}}',
            [
                _error(
                    "f",
                    "API response carries a malformed error: invalid UTF-8 in a"
                    " string - at `$.error`",
                )
            ],
        ),
        (
            (
                b'{"type":"io.nats.jetstream.api.v1.stream_list_response","error":'
                b'{"code":503,"err_code":10008,"description":"unavailable"}}'
            ),
            [
                _error(
                    "f#1",
                    "stream list response is an error: unavailable (err_code 10008,"
                    " code 503)",
                    retriable=True,
                )
            ],
        ),
        (
            b'{"type":"io.nats.jetstream.api.v1.stream_list_response","streams":5}',
            [_error("f#1", "Expected `array | null`, got `int` - at `$.streams`")],
        ),
        (
            b'{"consumers":[{"stream_name":"S","name":"C","config":{}}]}',
            [_asset("f#1", "$G", "", "consumer", "S", "C", None, None, None, None)],
        ),
        (
            b'{"server":{"cluster":5},"data":{}}',
            [_error("f#1", "Expected `str`, got `int` - at `$.server.cluster`")],
        ),
        (
            b'{"server_id":"N","streams":1,"meta_cluster":5}',
            [
                _error(
                    "f#1",
                    "Expected `object | null`, got `int` - at `$.meta_cluster`",
                )
            ],
        ),
        (
            b'{"account_details":[{"id":5,"stream_detail":[]}]}',
            [_error("f#1", "Expected `str | null`, got `int` - at `$.account_details[0].id`")],
        ),
        (
            b'{"stream_detail":[{"name":"S","cluster":"c","config":{"name":"S"}}]}',
            [
                _error(
                    "f#1",
                    "Expected `object | null`, got `str` - at"
                    " `$.stream_detail[0].cluster`",
                )
            ],
        ),
    ],
    ids=[
        "stream-info-without-name",
        "consumer-info-without-name",
        "error-with-invalid-utf8",
        "list-page-error",
        "list-page-streams-not-array",
        "untyped-consumer-page",
        "wrapped-server-malformed",
        "jsz-meta-cluster-malformed",
        "jsz-account-id-malformed",
        "jsz-stream-cluster-malformed",
    ],
)  # fmt: skip
def test_structure_errors_name_their_place(
    line: bytes, expected: list[Summary]
) -> None:
    """Malformed parts of API and /jsz documents are errors with a JSON path."""
    assert [_summary(e) for e in read_records(line, "f")] == expected


def test_deep_first_lines_fall_back() -> None:
    """Nesting too deep for the first line or the whole file is an error, not a crash."""
    deep = b"[" * 100_000 + b"]" * 100_000
    good = b'{"kind":"stream","config":{"name":"A"}}'
    cases = {
        "deep-line.jsonl": deep + b"\n" + good + b"\n",
        "deep-doc.json": b"[\n" + deep + b"\n" + good + b"\n",
    }
    results = {
        name: [_summary(e)[:3] for e in read_inventory_bytes(data, name)]
        for name, data in cases.items()
    }
    assert results == {
        "deep-line.jsonl": [
            ("deep-line.jsonl:1", "error", "JSON nested too deeply to read"),
            ("deep-line.jsonl:2", "$G", ""),
        ],
        "deep-doc.json": [
            ("deep-doc.json:1", "error", "JSON nested too deeply to read"),
            ("deep-doc.json:2", "error", "JSON nested too deeply to read"),
            ("deep-doc.json:3", "$G", ""),
        ],
    }


def test_document_cut_short_is_reported_without_line() -> None:
    """A pretty document that ends early is one error that says so."""
    data = b'{\n  "kind": "stream",\n  "config": {"name": "A"}\n'
    entries = list(read_inventory_bytes(data, "p"))
    assert [_summary(e)[:3] for e in entries] == [
        ("p:1", "error", "invalid JSON: Input data was truncated")
    ]


def test_first_line_not_an_object_start_is_not_read_ahead() -> None:
    """Only a cut-short object or array starts a whole-file read."""
    data = b'"unterminated\n{"kind":"stream","config":{"name":"A"}}\n'
    assert [_summary(e)[:2] for e in read_inventory_bytes(data, "s")] == [
        ("s:1", "error"),
        ("s:2", "$G"),
    ]


def test_file_over_document_limit_is_read_line_by_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A file at or over the document limit is never read whole."""
    path = tmp_path / "p.json"
    path.write_bytes(b'{\n"kind": "stream", "config": {"name": "A"}\n}\n')
    monkeypatch.setattr(inventory, "MAX_DOCUMENT_BYTES", 16)
    assert [_summary(e)[:3] for e in read_inventory([path])] == [
        (f"{path}:1", "error", "invalid JSON: Input data was truncated"),
        (f"{path}:2", "error", "invalid JSON: JSON is malformed: trailing characters (byte 7)"),
        (f"{path}:3", "error", "invalid JSON: JSON is malformed: invalid character (byte 0)"),
    ]  # fmt: skip


def test_long_line_is_skipped_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rest of an over-long line is skipped a chunk at a time, not kept."""
    monkeypatch.setattr(inventory, "MAX_LINE_BYTES", 100)
    data = b'{"kind":"stream","config":{"name":"A"}}\n' + b"x" * 3_000_000 + b"\n7\n"
    assert [_summary(e) for e in read_inventory_bytes(data, "l")] == [
        _asset("l:1", "$G", "", "stream", "A", "A", None, None, None, None),
        _error("l:2", "line too long: 100 bytes or more, not read"),
        _ignored("l:3", "JSON number is not an inventory record"),
    ]


def test_character_device_has_no_size() -> None:
    """A non-regular file (here /dev/null) is read as a stream: empty, no entries."""
    assert list(read_inventory(["/dev/null"])) == []


class _FailingRest(io.BytesIO):
    """Gives its first line, then fails when the rest is read at once."""

    def read(self, _size: int | None = -1, /) -> bytes:
        raise OSError(errno.EIO, "Input/output error")


def test_read_error_while_reading_a_document_ahead() -> None:
    """An I/O error while reading a whole document is a retriable error."""
    stream = _FailingRest(b"{\n}\n")
    assert [_summary(e) for e in read_inventory_stream(stream, "s")] == [
        _error("s:1", "invalid JSON: Input data was truncated"),
        _error(
            "s:2", "cannot read inventory: Input/output error (EIO)", retriable=True
        ),
    ]


@pytest.mark.parametrize("first", [True, False])
def test_a_misspelt_top_level_key_is_a_record_error(
    tmp_path: Path, first: bool
) -> None:
    """`"acount"` in a canonical record is an error naming the key it meant, not `$G`."""
    good = '{"kind":"stream","config":{"name":"OK","subjects":["ok"]},"api_level":1}\n'
    bad = '{"kind":"stream","acount":"A","config":{"name":"S","subjects":["s"]}}\n'
    path = tmp_path / "inv.jsonl"
    path.write_text(bad + good if first else good + bad, encoding="utf-8")
    entries = list(read_inventory([path]))
    errors = [e for e in entries if isinstance(e, RecordError)]
    assets = [e for e in entries if isinstance(e, Asset)]
    assert [a.name for a in assets] == ["OK"]
    assert len(errors) == 1
    assert errors[0].message.startswith(
        "unknown key 'acount' in a canonical stream record (did you mean 'account'?)"
    )


def test_pull_records_keep_every_key_they_write() -> None:
    """The keys `assetgate pull` writes are all canonical keys (a pull output stays readable)."""
    from assetgate.inventory.read import CANONICAL_KEYS
    from assetgate.live.common import Where, make_record

    where = Where(cluster="c", account="A", version="2.12.8", api_level=2)
    record = make_record(where, "stream", "S", "S", config={"name": "S"})
    assert set(record) <= set(CANONICAL_KEYS)


@pytest.mark.parametrize("first", [True, False])
def test_a_fleet_pull_record_with_its_servers_is_an_asset(
    tmp_path: Path, first: bool
) -> None:
    """A `$SYS` fleet pull's `servers` key (hosting servers) is read, not refused."""
    fleet = (
        '{"cluster":"C1","account":"APP","kind":"stream","stream":"R3","name":"R3",'
        '"config":{"name":"R3","subjects":["r3.>"]},"created":null,'
        '"observed_state":"online","observed_reason":null,"server_version":"2.15.1",'
        '"servers":["n1","n2","n3"]}\n'
    )
    other = '{"kind":"stream","config":{"name":"OK","subjects":["ok"]}}\n'
    path = tmp_path / "fleet.jsonl"
    path.write_text(fleet + other if first else other + fleet, encoding="utf-8")
    entries = list(read_inventory([path]))
    assert sorted(e.name for e in entries if isinstance(e, Asset)) == ["OK", "R3"]
    assert not [e for e in entries if isinstance(e, RecordError)]


def test_line_at_the_limit_keeps_the_next_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of exactly the limit is one error, and the line after it is still read."""
    monkeypatch.setattr(inventory, "MAX_LINE_BYTES", 100)
    data = b"x" * 100 + b"\n" + b'{"kind":"stream","config":{"name":"A"}}\n' + b"x" * 99
    assert [_summary(e) for e in read_inventory_bytes(data, "l")] == [
        _error("l:1", "line too long: 100 bytes or more, not read"),
        _asset("l:2", "$G", "", "stream", "A", "A", None, None, None, None),
        _error("l:3", "invalid JSON: JSON is malformed: invalid character (byte 0)"),
    ]


def test_lone_surrogate_escapes_are_read_as_go_reads_them() -> None:
    r"""A lone ``\udc00`` in a record is no error: the config keeps its bytes, names read U+FFFD."""
    config = rb'{"name":"S","subjects":["a"],"retention":"\udc00","description":"\ud83d\ude00 \\udc00"}'
    line = b'{"kind":"stream","stream":"S","config":' + config + b"}"
    [entry] = read_records(line, "f:1")
    assert isinstance(entry, Asset)
    assert (entry.name, entry.config) == ("S", config)
    named = rb'{"kind":"stream","config":{"name":"S\udc00","subjects":["a"]}}'
    [other] = read_records(named, "f:2")
    assert isinstance(other, Asset)
    assert other.name == "S\ufffd"
    assert other.config == rb'{"name":"S\udc00","subjects":["a"]}'


def test_lone_surrogate_config_is_judged_as_the_target_decodes_it() -> None:
    """`check` judges such a config (unloadable here: an enum Go cannot read), no error."""
    from assetgate.catalogue.levels import load_catalogue
    from assetgate.decoding.decode import decode
    from assetgate.run.check import check

    config = rb'{"name":"S","subjects":["a"],"retention":"\udc00"}'
    line = b'{"kind":"stream","config":' + config + b"}"
    report = check(read_records(line, "f:1"), target="2.12.8", mode="single")
    [verdict] = report.assets
    line_model = load_catalogue().server("2.12.8").line
    expected = decode(config, line_model, "StreamConfig", context="stored")
    assert (verdict.state, verdict.reason) == ("unloadable", expected.lenient_error)
    assert report.summary.errors == 0


def _general(data: bytes, source: str) -> list[InventoryEntry]:
    """What the general reader makes of one line, with the canonical fast path skipped."""
    try:
        record = inventory._decode(data)
    except inventory._Malformed as exc:
        return [RecordError(source=source, message=str(exc))]
    return inventory._dispatch_guarded(record, source)


_PULL_KEYS: Final = (
    b'"name":"ORDERS",',
    b'"name":5,',
    b'"api_level":3,',
    b'"api_level":"x",',
    b'"servers":["n1","n2"],',
    b'"servers":null,',
)


def test_the_canonical_fast_path_reads_what_the_general_reader_reads() -> None:
    """A canonical line reads the same on the fast path as on the general one, pull keys too."""
    lines = [line.rstrip(b"\n") for line in generate(400, seed=5, bad_fraction=0.05)]
    lines += [
        b"{" + extra + line[1:]
        for extra in _PULL_KEYS
        for line in (FIXTURES / "inventories" / "demo.jsonl").read_bytes().splitlines()
    ]
    taken = 0
    for number, line in enumerate(lines, 1):
        source = f"f:{number}"
        fast = inventory._fast_canonical(line, source)
        taken += fast is not None
        assert read_records(line, source) == _general(line, source), line
        assert fast is None or [fast] == _general(line, source), line
    # the pull keys (name, api_level, servers) no longer send a line the long way
    assert taken > 0.9 * len(lines)
