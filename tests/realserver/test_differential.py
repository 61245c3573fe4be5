"""Seeded random creates against real servers: every reply is the one validate predicts.

For each release and kind, one fresh standalone server (with the small storage limits
validate is given too) receives ``ASSETGATE_DIFF_N`` create requests built by
``tests/support/differential.py`` from ``ASSETGATE_DIFF_SEED``, one at a time. Each
reply must equal validate's prediction under ``differential.differences``; requests
validate predicts a crash or no reply for are not sent, only counted. A failure lists
every mismatch with its release, the exact request bytes (and the stream a consumer
was created on), the reply and the prediction: a ready reproduction.

The defaults keep the file under a minute on two cores; ``make fuzz-servers`` runs it
with many more requests (see docs/validator.md, "Differential test").
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import msgspec
import nats.errors
import pytest

import assetgate
from tests.support import differential
from tests.support.natsserver import Client, NatsServer, NatsServerError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue

VERSIONS: Final = ("2.10.26", "2.11.11", "2.12.8", "2.14.6", "2.15.1")
KINDS: Final[tuple[differential.Kind, ...]] = ("stream", "consumer")
DEFAULT_N: Final = 5000
DEFAULT_SEED: Final = 1
REPLY_TIMEOUT_S: Final = 5.0


def _setting(name: str, default: int) -> int:
    """An integer from the environment, or ``default`` when unset or empty."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name}: not an integer: {text!r}") from None


N: Final = _setting("ASSETGATE_DIFF_N", DEFAULT_N)
"""Requests per release and kind."""

SEED: Final = _setting("ASSETGATE_DIFF_SEED", DEFAULT_SEED)
"""The seed every case is derived from (with its release, kind and index)."""


@dataclass
class _Tally:
    """What one run sent, skipped, and found different."""

    sent: int = 0
    skipped: int = 0
    mismatches: list[str] = field(default_factory=list)


_LONG_RUN: Final = re.compile(r"(.)\1{31,}", re.DOTALL)


def _shown(value: Any) -> str:
    """A JSON value for the failure report, long runs of one character abbreviated."""
    text = json.dumps(value, ensure_ascii=False)
    return _LONG_RUN.sub(lambda m: f"<{m.group(1)!r} x {len(m.group(0))}>", text)


def _predicted(prediction: assetgate.Validation) -> dict[str, Any]:
    """The parts of a prediction the comparison looks at."""
    return {
        "accepted": prediction.accepted,
        "error": msgspec.to_builtins(prediction.error),
        "check": prediction.check,
        "stored_config": prediction.stored_config,
        "response_metadata": prediction.response_metadata,
        "stamped_metadata": prediction.stamped_metadata,
    }


def _report(
    case: differential.Case, reply: Any, predicted: Any, found: list[str]
) -> str:
    """One mismatch, as a reproduction: release, exact bytes, reply, prediction."""
    lines = [
        f"--- nats-server {case.version} {case.kind} #{case.index}, seed {SEED}",
        f"subject:   {case.subject}",
        f"request:   {differential.bytes_literal(case.request)}",
    ]
    if case.base is not None:
        base = json.dumps(differential.BASE_STREAMS[case.base]).encode()
        lines.append(f"stream:    {differential.bytes_literal(base)} (created first)")
    lines += [f"reply:     {_shown(reply)}", f"predicted: {_shown(predicted)}"]
    lines += [f"differs:   {line}" for line in found]
    return "\n".join(lines)


FLEETING_NS: Final = 10_000_000_000
"""An inactive_threshold below this (10 s) may remove a consumer before it is read."""


def _fleeting(reply: Mapping[str, Any]) -> bool:
    """Whether an accepted consumer may be removed for inactivity before it is read."""
    threshold = (reply.get("config") or {}).get("inactive_threshold") or 0
    return isinstance(threshold, int) and 0 < threshold < FLEETING_NS


def _gone(reply: Mapping[str, Any]) -> bool:
    """Whether an API reply says the consumer does not exist (404/10014)."""
    error = reply.get("error") or {}
    return bool(error.get("err_code") == CONSUMER_NOT_FOUND)


CONSUMER_NOT_FOUND: Final = 10014


class _Run:
    """One release and kind on one server: send each case, compare, clean up."""

    def __init__(
        self, client: Client, version: str, kind: differential.Kind, cat: Catalogue
    ) -> None:
        """Prepare the run: the anchor stream, and a consumer run's streams."""
        self.client = client
        self.version = version
        self.kind: differential.Kind = kind
        self.catalogue = cat
        self.fields = differential.known_fields(cat, version, kind)
        self.streams: dict[str, dict[str, Any]] = {}
        self.tally = _Tally()
        anchor = differential.ANCHOR_STREAM
        self._create(anchor["name"], anchor)
        if kind == "consumer":
            for name, config in differential.BASE_STREAMS.items():
                self._create(name, config)
                info = self._ok(f"$JS.API.STREAM.INFO.{name}", b"")
                self.streams[name] = info["config"]

    def _create(self, name: str, config: Mapping[str, Any]) -> None:
        """Create a stream the run needs."""
        self._ok(f"$JS.API.STREAM.CREATE.{name}", json.dumps(config).encode())

    def _ok(self, subject: str, payload: bytes) -> dict[str, Any]:
        """A request the harness needs to succeed (setup, INFO, delete)."""
        reply = self.client.request_api(subject, payload)
        if "error" in reply:
            pytest.fail(f"{self.version}: {subject} failed: {reply}", pytrace=False)
        return reply

    def _predict(self, case: differential.Case) -> assetgate.Validation:
        """Validate's answer to ``case``, with the stream or limits the server has."""
        if case.base is None:
            return assetgate.validate(
                case.config,
                kind="stream",
                server=self.version,
                limits=differential.LIMITS,
                catalogue=self.catalogue,
            )
        return assetgate.validate(
            case.config,
            kind="consumer",
            server=self.version,
            stream=self.streams[case.base],
            catalogue=self.catalogue,
        )

    def _read_back(self, case: differential.Case, reply: dict[str, Any]) -> Any:
        """After an acceptance: INFO, then delete it, so the next case starts clean."""
        if case.base is None:
            api, asset = "STREAM", reply["config"]["name"]
        else:  # an unnamed consumer's name is the one the server made up
            api, asset = "CONSUMER", f"{case.base}.{reply['name']}"
        # a consumer with a short inactive_threshold and no interest may be gone
        # already: then its create reply stands for INFO, and there is none to delete
        fleeting = case.base is not None and _fleeting(reply)
        info = self.client.request_api(f"$JS.API.{api}.INFO.{asset}", b"")
        if fleeting and _gone(info):
            return {"config": reply.get("config") or {}}
        if "error" in info:
            pytest.fail(f"{self.version}: {api} INFO {asset} failed: {info}")
        deleted = self.client.request_api(f"$JS.API.{api}.DELETE.{asset}", b"")
        if "error" in deleted and not (fleeting and _gone(deleted)):
            pytest.fail(f"{self.version}: {api} DELETE {asset} failed: {deleted}")
        return info

    def send(self, index: int) -> bool:
        """Run case ``index``; False when the server stopped answering."""
        case = differential.make_case(SEED, self.version, self.kind, index, self.fields)
        try:
            prediction = self._predict(case)
        except Exception as exc:  # noqa: BLE001 (a raising validate is a finding too)
            self.tally.mismatches.append(
                _report(case, None, repr(exc), ["validate raised"])
            )
            return True
        if prediction.server_crash is not None or prediction.no_reply is not None:
            self.tally.skipped += 1
            return True
        self.tally.sent += 1
        predicted = _predicted(prediction)
        try:
            reply = self.client.request_api(case.subject, case.request)
        except (TimeoutError, nats.errors.Error, NatsServerError) as exc:
            found = [f"no reply: {exc!r}"]
            self.tally.mismatches.append(_report(case, None, predicted, found))
            return False
        info = self._read_back(case, reply) if "error" not in reply else None
        found = differential.differences(case, prediction, reply, info)
        if found:
            self.tally.mismatches.append(_report(case, reply, predicted, found))
        return True


@pytest.mark.realserver
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_random_creates_match_prediction(
    tmp_path: Path, catalogue: Catalogue, version: str, kind: differential.Kind
) -> None:
    """Every seeded random create on a fresh server gets exactly validate's predicted reply."""
    with (
        NatsServer(
            version,
            tmp_path / "store",
            jetstream_config=differential.JETSTREAM_LIMITS,
        ) as server,
        Client(server.url, timeout=REPLY_TIMEOUT_S) as client,
    ):
        run = _Run(client, version, kind, catalogue)
        for index in range(N):
            if not run.send(index):
                break
    tally = run.tally
    summary = (
        f"{len(tally.mismatches)} of {tally.sent} replies differ from validate's "
        f"prediction (nats-server {version}, {kind}, ASSETGATE_DIFF_SEED={SEED}, "
        f"ASSETGATE_DIFF_N={N}; {tally.skipped} not sent: crash or no reply predicted)"
    )
    differing = len(tally.mismatches)
    assert differing == 0, "\n".join([summary, *tally.mismatches])
    assert tally.sent + tally.skipped == N, summary


# --- the generators alone (no server) ------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_case_depends_on_its_coordinates_only(
    catalogue: Catalogue, kind: differential.Kind
) -> None:
    """A case is rebuilt alone from (seed, version, kind, index), and the index names it."""
    fields = differential.known_fields(catalogue, "2.12.8", kind)
    first = [differential.make_case(7, "2.12.8", kind, i, fields) for i in range(50)]
    again = differential.make_case(7, "2.12.8", kind, 42, fields)
    other_seed = differential.make_case(8, "2.12.8", kind, 42, fields)
    assert (again, other_seed.request != again.request) == (first[42], True)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", VERSIONS)
def test_cases_use_known_fields(
    catalogue: Catalogue, version: str, kind: differential.Kind
) -> None:
    """A generated config sets only fields its release knows, and the one unknown field."""
    fields = differential.known_fields(catalogue, version, kind)
    used = {
        key
        for index in range(300)
        for key in json.loads(
            differential.make_case(SEED, version, kind, index, fields).config
        )
    }
    assert used - fields <= {"no_such_field"}


def test_long_consumer_names_need_a_durable_or_memory() -> None:
    """A non-durable name over 255 bytes is only generated on the memory stream."""
    fields = frozenset({"ack_policy"})
    cases = [
        differential.make_case(SEED, "2.12.8", "consumer", index, fields)
        for index in range(3000)
    ]
    bases = {
        case.base
        for case in cases
        if len(json.loads(case.config).get("name", "").encode()) > 255
    }
    assert bases == {"CBI"}


def test_bytes_literal_abbreviates_runs() -> None:
    """Runs of 32 or more equal bytes are written as a repetition, the rest as is."""
    data = b'{"a":"' + b"v" * 40 + b'"}'
    assert differential.bytes_literal(data) == "b'{\"a\":\"' + b'v' * 40 + b'\"}'"
