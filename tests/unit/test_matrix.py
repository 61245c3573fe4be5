"""Tests for assetgate.run.matrix: every release at once, the floors, the fixes."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any, Final

import pytest
from packaging.version import Version

from assetgate.judge.fixes import fixes_for
from assetgate.judge.gate import STATES, asset_id
from assetgate.run.check import check, finding_rules
from assetgate.run.matrix import (
    Matrix,
    _behaviour,
    check_matrix,
    is_release_set,
    matrix_failures,
    select_releases,
)
from benchmarks.gen_inventory import generate
from tests.conftest import FIXTURES

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.run.matrix import MatrixFinding

DEMO: Final = FIXTURES / "inventories" / "demo.jsonl"
GOLDEN: Final = FIXTURES / "inventories" / "golden.jsonl"


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _stream(name: str, **config: Any) -> dict[str, Any]:
    body = {"name": name, "subjects": [f"{name.lower()}.>"], **config}
    return {"kind": "stream", "stream": name, "name": name, "config": body}


def _consumer(stream: str, name: str, **config: Any) -> dict[str, Any]:
    body = {"durable_name": name, "ack_policy": "explicit", **config}
    return {"kind": "consumer", "stream": stream, "name": name, "config": body}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated fleet of 3,000 lines with every feature and some bad lines."""
    path = tmp_path_factory.mktemp("fleet") / "fleet.jsonl"
    path.write_bytes(b"".join(generate(3000, seed=7, bad_fraction=0.02)))
    return path


def _assert_rows_equal_reports(matrix: Matrix, inventory: Path, mode: str) -> None:
    """Each row, and each finding on it, equals the single-target report of its release."""
    by_release: dict[str, list[MatrixFinding]] = {}
    for finding in matrix.findings:
        for release in finding.releases:
            by_release.setdefault(release, []).append(finding)
    for row in matrix.releases:
        report = check([inventory], target=row.release, mode=mode)  # type: ignore[arg-type]
        counts: dict[str, Counter[str]] = {}
        for verdict in report.assets:
            counts.setdefault(verdict.cluster, Counter())[verdict.state] += 1
        outcomes = {c.cluster: c.outcome for c in report.clusters}
        for cell in row.clusters:
            want = counts.get(cell.cluster, Counter())
            assert (row.release, cell.cluster, [getattr(cell, s) for s in STATES]) == (
                row.release,
                cell.cluster,
                [want[s] for s in STATES],
            )
            assert cell.outcome == outcomes.get(cell.cluster, "ok")
        assert row.failing == len(finding_rules(report, ()))
        assert row.overlaps == len(report.overlaps)
        # an unavailable asset is counted in the row, not a finding of its own
        expected: Counter[tuple[str, str | None, str | None]] = Counter(
            (asset_id(v), v.state, v.reason)
            for v in report.assets
            if v.state not in {"online", "unavailable"}
        )
        expected += Counter(
            (asset_id(v), v.drift, None) for v in report.assets if v.drift is not None
        )
        expected += Counter(
            (c.cluster, c.outcome, c.reason)
            for c in report.clusters
            if c.outcome != "ok"
        )
        got = Counter(
            (f.asset, f.rule, f.reason)
            for f in by_release.get(row.release, [])
            if f.rule != "overlap"
        )
        assert got == expected, row.release


@pytest.mark.parametrize("mode", ["single", "cluster"])
def test_matrix_rows_equal_single_target_reports_demo(mode: str) -> None:
    """Every row of the demo matrix equals check() on that release: counts, outcomes, findings."""
    matrix = check_matrix([DEMO], mode=mode)  # type: ignore[arg-type]
    assert [row.release for row in matrix.releases] == list(
        select_releases("all", _cat())
    )
    _assert_rows_equal_reports(matrix, DEMO, mode)


@pytest.mark.parametrize("mode", ["single", "cluster"])
def test_matrix_rows_equal_single_target_reports_fleet(fleet: Path, mode: str) -> None:
    """The same holds on a generated fleet with every feature, bad lines and overlaps."""
    matrix = check_matrix([fleet], mode=mode)  # type: ignore[arg-type]
    assert matrix.summary.records == 3000
    assert (
        matrix.summary.assets + matrix.summary.errors + matrix.summary.ignored == 3000
    )
    _assert_rows_equal_reports(matrix, fleet, mode)


@pytest.mark.parametrize(
    "accept", [("unavailable:central/*",), ("crash:*", "offline:*/*/ORDERS_T0001*")]
)
def test_matrix_failing_counts_with_acceptances(
    fleet: Path, accept: tuple[str, ...]
) -> None:
    """With acceptances, each row fails exactly as check() with them on that release."""
    matrix = check_matrix([fleet], mode="cluster", accept=accept)
    covered = 0
    for row in matrix.releases:
        report = check([fleet], target=row.release, mode="cluster", accept=accept)
        assert (row.release, row.failing) == (
            row.release,
            len(finding_rules(report, ())),
        )
        covered += sum(1 for v in report.assets if v.accepted)
        covered += sum(1 for c in report.clusters if c.accepted is not None)
    assert covered  # the acceptances do cover findings


def _cat() -> Catalogue:
    from assetgate.catalogue.levels import load_catalogue

    return load_catalogue()


def test_releases_are_the_ranges_the_catalogue_distinguishes(
    catalogue: Catalogue,
) -> None:
    """Every patch release behaves like the newest distinguished release at or below it."""
    releases = catalogue.releases()
    assert releases[0] == "2.10.0"
    assert list(releases) == sorted(releases, key=Version)
    for line in catalogue.lines:
        for patch in range(16):
            version = f"{line.line}.{patch}"
            base = max(
                (r for r in releases if Version(r) <= Version(version)), key=Version
            )
            for mode in ("single", "cluster"):
                assert _behaviour(catalogue.server(version), mode) == _behaviour(
                    catalogue.server(base), mode
                ), (version, base)


def test_select_releases_all_and_ranges(catalogue: Catalogue) -> None:
    """``all``, ``A..B``, open ends, and an unnamed A standing for its range."""
    every = list(catalogue.releases())
    assert select_releases("all", catalogue) == every
    assert select_releases("2.11.9..2.12.1", catalogue) == [
        "2.11.9",
        "2.11.10",
        "2.11.11",
        "2.12.0",
        "2.12.1",
    ]
    assert select_releases("2.14.0..", catalogue) == [
        r for r in every if Version(r) >= Version("2.14.0")
    ]
    assert select_releases("..2.10.17", catalogue) == ["2.10.0", "2.10.14", "2.10.17"]
    assert select_releases("2.11.1..2.11.3", catalogue) == ["2.11.1", "2.11.2"]
    assert is_release_set("all")
    assert is_release_set("2.11.0..")
    assert not is_release_set("2.11.0")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2.12.8..2.11.0", "2.12.8 is above 2.11.0"),
        ("2.11.0..2.12.0..2.14.0", "invalid release range"),
    ],
)
def test_select_releases_refuses_bad_ranges(
    catalogue: Catalogue, text: str, message: str
) -> None:
    """A reversed or malformed range is a ValueError naming the problem."""
    with pytest.raises(ValueError, match=message):
        select_releases(text, catalogue)


def test_floor_of_the_demo_inventory() -> None:
    """The demo's floors: east has none (forged level 6), west's is 2.10.0 (single mode)."""
    matrix = check_matrix([DEMO], mode="single")
    floors = {f.cluster: (f.lossless, f.offline_only) for f in matrix.floors}
    assert floors == {"east": (None, None), "west": ("2.10.0", "2.10.0")}
    assert (matrix.floor.lossless, matrix.floor.offline_only) == (None, None)
    east = next(f for f in matrix.floors if f.cluster == "east")
    assert east.pinned_by == [
        "east/$G/H_FORGED",
        "east/$G/H_FORGED/C_FORGED",
        "east/$G/H_FORGED/C_SIB",
        "east/$G/S_FORGED",
    ]
    assert all(pin.release == "2.15.0" for pin in east.pins)


def test_floor_of_a_counter_stream(tmp_path: Path) -> None:
    """A counter stream stamped 2: lossless from 2.12.0, offline-only from 2.11.9, pinned by it."""
    record = _stream("CNT", allow_msg_counter=True, metadata={"_nats.req.level": "2"})
    inventory = _write(tmp_path / "inv.jsonl", [record])
    matrix = check_matrix([inventory], mode="single")
    (floor,) = matrix.floors
    assert (floor.cluster, floor.lossless, floor.offline_only) == (
        "",
        "2.12.0",
        "2.11.9",
    )
    assert floor.pinned_by == ["/$G/CNT"]
    pins = {(p.floor, p.release, p.state) for p in floor.pins}
    assert pins == {
        ("lossless", "2.11.11", "offline"),
        ("offline_only", "2.11.7", "degraded"),
    }


def _findings(
    tmp_path: Path, records: list[dict[str, Any]], **options: Any
) -> dict[str, list[MatrixFinding]]:
    inventory = _write(tmp_path / "inv.jsonl", records)
    matrix = check_matrix([inventory], **options)
    out: dict[str, list[MatrixFinding]] = {}
    for finding in matrix.findings:
        out.setdefault(finding.code, []).append(finding)
    return out


def _fixes(
    finding: MatrixFinding,
) -> list[tuple[str, str | None, str | None, str | None]]:
    return [(x.action, x.field, x.release, x.asset) for x in finding.fixes]


def test_fix_for_every_kind_of_finding(tmp_path: Path) -> None:
    """Each code of a single-server matrix carries the fix the catalogue gives."""
    records = [
        _stream("CNT", allow_msg_counter=True, metadata={"_nats.req.level": "2"}),
        _stream("UNK", nonsense_field=1),
        _stream("PG"),
        _consumer("PG", "PGC", priority_groups=["g1"]),
        _stream("HOST"),
        _consumer("HOST", "HIGH", metadata={"_nats.req.level": "2"}),
        _consumer("HOST", "SIB"),
        _stream("ENUM", retention="nope"),
        _stream("OV1", subjects=["ov.>"]),
        _stream("OV2", subjects=["ov.a"]),
    ]
    inventory = _write(tmp_path / "inv.jsonl", records)
    matrix = check_matrix([inventory], mode="single")
    found = {(f.code, f.asset, f.releases[0]): f for f in matrix.findings}
    degraded = found["AG101", "/$G/CNT", "2.10.0"]
    assert _fixes(degraded) == [
        ("remove", "allow_msg_counter", "2.12.0", None),
        ("upgrade", None, "2.12.0", None),
    ]
    assert degraded.fixes[0].text == "remove `allow_msg_counter` (known from 2.12.0)"
    level = found["AG201", "/$G/CNT", "2.11.9"]
    assert _fixes(level) == [("upgrade", None, "2.12.0", None)]
    assert level.fixes[0].text.startswith("run 2.12.0 or later: ")
    unknown = found["AG202", "/$G/UNK", "2.11.9"]
    assert _fixes(unknown) == [("remove", "nonsense_field", None, None)]
    assert unknown.fixes[0].text == "remove `nonsense_field` (no release knows it)"
    checked = found["AG302", "/$G/PG/PGC", "2.12.0"]
    assert checked.check == "consumer.priority_groups_policy_none"
    assert _fixes(checked) == [
        ("change", None, "2.12.0", None),
        ("stay", None, "2.11.11", None),
    ]
    stopped = found["AG203", "/$G/HOST", "2.11.9"]
    assert stopped.releases == ["2.11.9", "2.11.10"]
    assert _fixes(stopped) == [
        ("fix-first", None, None, "/$G/HOST/HIGH"),
        ("upgrade", None, "2.12.0", None),
        ("stay", None, "2.11.7", None),
    ]
    detached = found["AG401", "/$G/HOST/SIB", "2.11.11"]
    assert _fixes(detached) == [
        ("fix-first", None, None, "/$G/HOST"),
        ("upgrade", None, "2.12.0", None),
        ("stay", None, "2.11.7", None),
    ]
    enum = found["AG301", "/$G/ENUM", "2.10.0"]
    assert _fixes(enum) == [("change", None, None, None)]
    overlap = found["AG601", "/$G OV1 ~ OV2", "2.10.0"]
    assert _fixes(overlap) == [("change", None, None, "OV1")]
    assert overlap.releases == list(matrix_releases(matrix))
    drift = found["AG701", "/$G/PG", "2.11.0"]
    assert _fixes(drift) == [("update", None, None, None)]


def matrix_releases(matrix: Matrix) -> list[str]:
    """The releases of a matrix's rows."""
    return [row.release for row in matrix.releases]


def test_fix_for_cluster_outcomes(tmp_path: Path) -> None:
    """A flow_control consumer on R3: the cluster finding names it to delete; assets point to the cluster."""
    records = [
        {**_stream("FC", num_replicas=3), "cluster": "c1"},
        {
            **_consumer("FC", "FCC", ack_policy="flow_control", num_replicas=3),
            "cluster": "c1",
            "config": {
                "durable_name": "FCC",
                "ack_policy": "flow_control",
                "num_replicas": 3,
                "metadata": {"_nats.req.level": "4"},
            },
        },
    ]
    found = _findings(tmp_path, records, mode="cluster")
    outcome_codes = {"AG511", "AG512", "AG513"} & set(found)
    assert outcome_codes
    for code in outcome_codes:
        for finding in found[code]:
            assert finding.asset == "c1"
            assert {(x.action, x.asset) for x in finding.fixes} == {
                ("delete", "c1/$G/FC/FCC")
            }
    assert "AG501" not in found  # folded into the cluster's finding
    report = check([tmp_path / "inv.jsonl"], target="2.12.8")
    (stream, consumer) = report.assets
    fixes = fixes_for(
        stream,
        _cat().server("2.12.8"),
        _cat(),
        rule="unavailable",
        outcome=report.clusters[0],
    )
    assert [(x.action, x.asset) for x in fixes] == [("fix-first", "c1")]
    assert stream.state == consumer.state == "unavailable"


def test_floor_above_fails_on_a_floor_above_or_a_lossy_release(tmp_path: Path) -> None:
    """floor-above=V: a floor above V fails; so does V itself losing something."""
    record = _stream("CNT", allow_msg_counter=True, metadata={"_nats.req.level": "2"})
    inventory = _write(tmp_path / "inv.jsonl", [record])
    matrix = check_matrix([inventory], releases="2.12.0..", mode="single")
    assert matrix_failures(matrix) == []
    assert matrix_failures(matrix, "2.12.0") == []
    wide = check_matrix([inventory], releases="all", mode="single")
    failures = matrix_failures(wide, "2.11.9")
    assert any("lowest lossless release is 2.12.0" in f for f in failures)
    assert any("loses 1 asset(s) on 2.11.9" in f for f in failures)
    assert matrix_failures(wide, "2.12.1") == [f for f in matrix_failures(wide) if f]


def test_matrix_needs_a_release(catalogue: Catalogue) -> None:
    """An empty list of releases is a ValueError, not an empty matrix."""
    with pytest.raises(ValueError, match="no release"):
        check_matrix([DEMO], releases=[], catalogue=catalogue)


def test_rules_doc_lists_every_code() -> None:
    """docs/rules.md has one row per code of assetgate.judge.fixes.CODES, in order."""
    from assetgate.judge.fixes import CODES

    text = (FIXTURES.parent / "docs" / "rules.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| AG")]
    assert rows == [f"| {c.code} | `{c.rule}` | {c.title} |" for c in CODES]


@pytest.mark.parametrize(
    "drift", ["stamp_missing", "stamp_unparsable", "stamp_too_low", "stamp_too_high"]
)
def test_every_drift_flag_has_an_update_fix(drift: str) -> None:
    """Each drift flag's finding is fixed by updating the asset on a restamping server."""
    report = check([DEMO], target="2.12.8", mode="single")
    verdict = report.assets[0]
    fixes = fixes_for(verdict, _cat().server("2.12.8"), _cat(), rule=drift)
    assert [
        (f.action, "_nats.req.level" in f.text or "stamp" in f.text) for f in fixes
    ] == [("update", True)]


def _overlapping(tmp_path: Path) -> Path:
    """Overlapping streams of one account whose kept subjects come and go by release."""
    nrg = {"subjects": ["$NRG.z"]}  # loads on some releases, not on others
    stamp = {"_nats.req.level": "2"}  # offline on some releases
    records = [
        _stream("A_ALL", subjects=["z.q", "a.>", "b.>"]),
        _stream("B_NRG", subjects=["$NRG.x", "b.x"]),
        _stream("C_CNT", subjects=["a.c"], allow_msg_counter=True, metadata=stamp),
        _stream("D_NRG", subjects=["$NRG.y", "a.d", "$NRG.x"]),
        _stream("E_TWICE", subjects=["a.e"]),  # its subjects; its last record's fate
        {**_stream("E_TWICE"), "config": {"name": "E_TWICE", **nrg}},
        _stream("F_GONE", subjects=["a.>"], retention="bogus"),
        {**_stream("X_ONE", subjects=["x.>"]), "account": "OTHER"},
        {**_stream("X_TWO", subjects=["x.y"]), "account": "OTHER"},
    ]
    return _write(tmp_path / "inv.jsonl", records)


@pytest.mark.parametrize("mode", ["single", "cluster"])
def test_overlaps_of_streams_kept_on_some_releases(tmp_path: Path, mode: str) -> None:
    """Each release's overlaps equal check()'s when streams keep subjects only on some."""
    from assetgate.run.multi import judge_releases

    inventory = _overlapping(tmp_path)
    cat = _cat()
    releases = list(select_releases("all", cat))
    got = judge_releases(
        [inventory],
        [cat.server(r) for r in releases],
        mode,  # type: ignore[arg-type]
        cat,
        rules=[],
        fail_on=(),
        light=True,
    )
    seen: set[tuple[tuple[tuple[str, str], tuple[str, ...]], ...]] = set()
    for release, result in zip(releases, got, strict=True):
        report = check([inventory], target=release, mode=mode)  # type: ignore[arg-type]
        assert (release, result.report.overlaps) == (release, report.overlaps)
        seen.add(tuple((o.streams, o.offline) for o in report.overlaps))
    assert len(seen) == 3  # the overlaps do change between releases


def test_overlaps_where_a_streams_subjects_differ_between_releases(
    tmp_path: Path,
) -> None:
    """An account whose stream's subjects differ by release gets each release's own overlaps."""
    import msgspec

    from assetgate.judge.gate import bind_many
    from assetgate.judge.subjects import find_overlaps
    from assetgate.run.check import iter_records
    from assetgate.run.collect import kept_by_account
    from assetgate.run.multi import _Judged

    cat = _cat()
    profiles = [cat.server(r) for r in select_releases("all", cat)]
    judged = _Judged(cat, light=True, releases=len(profiles))
    judge = bind_many(profiles, "single", cat)
    for record in iter_records([_overlapping(tmp_path)]):
        judged.add(record, judge)
    moved = judged.streams["", "$G", "C_CNT"]
    half = len(moved) // 2
    moved[half:] = [msgspec.structs.replace(j, subjects=("b.c",)) for j in moved[half:]]
    # as judge_many would say it: the row changes at the half
    judged.stream_changes["", "$G", "C_CNT"] |= 1 << half
    judged.changes["", "$G", "C_CNT"] |= 1 << half
    assert judged.collisions["", "$G"] is None
    assert judged.collisions["", "OTHER"] is not None
    for index in range(len(profiles)):
        streams = {key: row[index] for key, row in judged.streams.items()}
        duplicates = [row[index] for row in judged.duplicates]
        kept = kept_by_account(sorted(streams), streams, duplicates)
        want = {account: find_overlaps(found) for account, found in kept.items()}
        assert (index, judged.found(index)) == (index, want)


@pytest.mark.parametrize("mode", ["single", "cluster"])
def test_matrix_rows_equal_reports_with_streams_listed_twice(
    fleet: Path, tmp_path: Path, mode: str
) -> None:
    """Rows equal check() where streams of every cluster are listed twice."""
    lines = fleet.read_bytes().splitlines(keepends=True)
    streams = [line for line in lines if b'"kind":"stream"' in line]
    assert len({line.split(b'"cluster":')[1][:8] for line in streams[:60]}) > 1
    inventory = tmp_path / "twice.jsonl"
    inventory.write_bytes(b"".join([*lines, *streams[:60]]))
    matrix = check_matrix([inventory], mode=mode)  # type: ignore[arg-type]
    _assert_rows_equal_reports(matrix, inventory, mode)
