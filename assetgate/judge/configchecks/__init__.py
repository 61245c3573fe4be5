"""The server's semantic config checks, per release: what it refuses to create or load.

nats-server runs ``checkStreamCfg``/``checkConsumerCfg`` (and the checks of
``addStream``/``addConsumer``) on every create and update, and again on every stored
asset when it starts. The checks change between releases, so a config one release
accepted can fail to load on another. The facts (which check applies from which patch
release, on create or on load, with which reply) are data in ``levels/``
(``[[checks]]``); the logic of each check is one small function in :mod:`.stream` or
:mod:`.consumer`, registered under the check's id, in the server's order.

A check function takes the decoded config (the release line's Struct) and a
:class:`Context`, and returns ``None`` when the config passes, else the values its
description template needs (an empty dict when it needs none). Checks that need facts
an inventory lacks use the server's defaults and say so (``assumes``).

The defaults the server fills in before it stores a config work the same way: a
``[[checks]]`` entry whose id is ``<kind>.default.<name>`` (no reply: it never fails)
and a function registered with :func:`register_default` that changes the config's
plain form (a dict) in place; :func:`stored_config` applies them in order.

Pure: no I/O.

Size: over the ~400-line guide because the registry, the plans per release and phase and
the bound loaders are one mechanism that both check modules use.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

import msgspec

from assetgate.catalogue import derived
from assetgate.catalogue.levels import Phase  # noqa: TC001 - msgspec reads it at runtime
from assetgate.catalogue.model import CONFIG_STRUCT, STREAM_REQUEST

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from assetgate.catalogue.levels import (
        ConfigCheck,
        ErrorSpec,
        ReleaseLine,
        ServerProfile,
    )

__all__ = [
    "CONSUMER",
    "STREAM",
    "CheckFailure",
    "Context",
    "LineChecks",
    "Registered",
    "ServerLimits",
    "assumer",
    "assumptions",
    "bound_checker",
    "first_failure",
    "line_checks",
    "load_checker",
    "load_notes",
    "plan",
    "register",
    "register_default",
    "register_note",
    "stored_config",
]

Mode = Literal["single", "cluster"]


class ServerLimits(msgspec.Struct, frozen=True, kw_only=True):
    """The storage a standalone server has for JetStream, as its config states it.

    The server's ``jetstream { max_file_store, max_memory_store }`` in bytes; the
    server's own defaults (75% of the free disk of ``store_dir``, 75% of the RAM) come
    from the machine, so ``None`` (not known) leaves the stream storage check out and
    ``assumed`` says so. The server refuses a create whose ``max_bytes`` exceeds what
    remains.

    Attributes:
        max_file_store: ``max_file_store`` (bytes), ``None`` when not known.
        max_memory_store: ``max_memory_store`` (bytes), ``None`` when not known.
    """

    max_file_store: int | None = None
    max_memory_store: int | None = None


class Context(msgspec.Struct, frozen=True, kw_only=True):
    """What a check may look at besides the config itself.

    Attributes:
        phase: ``create`` (an API request) or ``load`` (a stored asset at start-up).
        mode: ``single`` (a standalone server) or ``cluster``.
        stream: for a consumer: its stream's decoded config, ``None`` when unknown
            (checks that need it are then skipped, and say so in ``assumes``).
        op: for ``create``: the request, ``create`` or ``update`` (the create
            handler's own checks and ``addStream``'s are not made on an update).
        limits: the server's storage limits when the caller knows them (``None``:
            the checks that need them pass, and say so in ``assumes``).
        given: the request's top-level fields, by their Go names, that its keys
            set (``None``: not known, as for a stored config): a zero value the
            request leaves out is not always the one the checks default it to.
    """

    phase: Phase
    mode: Mode
    stream: Any = None
    op: Literal["create", "update"] = "create"
    limits: ServerLimits | None = None
    given: frozenset[str] | None = None


class CheckFailure(msgspec.Struct, frozen=True, kw_only=True):
    """A config the server refuses: the check and the server's reply.

    ``log_reason`` is how the server's start-up log line ends
    (``<description> (<err_code>)``).
    """

    check: str
    code: int
    err_code: int
    description: str
    log: str | None = None

    @property
    def log_reason(self) -> str:
        """The reason as the server logs it when it does not recover the asset.

        ``log`` when the server logs other words than its reply (a check made
        before the reply is built), else ``<description> (<err_code>)``.
        """
        if self.log is not None:
            return self.log
        return f"{self.description} ({self.err_code})"


class Registered(msgspec.Struct, frozen=True):
    """A check function under its id, with what it assumes when facts are missing."""

    id: str
    function: Callable[[Any, Context, ConfigCheck], Mapping[str, str] | None]
    assumes: str = ""
    needs_stream: bool = False
    guard: str = ""
    assumes_when: str = ""


STREAM: Final[dict[str, Registered]] = {}
"""Stream checks by id, in the order the server makes them."""

CONSUMER: Final[dict[str, Registered]] = {}
"""Consumer checks by id, in the order the server makes them."""

DEFAULTS: Final[dict[str, Registered]] = {}
"""Default fillers of both kinds by id, in the order the server applies them."""

NOTES: Final[dict[str, Registered]] = {}
"""Load-time notes of both kinds by id: defaults that change behaviour, not state."""

_DefaultFn = TypeVar(
    "_DefaultFn", bound="Callable[[dict[str, Any], Context, ConfigCheck], None]"
)


_CheckFn = TypeVar(
    "_CheckFn", bound="Callable[[Any, Context, ConfigCheck], Mapping[str, str] | None]"
)


def register(
    check_id: str,
    *,
    guard: str = "",
    assumes: str = "",
    assumes_when: str = "",
    needs_stream: bool = False,
) -> Callable[[_CheckFn], _CheckFn]:
    """Register a check function under ``check_id`` (``stream.x`` or ``consumer.x``).

    Args:
        check_id: the id of its ``[[checks]]`` entries in ``levels/``.
        guard: a cheap Python expression over the config ``c`` (and the context
            ``_ctx``) that is true whenever the check can fail
            (``"c.priority_groups"``); ``check`` runs the function
            only when it holds, so a clean config costs an attribute load per check,
            not a call. A field the release line does not know reads as ``None``.
            ``""``: always run. A guard may call the helpers of the check's module.
            ``tests/unit/test_configchecks_*.py`` hold every guard true on every config
            its check refuses.
        assumes: what the check assumes when the inventory lacks a fact.
        assumes_when: a Python expression over ``c`` and ``_ctx``, as ``guard``:
            ``assumes`` is said only for a config it holds for (``""``: always).
        needs_stream: a consumer check that needs its stream's config.
    """
    table = STREAM if check_id.startswith("stream.") else CONSUMER

    def wrap(function: _CheckFn) -> _CheckFn:
        if check_id in table:
            msg = f"check {check_id!r} registered twice"
            raise RuntimeError(msg)
        table[check_id] = Registered(
            check_id, function, assumes, needs_stream, guard, assumes_when
        )
        return function

    return wrap


def register_default(
    default_id: str, *, assumes: str = "", needs_stream: bool = False
) -> Callable[[_DefaultFn], _DefaultFn]:
    """Register a default filler under ``default_id`` (``<kind>.default.<name>``)."""

    def wrap(function: _DefaultFn) -> _DefaultFn:
        if default_id in DEFAULTS or ".default." not in default_id:
            msg = f"default {default_id!r} registered twice or misnamed"
            raise RuntimeError(msg)
        DEFAULTS[default_id] = Registered(default_id, function, assumes, needs_stream)
        return function

    return wrap


def register_note(note_id: str, *, guard: str = "") -> Callable[[_CheckFn], _CheckFn]:
    """Register a load-time note under ``note_id`` (``<kind>.note.<name>``).

    The function answers as a check does (``None``: nothing to say; else the values of
    the entry's description, which is the note); ``guard`` as for :func:`register`.
    """

    def wrap(function: _CheckFn) -> _CheckFn:
        if note_id in NOTES or ".note." not in note_id:
            msg = f"note {note_id!r} registered twice or misnamed"
            raise RuntimeError(msg)
        NOTES[note_id] = Registered(note_id, function, guard=guard)
        return function

    return wrap


_Plan = tuple[tuple[Registered, "ConfigCheck"], ...]
_PLANS: dict[tuple[str, str, str, str], _Plan] = derived.cache(
    "configchecks.plans", keyed_by="(line fingerprint, version, kind, phase)"
)


def plan(profile: ServerProfile, kind: str, phase: Phase) -> _Plan:
    """The checks ``profile`` makes on ``phase`` for ``kind``, in the server's order."""
    key = (profile.line.fingerprint, profile.version.text, kind, phase)
    found = _PLANS.get(key)
    if found is None:
        table = STREAM if kind == "stream" else CONSUMER
        if phase in {"store", "note"}:
            source = DEFAULTS if phase == "store" else NOTES
            table = {k: v for k, v in source.items() if k.startswith(f"{kind}.")}
        specs = {c.id: c for c in profile.checks if phase in c.on}
        found = tuple(
            (registered, specs[check_id])
            for check_id, registered in table.items()
            if check_id in specs
        )
        _PLANS[key] = found
    return found


def first_failure(
    kind: str, config: Any, profile: ServerProfile, context: Context
) -> CheckFailure | None:
    """The first check ``config`` fails on ``profile`` (the server stops there)."""
    errors = profile.line.errors
    for registered, spec in plan(profile, kind, context.phase):
        if registered.needs_stream and context.stream is None:
            continue
        values = registered.function(config, context, spec)
        if values is not None:
            return _failure(spec, values, errors)
    return None


def _failure(
    spec: ConfigCheck, values: Mapping[str, str], errors: Mapping[str, ErrorSpec]
) -> CheckFailure:
    """The reply: the entry's own, or the ``[errors]`` entry the check names.

    A check with several replies returns ``{"error": KEY, ...}``: the reply is
    ``[errors.KEY]`` of the release line, formatted with the other values.
    """
    key = values.get("error")
    if key is not None:
        reply = errors[key]
        return CheckFailure(
            check=spec.id,
            code=reply.code,
            err_code=reply.err_code,
            description=reply.description.format_map(values),
        )
    description = spec.description.format_map(values) if values else spec.description
    return CheckFailure(
        check=spec.id,
        code=spec.code,
        err_code=spec.err_code,
        description=description,
        log=values.get("log"),
    )


_LOADERS: dict[
    tuple[int, str, str],
    tuple[ServerProfile, Callable[[Any], CheckFailure | None] | None],
] = derived.cache("configchecks.loaders", keyed_by="(id of profile, kind, mode)")


def load_checker(
    profile: ServerProfile, kind: str, mode: Mode
) -> Callable[[Any], CheckFailure | None] | None:
    """The load-time checks of ``profile`` for ``kind``, bound once (``None``: none).

    For the hot path of ``check``: the plan is looked up once per profile, kind and
    mode, not once per asset; the stream of a consumer is not known there, so checks
    that need it are left out.
    """
    key = (id(profile), kind, mode)
    found = _LOADERS.get(key)
    if found is None or found[0] is not profile:
        function = bound_checker(profile, kind, Context(phase="load", mode=mode))
        found = _LOADERS[key] = (profile, function)
    return found[1]


def bound_checker(
    profile: ServerProfile, kind: str, context: Context
) -> Callable[[Any], CheckFailure | None] | None:
    """:func:`first_failure` on ``context`` for ``profile`` and ``kind``, bound once.

    Each check runs only when its guard holds (the row tests hold every guard true on
    every config its check refuses, in each phase); ``None`` when no check applies.
    For a caller that checks many configs in one context (``validate``'s fast plan).
    """
    steps = tuple(
        step
        for step in plan(profile, kind, context.phase)
        if context.stream is not None or not step[0].needs_stream
    )
    return _compile(steps, context, profile, kind)


_NOTERS: dict[
    tuple[int, str, str],
    tuple[ServerProfile, Callable[[Any], tuple[str, ...]] | None],
] = derived.cache("configchecks.noters", keyed_by="(id of profile, kind, mode)")


def load_notes(
    profile: ServerProfile, kind: str, mode: Mode
) -> Callable[[Any], tuple[str, ...]] | None:
    """The load-time notes of ``profile`` for ``kind``, bound once (``None``: none).

    The function returns the notes that apply to a stored config that loads: defaults
    the target fills in that change what it does with the asset.
    """
    key = (id(profile), kind, mode)
    found = _NOTERS.get(key)
    if found is None or found[0] is not profile:
        steps = plan(profile, kind, "note")
        context = Context(phase="load", mode=mode)
        function = None
        if steps:
            run_all = _generate(steps, context, profile.line, kind, collect=True)

            def function(config: Any) -> tuple[str, ...]:
                found: dict[int, CheckFailure] | None = run_all(config)
                if found is None:
                    return ()
                return tuple(failure.description for failure in found.values())

        found = _NOTERS[key] = (profile, function)
    return found[1]


_FIELD: Final = re.compile(r"\bc\.([a-z_][a-z0-9_]*)")


def _compile(
    steps: _Plan, context: Context, profile: ServerProfile, kind: str
) -> Callable[[Any], CheckFailure | None] | None:
    """One function running ``steps`` in order, each only when its guard holds."""
    if not steps:
        return None
    checks: Callable[[Any], CheckFailure | None] = _generate(
        steps, context, profile.line, kind, collect=False
    )
    return checks


def _generate(
    steps: _Plan, context: Context, line: ReleaseLine, kind: str, *, collect: bool
) -> Any:
    """The function of ``steps``, each made only when its guard holds.

    It returns the first failure (``collect`` false), or every failure by step index
    (``None`` when there is none).
    """
    known = {f.name for f in line.structs[CONFIG_STRUCT[kind]].fields}
    request = line.structs.get(STREAM_REQUEST)
    if context.phase == "create" and kind == "stream" and request is not None:
        known |= {f.name for f in request.fields}  # a create also carries pedantic

    def field(match: re.Match[str]) -> str:
        return match.group(0) if match.group(1) in known else "None"

    namespace: dict[str, Any] = {}
    for registered, _spec in steps:  # guards may call their module's helpers
        namespace.update(registered.function.__globals__)
    namespace.update({"_ctx": context, "_fail": _failure, "_errors": line.errors})
    guards = [
        _FIELD.sub(field, registered.guard) if registered.guard else "True"
        for registered, _spec in steps
    ]
    # a guard that heads two runs (two forms of one check, such as each patch
    # range's subjects loop on a line) is tested once, its value kept
    heads = [g for i, g in enumerate(guards) if i == 0 or g != guards[i - 1]]
    repeated = {g for g in heads if heads.count(g) > 1}
    kept: dict[str, str] = {}
    source = ["def _checks(c):", "    out = None"]
    for index, (registered, spec) in enumerate(steps):
        namespace[f"_f{index}"] = registered.function
        namespace[f"_s{index}"] = spec
        if index == 0 or guards[index] != guards[index - 1]:  # one test for a run
            guard = guards[index]
            if guard in kept:
                source.append(f"    if {kept[guard]}:")
            elif guard in repeated and guard != "True":
                kept[guard] = f"_g{index}"
                source.append(f"    if (_g{index} := ({guard})):")
            else:
                source.append(f"    if {guard}:")
        source.append(f"        values = _f{index}(c, _ctx, _s{index})")
        source.append("        if values is not None:")
        if collect:
            source.append("            out = out or {}")
            source.append(
                f"            out[{index}] = _fail(_s{index}, values, _errors)"
            )
        else:
            source.append(f"            return _fail(_s{index}, values, _errors)")
    source.append("    return out")
    code = compile("\n".join(source), f"<assetgate checks {kind}>", "exec")
    exec(code, namespace)  # noqa: S102 - source built from the check modules' guards
    return namespace["_checks"]


class LineChecks:
    """Every load-time check and note of one release line, made once per config.

    For judging one stored config against many releases of a line
    (``check_matrix``): :meth:`run` makes each check or note any release of the line
    makes, once; :meth:`pick` gives one release's answer from those results, the same
    as :func:`load_checker` (the first failure in that release's order) and, when
    nothing fails, :func:`load_notes`.
    """

    def __init__(self, line: ReleaseLine, kind: str, mode: Mode) -> None:
        """Compile every load-time check and note of ``line`` for ``kind`` once."""
        self.kind = kind
        self.mode = mode
        table = STREAM if kind == "stream" else CONSUMER
        steps: list[tuple[Registered, ConfigCheck]] = []
        for spec in line.checks_in_force():
            if spec.kind != kind:
                continue
            for phase, source in (("load", table), ("note", NOTES)):
                registered = source.get(spec.id)
                if (
                    phase in spec.on
                    and registered is not None
                    and not registered.needs_stream
                ):
                    steps.append((registered, spec))
        # by value: equal catalogues loaded twice hold equal, not identical, entries
        self.index = {_step_key(r, spec): i for i, (r, spec) in enumerate(steps)}
        context = Context(phase="load", mode=mode)
        self.function: Callable[[Any], dict[int, CheckFailure] | None] | None = (
            _generate(tuple(steps), context, line, kind, collect=True)
            if steps
            else None
        )
        self._orders: dict[
            int, tuple[ServerProfile, tuple[int, ...], tuple[int, ...]]
        ] = {}

    def run(self, config: Any) -> dict[int, CheckFailure] | None:
        """Every failure of ``config``, by step (``None``: it passes everything)."""
        return None if self.function is None else self.function(config)

    def orders(self, profile: ServerProfile) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The steps ``profile`` makes on load and for notes, in its order."""
        found = self._orders.get(id(profile))
        if found is None or found[0] is not profile:
            load = tuple(
                self.index[_step_key(r, spec)]
                for r, spec in plan(profile, self.kind, "load")
                if not r.needs_stream
            )
            note = tuple(
                self.index[_step_key(r, spec)]
                for r, spec in plan(profile, self.kind, "note")
                if not r.needs_stream
            )
            found = self._orders[id(profile)] = (profile, load, note)
        return found[1], found[2]

    def pick(
        self, profile: ServerProfile, results: dict[int, CheckFailure] | None
    ) -> tuple[CheckFailure | None, tuple[str, ...]]:
        """What ``profile`` makes of ``results``: its first failure, else its notes."""
        if results is None:
            return None, ()
        load, note = self.orders(profile)
        for step in load:
            failure = results.get(step)
            if failure is not None:
                return failure, ()
        return None, tuple(
            results[step].description for step in note if step in results
        )


def _step_key(registered: Registered, spec: ConfigCheck) -> tuple[str, bytes]:
    return registered.id, msgspec.json.encode(spec)


_LINE_CHECKS: dict[tuple[str, str, str], LineChecks] = derived.cache(
    "configchecks.line_checks", keyed_by="(line fingerprint, kind, mode)"
)


def line_checks(line: ReleaseLine, kind: str, mode: Mode) -> LineChecks:
    """The :class:`LineChecks` of a release line, built once."""
    key = (line.fingerprint, kind, mode)
    found = _LINE_CHECKS.get(key)
    if found is None:
        found = _LINE_CHECKS[key] = LineChecks(line, kind, mode)
    return found


def stored_config(
    kind: str, config: Any, profile: ServerProfile, context: Context
) -> dict[str, Any]:
    """The config as ``profile`` stores it: its plain form with the defaults filled in.

    Only meaningful for a config that passes :func:`first_failure`.
    """
    stored: dict[str, Any] = msgspec.to_builtins(config)
    for registered, spec in plan(profile, kind, "store"):
        if registered.needs_stream and context.stream is None:
            continue
        registered.function(stored, context, spec)
    return stored


def assumptions(
    kind: str, profile: ServerProfile, context: Context, config: Any = None
) -> tuple[str, ...]:
    """What the checks made on ``context`` assumed, as sentences (no duplicates).

    A check's ``assumes_when`` sentence is said only for a ``config`` it holds for
    (never without a config).
    """
    return assumer(kind, profile, context)(config)


def assumer(
    kind: str, profile: ServerProfile, context: Context
) -> Callable[[Any], tuple[str, ...]]:
    """:func:`assumptions` on ``context``, bound once: a config in, its sentences out."""
    said: list[tuple[str, Callable[[Any, Context], bool] | None]] = []
    for registered, _spec in plan(profile, kind, context.phase):
        if registered.needs_stream and context.stream is None:
            text = f"{registered.id}: not checked (the stream's config is not known)"
            said.append((text, None))
        elif registered.assumes:
            when = _assumes_when(registered) if registered.assumes_when else None
            said.append((f"{registered.id}: assumed {registered.assumes}", when))
    if all(when is None for _text, when in said):
        always = tuple(dict.fromkeys(text for text, _when in said))
        return lambda _config: always

    def sentences(config: Any) -> tuple[str, ...]:
        return tuple(
            dict.fromkeys(
                text
                for text, when in said
                if when is None or (config is not None and when(config, context))
            )
        )

    return sentences


_WHEN: dict[str, Callable[[Any, Context], bool]] = {}


def _assumes_when(registered: Registered) -> Callable[[Any, Context], bool]:
    """``assumes_when`` compiled once (it may call its module's helpers)."""
    found = _WHEN.get(registered.id)
    if found is None:
        namespace = dict(registered.function.__globals__)
        code = f"lambda c, _ctx: bool({registered.assumes_when})"
        found = _WHEN[registered.id] = eval(code, namespace)  # noqa: S307 - the module's own text
    return found


# the check modules register themselves on import, in the server's order
from assetgate.judge.configchecks import consumer, stream  # noqa: E402, F401
