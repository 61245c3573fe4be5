"""Hostile records never stop a run: every one is judged or reported, the rest go on."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

import pytest

import assetgate
from assetgate.decoding.goscan import go_atoi

if TYPE_CHECKING:
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue

_HUGE: Final = "9" * 4301  # past Python's int-string conversion limit (4,300 digits)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_HUGE, None),
        ("-" + _HUGE, None),
        ("0" * 5000 + "7", 7),
        ("9223372036854775807", 9223372036854775807),
        ("9223372036854775808", None),
        ("-9223372036854775808", -9223372036854775808),
    ],
    ids=[
        "huge",
        "huge-negative",
        "leading-zeros",
        "int64-max",
        "int64-max+1",
        "int64-min",
    ],
)
def test_go_atoi_never_meets_the_interpreter_limit(
    text: str, expected: int | None
) -> None:
    """go_atoi answers as strconv.Atoi for numbers of any length (ErrRange: None)."""
    assert go_atoi(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2147483647", 2147483647), ("2147483648", None), ("-2147483648", -2147483648)],
    ids=["int32-max", "int32-max+1", "int32-min"],
)
def test_go_atoi_32_bits(text: str, expected: int | None) -> None:
    """go_atoi(text, 32) answers as strconv.ParseInt(text, 10, 32)."""
    assert go_atoi(text, 32) == expected


@pytest.mark.parametrize("destination", ["b.{{wildcard(%s)}}", "b.{{partition(1,%s)}}"])
def test_a_huge_mapping_index_is_refused_as_go_refuses_an_out_of_range_one(
    destination: str,
) -> None:
    """A transform index past the interpreter's limit is answered like one past int64."""

    def reply(number: str) -> tuple[bool, int | None]:
        config = {
            "name": "S",
            "subjects": ["a.*"],
            "subject_transform": {"src": "a.*", "dest": destination % number},
        }
        result = assetgate.validate(config, kind="stream", server="2.12.8")
        return result.accepted, (result.error.err_code if result.error else None)

    assert reply(_HUGE) == reply("9223372036854775808")
    assert reply(_HUGE)[0] is False


def _record(name: str, config_json: str) -> str:
    return (
        f'{{"kind":"stream","stream":"{name}","name":"{name}","config":{config_json}}}'
    )


def test_hostile_records_do_not_stop_the_run(
    catalogue: Catalogue, tmp_path: Path
) -> None:
    """A huge stamp, a 495-deep value, a huge number and a lone surrogate: all accounted for."""
    lines = [
        _record("A", json.dumps({"name": "A", "metadata": {"_nats.req.level": _HUGE}})),
        _record("B", '{"name":"B","storage":' + "[" * 495 + "]" * 495 + "}"),
        _record("C", '{"name":"C","retention":"\\udc00"}'),
        _record("D", '{"name":"D","max_age":' + _HUGE + "}"),
        _record("F", '{"name":"F"}'),
    ]
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for target in ("2.10.26", "2.12.8"):
        report = assetgate.check(
            [path], target=target, mode="single", catalogue=catalogue
        )
        summary = report.summary
        states = {v.name: v.state for v in report.assets}
        assert (summary.records, summary.assets + summary.errors + summary.ignored) == (
            5,
            5,
        )
        assert (states["F"], states["B"]) == ("online", "unloadable")


def _cyclic() -> dict[str, object]:
    config: dict[str, object] = {"name": "S"}
    config["self"] = config
    return config


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        (
            {"server": None},
            assetgate.InvalidServerVersion,
            "invalid server version: None",
        ),
        ({"kind": "queue"}, assetgate.InvalidArgument, "invalid kind: 'queue'"),
        ({"op": "delete"}, assetgate.InvalidArgument, "invalid operation: 'delete'"),
        (
            {"config": _cyclic()},
            assetgate.InvalidArgument,
            "config is not JSON-encodable",
        ),
    ],
    ids=["server-none", "kind-queue", "op-delete", "cyclic-mapping"],
)
def test_api_misuse_raises_the_projects_errors(
    changes: dict[str, object], error: type[Exception], message: str
) -> None:
    """Validate's caller mistakes raise assetgate's own errors, with a message."""
    arguments: dict[str, object] = {
        "config": {"name": "S"},
        "kind": "stream",
        "server": "2.12.8",
    }
    arguments.update(changes)
    config = arguments.pop("config")
    with pytest.raises(error, match=message):
        assetgate.validate(config, **arguments)  # type: ignore[arg-type]


def test_lone_surrogate_enum_value_is_answered() -> None:
    """A lone surrogate escape in an enum value gets the server's reply, no exception."""
    result = assetgate.validate(
        b'{"name":"S","retention":"\\udc00"}', kind="stream", server="2.12.8"
    )
    assert (result.accepted, result.error and result.error.err_code) == (False, 10025)


@pytest.mark.parametrize("target", ["2.10.26", "2.12.8"])
def test_huge_numbers_are_judged_as_go_does(
    catalogue: Catalogue, tmp_path: Path, target: str
) -> None:
    """A huge number in an unknown field is skipped; in an int64 field Go refuses it."""
    lines = [
        _record("E", '{"name":"E","unknown_x":' + _HUGE + "}"),
        _record("D", '{"name":"D","max_age":' + _HUGE + "}"),
    ]
    path = tmp_path / "numbers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = assetgate.check([path], target=target, mode="single", catalogue=catalogue)
    verdicts = {v.name: v for v in report.assets}
    assert (
        verdicts["E"].state != "unloadable",
        verdicts["D"].state,
        (verdicts["D"].reason or "").startswith("json: cannot unmarshal number 9999"),
    ) == (True, "unloadable", True)
