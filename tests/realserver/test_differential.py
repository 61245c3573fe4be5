"""Seeded random creates against real servers: every reply is the one validate predicts.

For each release and kind, one fresh standalone server (with the small storage limits
validate is given too) receives ``ASSETGATE_DIFF_N`` create requests built by
``tests/support/differential.py`` from ``ASSETGATE_DIFF_SEED``, one at a time. Each
reply must equal validate's prediction under ``differential.differences``; requests
validate predicts a crash or no reply for are not sent, only counted. A failure lists
every mismatch with its release, the exact request bytes (and the stream a consumer
was created on), the reply and the prediction: a ready reproduction.

The cluster variant does the same on one fresh 3-node cluster per release (both
kinds, ``ASSETGATE_DIFF_CLUSTER_N`` requests each, replicated assets among them) with
validate's ``mode="cluster"``; the answers validate does not predict yet are listed in
``KNOWN_CLUSTER_MISMATCHES``, counted and not failed.

The defaults keep each variant around a minute on two cores; ``make fuzz-servers`` runs
them with many more requests (see docs/validator.md, "Differential test").

Size: over the ~400-line guide because both variants share the run and its report,
and the table of known cluster mismatches is read next to them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec
import nats.errors
import pytest

import assetgate
from tests.support import differential
from tests.support.natscluster import NatsCluster, request_placed
from tests.support.natsserver import Client, NatsServer, NatsServerError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from pathlib import Path

    from assetgate.catalogue.levels import Catalogue

VERSIONS: Final = ("2.10.26", "2.11.11", "2.12.8", "2.14.6", "2.15.1")
KINDS: Final[tuple[differential.Kind, ...]] = ("stream", "consumer")
DEFAULT_N: Final = 5000
DEFAULT_SEED: Final = 1
REPLY_TIMEOUT_S: Final = 5.0
CLUSTER_REPLY_TIMEOUT_S: Final = 10.0


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

DEFAULT_CLUSTER_N: Final = 500
CLUSTER_N: Final = _setting("ASSETGATE_DIFF_CLUSTER_N", DEFAULT_CLUSTER_N)
"""Requests per release and kind on a 3-node cluster."""


def _cluster_versions() -> tuple[str, ...]:
    """The releases the cluster variant runs: ``ASSETGATE_DIFF_CLUSTER_VERSIONS``.

    ``all`` (what ``make fuzz-servers`` sets) or a comma-separated list; by default
    every release but 2.10.26, whose clusters at times fail a run in a way not yet
    understood (about one full run in six at N=500, not reproduced alone; see
    :func:`_lost_refusal` for the part that is understood).
    """
    text = os.environ.get("ASSETGATE_DIFF_CLUSTER_VERSIONS", "").strip()
    if text == "all":
        return VERSIONS
    if not text:
        return tuple(v for v in VERSIONS if v != "2.10.26")
    chosen = tuple(v.strip() for v in text.split(",") if v.strip())
    unknown = sorted(set(chosen) - set(VERSIONS))
    if unknown:
        raise ValueError(
            f"ASSETGATE_DIFF_CLUSTER_VERSIONS: not in {VERSIONS}: {unknown}"
        )
    return chosen


CLUSTER_VERSIONS: Final = _cluster_versions()
"""The releases whose 3-node clusters the cluster variant runs."""


@dataclass
class _Tally:
    """What one run sent, skipped, and found different."""

    sent: int = 0
    skipped: int = 0
    mismatches: list[str] = field(default_factory=list)
    known: dict[str, int] = field(default_factory=dict)
    """Mismatches of a class in ``KNOWN_CLUSTER_MISMATCHES``, by class."""
    placement_retries: int = 0
    """Creates asked again after an unpredicted 10005 (cluster runs; harness, not found)."""


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
        f"--- nats-server {case.version} {case.kind} #{case.index}, seed {SEED}"
        + (" (3-node cluster)" if case.cluster else ""),
        f"subject:   {case.subject}",
        f"request:   {differential.bytes_literal(case.request)}",
    ]
    if case.base is not None:
        config = differential.base_stream(case.base, cluster=case.cluster)
        base = json.dumps(config).encode()
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
    """Whether an API reply says the asset does not exist (404/10014 or 404/10059)."""
    error = reply.get("error") or {}
    return error.get("err_code") in NOT_FOUND


NOT_FOUND: Final = frozenset({10014, 10059})  # consumer, stream not found
NO_PEERS: Final = 10005
"""``no suitable peers for placement``: a cluster's answer for what it cannot place."""
PLACEMENT_TRIES: Final = 5
PLACEMENT_PAUSE_S: Final = 0.2


def _peer_offline(reply: Mapping[str, Any]) -> bool:
    """A 10005 because the meta leader has not heard from a peer (yet): harness timing."""
    error = reply.get("error") or {}
    return error.get("err_code") == NO_PEERS and "offline" in error.get(
        "description", ""
    )


class _Run:
    """One release and kind on one server or cluster: send each case, compare, clean up."""

    def __init__(
        self,
        client: Client,
        version: str,
        kind: differential.Kind,
        cat: Catalogue,
        cluster: NatsCluster | None = None,
    ) -> None:
        """Prepare the run: the anchor stream, and a consumer run's streams.

        On a cluster the anchor is R3 and created with ``request_placed``: once it is
        placed, the meta leader has heard from every peer. Streams an earlier run on
        the same cluster left are deleted first.
        """
        self.client = client
        self.version = version
        self.kind: differential.Kind = kind
        self.catalogue = cat
        self.cluster = cluster
        self.fields = differential.known_fields(cat, version, kind)
        self.streams: dict[str, dict[str, Any]] = {}
        self.tally = _Tally()
        anchor = differential.ANCHOR_STREAM
        if cluster is None:
            self._create(anchor["name"], anchor)
        else:
            self._place_anchor(cluster)
        if kind == "consumer":
            for name in differential.BASE_STREAMS:
                config = differential.base_stream(name, cluster=cluster is not None)
                self._create(name, config)
                info = self._ok(f"$JS.API.STREAM.INFO.{name}", b"")
                self.streams[name] = info["config"]

    def _place_anchor(self, cluster: NatsCluster) -> None:
        """Create the R3 anchor once every peer is heard from; drop other streams."""
        anchor = {**differential.ANCHOR_STREAM, "num_replicas": 3}
        name = anchor["name"]
        subject = f"$JS.API.STREAM.CREATE.{name}"
        reply = request_placed(self.client, subject, anchor, cluster=cluster)
        if "error" in reply:  # an equal create of an existing anchor succeeds
            pytest.fail(f"{self.version}: {subject} failed: {reply}", pytrace=False)
        names = self._ok("$JS.API.STREAM.NAMES", b"").get("streams") or []
        for old in names:
            if old != name:
                self._ok(f"$JS.API.STREAM.DELETE.{old}", b"")

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
        mode: Literal["single", "cluster"] = (
            "single" if self.cluster is None else "cluster"
        )
        if case.base is None:
            return assetgate.validate(
                case.config,
                kind="stream",
                server=self.version,
                mode=mode,
                limits=differential.LIMITS if self.cluster is None else None,
                catalogue=self.catalogue,
            )
        return assetgate.validate(
            case.config,
            kind="consumer",
            server=self.version,
            mode=mode,
            stream=self.streams[case.base],
            catalogue=self.catalogue,
        )

    def _ask(self, case: differential.Case) -> Any:
        """Send ``case``; on a cluster, ask again (bounded) while a peer seems offline."""
        tries = 1 if self.cluster is None else PLACEMENT_TRIES
        for attempt in range(1, tries + 1):
            reply = self.client.request_api(case.subject, case.request)
            if not _peer_offline(reply) or attempt == tries:
                return reply
            self.tally.placement_retries += 1
            time.sleep(PLACEMENT_PAUSE_S)
        raise AssertionError("unreachable")  # pragma: no cover

    def _read_back(self, case: differential.Case, reply: dict[str, Any]) -> Any:
        """After an acceptance: INFO, then delete it, so the next case starts clean."""
        if case.base is None:
            api, asset = "STREAM", reply["config"]["name"]
        else:  # an unnamed consumer's name is the one the server made up
            api, asset = "CONSUMER", f"{case.base}.{reply['name']}"
        # a consumer with a short inactive_threshold and no interest may be gone
        # already: then its create reply stands for INFO, and there is none to delete
        fleeting = case.base is not None and _fleeting(reply)
        if case.cluster and case.base is not None and _config(case).get("direct"):
            # a direct consumer lives on the stream leader alone, unknown to the meta
            # layer: INFO and DELETE answer 404 (or not at all); it goes when inactive
            return {"config": reply.get("config") or {}}
        info = self.client.request_api(f"$JS.API.{api}.INFO.{asset}", b"")
        if fleeting and _gone(info):
            return {"config": reply.get("config") or {}}
        if "error" in info:
            pytest.fail(f"{self.version}: {api} INFO {asset} failed: {info}")
        deleted = self.client.request_api(f"$JS.API.{api}.DELETE.{asset}", b"")
        # the delete only cleans up: an asset already gone is cleaned up (seen once in
        # a 2.12.8 cluster, a durable consumer read by INFO just before: 404/10014)
        if "error" in deleted and not _gone(deleted):
            pytest.fail(f"{self.version}: {api} DELETE {asset} failed: {deleted}")
        return info

    def _forget(self, case: differential.Case) -> None:
        """Delete, if it is there, a stream whose refusal never came (best effort).

        The meta layer may keep the assignment: the stream then claims its subjects
        (its name, when it has none) and later creates overlap it (10065).
        """
        name = _config(case).get("name")
        if not isinstance(name, str) or not name:
            return
        with contextlib.suppress(TimeoutError, nats.errors.Error, NatsServerError):
            self.client.request_api(f"$JS.API.STREAM.DELETE.{name}", b"")

    def send(self, index: int) -> bool:
        """Run case ``index``; False when the server stopped answering."""
        case = differential.make_case(
            SEED,
            self.version,
            self.kind,
            index,
            self.fields,
            cluster=self.cluster is not None,
        )
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
            reply = self._ask(case)
        except (TimeoutError, nats.errors.Error, NatsServerError) as exc:
            if case.cluster and _lost_refusal(case, prediction):
                self.tally.known[LOST_REFUSAL] = (
                    self.tally.known.get(LOST_REFUSAL, 0) + 1
                )
                self._forget(case)
                return True
            found = [f"no reply: {exc!r}"]
            self.tally.mismatches.append(_report(case, None, predicted, found))
            return False
        made = "error" not in reply and "config" in reply
        info = self._read_back(case, reply) if made else None
        found = differential.differences(case, prediction, reply, info)
        known = _known(case, reply, found) if found and case.cluster else None
        if known is not None:
            self.tally.known[known] = self.tally.known.get(known, 0) + 1
        elif found:
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


# --- the same on a 3-node cluster -----------------------------------------------------


def _config(case: differential.Case) -> dict[str, Any]:
    """The case's config as JSON (``{}`` when it is not an object)."""
    config = json.loads(case.config)
    return config if isinstance(config, dict) else {}


def _refused(reply: Mapping[str, Any], err_code: int, start: str) -> bool:
    """The reply is error ``err_code`` whose description starts with ``start``."""
    error = reply.get("error") or {}
    text = error.get("description")
    return error.get("err_code") == err_code and str(text).startswith(start)


def _negative(value: object) -> bool:
    """A JSON integer below zero."""
    return type(value) is int and value < 0


def _placement_assumed(case: differential.Case) -> bool:
    """Validate's cluster-mode answer says it assumes the stream can be placed."""
    prediction = assetgate.validate(
        case.config, kind="stream", server=case.version, mode="cluster"
    )
    return any(line.startswith("stream.placement:") for line in prediction.assumed)


def _over_cluster_size(
    case: differential.Case, reply: Mapping[str, Any], found: list[str]
) -> bool:
    """A stream of 4 or 5 replicas on 3 nodes: placement fails."""
    del found
    return _config(case).get("num_replicas") in {4, 5} and _unplaced(case, reply)


def _placement_unmet(
    case: differential.Case, reply: Mapping[str, Any], found: list[str]
) -> bool:
    """A placement naming another cluster or tags no node has: placement fails."""
    del found
    placement = _config(case).get("placement")
    if not isinstance(placement, dict):
        return False
    elsewhere = placement.get("cluster") not in {None, "", "C1"}
    return (elsewhere or bool(placement.get("tags"))) and _unplaced(case, reply)


def _unplaced(case: differential.Case, reply: Mapping[str, Any]) -> bool:
    """A stream create a cluster could not place, and validate said it assumed it could."""
    return (
        case.kind == "stream"
        and _refused(reply, NO_PEERS, "no suitable peers for placement")
        and _placement_assumed(case)
    )


def _delete_answer(
    case: differential.Case, reply: Mapping[str, Any], found: list[str]
) -> bool:
    """A consumer create answered by the delete of the consumer it failed to make."""
    del found
    return case.kind == "consumer" and str(reply.get("type")).endswith(
        "consumer_delete_response"
    )


@dataclass(frozen=True)
class KnownMismatch:
    """A class of cluster answers validate does not predict yet (to be fixed there)."""

    name: str
    """Short id, shown in the test's summary."""
    matches: Callable[[differential.Case, Mapping[str, Any], list[str]], bool]
    """Whether a differing answer is of the class (request, reply, differences)."""


KNOWN_CLUSTER_MISMATCHES: Final[tuple[KnownMismatch, ...]] = (
    # createGroupForStream -> selectPeerGroup finds 3 peers for R4/R5
    # (server/jetstream_cluster.go:7587-7616, 7492-7501 at v2.12.8): 400/10005, after
    # checkStreamCfg but before the stream leader's addStream checks
    KnownMismatch("stream-replicas-over-cluster-size", _over_cluster_size),
    # the same, for placement.cluster other than the cluster's name ("c1", "nope")
    # and placement.tags no node has (", tags not matched ['a']"); both environment
    # facts validate cannot know: a match needs its assumed to say so (stream.placement)
    KnownMismatch("placement-unmet", _placement_unmet),
    # a consumer the consumer leader refuses after the meta leader assigned it: the meta
    # leader sends the error and proposes a delete carrying the create's reply subject
    # (processConsumerAssignmentResults, server/jetstream_cluster.go:5845-5881 at
    # v2.11.11); the delete's {"success": true} at times arrives first (once in 2,500:
    # 2.11.11 consumer #1679, durable "c1679>", seed 1; not reproduced alone)
    KnownMismatch("create-answered-by-delete", _delete_answer),
)
"""Cluster answers validate gets wrong today, each class exactly (docs/validator.md).

A mismatch of a class here is counted in the summary, not failed; any other fails.
"""


LOST_REFUSAL: Final = "stream-leader-refusal-unanswered"
STREAM_CREATE_FAILED: Final = 10049


def _lost_refusal(case: differential.Case, prediction: assetgate.Validation) -> bool:
    """A 2.10/2.11 stream its leader refuses to add (500/10049): at times never answered.

    The meta leader accepts the assignment, the stream leader fails to add the stream
    (a transform, template_owner) and reports it; the meta leader answers from that
    report (processStreamAssignmentResults, server/jetstream_cluster.go at v2.10.26).
    Seen on 2.10.26 in about one run in three (seed 1: stream #249 and #2424, a
    transform; #368, template_owner) and on 2.11.11 (seed 1: stream #22,
    template_owner; one full run in two on a loaded machine), with no reply in 10 s
    while the same request alone is answered at once: timing inside the server, not
    modelled; the run goes on.
    """
    error = prediction.error
    return (
        case.version.startswith(("2.10.", "2.11."))
        and case.kind == "stream"
        and error is not None
        and error.err_code == STREAM_CREATE_FAILED
    )


def _known(
    case: differential.Case, reply: Mapping[str, Any], found: list[str]
) -> str | None:
    """The ``KNOWN_CLUSTER_MISMATCHES`` class a differing answer belongs to, if any."""
    for known in KNOWN_CLUSTER_MISMATCHES:
        if known.matches(case, reply, found):
            return known.name
    return None


@pytest.fixture(scope="module", params=CLUSTER_VERSIONS)
def cluster_client(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[NatsCluster, Client]]:
    """One fresh 3-node cluster per release (both kinds), and a client of node n1."""
    version: str = request.param
    base = tmp_path_factory.mktemp(f"diffcluster-{version}")
    with (
        NatsCluster(
            version, base, jetstream_config=differential.CLUSTER_JETSTREAM_LIMITS
        ) as cluster,
        Client(cluster.url, timeout=CLUSTER_REPLY_TIMEOUT_S) as client,
    ):
        yield cluster, client


@pytest.mark.realserver
@pytest.mark.parametrize("kind", KINDS)
def test_random_creates_match_prediction_in_a_cluster(
    cluster_client: tuple[NatsCluster, Client],
    catalogue: Catalogue,
    kind: differential.Kind,
) -> None:
    """Every seeded random create on a 3-node cluster gets validate's cluster-mode reply."""
    cluster, client = cluster_client
    version = cluster.version
    run = _Run(client, version, kind, catalogue, cluster)
    for index in range(CLUSTER_N):
        if not run.send(index):
            break
    tally = run.tally
    summary = (
        f"{len(tally.mismatches)} of {tally.sent} replies differ from validate's "
        f"prediction (nats-server {version}, 3-node cluster, {kind}, "
        f"ASSETGATE_DIFF_SEED={SEED}, ASSETGATE_DIFF_CLUSTER_N={CLUSTER_N}; "
        f"{tally.skipped} not sent: crash or no reply predicted; known mismatches "
        f"{tally.known or 'none'}; {tally.placement_retries} placement retries)"
    )
    print(summary)  # noqa: T201 (the counts, with -s)
    assert tally.mismatches == [], "\n".join([summary, *tally.mismatches])
    assert tally.sent + tally.skipped == CLUSTER_N, summary


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


@pytest.mark.parametrize("kind", KINDS)
def test_cluster_cases_add_replicas_to_single_ones(
    catalogue: Catalogue, kind: differential.Kind
) -> None:
    """A cluster case differs from its single one in replicas, placement, max_bytes, direct.

    ``direct`` only by its removal, on the streams one leftover consumer would change.
    """
    fields = differential.known_fields(catalogue, "2.12.8", kind)
    changed: set[str] = set()
    replicas: set[object] = set()
    for index in range(400):
        single = differential.make_case(SEED, "2.12.8", kind, index, fields)
        clustered = differential.make_case(
            SEED, "2.12.8", kind, index, fields, cluster=True
        )
        alone, placed = json.loads(single.config), json.loads(clustered.config)
        changed |= {
            k for k in alone.keys() | placed.keys() if alone.get(k) != placed.get(k)
        }
        replicas.add(placed.get("num_replicas"))
        if alone.get("direct") != placed.get("direct"):
            assert ("direct" in placed, clustered.base in {"CBW", "CBM"}) == (
                False,
                True,
            )
    assert (
        changed <= {"num_replicas", "placement", "max_bytes", "direct"},
        {4, 5} <= replicas,
    ) == (
        True,
        True,
    )


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
