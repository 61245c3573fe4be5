"""Classify stored assets for a target nats-server version: the server's own decisions.

For each stream and consumer, what the target does when it loads the stored config:
``online`` (loaded, every field honoured), ``offline`` (loaded offline, with the exact
reason that version prints in that mode), ``degraded`` (loaded, non-zero fields silently
dropped: 2.10.x and 2.11.0-2.11.8), ``unloadable`` (even the lenient decode fails, so
the asset vanishes with the server's error text) or ``detached`` (a supported consumer
that is not loaded because its stream is not). The decision table is section 4 of
``nats-asset-versioning.md``; the wordings are data in ``levels/``.

Pure: no I/O. The caller groups a stream with its consumers (:func:`classify_stream`).

Size: over the ~400-line guide because the verdict model, the one classification and the
prepared per-cluster plans that make it fast are one decision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeAlias

import msgspec

from assetgate.catalogue import derived
from assetgate.catalogue.compile import features_for
from assetgate.catalogue.model import CONFIG_STRUCT
from assetgate.decoding.decode import (
    Decoded,
    decode,
    decode_signature,
    decoder,
    fast_path,
    reproduces,
)
from assetgate.decoding.goscan import go_atoi, go_quote
from assetgate.inventory.read import RecordError
from assetgate.judge.configchecks import (
    LineChecks,
    line_checks,
    load_checker,
    load_notes,
)
from assetgate.judge.metadata import (
    REQUIRED_LEVEL_KEY,
    config_features,
    lowest_supporting_level,
    supports_required_level,
)
from assetgate.judge.subjects import claimed_subjects
from assetgate.wire import FAST_DECODE_FAILURES, STATES, AssetKind, Drift, Mode, State

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from assetgate.catalogue.levels import Catalogue, ServerProfile
    from assetgate.inventory.read import Asset
    from assetgate.judge.configchecks import CheckFailure

__all__ = [
    "STATES",
    "Drift",
    "Judged",
    "Mode",
    "State",
    "Verdict",
    "asset_id",
    "bind_many",
    "classify_stream",
    "decode_stored",
    "judge",
    "judge_many",
    "plan_for",
    "settle",
    "untargeted",
]


class Verdict(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What the target server does with one stored asset.

    Attributes:
        state: ``online``, ``offline``, ``degraded``, ``unloadable``, ``detached`` or
            ``unavailable`` (cluster mode: its whole cluster's JetStream is down, see
            :mod:`assetgate.judge.outcomes`).
        reason: the server's own words (offline reason, decode error), or assetgate's
            for ``detached``; ``None`` when online.
        target: the server version the asset was judged against.
        stamped_level: the stored ``_nats.req.level``, verbatim (``None``: no stamp).
        required_level: the level the config's features need (``None``: no release
            knows every field).
        min_server_version: the earliest release that can honour the config.
        unknown_fields: every field the target does not know, as a path.
        dropped_fields: unknown fields set to a non-zero value (lost on a lenient load).
        drift: the stamp disagrees with the features: ``stamp_missing`` (created before
            2.11 or restored), ``stamp_unparsable``, ``stamp_too_low`` (an older server
            would load it without the features), ``stamp_too_high``.
        accepted: the operator's acceptances covering this asset (``RULE:ASSET``,
            several joined by ``; ``).
        own_state: for ``unavailable``: the state the asset would have if its
            cluster's JetStream were up; ``None`` otherwise.
        own_reason: the reason that goes with ``own_state``.
        replicas: the asset's effective replica count as the target reads it (a
            consumer's ``num_replicas``, else its stream's); ``None`` when unknown.
        check: for ``unloadable``: the server's semantic config check the stored
            config fails when the target starts (``[[checks]]`` id in ``levels/``);
            ``None`` otherwise.
        notes: what the target's defaults change about a stored config that loads
            (for example a duplicate window it adds), without changing the state.
    """

    source: str
    cluster: str
    account: str
    kind: AssetKind
    stream: str
    name: str
    state: State
    reason: str | None
    target: str
    stamped_level: str | None
    required_level: int | None
    min_server_version: str | None
    unknown_fields: tuple[str, ...] = ()
    dropped_fields: tuple[str, ...] = ()
    drift: Drift | None = None
    accepted: str | None = None
    own_state: State | None = None
    own_reason: str | None = None
    replicas: int | None = None
    check: str | None = None
    notes: tuple[str, ...] = ()


class Judged(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """An asset judged on its own, before its stream or consumers are considered.

    Compact and picklable (no config bytes), so that judging, the costly part, can run
    in worker processes; ``subjects`` are the subjects a stream claims (its name when
    it has none and no mirror or sources).
    """

    verdict: Verdict
    subjects: tuple[str, ...] = ()


def asset_id(verdict: Verdict) -> str:
    """``cluster/account/stream`` or ``cluster/account/stream/consumer``."""
    base = f"{verdict.cluster}/{verdict.account}/{verdict.stream}"
    return base if verdict.kind == "stream" else f"{base}/{verdict.name}"


def untargeted(asset: Asset) -> RecordError:
    """The record error for an asset of a cluster no ``--target`` covers."""
    message = f"no target version for cluster {asset.cluster!r}"
    return RecordError(source=asset.source, message=message)


def decode_stored(asset: Asset, profile: ServerProfile) -> Decoded:
    """Decode a stored config as the target reads it from disk or the meta layer."""
    struct = CONFIG_STRUCT[asset.kind]
    return decode(
        asset.config,
        profile.line,
        struct,
        context="stored",
        go_json=profile.switches.go_json,
    )


def classify_stream(
    stream: Asset | None,
    consumers: Sequence[Asset],
    *,
    profile: ServerProfile,
    mode: Mode,
    catalogue: Catalogue,
) -> list[Verdict]:
    """Verdicts for one stream and its consumers (``stream`` is ``None`` if missing)."""
    judged_stream = None if stream is None else judge(stream, profile, mode, catalogue)
    judged = [judge(asset, profile, mode, catalogue) for asset in consumers]
    return settle(judged_stream, judged, profile)


def judge(
    asset: Asset, profile: ServerProfile, mode: Mode, catalogue: Catalogue
) -> Judged:
    """Judge one asset on its own: decode it as the target does and apply section 4.1."""
    plan = _PLANS.get((id(profile), id(catalogue), asset.kind, mode))
    if plan is None:
        plan = plan_for(profile, catalogue, asset.kind, mode)
    judged = plan.lean(asset)
    return judged if judged is not None else _general(asset, plan, mode)


def _general(asset: Asset, plan: JudgePlan, mode: Mode) -> Judged:
    """:func:`judge` for any asset: the exact decode, then each step on its own."""
    profile = plan.profile
    decoded = decode_stored(asset, profile)
    state, reason = _loaded_state(decoded, profile, mode)
    failed: CheckFailure | None = None
    notes: tuple[str, ...] = ()
    if state in _RECOVERED:  # the target re-runs its config checks on what it recovers
        failed, notes = _load_checks(decoded.config, plan)
    return _judged(
        asset, decoded, (state, reason), failed, notes, profile, plan.catalogue
    )


class JudgePlan(NamedTuple):
    """What judging one kind against one profile in one mode needs, bound once.

    ``lean`` judges the common asset in one pass (:func:`_lean`), or returns ``None``
    for the general path; ``decode`` and ``finish`` are its two halves, for a reader
    that takes the asset's names from the decoded config. ``checker`` and ``noter``
    are the load-time config checks and notes (``None``: none apply). ``profile``
    and ``catalogue`` are kept so that the ids in the key stay theirs.
    """

    lean: Callable[[Asset], Judged | None]
    decode: Callable[[bytes], Any | None]
    finish: Finish
    checker: Callable[[Any], CheckFailure | None] | None
    noter: Callable[[Any], tuple[str, ...]] | None
    profile: ServerProfile
    catalogue: Catalogue


Finish: TypeAlias = (
    "Callable[[Any, str, str, str, str, str, int | None], Judged | None]"
)
""":func:`_lean`'s second half: ``(config, source, cluster, account, stream, name,
inherited)`` to the judgement of a plainly fine decoded config, or ``None``.
``inherited`` is the replica count of the consumer's stream when it is known (what
settling would fill in), else ``None``."""


_PLANS: dict[tuple[int, int, str, str], JudgePlan] = derived.cache(
    "gate.plans", keyed_by="(id of profile, id of catalogue, kind, mode)"
)


def plan_for(
    profile: ServerProfile, catalogue: Catalogue, kind: str, mode: Mode
) -> JudgePlan:
    """The plan :func:`judge` judges ``kind`` with against ``profile`` in ``mode``."""
    plan = _PLANS.get((id(profile), id(catalogue), kind, mode))
    if plan is None:
        checker = load_checker(profile, kind, mode)
        noter = load_notes(profile, kind, mode)
        decode = fast_path(profile.line, CONFIG_STRUCT[kind])
        finish = _lean(profile, catalogue, kind, checker, noter)

        def lean(asset: Asset) -> Judged | None:
            config = decode(asset.config)
            if config is None:
                return None  # the exact decode (and maybe an error): the general path
            return finish(
                config,
                asset.source,
                asset.cluster,
                asset.account,
                asset.stream,
                asset.name,
                None,
            )

        plan = JudgePlan(lean, decode, finish, checker, noter, profile, catalogue)
        _PLANS[(id(profile), id(catalogue), kind, mode)] = plan
    return plan


def _lean(
    profile: ServerProfile,
    catalogue: Catalogue,
    kind: str,
    checker: Callable[[Any], CheckFailure | None] | None,
    noter: Callable[[Any], tuple[str, ...]] | None,
) -> Finish:
    """:func:`judge`'s answer in one pass for a config that is plainly fine.

    That is one that decodes cleanly on msgspec's fast path (no escape, every field
    known, well typed), whose stored level the target supports and that passes the
    load-time checks: it loads ``online``, and its verdict is built once. Anything
    else returns ``None``, and :func:`judge` takes the general path, whose answers a
    differential test holds this to.
    """
    features = features_for(catalogue, profile.line, kind)
    level = profile.api_level or 0
    any_level = profile.switches.offline == "none"  # no offline state: a stamp is moot
    target = profile.version.text
    stream = kind == "stream"

    def finish(  # noqa: PLR0917 - a hot path: the asset's parts, not an object
        config: Any,
        source: str,
        cluster: str,
        account: str,
        stream_name: str,
        name: str,
        inherited: int | None,
    ) -> Judged | None:
        metadata = config.metadata
        if not any_level and not supports_required_level(metadata, level):
            return None  # offline: the general path words it
        stamped = metadata.get(REQUIRED_LEVEL_KEY) if metadata else None
        notes: tuple[str, ...] = ()
        if checker is not None and checker(config) is not None:
            return None  # unloadable: the general path says why
        if noter is not None:
            notes = noter(config)
        required, first = features(config)
        replicas = _replicas(config, kind)
        verdict = Verdict(
            source=source,
            cluster=cluster,
            account=account,
            kind=kind,  # type: ignore[arg-type]  # a kind of CONFIG_STRUCT
            stream=stream_name,
            name=name,
            state="online",
            reason=None,
            target=target,
            stamped_level=stamped,
            required_level=required,
            min_server_version=first,
            drift=_drift(stamped, required, profile),
            replicas=inherited if replicas is None else replicas,
            notes=notes,
        )
        if not stream:
            return Judged(verdict=verdict)
        return Judged(verdict=verdict, subjects=_subjects(config, name))

    return finish


def judge_many(
    asset: Asset,
    profiles: Sequence[ServerProfile],
    mode: Mode,
    catalogue: Catalogue,
) -> tuple[list[Judged], int]:
    """:func:`judge` against each of ``profiles``, sharing what releases share.

    See :func:`bind_many`, which judges many assets against the same profiles.
    """
    return _judge_many(asset, _prepared(profiles, asset.kind, mode), mode, catalogue)


def bind_many(
    profiles: Sequence[ServerProfile], mode: Mode, catalogue: Catalogue
) -> Callable[[Asset], tuple[list[Judged], int]]:
    """:func:`judge_many` against ``profiles``, its plans bound once for every asset."""
    plans = {kind: _prepared(profiles, kind, mode) for kind in CONFIG_STRUCT}

    def judge_one(asset: Asset) -> tuple[list[Judged], int]:
        return _judge_many(asset, plans[asset.kind], mode, catalogue)

    return judge_one


def _judge_many(  # noqa: PLR0915 - one hot loop: a call per release would cost
    asset: Asset, plan: _Plan, mode: Mode, catalogue: Catalogue
) -> tuple[list[Judged], int]:
    """:func:`judge_many` on a plan of the profiles.

    The decode is made once per release line, the config checks once per line
    (:class:`~assetgate.judge.configchecks.LineChecks`), the state before the checks once
    per line and offline wording, the features once per asset; a release whose
    judgement has the same parts as the one before it (everything a verdict is made
    of but the target's name) gets the same object, whose ``target`` names the first
    of them. For ``check_matrix``.

    Returns the judgements, one per profile, and where they change: bit ``i`` is set
    when judgement ``i`` is not the object before it (bit 0 always).
    """
    decoded_of: list[Decoded | None] = [None] * plan.lines
    # per line: the API level from which a plain config loads online, or None
    plain_of: list[int | None] = [None] * plan.lines
    unstamped_of: list[bool] = [True] * plan.lines
    loaded_of: list[tuple[State, str | None] | None] = [None] * plan.states
    results_of: list[Any] = [_NOT_RUN] * plan.lines
    features: dict[str, tuple[int, str] | None] = {}
    out: list[Judged] = []
    changed = 0
    last: tuple[object, ...] = ()
    judged: Judged | None = None
    online = False  # whether judged loaded online
    steps = plan.steps
    index, count = 0, len(steps)
    while index < count:
        profile, line, state, lines, level, alike, same, same_line, rest, low = steps[
            index
        ]
        index += 1
        # the release before it judges alike: all of it does, or no check of the line
        # fails or notes anything and only the checks' order differs, or also the
        # state slot, where both load a plain config online
        if judged is not None and (
            alike
            or (
                same_line
                and results_of[line] is _PASSED
                and (
                    same
                    or (
                        online
                        and (needs := plain_of[line]) is not None
                        and needs <= level
                    )
                )
            )
        ):
            out.append(judged)
            continue
        decoded = decoded_of[line]
        if decoded is None:
            earlier = plan.earlier[line]
            prior = None if earlier < 0 else decoded_of[earlier]
            if (
                prior is not None
                and prior.config is not None
                and prior.strict_error is None  # no unknown key, no bad value
                and prior.lenient_error is None
            ):
                # the line before decodes it cleanly, and this one would alike
                decoded = decoded_of[line] = prior
                plain_of[line], unstamped_of[line] = (
                    plain_of[earlier],
                    unstamped_of[earlier],
                )
            else:
                decoded = decoded_of[line] = plan.decoders[line](asset.config)
                plain_of[line], unstamped_of[line] = _stamp_of(decoded)
        loaded = loaded_of[state]
        if loaded is None:
            needs = plain_of[line]
            if needs is not None and needs <= level:
                loaded = _ONLINE  # what _loaded_state answers, without asking
            else:
                loaded = _loaded_state(decoded, profile, mode)
            loaded_of[state] = loaded
        online = loaded == _ONLINE
        failed: CheckFailure | None = None
        notes: tuple[str, ...] = ()
        if loaded[0] in _RECOVERED:  # every check of the line once, then this release's
            results = results_of[line]
            if results is _NOT_RUN:
                results = lines.run(decoded.config)
                results_of[line] = _PASSED if results is None else results
            if results is not None and results is not _PASSED:
                failed, notes = lines.pick(profile, results)
        parts = (
            decoded.unknown_fields,
            decoded.dropped_fields if loaded[0] == "degraded" else (),
            decoded.config is None,
            loaded,
            failed,
            notes,
            # a missing stamp is a drift only where releases stamp the level
            profile.switches.stamps_level and unstamped_of[line],
        )
        if judged is None or parts != last:
            judged = _judged(
                asset,
                decoded,
                loaded,
                failed,
                notes,
                profile,
                catalogue,
                features=features,
            )
            last = parts
            changed |= 1 << len(out)
        out.append(judged)
        if (
            rest
            and online
            and results_of[line] is _PASSED
            and (needs := plain_of[line]) is not None
            and needs <= low
        ):  # so are the rest of the line's releases (the test above, for each)
            out.extend([judged] * rest)
            index += rest
    return out, changed


_NOT_RUN: Final = object()
_PASSED: Final = object()  # the line's checks ran: nothing fails, nothing noted


_ONLINE: Final[tuple[State, str | None]] = ("online", None)


def _stamp_of(decoded: Decoded) -> tuple[int | None, bool]:
    """What :func:`judge_many` needs of a decoded config's level stamp, per line.

    First, for a config that decodes cleanly, the stored level it needs (0: none):
    such a config loads online on every release of its line whose API level is at
    least that (:func:`_loaded_state`; a release before levels counts as level 0);
    anything else (an error, dropped fields, a stamp that does not parse) is ``None``:
    ask :func:`_loaded_state`. Second, whether the config may lack the stamp (unknown
    when it does not decode).
    """
    config = decoded.config
    if config is None:
        return None, True
    metadata = config.metadata
    unstamped = not metadata or REQUIRED_LEVEL_KEY not in metadata
    if (
        decoded.lenient_error is not None
        or decoded.strict_error is not None
        or decoded.dropped_fields
    ):
        return None, unstamped
    return lowest_supporting_level(metadata), unstamped


class _Plan(NamedTuple):
    """How :func:`judge_many` goes through a list of profiles.

    Per profile: its release line's slot, its load-state slot, its line's checks, its
    API level (0 before levels), whether it judges every asset as the profile before
    it does, whether it does so when no check of the line fails or notes anything
    (the same slots and stamping rule), whether it has the same line slot and
    stamping rule, and how many of the profiles after it do in a row, with the
    lowest API level among those. Per line slot: its bound decode of a stored config,
    and the slot before it when that slot's clean decodes are this one's too (else
    -1; :func:`~assetgate.decoding.decode.reproduces`).
    """

    steps: tuple[
        tuple[ServerProfile, int, int, LineChecks, int, bool, bool, bool, int, int],
        ...,
    ]
    lines: int
    states: int
    decoders: tuple[Callable[[bytes | str], Decoded], ...]
    earlier: tuple[int, ...]


_PREPARED: dict[
    tuple[tuple[int, ...], str, str], tuple[tuple[ServerProfile, ...], _Plan]
] = derived.cache("gate.prepared", keyed_by="(ids of profiles, kind, mode)")


def _prepared(profiles: Sequence[ServerProfile], kind: str, mode: Mode) -> _Plan:
    """The plan of ``profiles``, once per list of profiles.

    Profiles whose release lines decode alike (the same
    :func:`~assetgate.decoding.decode.decode_signature` and JSON decoder) and make the
    same checks with the same replies share a decode and the checks' run: one line,
    or lines that change neither (2.14 and 2.15). Profiles of one line and
    JSON decoder that also share the offline wording and API level share the state
    before the checks.
    """
    # the profiles are held by the cache, so their ids stay theirs
    key = (tuple(map(id, profiles)), kind, mode)
    found = _PREPARED.get(key)
    if found is None:
        line_slots: dict[tuple[object, ...], int] = {}
        state_slots: dict[tuple[str, str, str, int | None], int] = {}
        decoders: list[Callable[[bytes | str], Decoded]] = []
        earlier: list[int] = []
        lines_of: list[ServerProfile] = []  # per line slot: its first profile
        steps: list[tuple[ServerProfile, int, int, LineChecks, int, bool, bool, bool]]
        steps = []
        before: tuple[object, ...] = ()
        same: tuple[object, ...] = ()
        for profile in profiles:
            switches = profile.switches
            checks = line_checks(profile.line, kind, mode)
            line = line_slots.setdefault(
                (
                    decode_signature(profile.line, CONFIG_STRUCT[kind]),
                    switches.go_json,
                    msgspec.json.encode(profile.line.errors),  # the checks' replies
                    tuple(checks.index),
                ),
                len(line_slots),
            )
            if line == len(decoders):
                before_line = lines_of[-1] if lines_of else None
                earlier.append(
                    line - 1
                    if before_line is not None
                    and before_line.switches.go_json == switches.go_json
                    and reproduces(before_line.line, profile.line, CONFIG_STRUCT[kind])
                    else -1
                )
                lines_of.append(profile)
                decoders.append(
                    decoder(
                        profile.line,
                        CONFIG_STRUCT[kind],
                        context="stored",
                        go_json=switches.go_json,
                    )
                )
            state = state_slots.setdefault(
                (
                    profile.line.fingerprint,
                    switches.go_json,
                    switches.offline,
                    switches.api_level,
                ),
                len(state_slots),
            )
            # the same decode, state, checks in the same order and stamping rule
            slots = (line, switches.stamps_level, state)
            alike = (*slots, checks.orders(profile))
            steps.append(
                (
                    profile,
                    line,
                    state,
                    checks,
                    profile.api_level or 0,
                    alike == before,
                    slots == same,
                    slots[:2] == same[:2],
                )
            )
            before, same = alike, slots
        # per step: how many after it keep its line slot and stamping rule, the
        # lowest API level among them
        runs: list[tuple[int, int]] = []
        rest, low = 0, 0
        for step in reversed(steps):
            runs.append((rest, low))
            if step[7]:  # the same line slot and stamping rule as the step before
                rest, low = rest + 1, step[4] if rest == 0 else min(low, step[4])
            else:
                rest, low = 0, 0
        plan = _Plan(
            tuple(
                (*step, rest, low)
                for step, (rest, low) in zip(steps, reversed(runs), strict=True)
            ),
            len(line_slots),
            len(state_slots),
            tuple(decoders),
            tuple(earlier),
        )
        found = _PREPARED[key] = (tuple(profiles), plan)
    return found[1]


def _loaded_state(
    decoded: Decoded, profile: ServerProfile, mode: Mode
) -> tuple[State, str | None]:
    """The state a decoded stored config loads in, before the config checks."""
    if decoded.lenient_error is not None or decoded.config is None:
        return "unloadable", decoded.lenient_error or "cannot decode"
    if profile.switches.offline == "none":
        return ("degraded" if decoded.dropped_fields else "online"), None
    reason = _offline_reason(decoded, profile, mode)
    return ("online" if reason is None else "offline"), reason


def _judged(  # noqa: PLR0917 - the parts of one judgement
    asset: Asset,
    decoded: Decoded,
    loaded: tuple[State, str | None],
    failed: CheckFailure | None,
    notes: tuple[str, ...],
    profile: ServerProfile,
    catalogue: Catalogue,
    *,
    features: dict[str, tuple[int, str] | None] | None = None,
) -> Judged:
    """The judgement: the verdict (a failed check makes it unloadable), the subjects."""
    state, reason = loaded
    if failed is not None:
        state, reason = "unloadable", failed.log_reason
    verdict = _verdict(
        asset,
        decoded,
        state,
        reason,
        profile=profile,
        catalogue=catalogue,
        features=features,
    )
    if failed is not None or notes:
        check = None if failed is None else failed.check
        verdict = msgspec.structs.replace(verdict, check=check, notes=notes)
    subjects: tuple[str, ...] = ()
    if asset.kind == "stream" and decoded.config is not None:
        subjects = _subjects(decoded.config, asset.name)
    return Judged(verdict=verdict, subjects=subjects)


def _subjects(config: Any, name: str) -> tuple[str, ...]:
    """The subjects a decoded stream config claims (its name, else ``name``, if none)."""
    return claimed_subjects(
        config.subjects,
        name=config.name or name,
        mirror=config.mirror,
        sources=config.sources,
    )


_RECOVERED: Final = frozenset({"online", "degraded"})


def _load_checks(
    config: Any, bound: JudgePlan
) -> tuple[CheckFailure | None, tuple[str, ...]]:
    """The load-time check the config fails, else the notes that apply to it."""
    failed = None if bound.checker is None else bound.checker(config)
    if failed is not None or bound.noter is None:
        return failed, ()
    return None, bound.noter(config)


def settle(
    stream: Judged | None, consumers: Sequence[Judged], profile: ServerProfile
) -> list[Verdict]:
    """Apply what a stream and its consumers do to each other.

    A supported stream with an offline consumer is stopped (``stopped - unsupported
    consumer "C"`` from 2.11.11/2.12.1); the supported consumers of a stream that is
    offline, stopped, unloadable or missing are detached. The consumer named is the
    first offline one in name order, as a single server reads the consumer directories
    in that order. A consumer without its own replica count gets its stream's.
    """
    verdicts: list[Verdict] = []
    stream_state: State | None = None
    stream_reason: str | None = None
    stream_replicas: int | None = None
    if stream is not None:
        head = stream.verdict
        stream_state, stream_reason = head.state, head.reason
        stream_replicas = head.replicas
        if stream_state in _RECOVERED:
            offline = [
                j.verdict.name for j in consumers if j.verdict.state == "offline"
            ]
            if offline:
                stream_state = "offline"
                stream_reason = _stopped_reason(profile, min(offline))
                head = msgspec.structs.replace(
                    head, state=stream_state, reason=stream_reason, dropped_fields=()
                )
        verdicts.append(head)
    serving = stream_state in _RECOVERED
    # one reason per stream name: every consumer detached from it shares the words
    detached: dict[str, str] = {}
    replace = msgspec.structs.replace
    for judged in consumers:
        verdict = judged.verdict
        fill = stream_replicas is not None and verdict.replicas is None
        if not serving and verdict.state in _RECOVERED:
            reason = detached.get(verdict.stream)
            if reason is None:
                reason = detached[verdict.stream] = _detached_reason(
                    verdict.stream, stream_state, stream_reason
                )
            # one copy, not two: the replicas filled in with the detaching
            verdict = replace(
                verdict,
                state="detached",
                reason=reason,
                dropped_fields=(),
                replicas=stream_replicas if fill else verdict.replicas,
            )
        elif fill:
            verdict = replace(verdict, replicas=stream_replicas)
        verdicts.append(verdict)
    return verdicts


def _offline_reason(decoded: Decoded, profile: ServerProfile, mode: Mode) -> str | None:
    """The offline reason the target prints (section 4.1), or ``None`` when supported."""
    metadata = getattr(decoded.config, "metadata", None) or {}
    requested = metadata.get(REQUIRED_LEVEL_KEY, "")
    level = profile.api_level or 0
    supported = supports_required_level(metadata, level)
    error = decoded.strict_error
    if supported and error is None:
        return None  # the common case: nothing to say
    generation = profile.switches.offline
    words = profile.line.offline[generation]
    values = {
        "req": requested,
        "level": str(level),
        "err": error or "",
        "err_nojson": (error or "").removeprefix("json: "),
    }
    if generation == "gen2":
        if mode == "single":
            if not supported:
                key = "config_error" if error is not None else "level"
            elif error is not None:
                key = "decoding"
            else:
                return None
        elif error is not None and error.startswith("json:"):
            key = "config_error"
        elif not supported:
            key = "level"
        elif error is not None:
            key = "stopped"
        else:
            return None
    elif not supported:
        key = "level"
    elif error is not None:
        key = "decoding" if mode == "single" else "stopped"
    else:
        return None
    return words[key].format(**values)


def _stopped_reason(profile: ServerProfile, consumer: str) -> str:
    words = profile.line.offline[profile.switches.offline]
    template = words.get("stopped_by_consumer", words["stopped"])
    return template.format(name=go_quote(consumer))


def _detached_reason(stream: str, state: State | None, reason: str | None) -> str:
    if state is None:
        return f"stream {go_quote(stream)} is not in the inventory"
    if state == "unloadable":
        return f"stream {go_quote(stream)} does not load: {reason}"
    return f"stream {go_quote(stream)} is offline: {reason}"


def _verdict(
    asset: Asset,
    decoded: Decoded,
    state: State,
    reason: str | None,
    *,
    profile: ServerProfile,
    catalogue: Catalogue,
    features: dict[str, tuple[int, str] | None] | None = None,
) -> Verdict:
    metadata = getattr(decoded.config, "metadata", None) if decoded.config else None
    stamped = metadata.get(REQUIRED_LEVEL_KEY) if metadata else None
    if decoded.config is None:
        stamped = _raw_stamp(asset)
    known = decoded.config is not None and not decoded.unknown_fields
    # what a config needs does not depend on the target: computed once per asset
    key = "needs"
    if features is not None and key in features:
        needs: tuple[int, str] | None = features[key]
    elif known:
        # the target knows every field: its rules and history give the same answer
        needs = features_for(catalogue, profile.line, asset.kind)(decoded.config)
    else:
        needs = config_features(asset.config, asset.kind, catalogue)
    if features is not None:
        features[key] = needs
    required = None if needs is None else needs[0]
    return Verdict(
        source=asset.source,
        cluster=asset.cluster,
        account=asset.account,
        kind=asset.kind,
        stream=asset.stream,
        name=asset.name,
        state=state,
        reason=reason,
        target=profile.version.text,
        stamped_level=stamped,
        required_level=required,
        min_server_version=None if needs is None else needs[1],
        unknown_fields=decoded.unknown_fields,
        dropped_fields=decoded.dropped_fields if state == "degraded" else (),
        drift=_drift(stamped, required, profile),
        replicas=_replicas(decoded.config, asset.kind),
    )


def _replicas(config: Any, kind: str) -> int | None:
    """``num_replicas`` as configured; a stream's 0 means 1, a consumer's its stream's."""
    if config is None:
        return None
    value = getattr(config, "num_replicas", None)
    if not isinstance(value, int):
        return None
    if kind == "stream":
        return max(value, 1)
    return value or None


class _MetadataView(msgspec.Struct):
    """Just the metadata of a config, for configs the target cannot decode."""

    metadata: dict[str, str] | None = None


def _raw_stamp(asset: Asset) -> str | None:
    try:
        view = msgspec.json.decode(asset.config, type=_MetadataView)
    except FAST_DECODE_FAILURES:
        return None
    return (view.metadata or {}).get(REQUIRED_LEVEL_KEY)


def _drift(
    stamped: str | None, required: int | None, profile: ServerProfile
) -> Drift | None:
    if stamped is None:
        return "stamp_missing" if profile.switches.stamps_level else None
    level = go_atoi(stamped)
    if level is None:
        return "stamp_unparsable"
    if required is None or level == required:
        return None
    return "stamp_too_low" if level < required else "stamp_too_high"
