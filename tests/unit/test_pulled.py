"""Tests for the mode the pull records of an inventory imply (single server or cluster)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from assetgate.cli.main import main
from assetgate.live.pulled import PulledServers, mode_notes, pulled_mode

if TYPE_CHECKING:
    from pathlib import Path


def _server(cluster: str) -> str:
    record = {
        "kind": "server",
        "cluster": cluster,
        "name": "s",
        "server_version": "2.15.1",
    }
    return json.dumps(record)


FLOW_CONSUMER = json.dumps(
    {
        "account": "$G",
        "kind": "consumer",
        "stream": "FC",
        "config": {
            "durable_name": "FCC",
            "ack_policy": "flow_control",
            "deliver_subject": "d",
        },
    }
)
STREAM = json.dumps(
    {"account": "$G", "kind": "stream", "config": {"name": "FC", "subjects": ["fc.>"]}}
)


def _write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_leading_server_records_are_counted_until_the_first_asset(
    tmp_path: Path,
) -> None:
    """Only the records before the first asset count; directories and junk count nothing."""
    first = _write(
        tmp_path / "a.jsonl", _server(""), "", _server(""), STREAM, _server("C1")
    )
    second = _write(tmp_path / "b.jsonl", "{not json", _server("C1"))
    seen = pulled_mode([first, second, tmp_path, tmp_path / "missing.jsonl"])
    assert seen == PulledServers(standalone=2, clustered=0)
    assert seen.mode == "single"
    assert pulled_mode([_write(tmp_path / "c.jsonl", _server("C1"))]).mode == "cluster"
    assert pulled_mode([first, tmp_path / "c.jsonl"]).mode is None  # mixed


@pytest.mark.parametrize(
    ("given", "servers", "mode", "note"),
    [
        (None, PulledServers(), "cluster", None),
        (None, PulledServers(standalone=1), "single", "judging in mode single"),
        (None, PulledServers(clustered=3), "cluster", "judging in mode cluster"),
        (None, PulledServers(standalone=1, clustered=3), "cluster", "give --mode"),
        ("cluster", PulledServers(standalone=1), "cluster", "warning: --mode cluster"),
        ("single", PulledServers(standalone=1), "single", None),
        ("single", PulledServers(), "single", None),
    ],
)
def test_mode_notes(
    given: str | None, servers: PulledServers, mode: str, note: str | None
) -> None:
    """A given --mode wins (warned when the records contradict it), else the records."""
    chosen, notes = mode_notes(given, servers)  # type: ignore[arg-type]
    assert chosen == mode
    if note is None:
        assert notes == []
    else:
        assert len(notes) == 1
        assert note in notes[0]


def test_check_of_a_standalone_pull_judges_a_single_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --mode: a standalone server's pull is not reported as a cluster going down."""
    path = _write(tmp_path / "pulled.jsonl", _server(""), STREAM, FLOW_CONSUMER)
    assert main(["check", str(path), "--target", "2.12.8"]) == 1
    captured = capsys.readouterr()
    assert "single mode" in captured.out
    assert "cluster down" not in captured.out
    assert "judging in mode single" in captured.err
    assert main(["check", str(path), "--target", "2.12.8", "--mode", "cluster"]) == 1
    captured = capsys.readouterr()
    assert "cluster down" in captured.out
    assert "warning: --mode cluster, but" in captured.err
    assert main(["check", str(path), "--rolling", "2.15.1..2.12.8"]) == 2
    assert "a single server has no rolling steps" in capsys.readouterr().err


def test_a_clustered_pull_keeps_cluster_mode_without_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records naming a cluster: cluster mode, said once on stderr, no warning."""
    path = _write(tmp_path / "pulled.jsonl", _server("C1"), STREAM)
    assert main(["check", str(path), "--target", "2.12.8"]) == 0
    err = capsys.readouterr().err
    assert "judging in mode cluster" in err
    assert "warning" not in err
