"""What a finding is, by a stable code, and what to change to be rid of it.

Every finding that is not ``online`` gets a code (``AG101`` ...), stated once in
:data:`CODES`, and fixes derived from the verdict and the catalogue, never written per
case: the fields to remove with the release that knows them, the release to run, the
server check the config must pass, the asset to fix first. ``docs/rules.md`` is the
table of codes (a test keeps it equal to :data:`CODES`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

import msgspec
from packaging.version import Version

from assetgate.judge.metadata import REQUIRED_LEVEL_KEY, supports_required_level
from assetgate.wire import shown_cluster

if TYPE_CHECKING:
    from collections.abc import Sequence

    from assetgate.catalogue.levels import Catalogue, ServerProfile
    from assetgate.judge.gate import Verdict
    from assetgate.judge.outcomes import ClusterOutcome

__all__ = [
    "CODES",
    "Code",
    "Fix",
    "cluster_code",
    "field_since",
    "finding_code",
    "fixes_for",
    "outcome_fixes",
    "overlap_fixes",
]

Action = Literal["remove", "upgrade", "stay", "change", "fix-first", "delete", "update"]


class Code(msgspec.Struct, frozen=True, kw_only=True):
    """A finding's stable code: the rule it belongs to and what it means."""

    code: str
    rule: str
    title: str


CODES: Final[tuple[Code, ...]] = (
    Code(code="AG101", rule="degraded", title="fields the target does not know are dropped on load"),
    Code(code="AG201", rule="offline", title="the stored required API level is above the target's"),
    Code(code="AG202", rule="offline", title="the target cannot decode the stored config strictly"),
    Code(code="AG203", rule="offline", title="the stream is stopped by an offline consumer"),
    Code(code="AG301", rule="unloadable", title="the target cannot decode the stored config"),
    Code(code="AG302", rule="unloadable", title="the stored config fails one of the target's config checks"),
    Code(code="AG401", rule="detached", title="the consumer's stream is offline, does not load or is missing"),
    Code(code="AG501", rule="unavailable", title="the asset's whole cluster is down on the target"),
    Code(code="AG511", rule="crash", title="the cluster's servers panic and exit"),
    Code(code="AG512", rule="meta_unavailable", title="no meta leader: every JetStream API request answers 503"),
    Code(code="AG513", rule="meta_state_lost", title="the cluster serves but lists none of its assets"),
    Code(code="AG601", rule="overlap", title="two streams of one account claim overlapping subjects"),
    Code(code="AG701", rule="stamp_missing", title="no _nats.req.level stamp"),
    Code(code="AG702", rule="stamp_unparsable", title="the _nats.req.level stamp is not an integer"),
    Code(code="AG703", rule="stamp_too_low", title="the stamp is below the level the features need"),
    Code(code="AG704", rule="stamp_too_high", title="the stamp is above the level the features need"),
)  # fmt: skip
"""Every finding code, once. A code is never reused for another meaning."""

_BY_RULE: Final = {code.rule: code.code for code in CODES if code.rule not in {"offline", "unloadable"}}  # fmt: skip


class Fix(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One way to be rid of a finding, as data and as a sentence.

    Attributes:
        action: ``remove`` a field, ``upgrade`` to a release (or ``stay`` on one)
            where the asset loads online, ``change`` the config so that a server check
            passes, ``fix-first`` another asset that causes this finding, ``delete`` or
            fix an asset that takes the cluster down, ``update`` the asset on a server
            that restamps it.
        text: the sentence the text and Markdown reports print.
        field: the config field concerned (``remove``).
        release: the release the action refers to (the one that knows the field, the
            one to run, the first one that refuses the config).
        asset: the other asset concerned (``fix-first``, ``delete``).
    """

    action: Action
    text: str
    field: str | None = None
    release: str | None = None
    asset: str | None = None


def finding_code(verdict: Verdict, profile: ServerProfile, *, stopped: bool) -> str:
    """The code of a verdict that is not online (``stopped``: by an offline consumer)."""
    if verdict.state == "offline":
        if not _level_supported(verdict, profile):
            return "AG201"
        if stopped and verdict.kind == "stream" and not verdict.unknown_fields:
            return "AG203"
        return "AG202"
    if verdict.state == "unloadable":
        return "AG302" if verdict.check is not None else "AG301"
    return _BY_RULE[verdict.state]


def cluster_code(rule: str) -> str:
    """The code of a whole-cluster outcome, an overlap or a drift flag."""
    return _BY_RULE[rule]


def fixes_for(
    verdict: Verdict,
    profile: ServerProfile,
    catalogue: Catalogue,
    *,
    rule: str,
    stopped_by: str | None = None,
    outcome: ClusterOutcome | None = None,
    online_above: str | None = None,
    online_below: str | None = None,
) -> tuple[Fix, ...]:
    """The fixes of one finding (``rule``: its state or drift flag) on ``profile``.

    ``stopped_by`` names the offline consumer that stops an offline stream,
    ``outcome`` the cluster outcome of an ``unavailable`` asset; ``online_above`` and
    ``online_below`` are the nearest judged releases, above and below, where the asset
    loads online (the matrix knows them).
    """
    fixes: list[Fix] = []
    if rule == "degraded":
        fixes += _removals(verdict.dropped_fields, catalogue)
    elif rule == "offline":
        if not _level_supported(verdict, profile):
            fixes.append(_level_fix(verdict, profile, catalogue))
        elif verdict.unknown_fields:
            fixes += _removals(verdict.unknown_fields, catalogue)
        elif stopped_by is not None:
            fixes.append(_first(stopped_by, "its own finding stops the stream"))
    elif rule == "unloadable":
        if verdict.check is not None:
            fixes.append(_check_fix(verdict.check, profile))
        elif verdict.unknown_fields:
            fixes += _removals(verdict.unknown_fields, catalogue)
        elif verdict.min_server_version is not None:
            fixes.append(
                Fix(
                    action="upgrade",
                    release=verdict.min_server_version,
                    text=f"run {verdict.min_server_version} or later: the first release that "
                    "knows every field and value of the config",
                )
            )
        else:
            fixes.append(
                Fix(
                    action="change",
                    text="change the value the server cannot decode: no known release "
                    "accepts it",
                )
            )
    elif rule == "detached":
        stream = f"{verdict.cluster}/{verdict.account}/{verdict.stream}"
        fixes.append(_first(stream, "the consumer loads with its stream"))
    elif rule == "unavailable" and outcome is not None:
        cluster = shown_cluster(outcome.cluster)
        fixes.append(
            _first(
                cluster,
                f"the cluster's outcome ({outcome.outcome}) makes it unavailable",
            )
        )
    elif rule in _DRIFT_FIXES:
        fixes.append(Fix(action="update", text=_DRIFT_FIXES[rule]))
    if rule in {"degraded", "offline", "unloadable", "detached", "unavailable"}:
        named = {(fix.action, fix.release) for fix in fixes}
        fixes += [
            fix
            for fix in _moves(online_above, online_below)
            if (fix.action, fix.release) not in named
        ]
    return tuple(fixes)


def overlap_fixes(streams: Sequence[str], subjects: Sequence[str]) -> list[Fix]:
    """Two streams of one account whose subjects overlap: change one of them."""
    a, b = streams
    return [
        Fix(
            action="change",
            asset=a,
            text=f"change the subjects of {a} ({subjects[0]}) or {b} ({subjects[1]}) "
            "so that they no longer overlap",
        )
    ]


def outcome_fixes(outcome: ClusterOutcome, release: str) -> list[Fix]:
    """Delete or fix each asset that takes the cluster down, before moving to ``release``."""
    return [
        Fix(
            action="delete",
            asset=asset,
            release=release,
            text=f"delete or fix {asset} before moving the cluster to {release}",
        )
        for asset in outcome.assets
    ]


def field_since(catalogue: Catalogue, path: str) -> str | None:
    """The first release that knows the field at ``path`` (``None``: no release does)."""
    leaf = path.rsplit(".", 1)[-1].split("[", 1)[0]
    found = [
        field.since
        for line in catalogue.lines
        for struct in line.structs.values()
        for field in struct.fields
        if field.name == leaf
    ]
    return min(found, key=Version) if found else None


_DRIFT_FIXES: Final = {
    "stamp_missing": "update the asset once on a 2.11 or later server: it stamps "
    "_nats.req.level from the features used",
    "stamp_unparsable": "update the asset on a 2.11 or later server: it replaces the "
    "stamp with the level the features need",
    "stamp_too_low": "update the asset on a 2.11 or later server that knows its features: "
    "it raises the stamp, so older servers keep it offline instead of dropping them",
    "stamp_too_high": "update the asset on a server that knows its features: it lowers "
    "the stamp to the level they need",
}


def _level_supported(verdict: Verdict, profile: ServerProfile) -> bool:
    stamp = verdict.stamped_level
    if stamp is None:
        return True
    return supports_required_level({REQUIRED_LEVEL_KEY: stamp}, profile.api_level or 0)


def _removals(paths: Sequence[str], catalogue: Catalogue) -> list[Fix]:
    out = []
    for path in paths:
        since = field_since(catalogue, path)
        known = f"known from {since}" if since is not None else "no release knows it"
        out.append(
            Fix(
                action="remove",
                field=path,
                release=since,
                text=f"remove `{path}` ({known})",
            )
        )
    return out


def _level_fix(verdict: Verdict, profile: ServerProfile, catalogue: Catalogue) -> Fix:
    have = profile.api_level or 0
    stamp = verdict.stamped_level or ""
    needed = _first_supporting(stamp, catalogue)
    if needed is None:
        text = (
            f"update the asset on a server that restamps it: the stored "
            f"_nats.req.level {stamp} is above the API level of every known release "
            f"(this one has {have})"
        )
    else:
        text = (
            f"run {needed} or later: the stored _nats.req.level {stamp} is above API "
            f"level {have}; or update the asset without the features that need it"
        )
    return Fix(action="upgrade", release=needed, text=text)


def _first_supporting(stamp: str, catalogue: Catalogue) -> str | None:
    """The first release whose API level supports the stored stamp."""
    for release in catalogue.releases():
        level = catalogue.server(release).api_level
        if level is not None and supports_required_level(
            {REQUIRED_LEVEL_KEY: stamp}, level
        ):
            return release
    return None


def _check_fix(check_id: str, profile: ServerProfile) -> Fix:
    found = next((c for c in profile.checks if c.id == check_id), None)
    since = None if found is None else found.since
    refuses = f"refused from {since}" if since else "refused"
    go = f" (`{found.go}`)" if found is not None and found.go else ""
    return Fix(
        action="change",
        release=since,
        text=f"change the config so that the server's check {check_id}{go} passes "
        f"({refuses})",
    )


def _first(asset: str, why: str) -> Fix:
    return Fix(
        action="fix-first", asset=asset, text=f"fix or delete {asset} first: {why}"
    )


def _moves(above: str | None, below: str | None) -> list[Fix]:
    out = []
    if above is not None:
        out.append(
            Fix(
                action="upgrade",
                release=above,
                text=f"or move to {above}, where it loads online",
            )
        )
    if below is not None:
        out.append(
            Fix(
                action="stay",
                release=below,
                text=f"or stay on {below}, where it loads online",
            )
        )
    return out
