"""The compiled rules (``assetgate.catalogue.compile``) agree with a plain interpreted reference.

``level_function``, ``features_for`` and ``hazard_function`` run generated source; the
reference (``tests/support/rules_reference.py``) walks the same catalogue objects by
hand. Both get the decoded config objects that gate, metadata and validate pass
(:func:`assetgate.decoding.decode.decode`), for every release line and both kinds, on three
sources of configs: the fixtures, configs built from each catalogue fact (one that
meets it, ones that just miss it, and pairs of them), and Hypothesis-generated ones.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any, Final

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assetgate.catalogue.compile import features_for, hazard_function, level_function
from assetgate.catalogue.levels import load_catalogue
from assetgate.catalogue.model import CONFIG_STRUCT, INT_BOUNDS
from assetgate.decoding.decode import decode
from assetgate.inventory.read import Asset, read_inventory
from assetgate.version import parse_version
from benchmarks.gen_inventory import generate
from tests.conftest import FIXTURES
from tests.support import rules_reference as ref

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from assetgate.catalogue.levels import (
        Catalogue,
        Hazard,
        ReleaseLine,
        Rule,
        ServerProfile,
    )

KINDS: Final = ("stream", "consumer")
Snippet = dict[str, Any]  # a config (or part of one) as JSON-ready Python values
Config = tuple[str, bytes]  # (kind, raw JSON)


# --- decoding, versions and the comparison ------------------------------------------------


def _decoded(line: ReleaseLine, kind: str, raw: bytes, *, requests: bool) -> list[Any]:
    """``raw`` decoded as callers decode it before calling the compiled functions.

    Always the stored config (``gate``, ``metadata``); with ``requests`` also the API
    request forms ``validate`` passes (``StreamConfigRequest`` from 2.11,
    ``CreateConsumerRequest.config``). Configs that do not decode are left out.
    """
    go_json = line.ranges[-1].switches.go_json
    out = []
    stored = decode(
        raw, line, CONFIG_STRUCT[kind], context="stored", go_json=go_json
    ).config
    if stored is not None:
        out.append(stored)
    if requests and kind == "stream" and "StreamConfigRequest" in line.structs:
        request = decode(raw, line, "StreamConfigRequest", go_json=go_json).config
        if request is not None:
            out.append(request)
    if requests and kind == "consumer":
        body = b'{"config":' + raw + b"}"
        wrapped = decode(body, line, "CreateConsumerRequest", go_json=go_json).config
        if wrapped is not None:
            out.append(wrapped.config)
    return out


def _versions(line: ReleaseLine) -> list[str]:
    """Patch releases of ``line`` at every switch and around every hazard fix."""
    texts = {rng.first for rng in line.ranges} | {f"{line.line}.99"}
    first = parse_version(line.first).patch
    for fact in line.hazards:
        for fix in fact.fixed:
            version = parse_version(fix)
            if version.line == line.line:
                texts |= {fix, f"{fix}-RC.1"}
                if version.patch > first:
                    texts.add(f"{line.line}.{version.patch - 1}")
    return sorted(texts, key=ref.release_key)


def _profiles(catalogue: Catalogue, line: ReleaseLine) -> list[ServerProfile]:
    return [catalogue.server(text) for text in _versions(line)]


def _mismatches(
    catalogue: Catalogue,
    line: ReleaseLine,
    kind: str,
    config: Any,
    profiles: list[ServerProfile],
) -> tuple[int, list[str]]:
    """(comparisons made, disagreements) of compiled vs reference on one config."""
    problems: list[str] = []
    where = f"{line.line} {kind} {json.dumps(msgspec.to_builtins(config))[:400]}"
    level = level_function(line, kind)(config)
    expected_level = ref.required_level(line, kind, config)
    if level != expected_level:
        problems.append(f"{where}: level {level} != reference {expected_level}")
    got = features_for(catalogue, line, kind)(config)
    expected = ref.features(catalogue, line, kind, config)
    if got != expected:
        problems.append(f"{where}: features {got} != reference {expected}")
    for profile in profiles:
        function = hazard_function(profile, kind)
        found = function(config) if function is not None else None
        wanted = ref.hazard(line, profile.version, kind, config)
        if found != wanted:
            problems.append(
                f"{where} on {profile.version.text}: hazard {found} != {wanted}"
            )
    return 2 + len(profiles), problems


def _compare_all(
    catalogue: Catalogue, configs: list[Config], *, requests: bool
) -> tuple[int, list[str]]:
    """Compare compiled and reference on ``configs`` on every line they decode on."""
    total = 0
    problems: list[str] = []
    for line in catalogue.lines:
        profiles = _profiles(catalogue, line)
        for kind, raw in configs:
            for config in _decoded(line, kind, raw, requests=requests):
                count, found = _mismatches(catalogue, line, kind, config, profiles)
                total += count
                problems += found
    return total, problems


# --- (a) the fixtures -----------------------------------------------------------------


def _fixture_configs() -> list[Config]:
    """Every config in ``fixtures/``, and a generated fleet sample like the benchmarks'."""
    paths = sorted(
        path
        for path in (FIXTURES / "inventories").rglob("*")
        if path.suffix in {".json", ".jsonl"}
    )
    out: list[Config] = [
        (entry.kind, entry.config)
        for entry in read_inventory(paths)
        if isinstance(entry, Asset)
    ]
    for kind, folder in (("stream", "streams"), ("consumer", "consumers")):
        out += [
            (kind, path.read_bytes())
            for path in sorted((FIXTURES / "configs" / folder).glob("*.json"))
        ]
    for line in itertools.islice(generate(600, 11, bad_fraction=0.0), 600):
        record = json.loads(line)
        if record.get("kind") in KINDS:
            out.append((record["kind"], msgspec.json.encode(record["config"])))
    return out


def test_fixture_configs_agree(catalogue: Catalogue) -> None:
    """Compiled level, features and hazards equal the reference on every fixture config."""
    configs = _fixture_configs()
    assert {kind for kind, _ in configs} == set(KINDS)
    compared, problems = _compare_all(catalogue, configs, requests=True)
    assert compared > 30_000
    assert problems[:5] == []


# --- (b) configs built from each catalogue fact -----------------------------------------


class _Samples:
    """JSON values of each catalogue type that are set, and ones that are not.

    Types and enum values are the union over every release line, so that a line is
    also fed what it does not know (it decodes as unknown, or not at all: skipped).
    """

    def __init__(self, catalogue: Catalogue) -> None:
        self.fields: dict[str, dict[str, str]] = {}  # struct -> field -> type
        self.enums: dict[str, list[str]] = {}  # enum -> values, zero first
        for line in catalogue.lines:
            for name, spec in line.structs.items():
                self.fields.setdefault(name, {}).update(
                    {f.name: f.type for f in spec.fields}
                )
            for name, enum in line.enums.items():
                values = self.enums.setdefault(name, [])
                values += [v for v in enum.values if v not in values]

    def set_values(self, type_name: str) -> list[Any]:
        """Values that differ from the type's Go zero value."""
        if type_name == "bool":
            return [True]
        if type_name in INT_BOUNDS:
            low, high = INT_BOUNDS[type_name]
            return [1, high] + ([-1] if low else [])
        if type_name == "string":
            return ["x", "a.b"]
        if type_name in {"*time", "time"}:
            return [
                "2030-01-01T00:00:00Z",
                "0001-01-01T00:00:01Z",
                "0001-01-01T00:00:00.5Z",
                "0001-01-01T00:00:00+01:00",
            ]
        if type_name.startswith("enum:"):
            values = self.enums[type_name.removeprefix("enum:")]
            return [v for v in values[1:] if v != ""]
        if type_name == "[]string":
            return [["a"]]
        if type_name == "[]duration":
            return [[1]]
        if type_name == "map":
            return [{"k": "v"}]
        if type_name.startswith("[]*"):
            return [[{}], [None]]
        if type_name.startswith("[]"):
            return [[{}]]
        if type_name.startswith("*"):
            return [{}]
        return []  # a struct held by value is set through its own fields' samples

    def unset_values(self, type_name: str) -> list[Any]:
        """Values that decode to the type's Go zero value (or do not decode at all)."""
        if type_name == "bool":
            return [False, None]
        if type_name in INT_BOUNDS:
            return [0]
        if type_name == "string":
            return [""]
        if type_name in {"*time", "time"}:
            return [
                None,
                "0001-01-01T00:00:00Z",
                "0001-01-01T01:00:00+01:00",
                "0001-01-01T00:00:00.000Z",
                "0000-12-31T23:00:00-01:00",  # the zero instant; Go refuses year 0
            ]
        if type_name.startswith("enum:"):
            values = self.enums[type_name.removeprefix("enum:")]
            return [values[0]] + ([""] if "" in values[1:] else [])
        if type_name == "map":
            return [{}, None]
        if type_name.startswith("[]"):
            return [[], None]
        if type_name.startswith("*"):
            return [None]
        return [{}]

    def condition(
        self, fact: Rule | Hazard, type_name: str
    ) -> tuple[list[Any], list[Any]]:
        """Values of the fact's field that meet its condition, and ones that just miss."""
        value = fact.value
        if fact.when == "set":
            return self.set_values(type_name), self.unset_values(type_name)
        if fact.when == "positive":
            return [1, INT_BOUNDS.get(type_name, (0, 1))[1]], [0, -1]
        if fact.when == "contains":
            needle = str(value)
            return [needle, f"a{needle}b"], ["", "ab"]
        if fact.when == "has_null":
            return [[None], [{"name": "s"}, None]], [[], None, [{"name": "s"}]]
        # equals: every other value of an enum, the other bool, a neighbour number
        if type_name.startswith("enum:"):
            others = self.enums[type_name.removeprefix("enum:")]
            return [value], [v for v in others if v != value]
        if isinstance(value, bool):
            return [value], [not value]
        if isinstance(value, int):
            return [value], [value + 1, 0]
        return [value], ["", f"{value}x"]


class _Generated(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    line: str  # the line whose fact it was built from ("" for field history)
    fact: str  # rule or hazard id, or "field:<path>"
    hit: bool  # meets the fact (sets the field), or just misses it
    snippet: Snippet
    late: bool = False  # uses a field or enum value added after the oldest line


def _fact_snippets(catalogue: Catalogue) -> list[_Generated]:
    """For every rule and hazard of every line, configs that meet it and just miss it."""
    samples = _Samples(catalogue)
    kinds = {struct: kind for kind, struct in CONFIG_STRUCT.items()}
    out: list[_Generated] = []
    for line in catalogue.lines:
        facts: list[Rule | Hazard] = [*line.rules, *line.hazards]
        for fact in facts:
            kind = kinds[fact.struct]
            type_name = samples.fields[fact.struct][fact.field]
            hits, misses = samples.condition(fact, type_name)
            out += [
                _Generated(
                    kind=kind,
                    line=line.line,
                    fact=fact.id,
                    hit=hit,
                    snippet={fact.field: value},
                )
                for hit, values in ((True, hits), (False, misses))
                for value in values
            ]
    return out


def _paths(
    fields: dict[str, dict[str, str]], struct: str
) -> list[list[tuple[str, str, str]]]:
    """Every field path under ``struct`` as [(owner struct, field, type), ...]."""
    out: list[list[tuple[str, str, str]]] = []
    for name, type_name in fields[struct].items():
        out.append([(struct, name, type_name)])
        base = type_name.removeprefix("[]").removeprefix("*")
        if base in fields and base != struct:
            out += [[(struct, name, type_name), *rest] for rest in _paths(fields, base)]
    return out


def _nest(path: list[tuple[str, str, str]], leaf: Any) -> Snippet:
    """``{"a": [{"b": leaf}]}`` for the path ``a`` (a list of structs) then ``b``."""
    (_, name, type_name), rest = path[0], path[1:]
    if not rest:
        return {name: leaf}
    inner = _nest(rest, leaf)
    return {name: [inner] if type_name.startswith("[]") else inner}


def _history_snippets(catalogue: Catalogue) -> list[_Generated]:
    """Every field at every depth set and unset, and each enum value in its place."""
    samples = _Samples(catalogue)
    oldest = catalogue.lines[0]
    old_fields = {
        (s, f.name) for s, spec in oldest.structs.items() for f in spec.fields
    }
    old_values = {v for enum in oldest.enums.values() for v in enum.values}
    out: list[_Generated] = []
    for kind in KINDS:
        for path in _paths(samples.fields, CONFIG_STRUCT[kind]):
            type_name = path[-1][2]
            name = "field:" + ".".join(part for _, part, _ in path)
            late = any((owner, part) not in old_fields for owner, part, _ in path)
            for hit, values in (
                (True, samples.set_values(type_name)),
                (False, samples.unset_values(type_name)),
            ):
                out += [
                    _Generated(
                        kind=kind,
                        line="",
                        fact=name,
                        hit=hit,
                        snippet=_nest(path, value),
                        late=late
                        or (type_name.startswith("enum:") and value not in old_values),
                    )
                    for value in values
                ]
    return out


def _merge(first: Any, second: Any) -> Any:
    """Deep-merge two snippets: objects by key, lists concatenated, else the second."""
    if isinstance(first, dict) and isinstance(second, dict):
        out = dict(first)
        for key, value in second.items():
            out[key] = _merge(out[key], value) if key in out else value
        return out
    if isinstance(first, list) and isinstance(second, list):
        return first + second
    return second


def _catalogue_configs(catalogue: Catalogue) -> list[Config]:
    """Each snippet alone, every pair of fact and late-field snippets, and all hits."""
    facts = _fact_snippets(catalogue)
    history = _history_snippets(catalogue)
    out = {(item.kind, msgspec.json.encode(item.snippet)) for item in facts + history}
    for kind in KINDS:
        pool = [item for item in facts if item.kind == kind]
        pool += [item for item in history if item.kind == kind and item.late]
        for first, second in itertools.combinations(pool, 2):
            merged = _merge(first.snippet, second.snippet)
            out.add((kind, msgspec.json.encode(merged)))
        everything: Snippet = {}
        for item in pool:
            if item.hit:
                everything = _merge(everything, item.snippet)
        out.add((kind, msgspec.json.encode(everything)))
    return sorted(out)


def test_fact_configs_meet_and_miss_their_fact(catalogue: Catalogue) -> None:
    """Each built hit meets its rule or hazard (alone: the rule's level), each miss not."""
    checked = 0
    for item in _fact_snippets(catalogue):
        line = catalogue.release_line(item.line)
        facts: list[Rule | Hazard] = [*line.rules, *line.hazards]
        fact = next(f for f in facts if f.id == item.fact)
        raw = msgspec.json.encode(item.snippet)
        for config in _decoded(line, item.kind, raw, requests=False):
            checked += 1
            assert ref.condition_holds(line, fact, config) == item.hit, item
            if item.hit and fact in line.rules:
                assert ref.required_level(line, item.kind, config) == fact.level, item
    assert checked > 150


def test_catalogue_configs_agree(catalogue: Catalogue) -> None:
    """Compiled equals the reference on configs meeting, missing and pairing each fact."""
    configs = _catalogue_configs(catalogue)
    compared, problems = _compare_all(catalogue, configs, requests=True)
    assert compared > 100_000
    assert problems[:5] == []


def test_rules_and_hazards_name_config_structs(catalogue: Catalogue) -> None:
    """Every rule and hazard tests a field of a config struct that embeds nothing."""
    structs = set(CONFIG_STRUCT.values())
    for line in catalogue.lines:
        facts: list[Rule | Hazard] = [*line.rules, *line.hazards]
        assert [f.id for f in facts if f.struct not in structs] == []
        assert [s for s in structs if line.structs[s].embeds] == []


def _first(catalogue: Catalogue, line: str, kind: str, raw: bytes) -> Any:
    return _decoded(catalogue.release_line(line), kind, raw, requests=False)[0]


def test_reference_gives_documented_answers(catalogue: Catalogue) -> None:
    """The reference alone: prioritized needs 1 but 2.12.0, a consumer source 2.14.0."""
    newest = catalogue.newest
    line = newest.line
    prioritized = b'{"priority_groups":["a"],"priority_policy":"prioritized"}'
    config = _first(catalogue, line, "consumer", prioritized)
    assert ref.features(catalogue, newest, "consumer", config) == (1, "2.12.0")
    sourced = b'{"name":"S","sources":[{"name":"A","consumer":{}}]}'
    config = _first(catalogue, line, "stream", sourced)
    assert ref.features(catalogue, newest, "stream", config) == (0, "2.14.0")
    config = _first(catalogue, line, "stream", b'{"name":"S","persist_mode":""}')
    assert ref.features(catalogue, newest, "stream", config) == (0, "2.10.0")
    config = _first(catalogue, line, "consumer", b'{"ack_policy":"flow_control"}')
    assert ref.features(catalogue, newest, "consumer", config) == (4, "2.14.0")
    line_12 = catalogue.release_line("2.12")
    both = _first(catalogue, "2.12", "stream", b'{"name":"a.b","sources":[null]}')
    crash = ref.hazard(line_12, parse_version("2.12.3"), "stream", both)
    fixed = ref.hazard(line_12, parse_version("2.12.4"), "stream", both)
    assert (crash or ("", ""))[0] == "crash"
    assert (fixed or ("", ""))[0] == "no_reply"


# --- (c) Hypothesis ---------------------------------------------------------------------


def _strategy(catalogue: Catalogue, kind: str) -> st.SearchStrategy[Snippet]:
    """Configs over the fields the rules, hazards and field history make matter."""
    samples = _Samples(catalogue)
    fields = samples.fields
    mentioned = {rule.field for line in catalogue.lines for rule in line.rules}
    mentioned |= {fact.field for line in catalogue.lines for fact in line.hazards}
    top = CONFIG_STRUCT[kind]
    oldest = {f.name for f in catalogue.lines[0].structs[top].fields}

    def value(type_name: str) -> st.SearchStrategy[Any]:
        if type_name == "bool":
            return st.sampled_from([True, False, None])
        if type_name in INT_BOUNDS:
            low, high = INT_BOUNDS[type_name]
            return st.sampled_from([0, 1, high, low]) | st.integers(max(low, -3), 3)
        if type_name == "string":
            return st.sampled_from(["", "a", ".", "a.b", "x."])
        if type_name in {"*time", "time"}:
            times = samples.set_values(type_name) + samples.unset_values(type_name)
            return st.sampled_from(times)
        if type_name.startswith("enum:"):
            return st.sampled_from(samples.enums[type_name.removeprefix("enum:")])
        if type_name == "[]string":
            return st.none() | st.lists(st.sampled_from(["a", ""]), max_size=2)
        if type_name == "[]duration":
            return st.none() | st.lists(st.integers(-1, 2), max_size=2)
        if type_name == "map":
            keys, texts = st.sampled_from(["a", "b"]), st.sampled_from(["", "v"])
            return st.none() | st.dictionaries(keys, texts, max_size=2)
        inner = struct(type_name.removeprefix("[]").removeprefix("*"))
        if type_name.startswith("[]*"):
            return st.none() | st.lists(st.none() | inner, max_size=2)
        if type_name.startswith("[]"):
            return st.none() | st.lists(inner, max_size=2)
        if type_name.startswith("*"):
            return st.none() | inner
        return inner

    def struct(name: str) -> st.SearchStrategy[Snippet]:
        chosen = {
            field: type_name
            for field, type_name in fields[name].items()
            if name != top
            or field in mentioned
            or field not in oldest
            or type_name.startswith("enum:")
            or type_name.removeprefix("[]").removeprefix("*") in fields
        }
        optional = {field: value(type_name) for field, type_name in chosen.items()}
        return st.fixed_dictionaries({}, optional=optional)

    return struct(top)


_STRATEGIES: dict[tuple[str, str], st.SearchStrategy[Snippet]] = {}


@pytest.mark.parametrize("kind", KINDS)
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_generated_configs_agree(
    catalogue: Catalogue, kind: str, data: st.DataObject
) -> None:
    """Compiled equals the reference on Hypothesis configs, on every line and version."""
    key = (catalogue.digest, kind)
    strategy = _STRATEGIES.get(key)
    if strategy is None:
        strategy = _STRATEGIES[key] = _strategy(catalogue, kind)
    raw = msgspec.json.encode(data.draw(strategy))
    _, problems = _compare_all(catalogue, [(kind, raw)], requests=False)
    assert problems == []


@pytest.mark.parametrize("kind", KINDS)
def test_hazard_function_is_none_exactly_without_active_hazards(
    catalogue: Catalogue, kind: str
) -> None:
    """hazard_function is None for a version exactly when no hazard of it is active."""
    for line in catalogue.lines:
        for profile in _profiles(catalogue, line):
            active = ref.active_hazards(line, profile.version, kind)
            function = hazard_function(profile, kind)
            assert (function is None) == (not active), profile.version.text


# --- latent: catalogue shapes the packaged files do not use yet -----------------------------

_FUTURE: Final = """\
line = "2.16"
note = "Synthetic future release for tests."

[[versions]]
from = "2.16.0"
api_level = 6

"""
_LATENT: Final = {
    # a Go time.Time by value: its zero is "0001-01-01T00:00:00Z", a true string, so
    # the compiled code must not test its truth (it did until the reference found it)
    "time_field": '[structs.StreamConfig.add]\nrolled_at = "time"\n',
    # a struct by value: a msgspec Struct instance is always true, so "set" means a
    # field of it is set
    "struct_by_value": '[structs.StreamConfig.add]\nlimits_v2 = "StreamConsumerLimits"\n',
    # an embedded struct: Go flattens its fields into the outer object
    "embedded_struct": (
        '[structs.StreamConfig]\nembeds = ["Extra"]\n\n'
        '[structs.Extra.add]\nextra_flag = "bool"\n'
    ),
}


@pytest.mark.parametrize("shape", sorted(_LATENT))
def test_future_field_shapes_agree(
    levels_copy: Path, rechecksum: Callable[[Path], None], shape: str
) -> None:
    """With a 2.16 adding a `time`, by-value struct or embedded field, the two agree."""
    (levels_copy / "2.16.toml").write_text(_FUTURE + _LATENT[shape], encoding="utf-8")
    rechecksum(levels_copy)
    future = load_catalogue(levels_copy)
    used = b'{"name":"S","extra_flag":true,"limits_v2":{"max_ack_pending":1}}'
    configs = [("stream", b'{"name":"S"}'), ("stream", used)]
    _, problems = _compare_all(future, configs, requests=False)
    assert problems == []
