"""Tests for check's inputs: ``-`` (standard input) and directories, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from tests.conftest import REPO

if TYPE_CHECKING:
    from pathlib import Path

GOLDEN = REPO / "fixtures/inventories/golden.jsonl"


def _assetgate(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "assetgate", *args],
        input=stdin,
        capture_output=True,
        check=False,
        timeout=120,
    )


def test_standard_input_reads_like_the_file() -> None:
    """``check -`` with the file on stdin gives the file's report, sources named ``-``."""
    piped = _assetgate(
        "check",
        "-",
        "--target",
        "2.12.8",
        "--format",
        "json",
        stdin=GOLDEN.read_bytes(),
    )
    named = _assetgate("check", str(GOLDEN), "--target", "2.12.8", "--format", "json")
    assert piped.returncode == named.returncode == 1
    from_stdin = json.loads(piped.stdout)
    from_file = json.loads(named.stdout.replace(str(GOLDEN).encode(), b"-"))
    for report in (from_stdin, from_file):
        report.pop("inventory")  # its digest covers the sources' names
    assert from_stdin == from_file
    assert from_stdin["assets"][0]["source"].startswith("-:")


def test_a_directory_stands_for_its_inventory_files(tmp_path: Path) -> None:
    """A directory: every .jsonl/.ndjson/.json under it, in name order; other files not."""
    lines = GOLDEN.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "b").mkdir()
    (tmp_path / "a.jsonl").write_text("".join(lines[:10]), encoding="utf-8")
    (tmp_path / "b" / "c.ndjson").write_text("".join(lines[10:]), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not an inventory\n", encoding="utf-8")
    whole = _assetgate("check", str(GOLDEN), "--target", "2.12.8", "--format", "json")
    split = _assetgate("check", str(tmp_path), "--target", "2.12.8", "--format", "json")
    assert split.returncode == whole.returncode
    counts = json.loads(split.stdout)["summary"]
    assert counts == json.loads(whole.stdout)["summary"]
    sources = {
        a["source"].rsplit(":", 1)[0] for a in json.loads(split.stdout)["assets"]
    }
    assert sources == {str(tmp_path / "a.jsonl"), str(tmp_path / "b" / "c.ndjson")}


def test_inputs_that_name_nothing_are_usage_errors(tmp_path: Path) -> None:
    """An empty directory, a missing file, ``-`` twice: exit 2 and one line, no traceback."""
    (tmp_path / "empty").mkdir()
    for args, words in (
        ([str(tmp_path / "empty")], "holds no inventory file (.jsonl, .ndjson, .json)"),
        ([str(tmp_path / "missing.jsonl")], "inventory not found"),
        (["-", "-"], "standard input (-) can be read once"),
    ):
        done = _assetgate("check", *args, "--target", "2.12.8")
        assert done.returncode == 2, args
        assert words in done.stderr.decode(), done.stderr
        assert b"Traceback" not in done.stderr


def test_pull_records_on_standard_input_set_the_mode() -> None:
    """Standalone server records piped in: judged as a single server, said on stderr."""
    records = [
        {"kind": "server", "cluster": "", "name": "s1", "server_version": "2.15.1"},
        {"kind": "stream", "config": {"name": "S", "subjects": ["s.>"]}},
    ]
    piped = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    done = _assetgate("check", "-", "--target", "2.12.8", stdin=piped)
    assert b"single mode" in done.stdout
    assert b"judging in mode single" in done.stderr


def test_standard_input_with_rolling() -> None:
    """``check - --rolling``: the records on stdin are judged (was an internal error)."""
    fixture = REPO / "fixtures/inventories/rolling.jsonl"
    piped = _assetgate(
        "check", "-", "--rolling", "2.15.1..2.12.8", stdin=fixture.read_bytes()
    )
    named = _assetgate("check", str(fixture), "--rolling", "2.15.1..2.12.8")
    assert piped.returncode == named.returncode == 1
    assert piped.stdout == named.stdout
