"""Load the level catalogue (``levels/*.toml``) and answer per-version questions.

Each release file is a delta applied in order, like a database migration: the schema a
server version knows is the fold of every file up to its release line. Loading checks
``CHECKSUMS`` and the consistency of the whole fold and reports every problem at once.
This module reads files only in :func:`load_catalogue`; everything else is pure.

Size: over the ~400-line guide because the catalogue's schema (the TOML structs), its
folding into release lines, its integrity checks and the per-version answers are one
model that changes together.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import re
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TypeVar

import msgspec
from packaging.version import Version

from assetgate.catalogue import derived
from assetgate.errors import CatalogueError, InvalidServerVersion, UnknownServerVersion
from assetgate.version import ServerVersion, parse_version
from assetgate.wire import AssetKind, Outcome  # noqa: TC001 (msgspec reads them)

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "Catalogue",
    "ClusterOutcomeRule",
    "ConfigCheck",
    "EnumSpec",
    "ErrorSpec",
    "FieldSpec",
    "Hazard",
    "ReleaseLine",
    "Rule",
    "ServerProfile",
    "StructSpec",
    "Switches",
    "VersionRange",
    "load_catalogue",
]

OfflineGeneration = Literal["none", "gen1", "gen2"]
RuleCondition = Literal["set", "positive", "equals"]
HazardCondition = Literal["set", "positive", "equals", "contains", "has_null"]
"""A hazard's test of its field: a rule's, or ``contains`` (``value`` is a substring of
the string), or ``has_null`` (the list holds a JSON ``null``)."""
HazardEffect = Literal["crash", "no_reply"]
EnumMatch = Literal["raw", "lower", "string"]
GoJson = Literal["1.23", "1.24", "1.27"]
MixedNode = Literal["exits", "stale"]
"""What a node of this release does with an entry it cannot apply while another
release leads the meta layer: ``exits`` (panics) or ``stale`` (falls behind)."""
Phase = Literal["create", "load", "store", "note"]

_CHECKSUMS: Final = "CHECKSUMS"
_SCALAR_TYPES: Final = frozenset(
    {"string", "bool", "int", "int32", "int64", "uint64", "duration", "time", "*time"}
)
_COMPOSITE_TYPES: Final = frozenset({"[]string", "[]duration", "map"})
_LINE_NAME: Final = re.compile(r"(\d+)\.(\d+)")
_LINE_ONLY: Final = re.compile(r"\d+\.\d+")
_FIELD_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --- the shape of one release file -------------------------------------------------


class _RangeSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One ``[[versions]]`` entry: switches that change from ``from`` on."""

    first: str = msgspec.field(name="from")
    api_level: int | None = None
    strict_api_default: bool | None = None
    strict_api_option: bool | None = None
    offline: OfflineGeneration | None = None
    required_level_header: bool | None = None
    stamps_level: bool | None = None
    go_json: GoJson | None = None


class _StructDelta(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    add: dict[str, str] = msgspec.field(default_factory=dict)
    remove: list[str] = msgspec.field(default_factory=list)
    embeds: list[str] = msgspec.field(default_factory=list)


class _EnumDelta(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    add: list[str] = msgspec.field(default_factory=list)
    remove: list[str] = msgspec.field(default_factory=list)
    alias: dict[str, str] = msgspec.field(default_factory=dict)
    error: str | None = None
    match: EnumMatch | None = None


class _RuleSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    id: str
    struct: str
    field: str
    when: RuleCondition
    level: int
    value: str | int | bool | None = None
    note: str = ""


def _is_version(text: str) -> bool:
    try:
        parse_version(text)
    except InvalidServerVersion:
        return False
    return True


class _HazardSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    id: str
    struct: str
    field: str
    when: HazardCondition
    value: str | int | bool | None = None
    effect: HazardEffect
    text: str
    fixed: list[str] = msgspec.field(default_factory=list)
    note: str = ""


class _OutcomeSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    id: str
    first: str | None = msgspec.field(default=None, name="from")
    when: Literal["unloadable", "dropped"]
    field: str | None = None
    replicated: bool = False
    kinds: list[AssetKind]
    outcome: Outcome
    reason: str = ""
    asset_reason: str = ""
    note: str = ""
    mixed: MixedNode | None = None
    mixed_leader: Outcome | None = None
    mixed_health: str = ""
    mixed_note: str = ""


class _CheckSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    id: str
    first: str | None = msgspec.field(default=None, name="from")
    on: list[Phase]
    code: int = 0
    err_code: int = 0
    description: str = ""
    variant: str = ""
    texts: dict[str, str] = msgspec.field(default_factory=dict)
    go: str = ""
    note: str = ""


class _ErrorDelta(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    code: int | None = None
    err_code: int | None = None
    description: str | None = None


class _ReleaseFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    line: str
    note: str = ""
    versions: list[_RangeSpec]
    structs: dict[str, _StructDelta] = msgspec.field(default_factory=dict)
    enums: dict[str, _EnumDelta] = msgspec.field(default_factory=dict)
    rules: list[_RuleSpec] = msgspec.field(default_factory=list)
    hazards: list[_HazardSpec] = msgspec.field(default_factory=list)
    cluster_outcomes: list[_OutcomeSpec] = msgspec.field(default_factory=list)
    checks: list[_CheckSpec] = msgspec.field(default_factory=list)
    health: dict[str, str] = msgspec.field(default_factory=dict)
    errors: dict[str, _ErrorDelta] = msgspec.field(default_factory=dict)
    offline: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)


# --- the resolved catalogue ---------------------------------------------------------


class Switches(msgspec.Struct, frozen=True, kw_only=True):
    """Behaviour of a range of patch releases.

    Attributes:
        api_level: ``JSApiLevel``; ``None`` for lines without versioning (2.10).
        strict_api_default: API requests rejected on unknown fields by default.
        strict_api_option: the ``jetstream { strict }`` option exists.
        offline: which offline-reason wording the range uses (``none``: no offline
            assets; unknown fields are dropped and levels never checked).
        required_level_header: ``Nats-Required-Api-Level`` is enforced.
        stamps_level: ``_nats.req.level`` is computed and overwritten on create/update.
        go_json: the Go ``encoding/json`` generation the release was built with: from
            1.24 type errors name embedded structs in the field path; from 1.27
            (jsonv2-backed) the first decode error wins and paths are JSON pointers.
    """

    api_level: int | None
    strict_api_default: bool
    strict_api_option: bool
    offline: OfflineGeneration
    required_level_header: bool
    stamps_level: bool
    go_json: GoJson


class VersionRange(msgspec.Struct, frozen=True, kw_only=True):
    """Patch releases from ``first`` up to the next range, with their switches."""

    first: str
    switches: Switches


class FieldSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON field of a server struct, its Go type and the release that added it."""

    name: str
    type: str
    since: str


class StructSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A Go struct as the server's JSON decoder sees it (embedded fields flattened)."""

    name: str
    fields: tuple[FieldSpec, ...]
    embeds: tuple[str, ...] = ()


class EnumSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A Go enum with a custom ``UnmarshalJSON``: its values, first one the zero.

    ``match`` is what the server compares with the values: the raw JSON token
    (``raw``), the token lower-cased (``lower``) or the decoded string (``string``).
    ``alias`` maps other spellings the server accepts to the value they decode to
    (``undefined`` is ``all``): the decoded config holds the value, as the server's
    does, and the server shows it so.
    """

    name: str
    values: tuple[str, ...]
    error: str
    match: EnumMatch
    since: dict[str, str]
    alias: dict[str, str] = msgspec.field(default_factory=dict)


class Rule(msgspec.Struct, frozen=True, kw_only=True):
    """One required-level fact: a feature of a config and the API level it needs."""

    id: str
    struct: str
    field: str
    when: RuleCondition
    level: int
    value: str | int | bool | None
    note: str
    since: str


class Hazard(msgspec.Struct, frozen=True, kw_only=True):
    """A request the server does not answer: it crashes, or no handler receives it.

    Attributes:
        effect: ``crash`` (the process dies) or ``no_reply`` (no API handler takes
            the request; the client times out).
        fixed: the first patch of each release line that no longer has it; a line
            after the last one named has no longer either (``[]``: every release).
    """

    id: str
    struct: str
    field: str
    when: HazardCondition
    value: str | int | bool | None
    effect: HazardEffect
    text: str
    fixed: tuple[str, ...] = ()
    note: str

    def applies_to(self, version: ServerVersion) -> bool:
        """Whether ``version`` still has the hazard (see ``fixed``)."""
        if not self.fixed:
            return True
        fixes = [parse_version(text) for text in self.fixed]
        lines = {fix.line: fix for fix in fixes}
        fix = lines.get(version.line)
        if fix is not None:
            return version.release < fix.release
        newest = max(fixes, key=lambda f: f.release)
        return version.release < newest.release


class ClusterOutcomeRule(msgspec.Struct, frozen=True, kw_only=True):
    """A stored asset that takes a whole cluster's JetStream down on this line.

    Attributes:
        id: the fact's name; a later release file with the same id replaces it
            (``outcome = "ok"`` ends it).
        when: what in the asset's own cluster-mode verdict triggers it:
            ``unloadable`` (even the lenient decode fails, so the meta layer cannot
            apply its entry) or ``dropped`` (the target drops ``field``, set non-zero).
        field: for ``dropped``: the top-level config field.
        replicated: only assets with more than one replica (a raft group) trigger it.
        kinds: the asset kinds it applies to.
        outcome: ``crash`` (nodes panic and exit; any survivor gets no meta
            leader), ``meta_unavailable`` (no meta
            leader: every JetStream API request gets 503) or ``meta_state_lost`` (the
            cluster serves but lists no assets).
        reason: the server's own words for it (a log line); ``{error}``,
            ``{account}``, ``{stream}`` and ``{name}`` stand for the causing asset's
            verdict reason and names.
        asset_reason: what every asset of the cluster is then answered (or
            assetgate's words when nothing answers).
        since: the first patch release the fact holds for (``from``; default: the
            line's first); it holds until an entry with the same id and a later
            ``from`` replaces it.
        mixed: in a cluster whose nodes run different releases, what a node of this
            release does with the entry while a newer node leads the meta layer:
            ``exits`` (it panics, whoever leads) or ``stale`` (it cannot apply the
            entry and falls behind the meta leader). ``None`` when ``outcome`` is ok.
        mixed_leader: for ``stale``: what the cluster suffers once a node of this
            release is its meta leader.
        mixed_health: for ``stale``: what such a node's ``/healthz`` answers, in the
            server's words.
        mixed_note: how the mixed-cluster facts are known (observed runs, or assumed).
    """

    id: str
    when: Literal["unloadable", "dropped"]
    field: str | None
    replicated: bool
    kinds: tuple[AssetKind, ...]
    outcome: Outcome
    reason: str
    asset_reason: str
    note: str
    since: str
    mixed: MixedNode | None = None
    mixed_leader: Outcome | None = None
    mixed_health: str = ""
    mixed_note: str = ""


class ConfigCheck(msgspec.Struct, frozen=True, kw_only=True):
    """One of the server's semantic config checks, as a patch range applies it.

    The logic lives in :mod:`assetgate.judge.configchecks` under the same ``id`` (the first
    word names the asset kind); this is the data: where it applies and what it answers.

    Attributes:
        id: ``stream.<name>`` or ``consumer.<name>``; a later entry with the same id and
            a later ``from`` replaces it (``on = []`` ends it).
        on: ``create`` (API create and update requests), ``load`` (stored assets at
            start-up, with the server's recovery relaxations), or both; ``store``
            for a default the server fills in (id ``<kind>.default.<name>``); ``note``
            for a default that changes what the target does with a stored config
            without failing it (id ``<kind>.note.<name>``; the description is the
            note).
        code, err_code, description: the API error reply, byte for byte;
            ``{name}``-style fields are filled in by the check.
        variant: which form of the logic the range uses (for example ``subset`` or
            ``collide`` for a subject overlap test); ``""`` for the only form.
        texts: for a check that answers with one of several server texts (a loop
            over subjects), those texts by name; its description is then ``{err}``.
        go: the nats-server function that makes the check.
        since: the first patch release the entry holds for.
    """

    id: str
    on: tuple[Phase, ...]
    code: int
    err_code: int
    description: str
    variant: str
    texts: dict[str, str]
    go: str
    note: str
    since: str

    @property
    def kind(self) -> AssetKind:
        """The kind of asset the check applies to."""
        return "stream" if self.id.startswith("stream.") else "consumer"


class ErrorSpec(msgspec.Struct, frozen=True, kw_only=True):
    """An API error reply: HTTP-like code, JetStream error code, description template."""

    code: int
    err_code: int
    description: str


class ReleaseLine(msgspec.Struct, frozen=True, kw_only=True):
    """Everything a release line knows: the fold of every file up to it."""

    line: str
    note: str
    ranges: tuple[VersionRange, ...]
    structs: dict[str, StructSpec]
    enums: dict[str, EnumSpec]
    rules: tuple[Rule, ...]
    hazards: tuple[Hazard, ...]
    errors: dict[str, ErrorSpec]
    offline: dict[str, dict[str, str]]
    cluster_outcomes: tuple[ClusterOutcomeRule, ...]
    checks: tuple[ConfigCheck, ...]
    health: dict[str, str]
    added_fields: tuple[str, ...]
    added_values: tuple[str, ...]
    fingerprint: str

    @property
    def first(self) -> str:
        """The first release of the line."""
        return self.ranges[0].first

    def checks_in_force(self) -> tuple[ConfigCheck, ...]:
        """The config checks some release of the line makes, in fold order.

        :attr:`checks` also holds the entries of earlier lines that an entry from at
        or before this line's first release replaces; no release of the line makes
        those. Which entries a release makes changes only at a ``from``, so the
        line's first release and each later ``from`` are every case. An entry with
        no ``on`` ends a check and is made by none.
        """
        first = Version(self.first)
        points = {first, *(Version(c.since) for c in self.checks)}
        made: set[int] = set()
        for point in points:
            if point >= first:
                made.update(map(id, _current_at(self.checks, point)))
        return tuple(c for c in self.checks if c.on and id(c) in made)


class ServerProfile(msgspec.Struct, frozen=True, kw_only=True):
    """What one nats-server version knows and how it behaves."""

    version: ServerVersion
    line: ReleaseLine
    switches: Switches
    cluster_outcomes: tuple[ClusterOutcomeRule, ...] = ()
    checks: tuple[ConfigCheck, ...] = ()

    @property
    def api_level(self) -> int | None:
        """The server's ``JSApiLevel`` (``None`` before 2.11)."""
        return self.switches.api_level


class Catalogue(msgspec.Struct, frozen=True, kw_only=True):
    """The loaded catalogue: release lines in order and a digest of the files."""

    lines: tuple[ReleaseLine, ...]
    digest: str
    source: str

    @property
    def newest(self) -> ReleaseLine:
        """The newest release line described."""
        return self.lines[-1]

    def release_line(self, name: str) -> ReleaseLine:
        """The release line called ``name`` (``2.12``).

        Raises:
            UnknownServerVersion: no such line.
        """
        for line in self.lines:
            if line.line == name:
                return line
        known = ", ".join(line.line for line in self.lines)
        msg = f"unknown release line: {name!r} (known: {known})"
        raise UnknownServerVersion(msg)

    def server(self, version: str | ServerVersion) -> ServerProfile:
        """The profile of a server version, e.g. ``catalogue.server("2.12.8")``.

        A pre-release counts as its release, as in the server's ``versionAtLeast``.

        Raises:
            InvalidServerVersion: not a version string.
            UnknownServerVersion: a release line the catalogue does not describe.
        """
        key = (self.digest, version if isinstance(version, str) else version.text)
        cached = _PROFILES.get(key)
        if cached is not None:
            return cached
        if isinstance(version, str) and _LINE_ONLY.fullmatch(
            version.strip().lstrip("v")
        ):
            name = version.strip().lstrip("v")
            newest = self._newest_named(name)
            hint = (
                f"did you mean {newest}, the newest {name} release assetgate knows?"
                if newest
                else f"there is no {name} line"
            )
            msg = f"invalid server version: {version!r}: a release line, not a release; {hint}"
            raise InvalidServerVersion(msg)
        parsed = parse_version(version) if isinstance(version, str) else version
        profile = self._profile(parsed)
        _PROFILES[key] = profile
        return profile

    def releases(self) -> tuple[str, ...]:
        """Every release where some behaviour changes, oldest first.

        The first patch of each range the catalogue distinguishes: a line's first
        release, each ``[[versions]]`` range, and each ``from`` of a config check or a
        cluster outcome. Every patch release behaves like the newest of these at or
        below it.
        """
        found = _RELEASES.get(self.digest)
        if found is not None:
            return found
        named: set[str] = set()
        for line in self.lines:
            prefix = line.line + "."
            named.update(r.first for r in line.ranges)
            named.update(c.since for c in line.checks if c.since.startswith(prefix))
            named.update(
                o.since for o in line.cluster_outcomes if o.since.startswith(prefix)
            )
        found = _RELEASES[self.digest] = tuple(sorted(named, key=Version))
        return found

    def _newest_named(self, name: str) -> str | None:
        """The newest patch release of line ``name`` that the catalogue names."""
        named = [r for r in self.releases() if r.startswith(name + ".")]
        return named[-1] if named else None

    def _profile(self, version: ServerVersion) -> ServerProfile:
        for line in self.lines:
            if line.line == version.line:
                chosen = line.ranges[0]
                for rng in line.ranges:
                    if Version(rng.first) <= version.release:
                        chosen = rng
                if version.release < Version(line.first):
                    break
                return ServerProfile(
                    version=version,
                    line=line,
                    switches=chosen.switches,
                    cluster_outcomes=_outcomes_at(line, version),
                    checks=tuple(
                        check
                        for check in _current_at(line.checks, version.release)
                        if check.on
                    ),
                )
        msg = (
            f"unknown server version: {version.text!r}: the catalogue describes "
            f"release lines {self.lines[0].line} to {self.newest.line} "
            f"(newest known line: {self.newest.line})"
        )
        if all(line.line != version.line for line in self.lines):
            known = ", ".join(line.line for line in self.lines)
            msg += f"; there is no {version.line} line (known lines: {known})"
        raise UnknownServerVersion(msg)


_RELEASES: dict[str, tuple[str, ...]] = derived.cache(
    "levels.releases", keyed_by="catalogue digest"
)
_PROFILES: dict[tuple[str, str], ServerProfile] = derived.cache(
    "levels.profiles", keyed_by="(catalogue digest, version)"
)


def _outcomes_at(
    line: ReleaseLine, version: ServerVersion
) -> tuple[ClusterOutcomeRule, ...]:
    """Per fact id, the newest entry from at or before ``version`` (``ok`` ones ended)."""
    current = _current_at(line.cluster_outcomes, version.release)
    return tuple(rule for rule in current if rule.outcome != "ok")


_Entry = TypeVar("_Entry", ClusterOutcomeRule, ConfigCheck)


def _current_at(entries: tuple[_Entry, ...], release: Version) -> tuple[_Entry, ...]:
    """Per id, the newest entry from at or before ``release``, in first-seen id order."""
    current: dict[str, _Entry] = {}
    for entry in entries:  # in fold order: lines, then ``from`` order
        if Version(entry.since) <= release:
            current[entry.id] = entry
    return tuple(current.values())


# --- loading --------------------------------------------------------------------------


def load_catalogue(path: str | Path | None = None) -> Catalogue:
    """Load and check the catalogue in ``path`` (default: the copy packaged with assetgate).

    Raises:
        CatalogueError: with every problem found (checksums, duplicate rules, rules
            naming unknown fields, overlapping version ranges, ...).
    """
    if path is None:
        return _load_packaged()
    folder = Path(path)
    files = {p.name: p.read_bytes() for p in folder.glob("*.toml")}
    sums = folder / _CHECKSUMS
    checksums = sums.read_text(encoding="utf-8") if sums.exists() else None
    return build_catalogue(files, checksums, source=str(folder))


_PACKAGED: list[Catalogue] = []
BUILD_LOCK: Final = threading.RLock()
"""Held while a catalogue, or anything compiled from one, is first built.

msgspec's first conversion into nested Struct types is not safe from several threads
at once (eight threads' first ``validate`` crashed the interpreter in 7 of 8 runs), so
every lazily built catalogue, Struct type and decoder is made under this lock.
"""


def _load_packaged() -> Catalogue:
    if _PACKAGED:
        return _PACKAGED[0]
    with BUILD_LOCK:
        if _PACKAGED:  # another thread built it while this one waited
            return _PACKAGED[0]
        return _build_packaged()


def _build_packaged() -> Catalogue:
    package = importlib.resources.files("assetgate")
    candidates = [
        package / "_levels",
        Path(__file__).resolve().parents[2] / "levels",
    ]
    for folder in candidates:
        if folder.is_dir():
            files = {
                entry.name: entry.read_bytes()
                for entry in folder.iterdir()
                if entry.name.endswith(".toml")
            }
            sums = folder / _CHECKSUMS
            checksums = sums.read_text(encoding="utf-8") if sums.is_file() else None
            catalogue = build_catalogue(files, checksums, source=str(folder))
            _PACKAGED.append(catalogue)
            return catalogue
    msg = "the packaged level catalogue is missing (reinstall assetgate)"
    raise CatalogueError([msg])


def checksum_text(files: dict[str, bytes]) -> str:
    """The ``CHECKSUMS`` file for ``files``: ``sha256  name`` lines sorted by name."""
    return "".join(
        f"{hashlib.sha256(data).hexdigest()}  {name}\n"
        for name, data in sorted(files.items())
    )


def build_catalogue(
    files: dict[str, bytes], checksums: str | None, *, source: str = "<memory>"
) -> Catalogue:
    """Fold release files (name -> TOML bytes) into a checked :class:`Catalogue`."""
    with BUILD_LOCK:
        return _build(files, checksums, source)


def _build(files: dict[str, bytes], checksums: str | None, source: str) -> Catalogue:
    problems = _check_sums(files, checksums)
    parsed: list[tuple[str, _ReleaseFile]] = []
    for name, data in files.items():
        try:
            parsed.append((name, msgspec.toml.decode(data, type=_ReleaseFile)))
        except msgspec.DecodeError as exc:
            problems.append(f"{name}: {exc}")
    folder = _Fold(problems)
    running = hashlib.sha256()
    for name, release in sorted(parsed, key=lambda item: _line_key(item[1].line)):
        running.update(hashlib.sha256(files[name]).digest())
        folder.apply(name, release, running.hexdigest())
    folder.check_types()
    if problems:
        raise CatalogueError(problems)
    digest = hashlib.sha256(checksum_text(files).encode()).hexdigest()
    return Catalogue(lines=tuple(folder.lines), digest=digest, source=source)


def _check_sums(files: dict[str, bytes], checksums: str | None) -> list[str]:
    if checksums is None:
        return [
            f"{_CHECKSUMS}: missing (write it with `assetgate levels --write-checksums`)"
        ]
    problems: list[str] = []
    listed: dict[str, str] = {}
    for number, raw in enumerate(checksums.splitlines(), start=1):
        if not raw.strip():
            continue
        digest, _, name = raw.partition("  ")
        if not name or len(digest) != 64:  # noqa: PLR2004 - sha256 hex length
            problems.append(f"{_CHECKSUMS}:{number}: malformed line {raw!r}")
            continue
        listed[name] = digest
    for name, data in sorted(files.items()):
        if name not in listed:
            problems.append(f"{name}: not listed in {_CHECKSUMS}")
        elif hashlib.sha256(data).hexdigest() != listed[name]:
            problems.append(
                f"{name}: checksum mismatch (the file was edited without updating {_CHECKSUMS})"
            )
    problems.extend(
        f"{_CHECKSUMS}: lists {name!r}, which does not exist"
        for name in sorted(set(listed) - set(files))
    )
    return problems


def _line_key(line: str) -> tuple[int, int]:
    match = _LINE_NAME.fullmatch(line)
    return (int(match.group(1)), int(match.group(2))) if match else (1 << 30, 0)


class _Fold:
    """Applies release files in order and records every inconsistency."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        self.lines: list[ReleaseLine] = []
        self.structs: dict[str, dict[str, FieldSpec]] = {}
        self.embeds: dict[str, tuple[str, ...]] = {}
        self.enums: dict[str, EnumSpec] = {}
        self.rules: list[Rule] = []
        self.hazards: list[Hazard] = []
        self.outcomes: list[ClusterOutcomeRule] = []
        self.checks: list[ConfigCheck] = []
        self.health: dict[str, str] = {}
        self.errors: dict[str, ErrorSpec] = {}
        self.offline: dict[str, dict[str, str]] = {}
        self.switches: dict[str, object] = {}
        self.last_first: Version | None = None

    def apply(self, name: str, release: _ReleaseFile, fingerprint: str) -> None:
        match = _LINE_NAME.fullmatch(release.line)
        if match is None or name != f"{release.line}.toml":
            self.problems.append(
                f"{name}: line {release.line!r} does not match the file name"
            )
            return
        if self.lines and _line_key(release.line) <= _line_key(self.lines[-1].line):
            self.problems.append(f"{name}: duplicate release line {release.line!r}")
            return
        since = release.versions[0].first if release.versions else release.line + ".0"
        added_fields = self._structs(name, release, since)
        added_values = self._enums(name, release, since)
        self._errors(name, release)
        self.offline.update(release.offline)
        self.health.update(release.health)
        ranges = self._ranges(name, release)
        self._rules(name, release, since, ranges)
        self._hazards(name, release)
        self._outcomes(name, release, since)
        self._checks(name, release, since)
        self.lines.append(
            ReleaseLine(
                line=release.line,
                note=release.note,
                ranges=tuple(ranges),
                structs={
                    s: StructSpec(
                        name=s, fields=tuple(f.values()), embeds=self.embeds.get(s, ())
                    )
                    for s, f in self.structs.items()
                },
                enums=dict(self.enums),
                rules=tuple(self.rules),
                hazards=tuple(self.hazards),
                errors=dict(self.errors),
                offline={k: dict(v) for k, v in self.offline.items()},
                cluster_outcomes=tuple(self.outcomes),
                checks=tuple(self.checks),
                health=dict(self.health),
                added_fields=tuple(added_fields),
                added_values=tuple(added_values),
                fingerprint=fingerprint,
            )
        )

    def _ranges(self, name: str, release: _ReleaseFile) -> list[VersionRange]:
        ranges: list[VersionRange] = []
        if not release.versions:
            self.problems.append(f"{name}: no [[versions]] entry")
        for spec in release.versions:
            try:
                first = parse_version(spec.first)
            except ValueError:
                self.problems.append(f"{name}: invalid version {spec.first!r}")
                continue
            if first.line != release.line:
                self.problems.append(
                    f"{name}: version {spec.first!r} is outside release line {release.line}"
                )
            if self.last_first is not None and first.release <= self.last_first:
                self.problems.append(
                    f"{name}: version range from {spec.first!r} overlaps an earlier range"
                )
            self.last_first = first.release
            previous_level = self.switches.get("api_level")
            for key in Switches.__struct_fields__:
                value = getattr(spec, key)
                if value is not None:
                    self.switches[key] = value
            missing = [k for k in Switches.__struct_fields__ if k not in self.switches]
            if missing:
                self.problems.append(
                    f"{name}: switches never set: {', '.join(missing)}"
                )
                continue
            level = self.switches["api_level"]
            if (
                isinstance(previous_level, int)
                and isinstance(level, int)
                and level < previous_level
            ):
                self.problems.append(f"{name}: api_level goes down at {spec.first!r}")
            generation = self.switches["offline"]
            if generation != "none" and generation not in self.offline:
                self.problems.append(
                    f"{name}: offline wording {generation!r} is not defined"
                )
            raw = dict(self.switches)
            raw["api_level"] = None if raw["api_level"] == -1 else raw["api_level"]
            switches = msgspec.convert(raw, Switches)
            ranges.append(VersionRange(first=first.text, switches=switches))
        return ranges

    def _structs(self, name: str, release: _ReleaseFile, since: str) -> list[str]:
        added: list[str] = []
        for struct, delta in release.structs.items():
            fields = self.structs.setdefault(struct, {})
            if delta.embeds:
                self.embeds[struct] = tuple(delta.embeds)
            for field in delta.remove:
                if fields.pop(field, None) is None:
                    self.problems.append(
                        f"{name}: cannot remove unknown field {struct}.{field}"
                    )
            for field, type_name in delta.add.items():
                if _FIELD_NAME.fullmatch(field) is None:
                    self.problems.append(
                        f"{name}: field name {struct}.{field} is not an identifier"
                    )
                    continue
                if field in fields:
                    self.problems.append(
                        f"{name}: field {struct}.{field} already exists"
                    )
                fields[field] = FieldSpec(name=field, type=type_name, since=since)
                added.append(f"{struct}.{field}")
        return added

    def _enums(self, name: str, release: _ReleaseFile, since: str) -> list[str]:
        added: list[str] = []
        for enum, delta in release.enums.items():
            old = self.enums.get(enum)
            values = list(old.values) if old else []
            since_map = dict(old.since) if old else {}
            for value in delta.remove:
                if value not in values:
                    self.problems.append(
                        f"{name}: cannot remove unknown value {enum}={value!r}"
                    )
                else:
                    values.remove(value)
            for value in delta.add:
                if value in values:
                    self.problems.append(
                        f"{name}: value {enum}={value!r} already exists"
                    )
                else:
                    values.append(value)
                    since_map[value] = since
                    added.append(f"{enum}={value}")
            error = (
                delta.error if delta.error is not None else (old.error if old else None)
            )
            if error is None:
                self.problems.append(f"{name}: enum {enum!r} has no error text")
                error = ""
            match: EnumMatch = delta.match or (old.match if old else "raw")
            alias = {**(old.alias if old else {}), **delta.alias}
            for spelling, value in alias.items():
                where = f"{name}: alias {enum}={spelling!r}"
                if spelling in values:
                    self.problems.append(f"{where}: already a value")
                elif value not in values:
                    self.problems.append(f"{where}: {value!r} is not a value")
            self.enums[enum] = EnumSpec(
                name=enum,
                values=tuple(values),
                error=error,
                match=match,
                since=since_map,
                alias=alias,
            )
        return added

    def _errors(self, name: str, release: _ReleaseFile) -> None:
        for key, delta in release.errors.items():
            old = self.errors.get(key)
            code = delta.code if delta.code is not None else (old.code if old else None)
            err_code = (
                delta.err_code
                if delta.err_code is not None
                else (old.err_code if old else None)
            )
            text = (
                delta.description
                if delta.description is not None
                else (old.description if old else None)
            )
            if code is None or err_code is None or text is None:
                self.problems.append(
                    f"{name}: error {key!r} needs code, err_code and description"
                )
                continue
            self.errors[key] = ErrorSpec(code=code, err_code=err_code, description=text)

    def _rules(
        self, name: str, release: _ReleaseFile, since: str, ranges: list[VersionRange]
    ) -> None:
        known = {rule.id for rule in self.rules}
        top = max((r.switches.api_level or 0 for r in ranges), default=0)
        for spec in release.rules:
            where = f"{name}: rule {spec.id!r}"
            if spec.id in known:
                self.problems.append(f"{where}: duplicate rule id")
                continue
            known.add(spec.id)
            fields = self.structs.get(spec.struct)
            if fields is None:
                self.problems.append(f"{where}: unknown struct {spec.struct!r}")
                continue
            field = fields.get(spec.field)
            if field is None:
                self.problems.append(f"{where}: unknown field {spec.field!r}")
                continue
            if spec.when == "equals":
                enum = self.enums.get(field.type.removeprefix("enum:"))
                if spec.value is None:
                    self.problems.append(f"{where}: 'equals' needs a value")
                elif enum is not None and spec.value not in enum.values:
                    self.problems.append(
                        f"{where}: {spec.value!r} is not a value of {enum.name}"
                    )
            if spec.level < 0 or spec.level > top:
                self.problems.append(
                    f"{where}: level {spec.level} is outside 0..{top} (the line's API level)"
                )
            self.rules.append(
                Rule(
                    id=spec.id,
                    struct=spec.struct,
                    field=spec.field,
                    when=spec.when,
                    level=spec.level,
                    value=spec.value,
                    note=spec.note,
                    since=since,
                )
            )

    def _hazards(self, name: str, release: _ReleaseFile) -> None:
        known = {hazard.id for hazard in self.hazards}
        for spec in release.hazards:
            where = f"{name}: hazard {spec.id!r}"
            if spec.id in known:
                self.problems.append(f"{where}: duplicate hazard id")
                continue
            known.add(spec.id)
            if spec.field not in self.structs.get(spec.struct, {}):
                self.problems.append(
                    f"{where}: unknown field {spec.struct}.{spec.field}"
                )
                continue
            bad = [text for text in spec.fixed if not _is_version(text)]
            if bad:
                self.problems.append(f"{where}: not a release in fixed: {bad!r}")
                continue
            self.hazards.append(msgspec.convert(msgspec.to_builtins(spec), Hazard))

    def _outcomes(self, name: str, release: _ReleaseFile, since: str) -> None:
        seen: set[tuple[str, str]] = set()
        added: list[ClusterOutcomeRule] = []
        for spec in release.cluster_outcomes:
            where = f"{name}: cluster outcome {spec.id!r}"
            first = spec.first or since
            try:
                parsed = parse_version(first)
            except ValueError:
                self.problems.append(f"{where}: invalid version {first!r}")
                continue
            if parsed.line != release.line:
                self.problems.append(f"{where}: from {first!r} is not in this line")
                continue
            if (spec.id, first) in seen:
                self.problems.append(f"{where}: duplicate id and from {first!r}")
                continue
            seen.add((spec.id, first))
            if not spec.kinds:
                self.problems.append(f"{where}: no kinds")
                continue
            if (spec.when == "dropped") != (spec.field is not None):
                self.problems.append(f'{where}: field goes with when = "dropped" only')
                continue
            if spec.outcome != "ok" and not (spec.reason and spec.asset_reason):
                self.problems.append(f"{where}: no reason or asset_reason text")
                continue
            if (spec.outcome != "ok") != (spec.mixed is not None):
                self.problems.append(
                    f"{where}: mixed (what a node of this release does in a cluster "
                    "of several releases) goes with every outcome but ok"
                )
                continue
            stale = spec.mixed == "stale"
            if stale != (spec.mixed_leader is not None):
                self.problems.append(f'{where}: mixed_leader goes with mixed = "stale"')
                continue
            if stale != bool(spec.mixed_health):
                self.problems.append(f'{where}: mixed_health goes with mixed = "stale"')
                continue
            added.append(
                ClusterOutcomeRule(
                    id=spec.id,
                    when=spec.when,
                    field=spec.field,
                    replicated=spec.replicated,
                    kinds=tuple(spec.kinds),
                    outcome=spec.outcome,
                    reason=spec.reason,
                    asset_reason=spec.asset_reason,
                    note=spec.note,
                    since=first,
                    mixed=spec.mixed,
                    mixed_leader=spec.mixed_leader,
                    mixed_health=spec.mixed_health,
                    mixed_note=spec.mixed_note,
                )
            )
        added.sort(key=lambda rule: Version(rule.since))
        self.outcomes.extend(added)

    def _checks(self, name: str, release: _ReleaseFile, since: str) -> None:
        seen: set[tuple[str, str]] = set()
        added: list[ConfigCheck] = []
        for spec in release.checks:
            where = f"{name}: check {spec.id!r}"
            first = spec.first or since
            try:
                parsed = parse_version(first)
            except ValueError:
                self.problems.append(f"{where}: invalid version {first!r}")
                continue
            if parsed.line != release.line:
                self.problems.append(f"{where}: from {first!r} is not in this line")
                continue
            if (spec.id, first) in seen:
                self.problems.append(f"{where}: duplicate id and from {first!r}")
                continue
            seen.add((spec.id, first))
            if not spec.id.startswith(("stream.", "consumer.")):
                self.problems.append(
                    f"{where}: id must start with stream. or consumer."
                )
                continue
            filler = ".default." in spec.id
            if filler and spec.on != ["store"] and spec.on:
                self.problems.append(f'{where}: a default applies on ["store"] only')
                continue
            if (".note." in spec.id) != ("note" in spec.on) and spec.on:
                self.problems.append(f'{where}: a note applies on ["note"] only')
                continue
            if "note" in spec.on and not spec.description:
                self.problems.append(f"{where}: a note needs its description")
                continue
            if (
                spec.on
                and not filler
                and "note" not in spec.on
                and not (spec.code and spec.err_code and spec.description)
            ):
                self.problems.append(f"{where}: needs code, err_code and description")
                continue
            added.append(
                ConfigCheck(
                    id=spec.id,
                    on=tuple(spec.on),
                    code=spec.code,
                    err_code=spec.err_code,
                    description=spec.description,
                    variant=spec.variant,
                    texts=dict(spec.texts),
                    go=spec.go,
                    note=spec.note,
                    since=first,
                )
            )
        added.sort(key=lambda check: Version(check.since))
        self.checks.extend(added)

    def check_types(self) -> None:
        for line in self.lines:
            for struct in line.structs.values():
                for embedded in struct.embeds:
                    if embedded not in line.structs:
                        self.problems.append(
                            f"{line.line}: {struct.name} embeds unknown struct {embedded!r}"
                        )
                for field in struct.fields:
                    problem = _type_problem(field.type, line)
                    if problem:
                        self.problems.append(
                            f"{line.line}: {struct.name}.{field.name}: {problem}"
                        )


def _type_problem(type_name: str, line: ReleaseLine) -> str | None:
    if type_name in _SCALAR_TYPES or type_name in _COMPOSITE_TYPES:
        return None
    if type_name.startswith("enum:"):
        enum = type_name.removeprefix("enum:")
        return None if enum in line.enums else f"unknown enum {enum!r}"
    target = type_name.removeprefix("[]").removeprefix("*")
    return None if target in line.structs else f"unknown type {type_name!r}"


def describe(lines: Iterable[ReleaseLine]) -> list[dict[str, object]]:
    """A plain-data summary of release lines, for ``assetgate levels``."""
    return [
        {
            "line": line.line,
            "note": line.note,
            "ranges": [
                {
                    "from": rng.first,
                    "api_level": rng.switches.api_level,
                    "offline": rng.switches.offline,
                }
                for rng in line.ranges
            ],
            "added_fields": list(line.added_fields),
            "added_values": list(line.added_values),
            "rules": [r.id for r in line.rules if r.since == line.first],
            "checks": [
                {
                    "id": c.id,
                    "from": c.since,
                    "on": list(c.on),
                    "code": c.code,
                    "err_code": c.err_code,
                    "description": c.description,
                    "go": c.go,
                }
                for c in line.checks
                if c.since.startswith(line.line + ".")
            ],
        }
        for line in lines
    ]
