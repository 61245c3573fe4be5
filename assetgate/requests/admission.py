"""Would the target refuse a create or update, given the assets it already holds?

The embedded admission check: besides decoding (:func:`assetgate.validate`), a server
refuses a stream whose subjects overlap a stream of the same account, offline ones
included (400/10065), refuses to update an offline stream or to create a consumer on it
(500/10194 ``stream is offline: <reason>``) and to touch an offline consumer (500/10195
``consumer is offline: <reason>``). Info and delete stay possible on offline assets, as
on the server; they are not modelled here because nothing refuses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from assetgate.catalogue.levels import Catalogue, ServerProfile, load_catalogue
from assetgate.judge.gate import Verdict
from assetgate.judge.subjects import KEEP_SUBJECTS, SubjectIndex, claimed_subjects
from assetgate.requests.validate import ApiError, Validation, validate
from assetgate.run.check import DEFAULT_CLUSTER, Collector, iter_records
from assetgate.wire import DEFAULT_ACCOUNT, FAST_DECODE_FAILURES

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Mapping

    from assetgate.inventory.read import Asset
    from assetgate.judge.gate import Mode
    from assetgate.requests.validate import Operation
    from assetgate.wire import AssetKind

__all__ = ["Admission", "Conflict", "admit"]


class Conflict(msgspec.Struct, frozen=True, kw_only=True):
    """A stream whose subject overlaps one of the request's subjects."""

    stream: str
    subject: str
    requested: str
    offline: bool


class Admission(msgspec.Struct, frozen=True, kw_only=True):
    """The server's answer once existing assets are taken into account.

    Attributes:
        allowed: the request would succeed.
        error: the error reply when it would not (decoding errors first, as the server
            decodes the body before it looks at existing assets); ``None`` when the
            server gives none (``validation.server_crash`` or ``validation.no_reply``).
        conflicts: the streams (offline ones included) whose subjects overlap.
        validation: the decoding answer of :func:`assetgate.validate`.
    """

    allowed: bool
    error: ApiError | None
    conflicts: tuple[Conflict, ...]
    validation: Validation


def admit(
    inventory: Iterable[str | os.PathLike[str] | Asset],
    config: bytes | str | Mapping[str, Any],
    *,
    kind: AssetKind,
    target: str,
    op: Operation = "create",
    account: str = DEFAULT_ACCOUNT,
    cluster: str | None = None,
    stream: str | None = None,
    mode: Mode = "cluster",
    catalogue: Catalogue | None = None,
) -> Admission:
    """Predict whether ``target`` accepts creating/updating ``config`` in ``account``.

    ``stream`` names the stream of a consumer request. ``cluster`` defaults to the
    inventory's only cluster.

    Raises:
        ValueError: no ``cluster`` given and the inventory holds several.
    """
    cat = catalogue if catalogue is not None else load_catalogue()
    profile = cat.server(target)
    collector = Collector({DEFAULT_CLUSTER: profile}, mode, cat, keep_configs=True)
    for record in iter_records(inventory):
        collector.add(record)
    if cluster is None:
        clusters = {key[0] for key in collector.streams} | {
            key[0] for key in collector.consumers
        }
        if len(clusters) > 1:
            names = ", ".join(sorted(repr(c) for c in clusters))
            msg = f"the inventory holds several clusters ({names}): name one"
            raise ValueError(msg)
        cluster = next(iter(clusters), "")
    verdicts: _Verdicts = {
        (v.cluster, v.account, v.stream, v.kind, v.name): v
        for v in collector.verdicts()
    }
    existing_stream = None
    if kind == "stream":
        name = _name(config)
        existing_stream = collector.streams.get((cluster, account, name))
    validation = validate(
        config,
        kind=kind,
        server=target,
        op=op,
        existing=_existing_config(
            collector, cluster, account, config, kind=kind, op=op
        ),
        catalogue=cat,
    )
    if not validation.accepted:
        return Admission(
            allowed=False, error=validation.error, conflicts=(), validation=validation
        )
    if kind == "consumer":
        error = _consumer_error(
            verdicts,
            profile,
            where=(cluster, account),
            stream=stream or "",
            name=_name(config),
        )
        return Admission(
            allowed=error is None, error=error, conflicts=(), validation=validation
        )
    name = _name(config)
    own = verdicts.get((cluster, account, name, "stream", name))
    if op == "update":
        if existing_stream is None or own is None or own.state == "unloadable":
            # a stream the target cannot load is not there for it
            return _refused(profile, "stream_not_found", validation)
        if own.state == "offline":
            return _refused(
                profile, "stream_offline", validation, reason=own.reason or ""
            )
    conflicts = _conflicts(
        collector,
        verdicts,
        where=(cluster, account),
        name=name,
        subjects=_subjects(config),
    )
    if conflicts:
        error = _error(profile, "subject_overlap")
        return Admission(
            allowed=False, error=error, conflicts=conflicts, validation=validation
        )
    return Admission(allowed=True, error=None, conflicts=(), validation=validation)


_Verdicts = dict[tuple[str, str, str, str, str], Verdict]


class _View(msgspec.Struct):
    name: str = ""
    durable_name: str = ""
    subjects: list[str] | None = None
    mirror: dict[str, Any] | None = None
    sources: list[Any] | None = None


def _view(config: bytes | str | Mapping[str, Any]) -> _View:
    raw = config if isinstance(config, bytes | str) else msgspec.json.encode(config)
    try:
        return msgspec.json.decode(raw, type=_View)
    except FAST_DECODE_FAILURES:
        return _View()


def _name(config: bytes | str | Mapping[str, Any]) -> str:
    view = _view(config)
    return view.name or view.durable_name


def _subjects(config: bytes | str | Mapping[str, Any]) -> tuple[str, ...]:
    view = _view(config)
    return claimed_subjects(
        view.subjects, name=view.name, mirror=view.mirror, sources=view.sources
    )


def _existing_config(
    collector: Collector,
    cluster: str,
    account: str,
    config: bytes | str | Mapping[str, Any],
    *,
    kind: AssetKind,
    op: Operation,
) -> bytes | None:
    if kind != "stream" or op != "create":
        return None
    judged = collector.streams.get((cluster, account, _name(config)))
    return (
        None
        if judged is None
        else collector.configs.get((cluster, account, _name(config)))
    )


def _conflicts(
    collector: Collector,
    verdicts: _Verdicts,
    *,
    where: tuple[str, str],
    name: str,
    subjects: tuple[str, ...],
) -> tuple[Conflict, ...]:
    cluster, account = where
    index = SubjectIndex()
    states: dict[str, str] = {}
    for (c, a, stream), judged in collector.streams.items():
        if (c, a) != (cluster, account) or stream == name:
            continue
        verdict = verdicts.get((c, a, stream, "stream", stream))
        if verdict is None or verdict.state not in KEEP_SUBJECTS:
            continue  # an unloadable stream gives no protection
        states[stream] = verdict.state
        for subject in judged.subjects:
            index.add(stream, subject)
    found: list[Conflict] = []
    seen: set[str] = set()
    for requested in subjects:
        for stream, subject in index.colliding(requested):
            if stream not in seen:
                seen.add(stream)
                offline = states[stream] == "offline"
                found.append(
                    Conflict(
                        stream=stream,
                        subject=subject,
                        requested=requested,
                        offline=offline,
                    )
                )
    return tuple(sorted(found, key=lambda c: c.stream))


def _consumer_error(
    verdicts: _Verdicts,
    profile: ServerProfile,
    *,
    where: tuple[str, str],
    stream: str,
    name: str,
) -> ApiError | None:
    cluster, account = where
    head = verdicts.get((cluster, account, stream, "stream", stream))
    if head is None or head.state in {"unloadable", "detached"}:
        return _error(profile, "stream_not_found")
    if head.state == "offline":
        return _error(profile, "stream_offline", reason=head.reason or "")
    own = verdicts.get((cluster, account, stream, "consumer", name))
    if own is not None and own.state == "offline":
        return _error(profile, "consumer_offline", reason=own.reason or "")
    return None


def _error(profile: ServerProfile, key: str, **values: str) -> ApiError:
    spec = profile.line.errors.get(key)
    if (
        spec is None
    ):  # 2.10 and 2.11.0-2.11.8 have no offline errors: nothing is offline there
        spec = profile.line.errors["stream_not_found"]
    return ApiError(
        code=spec.code,
        err_code=spec.err_code,
        description=spec.description.format(**values),
    )


def _refused(
    profile: ServerProfile, key: str, validation: Validation, **values: str
) -> Admission:
    return Admission(
        allowed=False,
        error=_error(profile, key, **values),
        conflicts=(),
        validation=validation,
    )
