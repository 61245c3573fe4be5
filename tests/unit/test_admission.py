"""Tests for assetgate.requests.admission: refusals that depend on the assets a server holds."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import pytest

from assetgate.inventory.read import Asset
from assetgate.requests.admission import Conflict, admit
from assetgate.requests.validate import ApiError

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue
    from assetgate.requests.admission import Admission

OVERLAP: Final = ApiError(
    code=400, err_code=10065, description="subjects overlap with an existing stream"
)
NOT_FOUND: Final = ApiError(code=404, err_code=10059, description="stream not found")
NAME_IN_USE: Final = ApiError(
    code=400,
    err_code=10058,
    description="stream name already in use with a different configuration",
)
COUNTER_OFFLINE: Final = ApiError(
    code=500,
    err_code=10194,
    description='stream is offline: unsupported - config error: unknown field "allow_msg_counter"',
)
STOPPED_BY_CF: Final = ApiError(
    code=500,
    err_code=10194,
    description='stream is offline: stopped - unsupported consumer "CF"',
)


def _asset(name: str, config: dict[str, Any], *, stream: str | None = None) -> Asset:
    return Asset(
        source=f"test:{name}",
        kind="stream" if stream is None else "consumer",
        stream=stream or name,
        name=name,
        config=json.dumps(config).encode(),
    )


# ON: online; OFF: offline on 2.11.11 (a 2.12 field); UL: unloadable (bad enum);
# BAT: offline on 2.12.8 (a 2.14 field); H: stopped by its offline consumer CF
# (a forged level), with the supported consumer CS detached.
INVENTORY: Final = (
    _asset("ON", {"name": "ON", "subjects": ["a.>"]}),
    _asset("OFF", {"name": "OFF", "subjects": ["b.>"], "allow_msg_counter": True}),
    _asset("UL", {"name": "UL", "subjects": ["c.>"], "retention": "bogus"}),
    _asset("BAT", {"name": "BAT", "subjects": ["bat.>"], "allow_batched": True}),
    _asset("H", {"name": "H", "subjects": ["h.>"]}),
    _asset(
        "CF",
        {"durable_name": "CF", "metadata": {"_nats.req.level": "6"}},
        stream="H",
    ),
    _asset("CS", {"durable_name": "CS"}, stream="H"),
)


def _admit(
    catalogue: Catalogue,
    config: dict[str, Any],
    *,
    kind: str = "stream",
    target: str = "2.11.11",
    **kwargs: Any,
) -> Admission:
    return admit(
        INVENTORY,
        config,
        kind="stream" if kind == "stream" else "consumer",
        target=target,
        catalogue=catalogue,
        **kwargs,
    )


def _answer(
    admission: Admission,
) -> tuple[bool, ApiError | None, tuple[Conflict, ...]]:
    return admission.allowed, admission.error, admission.conflicts


# --- subject overlap ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subjects", "expected"),
    [
        (
            ["a.x"],
            (Conflict(stream="ON", subject="a.>", requested="a.x", offline=False),),
        ),
        (
            ["b.x"],
            (Conflict(stream="OFF", subject="b.>", requested="b.x", offline=True),),
        ),
        (
            ["a.x", "b.x"],
            (
                Conflict(stream="OFF", subject="b.>", requested="b.x", offline=True),
                Conflict(stream="ON", subject="a.>", requested="a.x", offline=False),
            ),
        ),
    ],
    ids=["online", "offline", "both-sorted-by-stream"],
)
def test_create_overlapping_a_stream_is_refused(
    catalogue: Catalogue, subjects: list[str], expected: tuple[Conflict, ...]
) -> None:
    """Creating a stream whose subjects overlap a kept stream gives 400/10065."""
    admission = _admit(catalogue, {"name": "N", "subjects": subjects})
    assert _answer(admission) == (False, OVERLAP, expected)


def test_create_overlapping_an_unloadable_stream_is_allowed(
    catalogue: Catalogue,
) -> None:
    """An unloadable stream vanished on the target, so its subjects are free."""
    admission = _admit(catalogue, {"name": "N", "subjects": ["c.x"]})
    assert _answer(admission) == (True, None, ())


def test_stream_named_with_a_dot_gets_no_reply_before_overlaps(
    catalogue: Catalogue,
) -> None:
    """A create of a name with a dot reaches no API handler: refused, no reply at all."""
    admission = _admit(catalogue, {"name": "a.x"})
    assert (_answer(admission), admission.validation.no_reply is not None) == (
        (False, None, ()),
        True,
    )


@pytest.mark.parametrize(
    ("where", "subjects"),
    [
        ({"account": "OTHER"}, ["a.x"]),
        ({"cluster": "c2"}, ["a.x"]),
        ({}, ["z.>"]),
    ],
    ids=["other-account", "other-cluster", "free-subject"],
)
def test_create_without_overlap_is_allowed(
    catalogue: Catalogue, where: dict[str, str], subjects: list[str]
) -> None:
    """Another account or cluster, or a free subject, is allowed."""
    admission = _admit(catalogue, {"name": "N", "subjects": subjects}, **where)
    assert _answer(admission) == (True, None, ())


# --- same-name create ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"name": "ON", "subjects": ["a.>"]}, (True, None, ())),
        ({"name": "ON", "subjects": ["a.b.>"]}, (False, NAME_IN_USE, ())),
    ],
    ids=["identical-is-idempotent", "different-is-10058"],
)
def test_same_name_create(
    catalogue: Catalogue,
    config: dict[str, Any],
    expected: tuple[bool, ApiError | None, tuple[Conflict, ...]],
) -> None:
    """Re-creating a stream with its config is allowed; with another config it is 10058."""
    assert _answer(_admit(catalogue, config)) == expected


# --- updates ------------------------------------------------------------------------------


def test_update_of_an_offline_stream(catalogue: Catalogue) -> None:
    """Updating an offline stream gives 500/10194 with its offline reason."""
    config = {"name": "OFF", "subjects": ["b.>"], "allow_msg_counter": True}
    admission = _admit(catalogue, config, op="update")
    assert (_answer(admission), admission.validation.accepted) == (
        (False, COUNTER_OFFLINE, ()),
        True,
    )


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        # decoding comes first: 2.12.8 rejects the unknown field before the offline check
        (
            {"name": "BAT", "subjects": ["bat.>"], "allow_batched": True},
            ApiError(
                code=400,
                err_code=10025,
                description='invalid JSON: json: unknown field "allow_batched"',
            ),
        ),
        # a body it can decode reaches the offline check
        (
            {"name": "BAT", "subjects": ["bat.>"]},
            ApiError(
                code=500,
                err_code=10194,
                description='stream is offline: unsupported - config error: unknown field "allow_batched"',
            ),
        ),
    ],
    ids=["unknown-field-10025", "known-fields-10194"],
)
def test_update_of_an_offline_stream_on_2_12_8(
    catalogue: Catalogue, config: dict[str, Any], expected: ApiError
) -> None:
    """On 2.12.8 the decode error wins over the offline error (observation item 6)."""
    admission = _admit(catalogue, config, op="update", target="2.12.8")
    assert _answer(admission) == (False, expected, ())


def test_update_of_a_stopped_stream(catalogue: Catalogue) -> None:
    """A stream stopped by its offline consumer refuses updates with the stopped reason."""
    admission = _admit(catalogue, {"name": "H", "subjects": ["h.>"]}, op="update")
    assert _answer(admission) == (False, STOPPED_BY_CF, ())


def test_update_of_a_missing_stream(catalogue: Catalogue) -> None:
    """Updating a stream that does not exist gives 404/10059."""
    admission = _admit(catalogue, {"name": "NOPE", "subjects": ["n.>"]}, op="update")
    assert _answer(admission) == (False, NOT_FOUND, ())


def test_update_of_an_online_stream_is_allowed(catalogue: Catalogue) -> None:
    """An online stream may be updated; its own subjects do not overlap itself."""
    admission = _admit(catalogue, {"name": "ON", "subjects": ["a.>"]}, op="update")
    assert _answer(admission) == (True, None, ())


def test_update_of_an_unloadable_stream_is_not_found(catalogue: Catalogue) -> None:
    """An unloadable stream is not on the server: updating it gives 404/10059."""
    admission = _admit(catalogue, {"name": "UL", "subjects": ["c.>"]}, op="update")
    assert _answer(admission) == (False, NOT_FOUND, ())


# --- consumers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "name", "expected"),
    [
        ("ON", "NEW", (True, None, ())),
        ("H", "NEW", (False, STOPPED_BY_CF, ())),
        # The offline consumer CF stopped its stream H, and the server looks the
        # stream up (and checks it for offline, 10194) before it looks at the
        # consumer, so re-creating CF answers 10194, never 10195.
        ("H", "CF", (False, STOPPED_BY_CF, ())),
        # A supported consumer of the stopped stream is detached: same answer.
        ("H", "CS", (False, STOPPED_BY_CF, ())),
        ("OFF", "NEW", (False, COUNTER_OFFLINE, ())),
        ("UL", "NEW", (False, NOT_FOUND, ())),
        ("NOPE", "NEW", (False, NOT_FOUND, ())),
    ],
    ids=[
        "online-stream",
        "stopped-stream",
        "offline-consumer-recreated",
        "detached-consumer-recreated",
        "offline-stream",
        "unloadable-stream",
        "missing-stream",
    ],
)
def test_consumer_create(
    catalogue: Catalogue,
    stream: str,
    name: str,
    expected: tuple[bool, ApiError | None, tuple[Conflict, ...]],
) -> None:
    """A consumer create is refused on offline, stopped, unloadable or missing streams."""
    config = {"durable_name": name, "ack_policy": "explicit"}
    admission = _admit(catalogue, config, kind="consumer", stream=stream)
    assert _answer(admission) == expected


def test_consumer_decode_error_comes_first(catalogue: Catalogue) -> None:
    """A consumer body the target cannot decode is refused with 10025, not 10194."""
    config = {"durable_name": "NEW", "ack_policy": "flow_control"}
    admission = _admit(catalogue, config, kind="consumer", stream="H")
    error = admission.error
    assert (admission.allowed, error.err_code if error else None) == (False, 10025)


def test_inventory_paths_are_read(catalogue: Catalogue, tmp_path: Path) -> None:
    """admit() reads inventory files like check() does."""
    path = tmp_path / "inv.jsonl"
    path.write_text(
        '{"kind":"stream","config":{"name":"ON","subjects":["a.>"]}}\n',
        encoding="utf-8",
    )
    admission = admit(
        [path],
        {"name": "N", "subjects": ["a.b"]},
        kind="stream",
        target="2.12.8",
        catalogue=catalogue,
    )
    conflict = Conflict(stream="ON", subject="a.>", requested="a.b", offline=False)
    assert _answer(admission) == (False, OVERLAP, (conflict,))
