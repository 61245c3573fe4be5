"""The rules: one name per kind of finding, shared by every flag and report format.

A rule is a state, a drift flag, a whole-cluster outcome, ``overlap``, ``record-error``
or ``ignored``. ``--fail-on`` and ``--accept`` take these names; SARIF rule ids,
GitHub annotation titles, JUnit failure types and the failing findings
(``finding_rules``, a scan summary's ``main_finding``) print them. Each rule's SARIF
level and descriptions are stated here once, and so is what fails a run. The names
themselves come from the vocabulary in :mod:`assetgate.wire` (``STATES``, ``Drift``,
``OUTCOMES``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal, NamedTuple, get_args

from assetgate.wire import OUTCOMES, STATES, Drift

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable

    from assetgate.judge.gate import Verdict

__all__ = [
    "ALIASES",
    "ALWAYS_FAIL",
    "DEFAULT_FAIL_ON",
    "FAIL_ON_NAMES",
    "NO_ASSETS",
    "RULES",
    "Rule",
    "about",
    "accepted_rules",
    "canonical",
    "failing_rules",
    "failing_set",
    "rules_failing",
]

Group = Literal["state", "drift", "outcome", "overlap", "record"]
Level = Literal["error", "warning", "note"]


class Rule(NamedTuple):
    """One kind of finding: its name, what it is about, and how reports rank it."""

    name: str
    group: Group
    level: Level
    """The SARIF level (``note`` findings do not fail a JUnit suite)."""
    title: str
    text: str
    always_fails: bool
    """Fails every run unless an ``--accept`` names it, whatever ``--fail-on`` says."""


# name -> (level, title, text, always_fails); ``online`` is a state but not a finding
_ABOUT: Final[dict[str, tuple[Level, str, str, bool]]] = {
    "offline": (
        "error",
        "Asset loads offline on the target",
        "The target server loads the stored stream or consumer but keeps it offline (unsupported API level or config); it serves no messages until upgraded.",
        False,
    ),
    "degraded": (
        "warning",
        "Asset loads with fields dropped",
        "The target server loads the asset but silently ignores stored fields it does not know, so the asset behaves differently than configured.",
        True,
    ),
    "unloadable": (
        "error",
        "Asset cannot be loaded",
        "The target server cannot decode the stored config at all; the asset vanishes.",
        True,
    ),
    "detached": (
        "error",
        "Consumer not loaded because of its stream",
        "The consumer itself is supported, but its stream is offline, does not load or is missing from the inventory, so the consumer is not loaded.",
        True,
    ),
    "unavailable": (
        "error",
        "Asset unavailable: its whole cluster is down",
        "The target takes the asset's whole cluster down (see the cluster's outcome), so no JetStream request about any of its assets is answered.",
        True,
    ),
    "meta_unavailable": (
        "error",
        "Cluster JetStream unavailable after the change",
        "Every node of the cluster fails to apply a stored meta entry, no meta leader is elected and every JetStream API request answers 503 (JetStream system temporarily unavailable).",
        True,
    ),
    "meta_state_lost": (
        "error",
        "Cluster starts without its JetStream state",
        "The cluster serves, but its meta layer lists none of the stored assets.",
        True,
    ),
    "crash": (
        "error",
        "Cluster servers crash",
        "The cluster's nodes panic and exit when they load the stored state; any node left has no meta leader.",
        True,
    ),
    "overlap": (
        "error",
        "Stream subjects overlap",
        "Two streams of one account claim overlapping subjects on the target; offline streams keep their subjects, so creating or updating either one fails.",
        False,
    ),
    "record-error": (
        "error",
        "Inventory record could not be read",
        "An inventory record is malformed; the asset it describes was not checked.",
        False,
    ),
    "ignored": (
        "note",
        "Inventory record ignored",
        "An inventory record holds no stream or consumer to judge (another kind, a names-only reply, a pull record); it is listed with the reason.",
        False,
    ),
    "stamp_missing": (
        "note",
        "No required-level stamp",
        "The config carries no _nats.req.level metadata (created before 2.11 or restored); servers stamp it on the next update.",
        False,
    ),
    "stamp_unparsable": (
        "note",
        "Unparsable required-level stamp",
        "The _nats.req.level metadata is not an integer; servers treat the asset as unsupported or ignore the stamp, depending on the version.",
        False,
    ),
    "stamp_too_low": (
        "warning",
        "Required-level stamp below the features used",
        "The _nats.req.level metadata is lower than the level the config's features need, so an older server would load it without those features.",
        False,
    ),
    "stamp_too_high": (
        "note",
        "Required-level stamp above the features used",
        "The _nats.req.level metadata is higher than the level the config's features need, so older servers keep it offline although they could serve it.",
        False,
    ),
}

_GROUPS: Final[tuple[tuple[Group, tuple[str, ...]], ...]] = (
    ("state", tuple(state for state in STATES if state != "online")),
    ("outcome", tuple(outcome for outcome in OUTCOMES if outcome != "ok")),
    ("overlap", ("overlap",)),
    ("record", ("record-error", "ignored")),
    ("drift", get_args(Drift)),
)

RULES: Final[tuple[Rule, ...]] = tuple(
    Rule(name, group, *_ABOUT[name]) for group, names in _GROUPS for name in names
)
"""Every rule, in report order (the SARIF rule index)."""

_BY_NAME: Final = {r.name: r for r in RULES}

ALIASES: Final = {"errors": "record-error", "overlaps": "overlap"}
"""Older ``--fail-on`` spellings, still taken and read as the rule they name."""

FAIL_ON_NAMES: Final = ("online", *(r.name for r in RULES))
"""What ``--fail-on`` may name (``online`` too: every asset then fails the run)."""

ALWAYS_FAIL: Final = tuple(r.name for r in RULES if r.always_fails)
"""Rules that lose or hide an asset or a cluster: they fail every run unless accepted."""

DEFAULT_FAIL_ON: Final = (
    "offline",
    "degraded",
    "unloadable",
    "detached",
    "unavailable",
    "record-error",
)
"""What fails a run when ``--fail-on`` is not given (``check``, ``scan``)."""

NO_ASSETS: Final = "no-assets"
"""The finding of an input with no asset to judge: it always fails, and no
``--accept`` covers it."""


def about(name: str) -> Rule:
    """The rule named ``name`` (``KeyError`` for a name that is not one)."""
    return _BY_NAME[name]


def canonical(name: str) -> str:
    """``name`` with an older spelling (:data:`ALIASES`) read as its rule."""
    return ALIASES.get(name, name)


# --- what fails a run ---------------------------------------------------------------


def accepted_rules(accepted: str | None) -> set[str]:
    """The rules of a verdict's acceptances (``RULE:ASSET``, several joined by ``; ``)."""
    if not accepted:
        return set()
    return {part.partition(":")[0] for part in accepted.split("; ")}


def failing_rules(verdict: Verdict, wanted: Collection[str]) -> list[str]:
    """The rules of ``wanted`` (states, drift flags) that fail the run for ``verdict``.

    An acceptance covers the findings of its rule only (``*``: all of them).
    """
    return rules_failing(verdict.state, verdict.drift, verdict.accepted, wanted)


def rules_failing(
    state: str, drift: str | None, accepted: str | None, wanted: Collection[str]
) -> list[str]:
    """:func:`failing_rules` of a verdict with this state, drift flag and acceptance."""
    rules = accepted_rules(accepted)
    found: list[str] = []
    if state in wanted and not rules & {"*", state}:
        found.append(state)
    if drift is not None and drift in wanted and not rules & {"*", drift}:
        found.append(drift)
    return found


def failing_set(fail_on: Iterable[str]) -> frozenset[str]:
    """What fails a run: ``fail_on`` (as rules) and :data:`ALWAYS_FAIL`."""
    return frozenset(map(canonical, fail_on)) | frozenset(ALWAYS_FAIL)
