"""Tests for assetgate.cli.main: help, exit codes, report formats (run in-process)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Final

import pytest
import structlog

from assetgate.cli.main import ExitCode, main
from tests.conftest import LEVELS, REPO

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

_LEVELS = ["--levels", str(LEVELS)]
_VALIDATION_KEYS = {
    "server",
    "kind",
    "op",
    "server_crash",
    "no_reply",
    "stored_config",
    "check",
    "assumed",
    "accepted",
    "error",
    "unknown_fields",
    "dropped_fields",
    "stamped_metadata",
    "response_metadata",
    "created_metadata",
    "required_level",
    "min_server_version",
    "lost_on_restart",
}


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    """main() configures structlog for stderr; undo it so later tests see the defaults."""
    yield
    structlog.reset_defaults()


def _write(tmp_path: Path, name: str, data: bytes | str) -> str:
    path = tmp_path / name
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return str(path)


# --- help ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "example"),
    [
        (["--help"], "assetgate validate stream.json --kind stream --server 2.11.11"),
        (
            ["validate", "--help"],
            "assetgate validate consumer.json --kind consumer --server 2.12.8 --format json",
        ),
        (["levels", "--help"], "assetgate levels --verify"),
    ],
    ids=["main", "validate", "levels"],
)
def test_help_exits_zero_with_example(
    capsys: pytest.CaptureFixture[str], argv: list[str], example: str
) -> None:
    """Every help text exits 0 and shows an `examples:` section with a real command."""
    code = main(argv)
    out = capsys.readouterr().out
    assert (code, "examples:" in out, example in out) == (0, True, True)


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """--version prints the package version and exits 0."""
    code = main(["--version"])
    assert (code, capsys.readouterr().out) == (0, "assetgate 0.1.0.dev0\n")


def test_missing_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """No subcommand is a usage error (exit 2)."""
    code = main([])
    assert (
        code,
        "the following arguments are required" in capsys.readouterr().err,
    ) == (2, True)


# --- validate exit codes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "server", "expected"),
    [
        ('{"name":"S","subjects":["a"]}', "2.12.8", ExitCode.OK),
        ('{"name":"S","zzz":1}', "2.12.8", ExitCode.FINDINGS),
        ('{"name":"S","zzz":1}', "2.11.11", ExitCode.FINDINGS),
        ('{"name":"S","zzz":0}', "2.11.11", ExitCode.OK),
        ('{"name":"S1",', "2.12.8", ExitCode.USAGE),
    ],
    ids=[
        "accepted-clean",
        "rejected",
        "dropped",
        "unknown-zero-not-dropped",
        "invalid-json",
    ],
)
def test_validate_exit_codes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    body: str,
    server: str,
    expected: ExitCode,
) -> None:
    """Exit 0: accepted clean; 1: rejected or fields silently dropped; 2: not JSON."""
    path = _write(tmp_path, "s.json", body)
    code = main([*_LEVELS, "validate", path, "--kind", "stream", "--server", server])
    capsys.readouterr()
    assert code == expected


def test_invalid_json_reports_server_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Input that is not JSON: the server's own error text, then exit 2 (a usage error)."""
    path = _write(tmp_path, "bad.json", '{"name":"S1",')
    code = main([*_LEVELS, "validate", path, "--kind", "stream", "--server", "2.12.8"])
    captured = capsys.readouterr()
    assert (
        code,
        "rejected: 400/10025 invalid JSON: unexpected EOF" in captured.out,
        captured.err,
    ) == (2, True, f"assetgate: error: not a JSON document: {path!r}\n")


def test_text_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The text report names the server, verdict, metadata and minimum release."""
    path = _write(tmp_path, "s.json", '{"name":"S","subjects":["a"]}')
    main(
        [
            *_LEVELS,
            "validate",
            path,
            "--kind",
            "stream",
            "--server",
            "2.12.8",
            "--no-created-version",
        ]
    )
    expected = (
        f"{path}: stream create on nats-server 2.12.8 (API level 3, strict)\n"
        "  verdict:          accepted\n"
        "  required level:   0\n"
        "  stored metadata:  _nats.req.level='0'\n"
        "  reply metadata:   _nats.level='3', _nats.req.level='0', _nats.ver='2.12.8'\n"
        "  min server:       2.10.0\n"
    )
    assert capsys.readouterr().out == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--server", "2.13.0"], "unknown server version: '2.13.0'"),
        (["--server", "two"], "invalid server version: 'two'"),
    ],
    ids=["unknown-version", "invalid-version"],
)
def test_bad_version_is_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """An unknown or invalid server version exits 2 with a message on stderr."""
    path = _write(tmp_path, "s.json", '{"name":"S"}')
    code = main([*_LEVELS, "validate", path, "--kind", "stream", *argv])
    captured = capsys.readouterr()
    assert (code, captured.out, message in captured.err) == (2, "", True)


def test_unreadable_file_is_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that cannot be read exits 2 with `cannot read` on stderr and nothing on stdout."""
    missing = str(tmp_path / "missing.json")
    code = main(
        [*_LEVELS, "validate", missing, "--kind", "stream", "--server", "2.12.8"]
    )
    captured = capsys.readouterr()
    expected_err = (
        f"assetgate: error: cannot read {missing!r}: No such file or directory\n"
    )
    assert (code, captured.out, captured.err) == (2, "", expected_err)


def test_bad_flag_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """An invalid choice for --kind exits 2 (argparse)."""
    code = main(
        [*_LEVELS, "validate", "x.json", "--kind", "table", "--server", "2.12.8"]
    )
    assert (code, "invalid choice" in capsys.readouterr().err) == (2, True)


def test_stdin_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-` reads the config from standard input."""
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"name":"S","allow_batched":true}'))
    )
    code = main([*_LEVELS, "validate", "-", "--kind", "stream", "--server", "2.12.8"])
    out = capsys.readouterr().out
    assert (code, 'invalid JSON: json: unknown field "allow_batched"' in out) == (
        1,
        True,
    )


# --- JSON format -------------------------------------------------------------------------------------


def test_json_format_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--format json prints one object with the documented Validation keys."""
    path = _write(tmp_path, "s.json", '{"name":"S","allow_msg_ttl":true}')
    code = main(
        [
            *_LEVELS,
            "validate",
            path,
            "--kind",
            "stream",
            "--server",
            "2.11.11",
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert (code, set(report)) == (0, _VALIDATION_KEYS)


def test_json_format_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON report carries the server's reply and metadata verbatim."""
    path = _write(tmp_path, "u.json", '{"name":"U1","zzz":1}')
    main(
        [
            *_LEVELS,
            "validate",
            path,
            "--kind",
            "stream",
            "--server",
            "2.12.8",
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    actual = (
        report["accepted"],
        report["error"],
        report["unknown_fields"],
        report["server"],
    )
    expected = (
        False,
        {
            "code": 400,
            "err_code": 10025,
            "description": 'invalid JSON: json: unknown field "zzz"',
        },
        ["zzz"],
        {"version": "2.12.8", "api_level": 3, "strict": True},
    )
    assert actual == expected


def test_json_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--output writes the report to a file instead of stdout."""
    path = _write(tmp_path, "s.json", '{"name":"S"}')
    target = tmp_path / "report.json"
    main(
        [
            *_LEVELS,
            "validate",
            path,
            "--kind",
            "stream",
            "--server",
            "2.15.1",
            "--format",
            "json",
            "--output",
            str(target),
        ]
    )
    report = json.loads(target.read_text(encoding="utf-8"))
    assert (capsys.readouterr().out, report["stamped_metadata"]) == (
        "",
        {"_nats.req.level": "0"},
    )


# --- hostile input through the CLI --------------------------------------------------------------------


def test_invalid_utf8_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Invalid UTF-8 in the name gives a report (Go replaces it with U+FFFD), not a traceback."""
    path = _write(tmp_path, "s.json", b'{"name":"S\xff","subjects":["a"]}')
    code = main([*_LEVELS, "validate", path, "--kind", "stream", "--server", "2.12.8"])
    capsys.readouterr()
    assert code == ExitCode.OK


def test_lone_surrogate_key_json_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown key spelled as a lone surrogate escape is reported as U+FFFD in JSON."""
    path = _write(tmp_path, "s.json", b'{"name":"S","\\ud800":1}')
    code = main(
        [
            *_LEVELS,
            "validate",
            path,
            "--kind",
            "stream",
            "--server",
            "2.11.11",
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert (code, report["unknown_fields"]) == (1, ["\ufffd"])


# --- levels ----------------------------------------------------------------------------------------------


def test_levels_verify_repo(capsys: pytest.CaptureFixture[str]) -> None:
    """`levels --verify` exits 0 on the repository catalogue."""
    code = main([*_LEVELS, "levels", "--verify"])
    out = capsys.readouterr().out
    assert (code, f"catalogue {LEVELS}: 5 release lines" in out) == (0, True)


def test_levels_verify_broken_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`levels --verify` exits 2 on an edited copy and names the problem on stderr."""
    folder = tmp_path / "levels"
    shutil.copytree(LEVELS, folder)
    release = folder / "2.12.toml"
    release.write_text(
        release.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8"
    )
    code = main(["--levels", str(folder), "levels", "--verify"])
    captured = capsys.readouterr()
    problem = (
        "2.12.toml: checksum mismatch (the file was edited without updating CHECKSUMS)"
    )
    assert (code, captured.out, problem in captured.err) == (2, "", True)


def test_levels_write_checksums_repairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`levels --write-checksums --levels DIR` makes an edited copy verify again."""
    folder = tmp_path / "levels"
    shutil.copytree(LEVELS, folder)
    release = folder / "2.15.toml"
    release.write_text(
        release.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8"
    )
    first = main(["--levels", str(folder), "levels", "--write-checksums"])
    second = main(["--levels", str(folder), "levels", "--verify"])
    capsys.readouterr()
    assert (first, second) == (0, 0)


def test_levels_json(capsys: pytest.CaptureFixture[str]) -> None:
    """`levels --format json` lists every line with its ranges and new rules."""
    code = main([*_LEVELS, "levels", "--format", "json"])
    listing = json.loads(capsys.readouterr().out)
    lines = [line["line"] for line in listing["lines"]]
    rules_2_14 = listing["lines"][3]["rules"]
    expected = (
        0,
        ["2.10", "2.11", "2.12", "2.14", "2.15"],
        ["stream.allow_batched", "consumer.ack_policy_flow_control"],
    )
    assert (code, lines, rules_2_14) == expected


def test_levels_text(capsys: pytest.CaptureFixture[str]) -> None:
    """`levels` prints a readable summary including rules with their levels."""
    code = main([*_LEVELS, "levels"])
    out = capsys.readouterr().out
    assert (code, "stream.allow_batched->4" in out) == (0, True)


def test_logging_follows_the_current_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """After an in-process CLI run, log lines go to today's stderr, not a closed one."""
    import io

    import structlog

    from assetgate.cli.logconfig import configure_logging

    swapped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", swapped)
    configure_logging(json=True)
    structlog.get_logger("t").info("first")
    swapped.close()
    later = io.StringIO()
    monkeypatch.setattr(sys, "stderr", later)
    structlog.get_logger("t").info("second")
    assert '"event": "second"' in later.getvalue()


def test_help_prose_is_wrapped_to_the_terminal() -> None:
    """`check --help` wraps its prose at the terminal width (examples stay whole)."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "assetgate", "check", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "80"},
    )
    long = [
        line
        for line in done.stdout.splitlines()
        if len(line) > 80 and not line.startswith("  assetgate ")
    ]
    assert long == []


@pytest.mark.parametrize("command", ["validate", "levels"])
def test_validate_and_levels_take_dash_o(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-o FILE` writes the report to FILE, as in the other commands."""
    out = tmp_path / "out.txt"
    args = ["levels"]
    if command == "validate":
        args = [
            "validate",
            _write(tmp_path, "s.json", '{"name":"S"}'),
            "--kind",
            "stream",
        ]
        args += ["--server", "2.12.8"]
    code = main([*_LEVELS, *args, "-o", str(out)])
    assert (code, capsys.readouterr().out, out.stat().st_size > 0) == (0, "", True)


def test_scan_checks_its_inputs_before_starting_spark() -> None:
    """`scan` of a missing file exits 2 with one line, and no JVM was started."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from assetgate.cli.main import main\n"
        "code = main(['scan', 'nope.jsonl', '--target', '2.11.11', '--out', 'out'])\n"
        "from pyspark import SparkContext\n"
        "print(code, SparkContext._gateway is None)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert (done.stdout, done.stderr) == (
        "2 True\n",
        "assetgate: error: inventory not found: 'nope.jsonl'\n",
    )


@pytest.mark.parametrize("target", ["all", "2.11.0..2.12.8"])
def test_scan_refuses_a_release_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """`scan --target all` (or A..B) is a usage error pointing to `check`, before Spark."""
    code = main(
        [
            "scan",
            "fixtures/inventories/demo.jsonl",
            "--target",
            target,
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert (code, "is `assetgate check`" in err, err.count("\n")) == (2, True, 1)


def test_scan_summary_refuses_a_listing_format_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`scan --report summary --format sarif` is a usage error (one line), before Spark."""
    code = main(
        [
            "scan",
            "fixtures/inventories/demo.jsonl",
            "--target",
            "2.11.11",
            "--report",
            "summary",
            "--format",
            "sarif",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert (code, "--format sarif lists every finding" in err, err.count("\n")) == (
        2,
        True,
        1,
    )
    assert not (tmp_path / "out").exists()


_LOADED: Final = """
import sys
from assetgate.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m.startswith("assetgate.cli.")))
"""


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--version"], ["assetgate.cli.common", "assetgate.cli.main"]),
        (
            ["levels", "--verify"],
            [
                "assetgate.cli.common",
                "assetgate.cli.levels",
                "assetgate.cli.logconfig",
                "assetgate.cli.main",
            ],
        ),
    ],
    ids=["version", "levels"],
)
def test_a_command_loads_only_its_own_module(
    argv: list[str], expected: list[str]
) -> None:
    """``--version`` loads no command module, and a command only its own."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert done.stdout.strip().splitlines()[-1] == repr(expected)


def test_a_text_check_does_not_load_the_package_metadata_machinery() -> None:
    """``importlib.metadata`` (about 10 ms at start) loads only when SARIF is written."""
    script = _LOADED.replace(
        'm.startswith("assetgate.cli.")', 'm.startswith("importlib.metadata")'
    )
    argv = [str(REPO / "fixtures/inventories/demo.jsonl"), "--target", "2.12.8"]
    done = subprocess.run(
        [sys.executable, "-c", script, "check", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"
