"""Would server X accept this create or update request, and what would it store?

:func:`validate` decodes a stream or consumer config as the given nats-server version
decodes an API request (strict or lenient, as that version is configured), checks the
``Nats-Required-Api-Level`` header, computes the metadata the server stores and shows,
and lists unknown and silently dropped fields. It answers in the server's own words.
It then makes the semantic config checks that release makes (``checkStreamCfg``,
``checkConsumerCfg``: :mod:`assetgate.judge.configchecks`, facts in ``levels/``) and reports
the config the server would store, with its defaults filled in.

Size: over the ~400-line guide because the request path (decode, checks, stamp, reply)
and its prepared fast plan answer the same question and share the reply texts.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final, Literal

import msgspec
import structlog

from assetgate.catalogue import derived
from assetgate.catalogue.compile import Features, features_for, hazard_function
from assetgate.catalogue.levels import (
    BUILD_LOCK,
    Catalogue,
    ServerProfile,
    load_catalogue,
)
from assetgate.catalogue.model import CONFIG_STRUCT, stream_request
from assetgate.decoding.decode import Decoded, decode, fast_path, given_fields
from assetgate.errors import InvalidArgument, InvalidServerVersion
from assetgate.inventory.read import Asset
from assetgate.judge.configchecks import (
    Context,
    ServerLimits,
    assumer,
    assumptions,
    bound_checker,
    first_failure,
    stored_config,
)
from assetgate.judge.gate import judge
from assetgate.judge.metadata import (
    REQUIRED_LEVEL_KEY,
    SERVER_LEVEL_KEY,
    SERVER_VERSION_KEY,
    config_features,
    created_metadata,
    header_accepted,
    min_server_version,
    response_metadata,
    stored_metadata,
)
from assetgate.version import ServerVersion
from assetgate.wire import AssetKind  # noqa: TC001 (msgspec reads it at run time)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["ApiError", "ServerInfo", "Validation", "validate"]

Operation = Literal["create", "update"]
Mode = Literal["single", "cluster"]

log = structlog.get_logger(__name__)

_INFOS: dict[tuple[str, str, bool], ServerInfo] = derived.cache(
    "requests.infos", keyed_by="(catalogue digest, version, strict)"
)

# A consumer config travels inside CreateConsumerRequest {"stream_name", "config", ...}.
_CONSUMER_PREFIX: Final = b'{"config":'


class ServerInfo(msgspec.Struct, frozen=True, kw_only=True):
    """The server a validation speaks for."""

    version: str
    api_level: int | None
    strict: bool


class ApiError(msgspec.Struct, frozen=True, kw_only=True):
    """An API error reply exactly as the server sends it."""

    code: int
    err_code: int
    description: str


class Validation(msgspec.Struct, frozen=True, kw_only=True):
    """The answer of :func:`validate`; its JSON form is ``assetgate validate --format json``.

    Attributes:
        accepted: the server would accept the request.
        error: the server's error reply when it would not.
        unknown_fields: every field path the server does not know.
        dropped_fields: unknown fields set to a non-zero value that a lenient server
            accepts and silently loses.
        stamped_metadata: the metadata the server stores (``None``: rejected, or none).
        response_metadata: the metadata its reply shows (stored plus dynamic keys).
        created_metadata: ADR-44's created-version keys assetgate records on create
            and carries over on update (``None`` when turned off); the released server
            never writes them.
        required_level: the level the server computes with its own rules.
        min_server_version: the earliest release that knows every field and value
            used and meets the level rules; ``None`` when no known release does.
        server_crash: the server does not answer but crashes on this request (a hazard
            in ``levels/``, observed on real binaries): what it prints.
        no_reply: the server sends no reply at all (a ``no_reply`` hazard: no API
            handler receives the request, the client times out): why. ``error`` is
            then ``None`` too.
        stored_config: the config the server would store, defaults filled in
            (``None`` when rejected).
        check: the semantic config check that refused it (a ``[[checks]]`` id in
            ``levels/``), ``None`` otherwise.
        assumed: what the checks could not know and assumed (the server's default
            limits, a consumer's stream not given), as sentences.
        lost_on_restart: the server's reason for not loading the stored config when
            it next starts (its start-up config checks refuse what its create
            accepted), in ``check``'s words; the asset is created, then lost.
            ``None``: it loads, or the request is refused.
    """

    server: ServerInfo
    kind: AssetKind
    op: Operation
    accepted: bool
    error: ApiError | None
    unknown_fields: tuple[str, ...]
    dropped_fields: tuple[str, ...]
    stamped_metadata: dict[str, str] | None
    response_metadata: dict[str, str] | None
    created_metadata: dict[str, str] | None
    required_level: int
    min_server_version: str | None
    server_crash: str | None = None
    no_reply: str | None = None
    stored_config: dict[str, Any] | None = None
    check: str | None = None
    assumed: tuple[str, ...] = ()
    lost_on_restart: str | None = None

    @property
    def clean(self) -> bool:
        """Accepted with nothing dropped or lost (``assetgate validate`` exits 0)."""
        return (
            self.accepted and not self.dropped_fields and self.lost_on_restart is None
        )


def validate(
    config: bytes | str | Mapping[str, Any],
    *,
    kind: AssetKind,
    server: str | ServerVersion,
    op: Operation = "create",
    existing: bytes | str | Mapping[str, Any] | None = None,
    strict: bool | None = None,
    soft: bool = False,
    api_level_header: str | None = None,
    created_version: bool = True,
    catalogue: Catalogue | None = None,
    mode: Mode = "single",
    stream: bytes | str | Mapping[str, Any] | None = None,
    limits: ServerLimits | None = None,
) -> Validation:
    """Predict the server's answer to a stream or consumer create/update request.

    Args:
        config: the config as JSON (bytes or str) or a mapping.
        kind: ``"stream"`` or ``"consumer"``.
        server: the nats-server version, e.g. ``"2.12.8"``.
        op: ``"create"`` or ``"update"``.
        existing: the stored config of an asset with that name, if one exists.
        strict: the server's ``jetstream { strict }`` setting; ``None`` is its default.
        soft: ADR-44's soft mode for embedded use: strict problems are logged as
            warnings (one structlog event per unknown field) and the lenient result is
            used; an explicit ``strict=True`` makes this call fatal even so.
        api_level_header: a ``Nats-Required-Api-Level`` header value to simulate.
        created_version: also report the created-version metadata.
        catalogue: the level catalogue (default: the packaged one).
        mode: ``single`` (a standalone server) or ``cluster``: some checks differ.
        stream: for a consumer: its stream's stored config, for the checks that need
            it (without it they are skipped and listed in ``assumed``).
        limits: a standalone server's ``max_file_store``/``max_memory_store``, for
            the storage check of a stream create (without them a ``max_bytes`` is
            assumed to fit, and ``assumed`` says so); other streams are assumed to
            reserve none of it.

    Raises:
        InvalidServerVersion, UnknownServerVersion: ``server`` is not a known release.
    """
    _check_arguments(kind=kind, op=op, server=server, mode=mode, limits=limits)
    cat = catalogue if catalogue is not None else load_catalogue()
    warm = (id(cat), str(server), kind)
    # the first call for a release and kind builds (and first uses) its Struct types and
    # decoders; msgspec's first use of nested Struct types is not thread-safe
    cold = warm not in _WARM
    with BUILD_LOCK if cold else contextlib.nullcontext():
        result = _validate(
            config,
            kind=kind,
            server=server,
            op=op,
            existing=existing,
            strict=strict,
            soft=soft,
            api_level_header=api_level_header,
            created_version=created_version,
            cat=cat,
            mode=mode,
            stream=stream,
            limits=limits,
        )
        if cold:
            _WARM.add(warm)
    return result


_WARM: set[tuple[int, str, str]] = set()


def _check_arguments(
    *, kind: object, op: object, server: object, mode: object, limits: object
) -> None:
    """The project's own errors for arguments outside what validate accepts."""
    if kind not in {"stream", "consumer"}:
        msg = f"invalid kind: {kind!r} (use 'stream' or 'consumer')"
        raise InvalidArgument(msg)
    if op not in {"create", "update"}:
        msg = f"invalid operation: {op!r} (use 'create' or 'update')"
        raise InvalidArgument(msg)
    if mode not in {"single", "cluster"}:
        msg = f"invalid mode: {mode!r} (use 'single' or 'cluster')"
        raise InvalidArgument(msg)
    if not isinstance(server, str | ServerVersion):
        msg = f"invalid server version: {server!r} (use a version such as '2.12.8')"
        raise InvalidServerVersion(msg)
    if limits is not None and not isinstance(limits, ServerLimits):
        msg = f"invalid limits: {limits!r} (use assetgate.ServerLimits)"
        raise InvalidArgument(msg)


def _validate(
    config: bytes | str | Mapping[str, Any],
    *,
    kind: AssetKind,
    server: str | ServerVersion,
    op: Operation,
    existing: bytes | str | Mapping[str, Any] | None,
    strict: bool | None,
    soft: bool,
    api_level_header: str | None,
    created_version: bool,
    cat: Catalogue,
    mode: Mode,
    stream: bytes | str | Mapping[str, Any] | None,
    limits: ServerLimits | None,
) -> Validation:
    if (
        existing is None
        and api_level_header is None
        and op == "create"
        and created_version
        and not soft
        and isinstance(server, str)
        and stream is None
        and limits is None
    ):
        result = _fast_plan(cat, server, kind, strict, mode).run(config)
        if result is not None:
            return result
    profile = cat.server(server)
    switches = profile.switches
    is_strict = _effective_strict(profile, strict=strict, soft=soft)
    raw = _as_bytes(config)
    decoded = _decode_request(raw, kind, profile)
    if soft and strict is None:
        _log_soft(decoded, kind, profile)
    info_key = (cat.digest, profile.version.text, is_strict)
    info = _INFOS.get(info_key)
    if info is None:
        info = _INFOS[info_key] = ServerInfo(
            version=profile.version.text, api_level=switches.api_level, strict=is_strict
        )
    error = _decode_error(decoded, profile, strict=is_strict)
    if (
        api_level_header is not None
        and kind == "stream"
        and not header_accepted(api_level_header, profile)
    ):
        # stream handlers check the header before decoding the body
        error = _api_error(profile, "required_api_level")
    config_value = decoded.config
    if error is not None or config_value is None:
        error = error or _api_error(profile, "invalid_json")
        minimum = _min_version(raw, decoded, kind=kind, profile=profile, cat=cat)
        return _rejected(info, decoded, error, minimum, kind=kind, op=op)
    if kind == "stream" and not config_value.name:
        # STREAM.CREATE.<name>: a body without the name does not match the subject
        error = _api_error(profile, "stream_mismatch")
        minimum = _min_version(raw, decoded, kind=kind, profile=profile, cat=cat)
        return _rejected(info, decoded, error, minimum, kind=kind, op=op)
    if kind == "consumer":
        config_value = config_value.config
        if not header_accepted(
            api_level_header, profile
        ):  # consumer create decodes first
            error = _api_error(profile, "required_api_level")
            minimum = _min_version(raw, decoded, kind=kind, profile=profile, cat=cat)
            return _rejected(info, decoded, error, minimum, kind=kind, op=op)

    hazard = hazard_function(profile, kind)
    found = hazard(config_value) if hazard is not None else None
    if found is not None:
        effect, text = found
        if effect == "crash":
            return _rejected(info, decoded, None, None, kind=kind, op=op, crash=text)
        return msgspec.structs.replace(
            _rejected(info, decoded, None, None, kind=kind, op=op), no_reply=text
        )
    context = Context(
        phase="create",
        mode=_answering_mode(kind, mode, config_value),
        stream=None if stream is None else _decode_existing(stream, "stream", profile),
        op=op,
        limits=limits,
        given=None if limits is None else _given(raw, kind, profile),
    )
    failure = first_failure(kind, config_value, profile, context)
    if failure is not None:
        error = ApiError(
            code=failure.code,
            err_code=failure.err_code,
            description=failure.description,
        )
        minimum = _min_version(raw, decoded, kind=kind, profile=profile, cat=cat)
        return msgspec.structs.replace(
            _rejected(info, decoded, error, minimum, kind=kind, op=op),
            check=failure.check,
            assumed=assumptions(kind, profile, context, config_value),
        )
    level, minimum, defaulted = _stamped(
        features_for(cat, profile.line, kind), profile, kind, context, config_value
    )
    previous = (
        _decode_existing(existing, kind, profile) if existing is not None else None
    )
    previous_md = getattr(previous, "metadata", None) if previous is not None else None
    if op == "create" and previous is not None:
        if not _same_config(config_value, previous):
            key = "stream_name_exist" if kind == "stream" else "consumer_exists"
            minimum = _min_version(raw, decoded, kind=kind, profile=profile, cat=cat)
            return _rejected(
                info, decoded, _api_error(profile, key), minimum, kind=kind, op=op
            )
        stored = stored_metadata(
            config_value.metadata,
            profile=profile,
            level=level,
            existing=previous_md,
            idempotent=True,
        )
    else:
        stored = stored_metadata(config_value.metadata, profile=profile, level=level)
    dropped = () if is_strict else decoded.dropped_fields
    return Validation(
        server=info,
        kind=kind,
        op=op,
        accepted=True,
        error=None,
        unknown_fields=decoded.unknown_fields,
        dropped_fields=dropped,
        stamped_metadata=stored,
        response_metadata=response_metadata(stored, profile),
        created_metadata=created_metadata(profile, previous_md, op=op)
        if created_version
        else None,
        required_level=level,
        min_server_version=minimum
        if not decoded.unknown_fields
        else _min_version(raw, decoded, kind=kind, profile=profile, cat=cat),
        stored_config=(kept := _with_metadata(defaulted, stored)),
        assumed=assumptions(kind, profile, context, config_value),
        lost_on_restart=_lost_on_restart(kind, kept, profile, context.mode, cat),
    )


def _lost_on_restart(
    kind: AssetKind,
    stored: dict[str, Any],
    profile: ServerProfile,
    mode: Mode,
    cat: Catalogue,
) -> str | None:
    """Why the server does not load ``stored`` when it next starts, or ``None``.

    The stored config is judged as ``check`` judges a stored asset on the same release
    and mode: a create the server accepts can still fail its start-up config checks,
    which see the config with its defaults (a counter stream with
    ``subject_delete_marker_ttl``: the default turns ``allow_msg_ttl`` on after the
    create's counter check; binary: accepted, then ``Error recreating stream`` at the
    next start on 2.12.8 and 2.15.1).
    """
    name = str(stored.get("name") or stored.get("durable_name") or "")
    asset = Asset(
        source="validate",
        kind=kind,
        stream=name if kind == "stream" else "",
        name=name,
        config=msgspec.json.encode(stored),
    )
    verdict = judge(asset, profile, mode, cat).verdict
    return verdict.reason if verdict.state == "unloadable" else None


def _answering_mode(kind: AssetKind, mode: Mode, config: Any) -> Mode:
    """The mode of the path that answers: a cluster's direct consumer takes a single one.

    ``jsConsumerCreateRequest`` lets the stream leader answer a ``direct`` consumer
    create on the standalone path (``server/jetstream_api.go:4608-4613, 4747-4757`` at
    v2.12.8; every release): its checks and its stamp are a single server's.
    """
    if mode == "cluster" and kind == "consumer" and getattr(config, "direct", False):
        return "single"
    return mode


def _stamped(
    features: Callable[[Any], Features],
    profile: ServerProfile,
    kind: AssetKind,
    context: Context,
    config: Any,
) -> tuple[int, str, dict[str, Any]]:
    """The level the server stamps, the earliest release, and the stored config.

    The level is that of the defaulted config where the server stamps after its
    defaults (:func:`_stamps_defaulted`), else that of the request.
    """
    level, minimum = features(config)
    defaulted = stored_config(kind, config, profile, context)
    if _stamps_defaulted(kind, context):
        level = features(msgspec.convert(defaulted, type(config)))[0]
    return level, minimum, defaulted


def _stamps_defaulted(kind: AssetKind, context: Context) -> bool:
    """Whether the level is stamped on the defaulted config, not the request's.

    A cluster's meta leader stamps a consumer after ``setConsumerConfigDefaults``
    (``jsClusteredConsumerRequest``, ``server/jetstream_cluster.go:8896, 9019-9027``
    at v2.12.8); a single server before (``server/jetstream_api.go:4785``). Of the
    level rules only ``priority_timeout`` meets a default: a negative one is 0 from
    2.12.0 (``consumer.default.negatives``). Streams are stamped after
    ``checkStreamCfg`` in both modes.
    """
    return kind == "consumer" and context.mode == "cluster"


def _with_metadata(
    config: dict[str, Any], metadata: dict[str, str] | None
) -> dict[str, Any]:
    """The stored config carries the metadata the server stores, not the request's.

    ``pedantic`` belongs to the request (2.11+), not to the config.
    """
    config.pop("pedantic", None)
    config.pop("metadata", None)
    if metadata:
        config["metadata"] = metadata
    return config


class _FastPlan:
    """Everything a plain create on one server needs, bound once.

    That is the decoder, the checks, the compiled rules and the reply templates, for
    configs msgspec accepts exactly as Go would.
    """

    __slots__ = (
        "assume",
        "catalogue",
        "checks",
        "context",
        "created",
        "decoder",
        "dynamic",
        "features",
        "hazard",
        "info",
        "kind",
        "profile",
        "stamps",
    )

    def __init__(
        self,
        cat: Catalogue,
        profile: ServerProfile,
        kind: AssetKind,
        info: ServerInfo,
        mode: Mode,
    ) -> None:
        self.catalogue = cat  # keeps id(cat) in the cache key valid
        self.kind: AssetKind = kind
        self.info = info
        struct = stream_request(profile.line) if kind == "stream" else "ConsumerConfig"
        self.decoder = fast_path(profile.line, struct)
        self.features = features_for(cat, profile.line, kind)
        self.stamps = profile.switches.stamps_level
        self.hazard = hazard_function(profile, kind)
        self.dynamic = {
            SERVER_VERSION_KEY: profile.version.text,
            SERVER_LEVEL_KEY: str(profile.api_level),
        }
        self.created = created_metadata(profile, None, op="create")
        self.profile = profile
        self.context = Context(phase="create", mode=mode)
        self.checks = bound_checker(profile, kind, self.context)
        self.assume = assumer(kind, profile, self.context)

    def run(self, config: bytes | str | Mapping[str, Any]) -> Validation | None:
        """The validation of a clean config, or ``None`` when it needs the exact path."""
        if not isinstance(config, bytes | str):
            return None
        value = self.decoder(config)
        if value is None or (self.kind == "stream" and not value.name):
            return None  # the exact path, or the name check of the general path
        if self.hazard is not None and self.hazard(value) is not None:
            return None
        if _answering_mode(self.kind, self.context.mode, value) != self.context.mode:
            return None  # the general path takes the answering path's mode
        if self.checks is not None and self.checks(value) is not None:
            return None  # the general path words the reply
        level, minimum, defaulted = _stamped(
            self.features, self.profile, self.kind, self.context, value
        )
        metadata = value.metadata
        if not self.stamps:
            stored = dict(metadata) if metadata else None
            response = dict(metadata) if metadata else None
        else:
            stored = dict(metadata) if metadata else {}
            if SERVER_VERSION_KEY in stored or SERVER_LEVEL_KEY in stored:
                stored.pop(SERVER_VERSION_KEY, None)  # dynamic keys are never stored
                stored.pop(SERVER_LEVEL_KEY, None)
            stored[REQUIRED_LEVEL_KEY] = str(level)
            response = {**stored, **self.dynamic}
        return Validation(
            server=self.info,
            kind=self.kind,
            op="create",
            accepted=True,
            error=None,
            unknown_fields=(),
            dropped_fields=(),
            stamped_metadata=stored,
            response_metadata=response,
            created_metadata=dict(self.created),
            required_level=level,
            min_server_version=minimum,
            stored_config=(kept := _with_metadata(defaulted, stored)),
            assumed=self.assume(value),
            lost_on_restart=_lost_on_restart(
                self.kind, kept, self.profile, self.context.mode, self.catalogue
            ),
        )


_FAST_PLANS: dict[tuple[int, str, str, bool | None, str], _FastPlan] = derived.cache(
    "requests.fast_plans", keyed_by="(id of catalogue, server, kind, strict, mode)"
)


def _fast_plan(
    cat: Catalogue, server: str, kind: AssetKind, strict: bool | None, mode: Mode
) -> _FastPlan:
    key = (id(cat), server, kind, strict, mode)
    plan = _FAST_PLANS.get(key)
    if plan is None or plan.catalogue is not cat:
        profile = cat.server(server)
        is_strict = _effective_strict(profile, strict=strict, soft=False)
        info = ServerInfo(
            version=profile.version.text,
            api_level=profile.switches.api_level,
            strict=is_strict,
        )
        plan = _FAST_PLANS[key] = _FastPlan(cat, profile, kind, info, mode)
    return plan


def _effective_strict(
    profile: ServerProfile, *, strict: bool | None, soft: bool
) -> bool:
    switches = profile.switches
    if not switches.strict_api_option:
        return False  # 2.10: no strict decoding at all
    if strict is not None:
        return strict
    return False if soft else switches.strict_api_default


def _as_bytes(config: bytes | str | Mapping[str, Any]) -> bytes:
    if isinstance(config, bytes):
        return config
    if isinstance(config, str):
        return config.encode("utf-8", "surrogatepass")
    try:
        return msgspec.json.encode(config)
    except (TypeError, ValueError, RecursionError) as exc:
        msg = f"config is not JSON-encodable: {exc}"
        raise InvalidArgument(msg) from None


def _given(raw: bytes, kind: AssetKind, profile: ServerProfile) -> frozenset[str]:
    """The top-level fields a stream request sets (a consumer's: none are asked)."""
    if kind != "stream":
        return frozenset()
    return given_fields(raw, profile.line, stream_request(profile.line))


def _decode_request(raw: bytes, kind: AssetKind, profile: ServerProfile) -> Decoded:
    go_json = profile.switches.go_json
    if kind == "stream":
        struct = stream_request(profile.line)
        return decode(raw, profile.line, struct, context="request", go_json=go_json)
    body = _CONSUMER_PREFIX + (raw if raw.strip() else b"{}") + b"}"
    decoded = decode(
        body, profile.line, "CreateConsumerRequest", context="request", go_json=go_json
    )
    return msgspec.structs.replace(
        decoded,
        unknown_fields=tuple(
            path.removeprefix("config.") for path in decoded.unknown_fields
        ),
        dropped_fields=tuple(
            path.removeprefix("config.") for path in decoded.dropped_fields
        ),
        syntax_offset=None
        if decoded.syntax_offset is None
        else max(decoded.syntax_offset - len(_CONSUMER_PREFIX), 0),
    )


def _decode_existing(
    existing: bytes | str | Mapping[str, Any], kind: AssetKind, profile: ServerProfile
) -> Any:
    struct = CONFIG_STRUCT[kind]
    decoded = decode(
        _as_bytes(existing),
        profile.line,
        struct,
        context="stored",
        go_json=profile.switches.go_json,
    )
    return decoded.config


def _decode_error(
    decoded: Decoded, profile: ServerProfile, *, strict: bool
) -> ApiError | None:
    if not profile.switches.strict_api_option:
        # 2.10 decodes with json.Unmarshal: one value, unknown fields ignored
        message = decoded.lenient_error
    elif strict or decoded.strict_error is None:
        message = decoded.strict_error
        if message is not None and decoded.syntax_offset is not None:
            message = f"{message} at offset {decoded.syntax_offset}"
    else:
        message = decoded.lenient_error
    if message is None:
        return None
    return _api_error(profile, "invalid_json", err=message)


def _api_error(profile: ServerProfile, key: str, **values: str) -> ApiError:
    spec = profile.line.errors[key]
    return ApiError(
        code=spec.code,
        err_code=spec.err_code,
        description=spec.description.format(**values),
    )


def _rejected(
    info: ServerInfo,
    decoded: Decoded,
    error: ApiError | None,
    minimum: str | None,
    *,
    kind: AssetKind,
    op: Operation,
    crash: str | None = None,
) -> Validation:
    return Validation(
        server=info,
        kind=kind,
        op=op,
        accepted=False,
        error=error,
        unknown_fields=decoded.unknown_fields,
        dropped_fields=(),
        stamped_metadata=None,
        response_metadata=None,
        created_metadata=None,
        required_level=0,
        min_server_version=minimum,
        server_crash=crash,
    )


def _same_config(request: Any, stored: Any) -> bool:
    """Idempotent create: every field the request sets equals the stored value.

    Fields the request leaves at their zero value are taken to match the stored
    default (the server fills defaults before comparing); metadata is compared
    after ``copyStreamMetadata`` semantics, i.e. not at all for versioning keys.
    """
    for name in request.__struct_fields__:
        if name in {"metadata", "pedantic"}:
            continue
        value = getattr(request, name)
        if value in (None, "", 0, False, []):
            continue
        if not hasattr(stored, name) or msgspec.to_builtins(
            getattr(stored, name)
        ) != msgspec.to_builtins(value):
            return False
    return True


def _min_version(
    raw: bytes,
    decoded: Decoded,
    *,
    kind: AssetKind,
    profile: ServerProfile,
    cat: Catalogue,
) -> str | None:
    """The earliest release for the config (see :func:`config_features`)."""
    if not decoded.unknown_fields and decoded.config is not None:
        config = decoded.config.config if kind == "consumer" else decoded.config
        return min_server_version(config, profile.line, cat, kind=kind)
    needs = config_features(raw, kind, cat)
    return None if needs is None else needs[1]


def _log_soft(decoded: Decoded, kind: AssetKind, profile: ServerProfile) -> None:
    for path in decoded.unknown_fields:
        log.warning(
            "unknown_field_ignored",
            asset=decoded.name,
            kind=kind,
            field=path,
            server_version=profile.version.text,
        )
