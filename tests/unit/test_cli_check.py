"""Tests for `assetgate check` and `validate --inventory` (run in-process)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest
import structlog

from assetgate.cli.main import main
from tests.conftest import LEVELS, REPO

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue

_LEVELS: Final = ["--levels", str(LEVELS)]
DEMO: Final = "fixtures/inventories/demo.jsonl"
COUNTER_OFFLINE: Final = 'unsupported - config error: unknown field "allow_msg_counter"'


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run every command from the repository root; reset structlog afterwards."""
    monkeypatch.chdir(REPO)
    yield
    structlog.reset_defaults()


def _check(*args: str) -> int:
    return main([*_LEVELS, "check", *args])


# --- help and usage errors ----------------------------------------------------------------


def test_check_help_shows_examples(capsys: pytest.CaptureFixture[str]) -> None:
    """`check --help` exits 0 and shows an examples section with real commands."""
    code = main(["check", "--help"])
    out = capsys.readouterr().out
    assert (
        code,
        "examples:" in out,
        "assetgate check fixtures/inventories/demo.jsonl --target 2.11.11" in out,
    ) == (0, True, True)


def test_unknown_target_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown version exits 2 with a message naming the newest known line."""
    code = _check(DEMO, "--target", "2.13.0")
    captured = capsys.readouterr()
    assert (code, captured.out, captured.err) == (
        2,
        "",
        (
            "assetgate: error: unknown server version: '2.13.0': the catalogue describes "
            "release lines 2.10 to 2.15 (newest known line: 2.15); there is no 2.13 line "
            "(known lines: 2.10, 2.11, 2.12, 2.14, 2.15)\n"
        ),
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["missing.jsonl", "--target", "2.11.11"],
            "inventory not found: 'missing.jsonl'",
        ),
        ([DEMO], "--target is required (or --verify-plan PLAN)"),
        (
            [DEMO, "--target", "east="],
            "invalid target: 'east=' (use VERSION or CLUSTER=VERSION)",
        ),
        (
            [DEMO, "--target", "2.11.11", "--accept", "bogus:*"],
            (
                "invalid acceptance: 'bogus:*' (use RULE:ASSET, RULE one of online, offline, "
                "degraded, unloadable, detached, unavailable, meta_unavailable, meta_state_lost, "
                "crash, overlap, record-error, ignored, stamp_missing, stamp_unparsable, "
                "stamp_too_low, stamp_too_high, *)"
            ),
        ),
    ],
    ids=["missing-inventory", "no-target", "bad-target", "bad-acceptance"],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """Usage problems exit 2 with one message on stderr and nothing on stdout."""
    code = _check(*args)
    captured = capsys.readouterr()
    assert (code, captured.out, captured.err) == (
        2,
        "",
        f"assetgate: error: {message}\n",
    )


# --- reports and exit codes ---------------------------------------------------------------


def test_demo_findings_exit_1_with_summary_table(
    capsys: pytest.CaptureFixture[str], catalogue: Catalogue
) -> None:
    """`check demo --target 2.11.11` exits 1 and starts with the summary table."""
    code = _check(DEMO, "--target", "2.11.11")
    head = capsys.readouterr().out.splitlines()[:7]
    assert (code, head) == (
        1,
        [
            (
                "assetgate check: target 2.11.11 (API level 1), cluster mode, "
                f"catalogue {catalogue.digest[:12]}"
            ),
            "31 records: 29 assets, 1 record error, 1 ignored",
            "",
            (
                "cluster  account  online  offline  degraded  unloadable  detached"
                "  unavailable"
            ),
            "east     $G            0        0         0           0         0           24",
            "west     $G            4        0         0           1         0            0",
            "total                  4        0         0           1         0           24",
        ],
    )


@pytest.mark.parametrize("fail_on", ["none", "detached", "overlaps", "degraded"])
def test_fail_on_cannot_lower_lost_assets(
    capsys: pytest.CaptureFixture[str], fail_on: str
) -> None:
    """Unloadable and detached assets fail the run whatever --fail-on names."""
    code = _check(DEMO, "--target", "2.11.11", "--mode", "single", "--fail-on", fail_on)
    capsys.readouterr()
    assert code == 1


def test_readme_example_fails_on_a_crashing_cluster(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's --fail-on offline,unloadable example exits 1: east crashes."""
    code = _check(DEMO, "--target", "2.11.11", "--fail-on", "offline,unloadable")
    out = capsys.readouterr().out
    assert (code, "1 cluster down: east (crash)" in out) == (1, True)


@pytest.mark.parametrize(("fail_on", "expected"), [("none", 0), ("offline", 1)])
def test_fail_on_threshold_for_offline_assets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fail_on: str, expected: int
) -> None:
    """--fail-on decides about assets that come back on a roll forward (offline)."""
    record = {
        "kind": "stream",
        "stream": "LATER",
        "name": "LATER",
        "config": {"name": "LATER", "metadata": {"_nats.req.level": "9"}},
    }
    path = tmp_path / "inv.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    code = _check(
        str(path), "--target", "2.12.8", "--mode", "single", "--fail-on", fail_on
    )
    capsys.readouterr()
    assert code == expected


def test_json_report_has_every_key(capsys: pytest.CaptureFixture[str]) -> None:
    """`--format json` parses and has exactly the report's top-level keys."""
    code = _check(DEMO, "--target", "2.11.11", "--format", "json")
    report = json.loads(capsys.readouterr().out)
    assert (code, sorted(report), report["summary"]["records"]) == (
        1,
        sorted(
            [
                "format",
                "target",
                "catalogue",
                "inventory",
                "summary",
                "clusters",
                "health",
                "assets",
                "overlaps",
                "errors",
                "ignored",
                "accepted",
            ]
        ),
        31,
    )


@pytest.mark.parametrize(
    ("fmt", "first_line"),
    [
        (
            "text",
            "assetgate check: target 2.11.11 (API level 1), cluster mode, catalogue ",
        ),
        ("json", "{"),
        ("markdown", "## assetgate: target 2.11.11 (API level 1), cluster mode"),
        ("sarif", "{"),
        ("junit", '<?xml version="1.0" encoding="UTF-8"?>'),
    ],
    ids=["text", "json", "markdown", "sarif", "junit"],
)
def test_every_format_renders(
    capsys: pytest.CaptureFixture[str], fmt: str, first_line: str
) -> None:
    """Each report format renders the demo report to stdout."""
    code = _check(DEMO, "--target", "2.11.11", "--format", fmt)
    out = capsys.readouterr().out
    assert (code, out.splitlines()[0].startswith(first_line), out.endswith("\n")) == (
        1,
        True,
        True,
    )


@pytest.mark.parametrize("fmt", ["json", "sarif"], ids=["json", "sarif"])
def test_json_formats_parse(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """The JSON-based formats are valid JSON objects."""
    _check(DEMO, "--target", "2.11.11", "--format", fmt)
    assert isinstance(json.loads(capsys.readouterr().out), dict)


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif", "junit"], ids=str)
def test_output_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    """--output writes the report to the file and nothing to stdout."""
    _check(DEMO, "--target", "2.11.11", "--format", fmt)
    expected = capsys.readouterr().out
    target = tmp_path / f"report.{fmt}"
    code = _check(DEMO, "--target", "2.11.11", "--format", fmt, "--output", str(target))
    assert (code, capsys.readouterr().out, target.read_text(encoding="utf-8")) == (
        1,
        "",
        expected,
    )


# --- prepared plans -----------------------------------------------------------------------


def _changed_demo(tmp_path: Path) -> str:
    """A copy of the demo inventory where S_COUNTER lost its allow_msg_counter field."""
    text = (REPO / DEMO).read_text(encoding="utf-8")
    changed = text.replace('"allow_msg_counter":true,', "")
    assert changed.count("\n") == text.count("\n")
    assert changed != text
    path = tmp_path / "changed.jsonl"
    path.write_text(changed, encoding="utf-8")
    return str(path)


def _plan(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    *targets: str,
    mode: str = "cluster",
) -> str:
    path = tmp_path / "plan.json"
    args = [arg for target in targets for arg in ("--target", target)]
    _check(DEMO, *args, "--mode", mode, "--plan-out", str(path))
    capsys.readouterr()
    return str(path)


def test_verify_plan_on_the_same_inventory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--verify-plan on the inventory the plan was made from exits 0."""
    plan = _plan(capsys, tmp_path, "2.11.11")
    digest = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))["digest"]
    code = _check("--verify-plan", plan, DEMO)
    assert (code, capsys.readouterr().out) == (
        0,
        f"plan {digest[:12]}: no verdict changed (29 assets)\n",
    )


def test_verify_plan_on_a_changed_inventory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--verify-plan exits 1 and lists the verdict that changed, with a note on stderr."""
    plan = _plan(capsys, tmp_path, "2.11.11", mode="single")
    digest = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))["digest"]
    code = _check("--verify-plan", plan, _changed_demo(tmp_path))
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if line.startswith("note: ")]
    assert (code, captured.out, [n.split(":")[1] for n in notes]) == (
        1,
        (
            f"plan {digest[:12]}: 1 verdict(s) changed\n"
            f"  east/$G/S_COUNTER: offline ({COUNTER_OFFLINE}) on 2.11.11 -> offline "
            "(unsupported - required API level: 2, current API level: 1) on 2.11.11\n"
        ),
        [" inventory changed"],
    )


def test_verify_plan_with_per_cluster_targets_without_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A plan made for named clusters only verifies on the same inventory (exit 0)."""
    plan = _plan(capsys, tmp_path, "east=2.11.11")
    code = _check("--verify-plan", plan, DEMO)
    capsys.readouterr()
    assert code == 0


def test_verify_plan_with_per_cluster_targets(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A plan with a target for every cluster verifies on the same inventory."""
    plan = _plan(capsys, tmp_path, "east=2.11.11,west=2.12.8")
    code = _check("--verify-plan", plan, DEMO)
    out = capsys.readouterr().out
    assert (code, out.endswith(": no verdict changed (29 assets)\n")) == (0, True)


def test_unreadable_plan_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A plan file that is not a plan exits 2."""
    path = tmp_path / "plan.json"
    path.write_text("{}", encoding="utf-8")
    code = _check("--verify-plan", str(path), DEMO)
    captured = capsys.readouterr()
    assert (
        code,
        captured.out,
        captured.err.startswith("assetgate: error: cannot read plan"),
    ) == (
        2,
        "",
        True,
    )


# --- validate --inventory -----------------------------------------------------------------

_REFUSAL: Final = (
    "  with inventory:   refused: 400/10065 subjects overlap with an existing stream\n"
    "    overlaps 'S_COUNTER' (counter.> ~ counter.x) [offline]\n"
)


def _stream_file(tmp_path: Path) -> str:
    path = tmp_path / "stream.json"
    path.write_text('{"name":"OV_X","subjects":["counter.x"]}', encoding="utf-8")
    return str(path)


def _validate(tmp_path: Path, *extra: str) -> int:
    return main(
        [
            *_LEVELS,
            "validate",
            _stream_file(tmp_path),
            "--kind",
            "stream",
            "--server",
            "2.11.11",
            "--inventory",
            DEMO,
            *extra,
        ]
    )


def test_validate_with_inventory_shows_the_offline_conflict(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A stream overlapping the offline S_COUNTER (cluster east) is refused: 10065, exit 1."""
    code = _validate(tmp_path, "--cluster", "east")
    out = capsys.readouterr().out
    assert (code, out.endswith(_REFUSAL)) == (1, True)


def test_validate_with_inventory_without_cluster(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Without --cluster, an inventory of several clusters is a usage error naming them."""
    code = _validate(tmp_path)
    err = capsys.readouterr().err
    assert (code, "several clusters ('east', 'west')" in err) == (2, True)


def test_validate_with_inventory_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`--format json` carries the admission: not allowed, the error and the conflict."""
    code = _validate(tmp_path, "--cluster", "east", "--format", "json")
    admission = json.loads(capsys.readouterr().out)["admission"]
    assert (code, admission) == (
        1,
        {
            "allowed": False,
            "error": {
                "code": 400,
                "err_code": 10065,
                "description": "subjects overlap with an existing stream",
            },
            "conflicts": [
                {
                    "stream": "S_COUNTER",
                    "subject": "counter.>",
                    "requested": "counter.x",
                    "offline": True,
                }
            ],
        },
    )


# --- worker processes ---------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_workers_must_be_a_positive_count(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """`--workers` below 1 or not a number is a usage error (exit 2)."""
    code = _check(DEMO, "--target", "2.11.11", "--workers", value)
    assert code == 2
    assert "invalid process count" in capsys.readouterr().err


def test_workers_give_the_one_process_report(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """`check --workers 2` (the pool really used) prints the `--workers 1` report."""
    import gc
    import importlib

    import assetgate.run.parallel
    from benchmarks.gen_inventory import generate

    monkeypatch.setattr(assetgate.run.parallel, "MIN_CHUNK", 4096)
    pools: list[int] = []

    class CountingPool(assetgate.run.parallel.JudgePool):
        def __init__(self, **kwargs: Any) -> None:
            pools.append(kwargs["workers"])
            super().__init__(**kwargs)

    # the module, not the function the package exports under the same name
    check_module = importlib.import_module("assetgate.run.check")
    monkeypatch.setattr(check_module, "JudgePool", CountingPool)
    fleet = tmp_path / "fleet.jsonl"
    fleet.write_bytes(b"".join(generate(1500, seed=7, overlap_fraction=0.02)))
    reports = []
    for workers in ("1", "2"):
        code = _check(
            str(fleet), "--target", "2.12.8", "--format", "json", "--workers", workers
        )
        reports.append((code, json.loads(capsys.readouterr().out)))
    assert reports[0] == reports[1]
    assert pools == [2]  # --workers 1 used no pool; --workers 2 one of 2 processes
    small = tmp_path / "small.jsonl"
    small.write_bytes(fleet.read_bytes()[:4000].rpartition(b"\n")[0] + b"\n")
    _check(str(small), "--target", "2.12.8", "--format", "json", "--workers", "2")
    capsys.readouterr()
    assert pools == [2]  # too small to split: no processes started for it
    assert reports[0][1]["summary"]["records"] == 1500
    assert gc.isenabled()  # the command turns the cyclic GC off only for its run


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (
            "2.11",
            (
                "invalid server version: '2.11': a release line, not a release; did you "
                "mean 2.11.11, the newest 2.11 release assetgate knows?"
            ),
        ),
        (
            "2.13.0",
            (
                "unknown server version: '2.13.0': the catalogue describes release lines "
                "2.10 to 2.15 (newest known line: 2.15); there is no 2.13 line (known "
                "lines: 2.10, 2.11, 2.12, 2.14, 2.15)"
            ),
        ),
    ],
    ids=["line-only", "no-such-line"],
)
def test_version_arguments_get_a_hint(
    capsys: pytest.CaptureFixture[str], target: str, message: str
) -> None:
    """A line instead of a release, or a missing line, exits 2 with a hint."""
    code = _check(DEMO, "--target", target)
    assert (code, capsys.readouterr().err) == (2, f"assetgate: error: {message}\n")


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (
            "/nonexistent/dir/out.txt",
            "--output: the directory of '/nonexistent/dir/out.txt' does not exist",
        ),
        ("/tmp", "--output: '/tmp' is a directory"),
    ],
    ids=["missing-directory", "a-directory"],
)
def test_output_paths_are_checked_before_any_work(
    capsys: pytest.CaptureFixture[str], output: str, message: str
) -> None:
    """An unwritable --output exits 2 with one line, before the inventory is read."""
    code = _check("missing.jsonl", "--target", "2.11.11", "--output", output)
    assert (code, capsys.readouterr().err) == (2, f"assetgate: error: {message}\n")


def test_an_internal_error_is_one_line_and_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unexpected exception prints one line with a --debug hint and exits 3."""
    from assetgate.cli import check as check_command
    from assetgate.cli import main as cli

    def broken(*_args: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(check_command, "run", broken)
    code = cli.main(["check", str(DEMO), "--target", "2.11.11"])
    err = capsys.readouterr().err
    assert (
        code,
        err.startswith("assetgate: internal error: RuntimeError: boom (at "),
        err.endswith("rerun with --debug for the traceback\n"),
    ) == (3, True, True)
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["--debug", "check", str(DEMO), "--target", "2.11.11"])


def test_compare_observed_takes_one_file_and_leaves_the_inventory() -> None:
    """`--compare-observed FILE INVENTORY` parses: the option takes FILE only."""
    from assetgate.cli.main import build_parser

    args = build_parser().parse_args(
        [
            "check",
            "--compare-observed",
            "after.jsonl",
            "before.jsonl",
            "--target",
            "2.12.8",
        ]
    )
    bare = build_parser().parse_args(["check", "inv.jsonl", "--compare-observed"])
    assert (args.compare_observed, args.inventory, bare.compare_observed) == (
        ["after.jsonl"],
        ["before.jsonl"],
        [""],
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--target", "2.12.8"],
            "--verify-plan: the plan was made for target 2.11.11, not 2.12.8",
        ),
        (
            ["--mode", "single"],
            "--verify-plan: the plan was made for cluster mode, not single",
        ),
    ],
    ids=["other-target", "other-mode"],
)
def test_verify_plan_with_another_target_or_mode_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str], message: str
) -> None:
    """A plan is verified for the target and mode it was made for; others exit 2."""
    plan = _plan(capsys, tmp_path, "2.11.11")
    code = _check("--verify-plan", plan, DEMO, *extra)
    assert (code, capsys.readouterr().err) == (2, f"assetgate: error: {message}\n")


def test_an_edited_plan_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A plan whose content no longer matches its digest exits 2."""
    plan = _plan(capsys, tmp_path, "2.11.11")
    data = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))
    first = next(iter(data["verdicts"]))
    data["verdicts"][first]["state"] = "online"
    (tmp_path / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    code = _check("--verify-plan", plan, DEMO)
    err = capsys.readouterr().err
    assert (code, "its digest does not match its content" in err) == (2, True)


def test_verify_plan_honours_the_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--verify-plan --format json prints the plan's digest and the changes as JSON."""
    plan = _plan(capsys, tmp_path, "2.11.11")
    digest = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))["digest"]
    code = _check("--verify-plan", plan, DEMO, "--format", "json")
    assert (code, json.loads(capsys.readouterr().out)) == (
        0,
        {"plan": digest, "assets": 29, "changed": []},
    )


# --- every release at once (--target all / A..B) ------------------------------------------


def test_target_all_on_the_demo_exits_1_with_matrix_and_floors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--target all` prints a row per release and cluster, the floors and a verdict; exit 1."""
    code = _check(DEMO, "--target", "all", "--mode", "single")
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[0].startswith(
        "assetgate check: 22 releases, 2.10.0 to 2.15.0+"
    )
    assert "  west: lossless 2.10.0, offline-only 2.10.0" in out
    assert "AG302 unloadable west/$G/RAFT_TAP on 2.10.28+, 2.11.2-2.15.0+" in out
    assert out.rstrip().endswith(
        "lowest lossless release: none, lowest offline-only release: none"
    )


def test_target_range_of_clean_releases_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain stream is clean on every release: `--target all` exits 0, floor 2.10.0."""
    inventory = tmp_path / "inv.jsonl"
    record = {
        "kind": "stream",
        "name": "S",
        "config": {"name": "S", "subjects": ["s.>"]},
    }
    inventory.write_text(json.dumps(record) + "\n", encoding="utf-8")
    code = _check(str(inventory), "--target", "all", "--format", "json")
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert payload["floor"]["lossless"] == "2.10.0"
    assert [f["rule"] for f in payload["findings"]] == ["stamp_missing"]
    assert (
        _check(str(inventory), "--target", "all", "--fail-on", "floor-above=2.10.0")
        == 0
    )


def test_floor_above_fails_a_counter_stream_below_2_12(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--fail-on floor-above=2.11.9`: a counter stream's floor is 2.12.0, so exit 1."""
    inventory = tmp_path / "inv.jsonl"
    config = {
        "name": "C",
        "subjects": ["c.>"],
        "allow_msg_counter": True,
        "metadata": {"_nats.req.level": "2"},
    }
    record = {"kind": "stream", "name": "C", "config": config}
    inventory.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert _check(str(inventory), "--target", "2.12.0..", "--mode", "single") == 0
    ok = _check(
        str(inventory), "--target", "2.12.0..", "--fail-on", "floor-above=2.12.0"
    )
    capsys.readouterr()
    code = _check(
        str(inventory), "--target", "2.12.0..", "--fail-on", "floor-above=2.11.9"
    )
    assert (ok, code) == (0, 1)
    assert "lowest lossless release: 2.12.0" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--target", "all", "--fail-on", "floor-above=2.11"],
            "a release line, not a release",
        ),
        (
            ["--target", "2.11.11", "--fail-on", "floor-above=2.11.9"],
            "needs --target all",
        ),
        (["--target", "all", "--fail-on", "floor-above=x"], "not a release"),
        (["--target", "all", "--plan-out", "p.json"], "--plan-out takes one target"),
        (["--target", "all", "--target", "east=2.11.11"], "stands alone"),
        (["--target", "2.12.8..2.11.0"], "2.12.8 is above 2.11.0"),
        (["--target", "2.11.0..2.13.0"], "there is no 2.13 line"),
    ],
)
def test_matrix_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """Misused matrix options are one-line usage errors (exit 2), never a traceback."""
    code = _check(DEMO, *args)
    err = capsys.readouterr().err
    assert (code, message in err, err.count("\n")) == (2, True, 1), err


@pytest.mark.parametrize("fmt", ["json", "sarif", "markdown", "junit", "text"])
def test_matrix_formats_render(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    """Every format renders the matrix; SARIF results name their releases and fixes."""
    import xml.etree.ElementTree as ET

    code = _check(DEMO, "--target", "2.11.0..2.12.8", "--format", fmt)
    out = capsys.readouterr().out
    assert code == 1
    if fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        assert results
        assert all(r["properties"]["releases"] for r in results)
        assert {r["ruleId"][:2] for r in results} == {"AG"}
    elif fmt == "json":
        payload = json.loads(out)
        assert [r["release"] for r in payload["releases"]][:2] == ["2.11.0", "2.11.2"]
        assert {f["cluster"] for f in payload["floors"]} == {"east", "west"}
    elif fmt == "junit":
        root = ET.fromstring(out)  # noqa: S314 - our own output
        assert root.find("testsuite[@name='releases']") is not None
    elif fmt == "markdown":
        assert "## Floors" in out
    else:
        assert "floors (" in out


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [("none", 0), ("ignored", 1), ("record-error", 1), ("errors", 1), ("overlap", 0)],
)
def test_fail_on_takes_the_rule_names_of_the_reports(
    tmp_path: Path, fail_on: str, code: int
) -> None:
    """--fail-on takes SARIF's record-error and overlap, and ignored records fail too."""
    path = tmp_path / "inv.jsonl"
    path.write_text(
        '{"kind":"stream","config":{"name":"S","subjects":["s"]},"account":"A"}\n'
        '{"kind":"kv"}\n'
        + ('{"kind":"stream",\n' if fail_on in {"record-error", "errors"} else ""),
        encoding="utf-8",
    )
    assert (
        main(["check", str(path), "--target", "2.12.8", "--fail-on", fail_on]) == code
    )


def test_findings_that_do_not_fail_are_folded_in_text_and_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """40 stamp_missing drifts: 10 listed and a count, unless they fail or --show all."""
    path = tmp_path / "inv.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {"kind": "stream", "config": {"name": f"S{n}", "subjects": [f"s{n}"]}}
            )
            + "\n"
            for n in range(40)
        ),
        encoding="utf-8",
    )
    base = ["check", str(path), "--target", "2.12.8"]
    runs = {
        "text": [*base],
        "markdown": [*base, "--format", "markdown"],
        "all": [*base, "--show", "all"],
        "failing": [*base, "--fail-on", "stamp_missing"],
    }
    listed = {}
    for name, args in runs.items():
        main(args)
        out = capsys.readouterr().out
        listed[name] = (
            out.count("req.level stamp (the config"),
            "30 more that do not fail" in out,
        )
    assert listed == {
        "text": (10, True),
        "markdown": (10, True),
        "all": (40, False),
        "failing": (40, False),
    }


def _one_stream_and(tmp_path: Path, line: str) -> tuple[Path, list[str]]:
    """An inventory of one clean stream and ``line`` (line 2), and `check` args for it."""
    inventory = tmp_path / "inv.jsonl"
    good = '{"kind":"stream","config":{"name":"S","subjects":["a"],"metadata":{"_nats.req.level":"0"}}}'
    inventory.write_text(f"{good}\n{line}\n")
    return inventory, [
        "check",
        str(inventory),
        "--target",
        "2.12.8",
        "--mode",
        "single",
    ]


def test_accepted_record_error_no_longer_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--accept record-error:FILE:LINE` marks that error in every format; the run passes."""
    inventory, args = _one_stream_and(tmp_path, "{not json")
    assert main(args) == 1  # the record error fails the run by default
    capsys.readouterr()
    accept = ["--accept", f"record-error:{inventory}:2"]
    assert main([*args, *accept]) == 0
    text = capsys.readouterr().out
    assert f"[accepted record-error:{inventory}:2]" in text
    assert main([*args, *accept, "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [e["accepted"] for e in body["errors"]] == [f"record-error:{inventory}:2"]
    assert body["accepted"] == [
        {
            "rule": "record-error",
            "asset": f"{inventory}:2",
            "matched": [f"{inventory}:2"],
        }
    ]
    assert body["summary"]["accepted"] == 1
    assert main([*args, *accept, "--format", "sarif"]) == 0
    sarif = json.loads(capsys.readouterr().out)
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "record-error"]
    assert result["suppressions"][0]["justification"].startswith(
        "accepted record-error:"
    )
    assert main([*args, *accept, "--format", "junit"]) == 0
    assert "accepted record-error:" in capsys.readouterr().out
    assert main([*args, "--accept", "record-error:other.jsonl:*"]) == 1
    assert "record-error:other.jsonl:* matched nothing" in capsys.readouterr().err


def test_accepted_ignored_record_no_longer_fails_an_ignored_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--accept ignored:GLOB` marks an ignored record; `--fail-on ignored` then passes."""
    _, args = _one_stream_and(tmp_path, '{"kind":"kv","config":{}}')
    args += ["--fail-on", "ignored"]
    assert main(args) == 1
    capsys.readouterr()
    accept = ["--accept", f"ignored:{tmp_path}/*.jsonl:2"]
    assert main([*args, *accept, "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [i["accepted"] for i in body["ignored"]] == [f"ignored:{tmp_path}/*.jsonl:2"]
    assert body["summary"]["accepted"] == 1
    assert main([*args, *accept]) == 0
    assert f"[accepted ignored:{tmp_path}/*.jsonl:2]" in capsys.readouterr().out
