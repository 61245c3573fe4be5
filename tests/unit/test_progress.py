"""Progress on a terminal: the callback's calls, the drawn line, and silence elsewhere."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from typing import TYPE_CHECKING

from assetgate.run.check import check
from assetgate.run.progress import EVERY, terminal_progress
from benchmarks.gen_inventory import generate

if TYPE_CHECKING:
    from pathlib import Path


def _fleet(tmp_path: Path, assets: int) -> Path:
    path = tmp_path / "fleet.jsonl"
    path.write_bytes(b"".join(generate(assets, seed=5)))
    return path


def test_check_reports_progress_per_phase(tmp_path: Path) -> None:
    """check() calls progress every EVERY records while judging, then once to settle."""
    calls: list[tuple[str, int]] = []
    report = check(
        [_fleet(tmp_path, 5000)],
        target="2.12.8",
        progress=lambda phase, n: calls.append((phase, n)),
    )
    judging = [n for phase, n in calls if phase == "reading and judging"]
    assert judging == [EVERY * i for i in range(1, len(judging) + 1)]
    assert len(judging) == report.summary.records // EVERY
    assert calls[-1][0] == "settling streams and finding overlaps"


def test_no_progress_when_the_stream_is_not_a_terminal() -> None:
    """A pipe or a file gets no progress callback at all, so nothing is written."""
    stream = io.StringIO()
    with terminal_progress(stream) as progress:
        assert progress is None
    assert stream.getvalue() == ""


def test_cli_draws_progress_on_a_terminal_and_clears_it(tmp_path: Path) -> None:
    """`check` with standard error on a terminal draws the line, then clears it."""
    path = _fleet(tmp_path, 3000)
    master, slave = pty.openpty()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "assetgate",
                "check",
                str(path),
                "--target",
                "2.12.8",
            ],
            stdout=subprocess.PIPE,
            stderr=slave,
            timeout=300,
            check=False,
        )
        os.close(slave)
        slave = -1
        drawn = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal is closed once everything is read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        if slave != -1:
            os.close(slave)
        os.close(master)
    assert done.returncode in {0, 1}
    assert b"assetgate: reading and judging: 1,024 records (" in drawn
    assert drawn.endswith(b"\r\x1b[K")
    assert b"\r" not in done.stdout


def test_cli_writes_no_progress_to_a_pipe(tmp_path: Path) -> None:
    """With standard error not a terminal, `check` writes no progress line."""
    path = _fleet(tmp_path, 3000)
    done = subprocess.run(
        [sys.executable, "-m", "assetgate", "check", str(path), "--target", "2.12.8"],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in {0, 1}
    assert b"\r" not in done.stderr
    assert b"reading and judging" not in done.stderr
