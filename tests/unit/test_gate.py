"""Every state and reason of the gate, per release and mode (reference section 4)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import msgspec
import pytest

from assetgate.inventory.read import Asset, read_inventory_bytes
from assetgate.judge import gate
from assetgate.judge.gate import Verdict, classify_stream
from benchmarks.gen_inventory import generate
from tests.conftest import REPO

if TYPE_CHECKING:
    from assetgate.catalogue.levels import Catalogue


def _stream(name: str, level: str | None, **features: Any) -> Asset:
    config: dict[str, Any] = {
        "name": name,
        "subjects": [f"{name.lower()}.>"],
        **features,
    }
    if level is not None:
        config["metadata"] = {"_nats.req.level": level}
    return Asset(
        source=f"t:{name}",
        kind="stream",
        stream=name,
        name=name,
        config=msgspec.json.encode(config),
    )


def _consumer(stream: str, name: str, level: str | None, **features: Any) -> Asset:
    config: dict[str, Any] = {
        "durable_name": name,
        "ack_policy": "explicit",
        **features,
    }
    if level is not None:
        config["metadata"] = {"_nats.req.level": level}
    return Asset(
        source=f"t:{name}",
        kind="consumer",
        stream=stream,
        name=name,
        config=msgspec.json.encode(config),
    )


SOURCE: Final = {
    "name": "S_PLAIN",
    "consumer": {"name": "AGG", "deliver_subject": "agg.x"},
}
GROUPS: Final[list[tuple[Asset, list[Asset]]]] = [
    (_stream("S_PLAIN", "0"), []),
    (_stream("S_TTL", "1", allow_msg_ttl=True), []),
    (_stream("S_COUNTER", "2", allow_msg_counter=True), []),
    (_stream("S_BATCHED", "4", allow_batched=True), []),
    (_stream("S_SRC", "0", sources=[SOURCE]), []),
    (_stream("S_FORGED", "6"), []),
    (_stream("S_TEXT", "text"), []),
    (_stream("S_TEMPLATE", "0", template_owner="T"), []),
    (_stream("S_BOGUS", "0", retention="bogus"), []),
    (_stream("S_OLD", None), []),
    (
        _stream("H", "0"),
        [_consumer("H", "C_FORGED", "6"), _consumer("H", "C_SIB", "0")],
    ),
    (
        _stream("P", "0"),
        [
            _consumer(
                "P", "C_PRIO", "1", priority_groups=["g"], priority_policy="prioritized"
            ),
            _consumer(
                "P", "C_FLOW", "4", ack_policy="flow_control", deliver_subject="f.x"
            ),
            _consumer("P", "C_PAUSE", "1", pause_until="2999-01-01T00:00:00Z"),
        ],
    ),
]

ON: Final = ("online", None)
LVL: Final = "unsupported - required API level: {}, current API level: {}"
BOGUS: Final = ("unloadable", 'can not unmarshal "\\"bogus\\""')
FLOW_BAD: Final = ("unloadable", 'can not unmarshal "\\"flow_control\\""')
PRIO_BAD: Final = ("unloadable", 'unknown priority policy: "prioritized"')
DETACHED_GEN1: Final = ("detached", 'stream "H" is offline: stopped')
STOPPED_GEN2: Final = 'stopped - unsupported consumer "C_FORGED"'
DETACHED_GEN2: Final = ("detached", f'stream "H" is offline: {STOPPED_GEN2}')


def _degraded(*fields: str) -> tuple[str, str | None, tuple[str, ...]]:
    return ("degraded", None, fields)


def _off(reason: str) -> tuple[str, str]:
    return ("offline", reason)


def _config_error(field: str) -> tuple[str, str]:
    return _off(f'unsupported - config error: unknown field "{field}"')


def _decoding(field: str) -> tuple[str, str]:
    return _off(f'decoding error: json: unknown field "{field}"')


BEFORE_OFFLINE: Final[dict[str, Any]] = {
    "S_PLAIN": ON,
    "S_FORGED": ON,
    "S_TEXT": ON,
    "S_TEMPLATE": ON,
    "S_BOGUS": BOGUS,
    "S_OLD": ON,
    "H": ON,
    "C_FORGED": ON,
    "C_SIB": ON,
    "P": ON,
    "C_FLOW": FLOW_BAD,
    "S_COUNTER": _degraded("allow_msg_counter"),
    "S_BATCHED": _degraded("allow_batched"),
    "S_SRC": _degraded("sources[0].consumer"),
}
EXPECTED: Final[dict[str, dict[str, Any]]] = {
    "2.10.26": {
        **BEFORE_OFFLINE,
        "S_TTL": _degraded("allow_msg_ttl"),
        "C_PRIO": _degraded("priority_groups", "priority_policy"),
        "C_PAUSE": _degraded("pause_until"),
    },
    "2.11.8": {**BEFORE_OFFLINE, "S_TTL": ON, "C_PRIO": PRIO_BAD, "C_PAUSE": ON},
}
_GEN1_COMMON: Final[dict[str, Any]] = {
    "S_PLAIN": ON,
    "S_TTL": ON,
    "S_TEMPLATE": ON,
    "S_BOGUS": BOGUS,
    "S_OLD": ON,
    "H": _off("stopped"),
    "C_SIB": DETACHED_GEN1,
    "P": ON,
    "C_FLOW": FLOW_BAD,
    "C_PAUSE": ON,
}
_GEN2_COMMON: Final[dict[str, Any]] = {
    **_GEN1_COMMON,
    "H": _off(STOPPED_GEN2),
    "C_SIB": DETACHED_GEN2,
}


def _gen1(level: int, mode: str) -> dict[str, Any]:
    offline_src = _decoding("consumer") if mode == "single" else _off("stopped")
    return {
        **_GEN1_COMMON,
        "S_COUNTER": ON if level >= 2 else _off(LVL.format(2, level)),
        "S_BATCHED": _off(LVL.format(4, level)),
        "S_SRC": offline_src,
        "S_FORGED": _off(LVL.format(6, level)),
        "S_TEXT": _off(LVL.format("text", level)),
        "C_FORGED": _off(LVL.format(6, level)),
        "C_PRIO": ON if level >= 2 else PRIO_BAD,
    }


def _gen2(level: int, mode: str) -> dict[str, Any]:
    known_2_14 = level >= 4
    template = (
        _decoding("template_owner")
        if mode == "single"
        else _config_error("template_owner")
    )
    source = _decoding("consumer") if mode == "single" else _config_error("consumer")
    return {
        **_GEN2_COMMON,
        "S_COUNTER": ON if level >= 2 else _config_error("allow_msg_counter"),
        "S_BATCHED": ON if known_2_14 else _config_error("allow_batched"),
        "S_SRC": ON if known_2_14 else source,
        "S_FORGED": _off(LVL.format(6, level)),
        "S_TEXT": _off(LVL.format("text", level)),
        "S_TEMPLATE": template if known_2_14 else ON,
        "C_FORGED": _off(LVL.format(6, level)),
        "C_PRIO": ON if level >= 2 else PRIO_BAD,
        "C_FLOW": ON if known_2_14 else FLOW_BAD,
    }


CASES: Final = [
    *(
        pytest.param(version, mode, EXPECTED[version], id=f"{version}-{mode}")
        for version in ("2.10.26", "2.11.8")
        for mode in ("single", "cluster")
    ),
    *(
        pytest.param(version, mode, _gen1(level, mode), id=f"{version}-{mode}")
        for version, level in (("2.11.10", 1), ("2.12.0", 2))
        for mode in ("single", "cluster")
    ),
    *(
        pytest.param(version, mode, _gen2(level, mode), id=f"{version}-{mode}")
        for version, level in (
            ("2.11.11", 1),
            ("2.12.8", 3),
            ("2.14.6", 4),
            ("2.15.1", 5),
        )
        for mode in ("single", "cluster")
    ),
]


def _classify(catalogue: Catalogue, version: str, mode: Any) -> dict[str, Verdict]:
    profile = catalogue.server(version)
    out: dict[str, Verdict] = {}
    for stream, consumers in GROUPS:
        for verdict in classify_stream(
            stream, consumers, profile=profile, mode=mode, catalogue=catalogue
        ):
            out[verdict.name] = verdict
    return out


@pytest.mark.parametrize(("version", "mode", "expected"), CASES)
def test_states_and_reasons(
    catalogue: Catalogue, version: str, mode: str, expected: dict[str, Any]
) -> None:
    """Each release and mode loads, stops, degrades or loses each asset as section 4 says."""
    verdicts = _classify(catalogue, version, mode)
    actual: dict[str, Any] = {}
    for name, verdict in verdicts.items():
        if verdict.state == "degraded":
            actual[name] = ("degraded", None, tuple(sorted(verdict.dropped_fields)))
        else:
            actual[name] = (verdict.state, verdict.reason)
    assert actual == expected


def test_space_before_level_is_unsupported(catalogue: Catalogue) -> None:
    """A stored level " 1" fails Go Atoi (no space skipping for metadata): unsupported."""
    asset = _stream("S_SPACE", " 1")
    profile = catalogue.server("2.12.8")
    [verdict] = classify_stream(
        asset, [], profile=profile, mode="single", catalogue=catalogue
    )
    assert (verdict.state, verdict.reason, verdict.drift) == (
        "offline",
        LVL.format(" 1", 3),
        "stamp_unparsable",
    )


@pytest.mark.parametrize(
    ("name", "level", "features", "drift"),
    [
        pytest.param("S_OLD", None, {}, "stamp_missing", id="missing"),
        pytest.param(
            "S_LOW", "0", {"allow_msg_counter": True}, "stamp_too_low", id="too-low"
        ),
        pytest.param("S_HIGH", "99", {}, "stamp_too_high", id="too-high"),
        pytest.param("S_OK", "2", {"allow_msg_counter": True}, None, id="agrees"),
    ],
)
def test_stamp_drift(
    catalogue: Catalogue,
    name: str,
    level: str | None,
    features: dict[str, Any],
    drift: str,
) -> None:
    """Drift compares the stored stamp with the level the features need."""
    profile = catalogue.server("2.14.6")
    [verdict] = classify_stream(
        _stream(name, level, **features),
        [],
        profile=profile,
        mode="single",
        catalogue=catalogue,
    )
    assert verdict.drift == drift


def test_consumers_without_stream_are_detached(catalogue: Catalogue) -> None:
    """A consumer whose stream is not in the inventory is reported detached, not lost."""
    profile = catalogue.server("2.12.8")
    [verdict] = classify_stream(
        None,
        [_consumer("GONE", "C", "0")],
        profile=profile,
        mode="cluster",
        catalogue=catalogue,
    )
    assert (verdict.state, verdict.reason) == (
        "detached",
        'stream "GONE" is not in the inventory',
    )


def test_first_offline_consumer_in_name_order_stops_the_stream(
    catalogue: Catalogue,
) -> None:
    """With two offline consumers the stream names the first in name order."""
    profile = catalogue.server("2.12.8")
    verdicts = classify_stream(
        _stream("H", "0"),
        [_consumer("H", "C_Z", "9"), _consumer("H", "C_A", "9")],
        profile=profile,
        mode="single",
        catalogue=catalogue,
    )
    assert verdicts[0].reason == 'stopped - unsupported consumer "C_A"'


def test_the_lean_pass_judges_as_the_general_path(catalogue: Catalogue) -> None:
    """Every asset the one-pass judgement takes gets the general path's judgement."""
    lines = list(generate(600, seed=11, bad_fraction=0.05))
    lines += (
        (REPO / "fixtures/inventories/demo.jsonl")
        .read_bytes()
        .splitlines(keepends=True)
    )
    lines += (
        (REPO / "fixtures/inventories/golden.jsonl")
        .read_bytes()
        .splitlines(keepends=True)
    )
    assets = [
        r for r in read_inventory_bytes(b"".join(lines), "f") if isinstance(r, Asset)
    ]
    # a sourced stream without a duplicate window: older targets note the one they add
    assets.append(_stream("AGG", "0", sources=[{"name": "ORDERS"}], duplicate_window=0))
    taken = judged = noted = 0
    for release in catalogue.releases():
        profile = catalogue.server(release)
        for mode in ("single", "cluster"):
            for asset in assets:
                plan = gate.plan_for(profile, catalogue, asset.kind, mode)
                lean = plan.lean(asset)
                judged += 1
                if lean is not None:
                    taken += 1
                    noted += bool(lean.verdict.notes)
                    assert lean == gate._general(asset, plan, mode), (release, asset)
                    assert gate.judge(asset, profile, mode, catalogue) == lean
    assert taken > judged // 2  # the common case does take it
    assert noted  # and so does a config the target's defaults change
