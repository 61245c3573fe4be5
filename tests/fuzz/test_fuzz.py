"""Fuzz targets: the inventory line reader and ``validate`` never fail on hostile input.

The corpus is the project's own fixtures (every config and every inventory line), fed
as they are and mutated (bytes changed, cut, repeated, wrapped), plus JSON values
Hypothesis builds from the config keys. ``make test`` runs each target for seconds
(profile ``ci``); ``make fuzz`` for minutes (profile ``fuzz``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from assetgate.errors import AssetgateError
from assetgate.inventory.read import (
    Asset,
    Ignored,
    RecordError,
    line_data,
    read_records,
)
from assetgate.requests.validate import validate
from assetgate.run.check import check
from tests.conftest import FIXTURES

TARGETS: Final = ("2.10.26", "2.11.11", "2.12.8", "2.15.1")

_CONFIGS: Final = sorted((FIXTURES / "configs").rglob("*.json"))
_LINES: Final = [
    line
    for path in sorted((FIXTURES / "inventories").rglob("*.jsonl"))
    for line in path.read_bytes().splitlines()
    if line.strip()
]
_CORPUS: Final = [path.read_bytes() for path in _CONFIGS] + _LINES
_KEYS: Final = sorted(
    {key for path in _CONFIGS for key in json.loads(path.read_bytes())}
    | {"name", "subjects", "metadata", "sources", "mirror", "storage", "retention"}
)


def _mutated(seed: bytes, data: st.DataObject) -> bytes:
    """``seed`` with a few random byte edits: flips, cuts, inserts and repeats."""
    out = bytearray(seed)
    for _ in range(data.draw(st.integers(0, 4))):
        if not out:
            break
        where = data.draw(st.integers(0, len(out) - 1))
        action = data.draw(st.sampled_from(["flip", "cut", "insert", "repeat"]))
        if action == "flip":
            out[where] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del out[where : where + data.draw(st.integers(1, 64))]
        elif action == "insert":
            out[where:where] = data.draw(
                st.sampled_from(
                    [
                        b"\\u",
                        b"\\udc00",
                        b"\xff",
                        b"[",
                        b"{",
                        b"}",
                        b'"',
                        b"9" * 30,
                        b"\x00",
                        b"\r\n",
                    ]
                )
            )
        else:
            out[where:where] = out[where : where + data.draw(st.integers(1, 32))] * 3
    return bytes(out)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(_KEYS) | st.text(max_size=8), inner, max_size=4
        )
    ),
    max_leaves=20,
)
_CONFIG_VALUES = st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=10)


@st.composite
def _documents(draw: st.DrawFn) -> bytes:
    """A corpus entry as it is or mutated, a built JSON object, or raw bytes."""
    data = draw(st.data())
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return draw(st.sampled_from(_CORPUS))
    if choice == 1:
        return _mutated(draw(st.sampled_from(_CORPUS)), data)
    if choice == 2:
        return msgspec.json.encode(draw(_CONFIG_VALUES))
    return draw(st.binary(max_size=256))


def _as_record(config: bytes, kind: str) -> bytes:
    """An inventory line holding ``config`` raw (it need not be valid JSON)."""
    head = f'{{"cluster":"c","account":"A","kind":"{kind}","stream":"S","name":"N","config":'
    return head.encode() + config + b"}"


@given(_documents(), st.sampled_from(["stream", "consumer"]), st.sampled_from(TARGETS))
def test_reader_and_check_take_any_line(
    document: bytes, kind: str, target: str
) -> None:
    """Any line gives at least one entry, never an exception; check judges what it gives."""
    for line in (document, _as_record(document, kind)):
        data = line_data(line, first=False)
        if not data:
            continue
        entries = read_records(data, "fuzz.jsonl:1")
        assert entries
        assert all(isinstance(e, Asset | RecordError | Ignored) for e in entries)
        report = check(entries, target=target, mode="cluster")
        summary = report.summary
        assert summary.assets + summary.errors + summary.ignored == len(entries)


@given(
    _documents(),
    st.sampled_from(["stream", "consumer"]),
    st.sampled_from(TARGETS),
    st.sampled_from(["create", "update"]),
    st.sampled_from(["single", "cluster"]),
)
def test_validate_answers_any_request(
    document: bytes, kind: Any, target: str, op: Any, mode: Any
) -> None:
    """Any request body gets the server's kind of answer: accepted, or an API error."""
    try:
        result = validate(document, kind=kind, server=target, op=op, mode=mode)
    except AssetgateError:
        return  # the project's own refusal (such as a body that is not one document)
    assert result.accepted == (result.error is None)
    if result.error is not None:
        assert result.error.code in {400, 404, 500, 503}
        assert isinstance(result.error.description, str)


def test_corpus_is_the_fixtures() -> None:
    """The corpus holds every fixture config and inventory line (so it cannot go empty)."""
    assert len(_CONFIGS) >= 10
    assert len(_LINES) >= 20
    assert all(isinstance(path, Path) for path in _CONFIGS)
