"""Tests for assetgate.run.check: accounting, targets, overlaps, acceptances, plans."""

from __future__ import annotations

import gc
import json
import re
from typing import TYPE_CHECKING, Any, Final

import msgspec
import pytest

from assetgate.errors import UnknownServerVersion
from assetgate.inventory.read import Asset, read_inventory
from assetgate.judge.gate import asset_id
from assetgate.run.bulk import without_cyclic_gc
from assetgate.run.check import (
    DEFAULT_FAIL_ON,
    Acceptance,
    ErrorEntry,
    Overlap,
    Summary,
    TargetInfo,
    check,
    compare_plans,
    fails,
    finding_rules,
    first_failing,
    make_plan,
    parse_targets,
)
from tests.conftest import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.run.check import Report

DEMO: Final = FIXTURES / "inventories" / "demo.jsonl"
MIXED: Final = FIXTURES / "inventories" / "formats" / "mixed.jsonl"
COUNTER_OFFLINE: Final = 'unsupported - config error: unknown field "allow_msg_counter"'


def _asset(
    name: str,
    config: dict[str, Any],
    *,
    kind: str = "stream",
    stream: str | None = None,
    cluster: str = "",
    account: str = "$G",
) -> Asset:
    return Asset(
        source=f"test:{cluster}/{account}/{name}",
        cluster=cluster,
        account=account,
        kind="stream" if kind == "stream" else "consumer",
        stream=stream or name,
        name=name,
        config=json.dumps(config).encode(),
    )


def _stream(
    name: str,
    subjects: list[str] | None = None,
    *,
    cluster: str = "",
    account: str = "$G",
    **extra: Any,
) -> Asset:
    config: dict[str, Any] = {"name": name}
    if subjects is not None:
        config["subjects"] = subjects
    config.update(extra)
    return _asset(name, config, cluster=cluster, account=account)


def _consumer(stream: str, name: str, **extra: Any) -> Asset:
    return _asset(name, {"durable_name": name, **extra}, kind="consumer", stream=stream)


def _demo(
    catalogue: Catalogue, target: str | dict[str, str] = "2.11.11", **kwargs: Any
) -> Report:
    return check([DEMO], target=target, catalogue=catalogue, **kwargs)


def _demo_assets(catalogue: Catalogue, **kwargs: Any) -> Report:
    """The demo on 2.11.11 in single-server mode: per-asset states, no cluster down.

    In cluster mode east crashes on 2.11.11 (its flow_control and prioritized
    consumers), which hides every per-asset finding of it behind ``unavailable``.
    """
    return check([DEMO], target="2.11.11", catalogue=catalogue, mode="single", **kwargs)


# --- accounting ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [(DEMO, (31, 29, 1, 1)), (MIXED, (14, 6, 4, 4))],
    ids=["demo", "mixed"],
)
def test_every_record_is_accounted_for(
    catalogue: Catalogue, path: Path, expected: tuple[int, int, int, int]
) -> None:
    """Every record is an asset, an error or ignored, with exact counts per fixture."""
    report = check([path], target="2.11.11", catalogue=catalogue)
    summary = report.summary
    counts = (summary.records, summary.assets, summary.errors, summary.ignored)
    lengths = (len(report.assets), len(report.errors), len(report.ignored))
    assert (counts, lengths, summary.assets + summary.errors + summary.ignored) == (
        expected,
        expected[1:],
        expected[0],
    )


def test_demo_summary_on_2_11_11(catalogue: Catalogue) -> None:
    """On 2.11.11 (cluster mode) east crashes; west does not re-create RAFT_TAP."""
    report = _demo(catalogue)
    assert report.summary == Summary(
        records=31,
        assets=29,
        online=4,
        offline=0,
        degraded=0,
        unloadable=1,
        detached=0,
        unavailable=24,
        errors=1,
        ignored=1,
        overlaps=0,
        accepted=0,
    )
    assert [(c.cluster, c.outcome) for c in report.clusters] == [
        ("east", "crash"),
        ("west", "ok"),
    ]


def test_demo_summary_on_2_11_11_single(catalogue: Catalogue) -> None:
    """In single-server mode the demo's assets keep their own states."""
    assert _demo_assets(catalogue).summary == Summary(
        records=31,
        assets=29,
        online=13,
        offline=11,
        degraded=0,
        unloadable=4,
        detached=1,
        unavailable=0,
        errors=1,
        ignored=1,
        overlaps=0,
        accepted=0,
    )


def test_records_given_as_objects_give_the_same_report(catalogue: Catalogue) -> None:
    """Records already read (Asset, RecordError, Ignored) are judged like the file."""
    records = list(read_inventory([DEMO]))
    assert check(records, target="2.11.11", catalogue=catalogue) == _demo(catalogue)


def test_worker_processes_give_the_same_report(catalogue: Catalogue) -> None:
    """Judging the file in two worker processes gives the in-process report."""
    assert _demo(catalogue, workers=2) == _demo(catalogue)


def test_asset_objects_are_judged(catalogue: Catalogue) -> None:
    """A bare Asset is a record of its own: one record, one online verdict."""
    report = check([_stream("S", ["s.>"])], target="2.12.8", catalogue=catalogue)
    verdict = report.assets[0]
    assert (report.summary.records, verdict.name, verdict.state, verdict.target) == (
        1,
        "S",
        "online",
        "2.12.8",
    )


# --- targets ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["2.11.11"], {"*": "2.11.11"}),
        (["east=2.12.8,west=2.11.11"], {"east": "2.12.8", "west": "2.11.11"}),
        (["2.11.11", "west=2.12.8"], {"*": "2.11.11", "west": "2.12.8"}),
        ([" east = 2.12.8 , "], {"east": "2.12.8"}),
    ],
    ids=["bare", "per-cluster", "default-and-cluster", "spaces-and-empty-item"],
)
def test_parse_targets(values: list[str], expected: dict[str, str]) -> None:
    """Bare versions are the default ("*"); CLUSTER=VERSION names a cluster."""
    assert parse_targets(values) == expected


@pytest.mark.parametrize(
    ("values", "message"),
    [
        # an item without a cluster or without a version
        (["=2.11.11"], "invalid target: '=2.11.11' (use VERSION or CLUSTER=VERSION)"),
        (["east="], "invalid target: 'east=' (use VERSION or CLUSTER=VERSION)"),
        # nothing at all
        ([], "no target version given"),
        ([" , "], "no target version given"),
    ],
    ids=["no-cluster", "no-version", "empty-list", "only-separators"],
)
def test_parse_targets_rejects(values: list[str], message: str) -> None:
    """Malformed targets raise ValueError naming the item."""
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_targets(values)


def test_per_cluster_targets(catalogue: Catalogue) -> None:
    """Each verdict is judged against its cluster's version; the default covers the rest."""
    report = _demo(catalogue, target={"*": "2.11.11", "west": "2.12.8"})
    targets = {(v.cluster, v.target) for v in report.assets}
    assert (targets, report.target) == (
        {("east", "2.11.11"), ("west", "2.12.8")},
        TargetInfo(
            version="2.11.11",
            api_level=1,
            mode="cluster",
            clusters={"west": "2.12.8"},
            default="2.11.11",
        ),
    )


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        ({"a": "2.12.8", "b": "2.11.11"}, ("2.11.11", 1)),
        ({"a": "2.11.8", "b": "2.11.10"}, ("2.11.8", 1)),
    ],
    ids=["api-level-of-first-cluster", "string-minimum"],
)
def test_target_info_without_default_is_the_lowest_version(
    catalogue: Catalogue, targets: dict[str, str], expected: tuple[str, int]
) -> None:
    """Without a default, the report's target is the lowest version with its API level."""
    report = check(
        [_stream("X", ["x"], cluster="a")], target=targets, catalogue=catalogue
    )
    assert (report.target.version, report.target.api_level) == expected


def test_unknown_version_raises(catalogue: Catalogue) -> None:
    """A version of no known release line raises UnknownServerVersion naming the newest line."""
    message = (
        "unknown server version: '2.13.0': the catalogue describes release lines "
        "2.10 to 2.15 (newest known line: 2.15)"
    )
    with pytest.raises(UnknownServerVersion, match=re.escape(message)):
        _demo(catalogue, target="2.13.0")


def test_cluster_without_target_is_an_error_entry(catalogue: Catalogue) -> None:
    """A cluster not in a mapping without "*" becomes an error entry, not an exception."""
    report = check(
        [_stream("X", ["x"], cluster="east"), _stream("Y", ["y"], cluster="west")],
        target={"west": "2.12.8"},
        catalogue=catalogue,
    )
    summary = report.summary
    assert (
        report.errors,
        [v.name for v in report.assets],
        (summary.records, summary.assets, summary.errors),
    ) == (
        [
            ErrorEntry(
                source="test:east/$G/X",
                message="no target version for cluster 'east'",
                retriable=False,
            )
        ],
        ["Y"],
        (2, 1, 1),
    )


# --- overlaps -----------------------------------------------------------------------------


def test_online_and_offline_streams_overlap(catalogue: Catalogue) -> None:
    """An offline stream keeps its subjects; `offline` names the offline side."""
    report = check(
        [_stream("ON", ["a.>"]), _stream("OFF", ["a.b"], allow_msg_counter=True)],
        target="2.11.11",
        catalogue=catalogue,
    )
    assert report.overlaps == [
        Overlap(
            cluster="",
            account="$G",
            streams=("OFF", "ON"),
            subjects=("a.b", "a.>"),
            offline=("OFF",),
        )
    ]


def test_unloadable_stream_gives_no_protection(catalogue: Catalogue) -> None:
    """A stream the target cannot decode vanishes, and so do its subjects."""
    report = check(
        [_stream("ON", ["a.>"]), _stream("UL", ["a.b"], retention="bogus")],
        target="2.11.11",
        catalogue=catalogue,
    )
    states = [(v.name, v.state) for v in report.assets]
    assert (states, report.overlaps) == ([("ON", "online"), ("UL", "unloadable")], [])


@pytest.mark.parametrize(
    ("second", "overlaps"),
    [({"retention": "bogus"}, 0), ({}, 1)],
    ids=["last-record-unloadable", "last-record-loads"],
)
def test_stream_listed_twice_keeps_subjects_by_its_last_record(
    catalogue: Catalogue, second: dict[str, Any], overlaps: int
) -> None:
    """A stream listed twice takes part in overlaps as its last record loads or not."""
    report = check(
        [
            _stream("ON", ["a.>"]),
            _stream("TWICE", ["a.b"]),
            _stream("TWICE", ["a.b"], **second),
        ],
        target="2.11.11",
        catalogue=catalogue,
    )
    assert len(report.overlaps) == overlaps


def test_stopped_stream_keeps_its_subjects_and_is_the_offline_side(
    catalogue: Catalogue,
) -> None:
    """A stream stopped by an offline consumer still overlaps, named as offline."""
    consumer = _asset(
        "C1",
        {"durable_name": "C1", "metadata": {"_nats.req.level": "9"}},
        kind="consumer",
        stream="STOP",
    )
    report = check(
        [_stream("ON", ["a.>"]), _stream("STOP", ["a.b"]), consumer],
        target="2.11.11",
        catalogue=catalogue,
    )
    stop = next(v for v in report.assets if v.name == "STOP")
    assert stop.state == "offline"
    assert [o.offline for o in report.overlaps] == [("STOP",)]


def test_stream_without_subjects_claims_its_name(catalogue: Catalogue) -> None:
    """A stream with no subjects and no mirror/sources overlaps a stream using its name."""
    report = check(
        [_stream("ON", ["foo"]), _stream("foo")], target="2.12.8", catalogue=catalogue
    )
    assert report.overlaps == [
        Overlap(
            cluster="", account="$G", streams=("ON", "foo"), subjects=("foo", "foo")
        )
    ]


def test_mirror_without_subjects_claims_nothing(catalogue: Catalogue) -> None:
    """A mirror has no subjects: its name does not collide with another stream's subject."""
    report = check(
        [_stream("ON", ["foo"]), _stream("foo", mirror={"name": "ON"})],
        target="2.12.8",
        catalogue=catalogue,
    )
    assert report.overlaps == []


@pytest.mark.parametrize(
    "other",
    [
        _stream("B", ["a.b"], account="OTHER"),
        _stream("B", ["a.b"], cluster="c2"),
    ],
    ids=["other-account", "other-cluster"],
)
def test_no_overlap_across_accounts_or_clusters(
    catalogue: Catalogue, other: Asset
) -> None:
    """Streams of different accounts or clusters never overlap."""
    report = check([_stream("A", ["a.>"]), other], target="2.12.8", catalogue=catalogue)
    assert (report.overlaps, report.summary.overlaps) == ([], 0)


# --- acceptances --------------------------------------------------------------------------


def _degraded_report(catalogue: Catalogue, accept: list[str]) -> Report:
    """X1, X2 and Y1 are degraded on 2.10.26 (allow_msg_ttl is dropped)."""
    assets = [
        _stream(name, [name.lower()], allow_msg_ttl=True) for name in ("X1", "X2", "Y1")
    ]
    return check(assets, target="2.10.26", accept=accept, catalogue=catalogue)


def test_acceptance_marks_matching_verdicts(catalogue: Catalogue) -> None:
    """`degraded:*/$G/X*` marks X1 and X2 accepted and lists them in report.accepted."""
    report = _degraded_report(catalogue, ["degraded:*/$G/X*"])
    marks = [(v.name, v.state, v.accepted) for v in report.assets]
    assert (marks, report.accepted, report.summary.accepted) == (
        [
            ("X1", "degraded", "degraded:*/$G/X*"),
            ("X2", "degraded", "degraded:*/$G/X*"),
            ("Y1", "degraded", None),
        ],
        [Acceptance(rule="degraded", asset="*/$G/X*", matched=("/$G/X1", "/$G/X2"))],
        2,
    )


def test_acceptance_of_another_rule_matches_nothing(catalogue: Catalogue) -> None:
    """An acceptance for a state the assets are not in is listed with no matches."""
    report = _degraded_report(catalogue, ["offline:*"])
    assert (
        [v.accepted for v in report.assets],
        report.accepted,
        finding_rules(report, ["degraded"]),
    ) == (
        [None, None, None],
        [Acceptance(rule="offline", asset="*", matched=())],
        ["degraded: /$G/X1", "degraded: /$G/X2", "degraded: /$G/Y1"],
    )


_RULES_TEXT: Final = (
    "online, offline, degraded, unloadable, detached, unavailable, meta_unavailable, "
    "meta_state_lost, crash, overlap, record-error, ignored, stamp_missing, "
    "stamp_unparsable, stamp_too_low, stamp_too_high, *"
)


@pytest.mark.parametrize(
    "item",
    [
        # no separator, or nothing after it
        "degraded",
        "degraded:",
        # not a state, drift flag, overlap or *
        "bogus:*",
        "overlaps:*",
        ":*",
    ],
    ids=["no-colon", "no-asset", "unknown-rule", "plural-overlaps", "no-rule"],
)
def test_invalid_acceptance_raises(catalogue: Catalogue, item: str) -> None:
    """A malformed acceptance raises ValueError listing the rules."""
    message = (
        f"invalid acceptance: {item!r} (use RULE:ASSET, RULE one of {_RULES_TEXT})"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        _demo(catalogue, accept=[item])


# --- finding_rules ------------------------------------------------------------------------

_DEMO_DEFAULT_FINDINGS: Final = [
    "unloadable: east/$G/H_FLOWACK/C_FLOWACK",
    "offline: east/$G/H_FORGED",
    "offline: east/$G/H_FORGED/C_FORGED",
    "detached: east/$G/H_FORGED/C_SIB",
    "unloadable: east/$G/H_PRIO/C_PRIO",
    "unloadable: east/$G/H_SRC/C_SOURCING",
    "offline: east/$G/H_SRCFLAG",
    "offline: east/$G/H_SRCFLAG/C_SRCFLAG",
    "offline: east/$G/S_ASYNC",
    "offline: east/$G/S_ATOMIC",
    "offline: east/$G/S_BATCHED",
    "offline: east/$G/S_COUNTER",
    "offline: east/$G/S_FORGED",
    "offline: east/$G/S_SCHED",
    "offline: east/$G/S_SRCCONS",
    "unloadable: west/$G/RAFT_TAP",
    f"record-error: {DEMO}:30",
]


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [
        (DEFAULT_FAIL_ON, _DEMO_DEFAULT_FINDINGS),
        (("detached",), ["detached: east/$G/H_FORGED/C_SIB"]),
        (
            ("stamp_missing",),
            [
                "stamp_missing: west/$G/AUDIT",
                "stamp_missing: west/$G/ORDERS",
                "stamp_missing: west/$G/ORDERS/bill",
                "stamp_missing: west/$G/ORDERS/ship",
                "stamp_missing: west/$G/RAFT_TAP",
            ],
        ),
        (
            ("stamp_too_high",),
            [
                "stamp_too_high: east/$G/H_FORGED/C_FORGED",
                "stamp_too_high: east/$G/S_FORGED",
            ],
        ),
        (("record-error",), [f"record-error: {DEMO}:30"]),
        (("errors",), [f"record-error: {DEMO}:30"]),
        (("overlap",), []),
        (("overlaps",), []),
        ((), []),
    ],
    ids=[
        "default",
        "detached",
        "stamp-missing",
        "stamp-too-high",
        "record-error",
        "errors-older-spelling",
        "no-overlaps",
        "no-overlaps-older-spelling",
        "empty",
    ],
)
def test_finding_rules_thresholds(
    catalogue: Catalogue, fail_on: tuple[str, ...], expected: list[str]
) -> None:
    """Besides the findings that always fail, those in fail_on are returned."""
    report = _demo_assets(catalogue)
    always = finding_rules(report, ())
    added = [f for f in finding_rules(report, fail_on) if f not in always]
    assert added == [f for f in expected if f not in always]


@pytest.mark.parametrize("accept", [(), ("crash:east",)], ids=["down", "accepted"])
def test_first_failing_and_fails_agree_with_finding_rules(
    catalogue: Catalogue, accept: tuple[str, ...]
) -> None:
    """The first failing finding is finding_rules' first, with its own object's reason."""
    report = _demo(catalogue, accept=list(accept))
    found = finding_rules(report, DEFAULT_FAIL_ON)
    first = first_failing(report, DEFAULT_FAIL_ON)
    assert first is not None
    by_name = {c.cluster: c.reason for c in report.clusters}
    by_id = {f"{v.state}: {asset_id(v)}": v.reason for v in report.assets}
    expected_reason = (
        by_name["east"] if first[0] == "crash: east" else by_id.get(first[0])
    ) or ""
    assert (first, fails(report, DEFAULT_FAIL_ON), first[0] == "crash: east") == (
        (found[0], expected_reason),
        True,
        not accept,
    )


def test_lost_assets_always_fail(catalogue: Catalogue) -> None:
    """Unloadable and detached assets are findings with any fail_on, even none."""
    assert finding_rules(_demo_assets(catalogue), ()) == [
        "unloadable: east/$G/H_FLOWACK/C_FLOWACK",
        "detached: east/$G/H_FORGED/C_SIB",
        "unloadable: east/$G/H_PRIO/C_PRIO",
        "unloadable: east/$G/H_SRC/C_SOURCING",
        "unloadable: west/$G/RAFT_TAP",
    ]


def test_a_down_cluster_always_fails_unless_accepted(catalogue: Catalogue) -> None:
    """A crash outcome is a finding with any fail_on; crash:east accepts it."""
    plain = _demo(catalogue)
    accepted = _demo(catalogue, accept=["crash:east", "unavailable:east/*"])
    assert (
        finding_rules(plain, ("offline",))[0],
        [f for f in finding_rules(accepted, ()) if "east" in f],
        accepted.clusters[0].accepted,
    ) == ("crash: east", [], "crash:east")


def test_an_empty_inventory_fails(catalogue: Catalogue, tmp_path: Path) -> None:
    """An inventory with no asset (here: only an unknown kind) is a finding."""
    path = tmp_path / "inv.jsonl"
    path.write_text('{"kind":"strem","config":{"name":"S"}}\n', encoding="utf-8")
    report = check([path], target="2.12.8", catalogue=catalogue)
    assert finding_rules(report, ()) == [
        "no-assets: no stream or consumer to judge in 1 records (0 record errors, 1 ignored)"
    ]


def test_drift_acceptance_does_not_hide_the_offline_state(catalogue: Catalogue) -> None:
    """An acceptance for a drift flag hides that flag only, not the asset's offline state."""
    report = _demo_assets(catalogue, accept=["stamp_too_high:east/$G/S_FORGED"])
    always = finding_rules(report, ())
    found = finding_rules(report, ["offline", "stamp_too_high"])
    assert [f for f in found if f not in always] == [
        "offline: east/$G/H_FORGED",
        "offline: east/$G/H_FORGED/C_FORGED",
        "stamp_too_high: east/$G/H_FORGED/C_FORGED",
        "offline: east/$G/H_SRCFLAG",
        "offline: east/$G/H_SRCFLAG/C_SRCFLAG",
        "offline: east/$G/S_ASYNC",
        "offline: east/$G/S_ATOMIC",
        "offline: east/$G/S_BATCHED",
        "offline: east/$G/S_COUNTER",
        "offline: east/$G/S_FORGED",
        "offline: east/$G/S_SCHED",
        "offline: east/$G/S_SRCCONS",
    ]


def test_star_acceptance_hides_every_finding_of_the_asset(catalogue: Catalogue) -> None:
    """`*:ASSET` covers both the state and the drift flag of the asset."""
    report = _demo(catalogue, accept=["*:east/$G/S_FORGED"])
    found = finding_rules(report, ["offline", "stamp_too_high"])
    assert [f for f in found if f.endswith("/S_FORGED")] == []


def test_two_acceptances_cover_both_findings(catalogue: Catalogue) -> None:
    """Accepting the state and the drift flag of one asset hides both findings."""
    report = _demo_assets(
        catalogue,
        accept=["offline:east/$G/S_FORGED", "stamp_too_high:east/$G/S_FORGED"],
    )
    found = finding_rules(report, ["offline", "stamp_too_high"])
    assert [f for f in found if f.endswith("/S_FORGED")] == []


def test_overlaps_token_and_overlap_acceptance(catalogue: Catalogue) -> None:
    """`overlaps` reports unaccepted overlaps; `overlap:ASSET` accepts one."""
    assets = [_stream("ON", ["a.>"]), _stream("OFF", ["a.b"], allow_msg_counter=True)]
    plain = check(assets, target="2.11.11", catalogue=catalogue)
    accepted = check(
        assets, target="2.11.11", accept=["overlap:*/$G/ON"], catalogue=catalogue
    )
    assert (
        finding_rules(plain, ["overlaps"]),
        finding_rules(accepted, ["overlaps"]),
        accepted.overlaps[0].accepted,
        accepted.accepted,
        accepted.summary.accepted,
    ) == (
        ["overlap: /$G OFF ~ ON"],
        [],
        "overlap:*/$G/ON",
        [Acceptance(rule="overlap", asset="*/$G/ON", matched=("/$G/OFF ~ /$G/ON",))],
        1,
    )


# --- plans --------------------------------------------------------------------------------


def test_make_plan_is_deterministic(catalogue: Catalogue) -> None:
    """Two checks of the same inventory give equal plans with the same digest."""
    first, second = make_plan(_demo(catalogue)), make_plan(_demo(catalogue))
    assert (first == second, first.digest, len(first.verdicts)) == (
        True,
        second.digest,
        29,
    )


def test_make_plan_depends_on_the_target(catalogue: Catalogue) -> None:
    """A plan for another target has another digest."""
    old = make_plan(_demo(catalogue, target="2.11.11"))
    new = make_plan(_demo(catalogue, target="2.12.8"))
    assert old.digest != new.digest


def _changed_demo() -> list[Any]:
    """The demo records with S_COUNTER's field removed, S_PLAIN gone and NEW added."""
    out: list[Any] = []
    for record in read_inventory([DEMO]):
        if isinstance(record, Asset) and record.name == "S_PLAIN":
            continue
        if isinstance(record, Asset) and record.name == "S_COUNTER":
            config = record.config.replace(b'"allow_msg_counter":true,', b"")
            record = msgspec.structs.replace(record, config=config)  # noqa: PLW2901
        out.append(record)
    out.append(_stream("NEW", ["new.>"]))
    return out


def test_compare_plans_lists_changes_and_notes(catalogue: Catalogue) -> None:
    """A changed verdict, a new and a gone asset are listed; the inventory digest noted."""
    old = make_plan(_demo_assets(catalogue))
    new = make_plan(
        check(_changed_demo(), target="2.11.11", mode="single", catalogue=catalogue)
    )
    changes, notes = compare_plans(old, new)
    assert (changes, notes) == (
        [
            "/$G/NEW: new asset, online on 2.11.11",
            (
                f"east/$G/S_COUNTER: offline ({COUNTER_OFFLINE}) on 2.11.11 -> offline "
                "(unsupported - required API level: 2, current API level: 1) on 2.11.11"
            ),
            "east/$G/S_PLAIN: gone (was online on 2.11.11)",
        ],
        [f"inventory changed: {old.inventory[:12]} -> {new.inventory[:12]}"],
    )


def test_compare_plans_notes_a_catalogue_change(catalogue: Catalogue) -> None:
    """Another catalogue digest is a note, not a verdict change."""
    new = make_plan(_demo(catalogue))
    old = msgspec.structs.replace(new, catalogue="0" * 64)
    assert compare_plans(old, new) == (
        [],
        [f"catalogue changed: 000000000000 -> {new.catalogue[:12]}"],
    )


def test_compare_identical_plans(catalogue: Catalogue) -> None:
    """A plan compared with itself has no changes and no notes."""
    plan = make_plan(_demo(catalogue))
    assert compare_plans(plan, plan) == ([], [])


@pytest.mark.parametrize("enabled", [True, False], ids=["gc-on", "gc-off"])
def test_check_runs_without_the_cyclic_gc_and_restores_it(
    catalogue: Catalogue, *, enabled: bool
) -> None:
    """The collector is off while check judges, and as the caller had it afterwards."""
    seen: list[bool] = []
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        check(
            [FIXTURES / "inventories" / "demo.jsonl"],
            target="2.12.8",
            catalogue=catalogue,
            progress=lambda _phase, _n: seen.append(gc.isenabled()),
        )
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert seen
    assert not any(seen)


def test_overlapping_bulk_runs_restore_the_collector_after_the_last() -> None:
    """Two runs that overlap (threads, a command around a call) turn it on only at the end."""
    was = gc.isenabled()
    gc.enable()
    try:
        first = without_cyclic_gc()
        second = without_cyclic_gc()
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)
        assert not gc.isenabled()  # the second run is still going
        second.__exit__(None, None, None)
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
