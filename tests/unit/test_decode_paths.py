"""The quick decode paths agree with the Go-exact walk on every config they take."""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any, Final

import msgspec
import pytest

from assetgate.decoding.decode import Decoded, _Exact, decode
from benchmarks.gen_inventory import generate
from tests.conftest import FIXTURES

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue

VERSIONS: Final = ("2.10.26", "2.11.8", "2.11.11", "2.12.8", "2.14.6", "2.15.1")


def _configs() -> list[tuple[str, bytes]]:
    """Configs of every kind: the demo inventory and a generated fleet sample."""
    lines = (FIXTURES / "inventories" / "demo.jsonl").read_bytes().splitlines()
    lines += list(itertools.islice(generate(3000, 7, bad_fraction=0.0), 3000))
    out: list[tuple[str, bytes]] = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("kind") in {"stream", "consumer"}:
            out.append((record["kind"], msgspec.json.encode(record["config"])))
    return out


CONFIGS: Final = _configs()


def _summary(result: Decoded) -> tuple[Any, ...]:
    return (
        result.strict_error,
        result.lenient_error,
        result.unknown_fields,
        result.dropped_fields,
        msgspec.to_builtins(result.config) if result.config is not None else None,
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_quick_paths_equal_exact_walk(catalogue: Catalogue, version: str) -> None:
    """decode() (msgspec fast path, unknown-fields-only path) == the Go-exact walk."""
    profile = catalogue.server(version)
    go_json = profile.switches.go_json
    mismatches = []
    for kind, raw in CONFIGS:
        struct = "StreamConfig" if kind == "stream" else "ConsumerConfig"
        quick = decode(raw, profile.line, struct, context="stored", go_json=go_json)
        exact = _Exact(profile.line, go_json=go_json).run(raw, struct, context="stored")
        if _summary(quick) != _summary(exact):
            mismatches.append((raw[:120], _summary(quick)[:4], _summary(exact)[:4]))
    assert mismatches[:3] == []
