"""Tests for assetgate.judge.subjects: nats-server's SubjectsCollide and overlap finding."""

from __future__ import annotations

import itertools
import random
from functools import cache

import pytest

from assetgate.judge.subjects import (
    SubjectIndex,
    claimed_subjects,
    find_overlaps,
    subjects_collide,
)

# Section 5 of the reference: computed by compiling nats-server v2.12.15's function.
VECTORS: list[tuple[str, str, bool]] = [
    ("foo", "foo", True),
    ("foo", "bar", False),
    ("foo.*", "foo.bar", True),
    ("foo.*", "foo.bar.baz", False),
    ("foo.>", "foo.bar.baz", True),
    ("foo.>", "foo", False),
    ("foo.*", "foo", False),
    (">", "foo", True),
    (">", "foo.bar", True),
    ("*", "foo", True),
    ("*", "foo.bar", False),
    ("*", ">", True),
    ("foo.*", "*.bar", True),
    ("foo.*", "foo.*.bar.>", False),
    ("foo.*", "*.foo", True),
    ("foo.bar.>", "*.bar.foo", True),
    ("foo.*.baz", "foo.bar.*", True),
    ("foo.*.baz", "foo.bar.qux", False),
    ("*.*", "foo.>", True),
    ("*.*", ">", True),
    ("foo.>", "bar.>", False),
    ("foo.>", "foo.>", True),
    ("*.>", "foo", False),
    ("*.>", "foo.bar", True),
    ("a.b.c", "a.*.>", True),
    ("a.*.c", "a.b.>", True),
    ("a.*", "a.*.*", False),
    ("a.>", "a.*.*", True),
    ("a.*.>", "a.b", False),
    ("foo.*.*", "foo.>", True),
    ("foo.bar", "foo.*.>", False),
    ("foo.*", "foo.>", True),
    ("foo.*.bar", "foo.>", True),
    ("foo.bar.*", "*.*.baz", True),
    ("foo.bar.*", "*.baz.*", False),
]

# Quirks that follow from the server's rules on subjects it would not accept.
QUIRKS: list[tuple[str, str, bool]] = [
    # A token starting with "*" is literal for "has pwc" ...
    ("*x", "a", False),
    ("a.*x", "a.b", False),
    # ... but matches any token when it is in the pattern of a one-literal pair,
    ("*x.>", "a.b", True),
    # and either token may be the wildcard when both sides have wildcards.
    ("*x.*", "a.*", True),
    (">x.*", "a.*", True),
    # A literal token starting with "*" is matched only by a wildcard.
    ("a.*", "a.*x", True),
    ("a.b", "a.*x", False),
    # Empty tokens never match a token, but a ">" before them stops the walk.
    ("a.", "a.*", False),
    ("a.", "a.>", True),
    ("a..b", "a.>", True),
    ("a..b", "a.*.b", False),
    ("", "*", False),
    ("", ">", True),
    # A ">" before the last token ends a one-literal walk ...
    ("a.>.b", "a.c", True),
    ("a.>.b", "a.c.d.e", True),
    # ... acts as "*" position by position when both sides have wildcards,
    ("a.>.b", "a.*.c", False),
    ("a.>.b", "*.*.b", True),
    # and lets the longer side run on when it is in the shorter one.
    (">.b", "*.b.c.d", True),
    ("a.>.b", "a.*", False),
]


def _params(table: list[tuple[str, str, bool]]) -> list[object]:
    """Parametrize rows with ids such as ``'foo.*'~'foo.bar'``."""
    return [pytest.param(a, b, expected, id=f"{a!r}~{b!r}") for a, b, expected in table]


@pytest.mark.parametrize(("a", "b", "expected"), _params(VECTORS))
def test_reference_vectors(a: str, b: str, expected: bool) -> None:
    """subjects_collide matches the reference table as given."""
    actual = subjects_collide(a, b)
    assert actual == expected


@pytest.mark.parametrize(("a", "b", "expected"), _params(VECTORS))
def test_reference_vectors_swapped(a: str, b: str, expected: bool) -> None:
    """subjects_collide matches the reference table with the arguments swapped."""
    actual = subjects_collide(b, a)
    assert actual == expected


@pytest.mark.parametrize(("a", "b", "expected"), _params(QUIRKS))
def test_quirks(a: str, b: str, expected: bool) -> None:
    """subjects_collide keeps the server's answers on subjects it would reject."""
    actual = (subjects_collide(a, b), subjects_collide(b, a))
    assert actual == (expected, expected)


# Exhaustive checks over every subject of 1..3 tokens from an alphabet.
PLAIN: tuple[str, ...] = ("a", "b", "*", ">")
ODD: tuple[str, ...] = (*PLAIN, "", "*x", ">x")
ALPHABETS = pytest.mark.parametrize("alphabet", [PLAIN, ODD], ids=["plain", "odd"])
# Literal witnesses include a token outside the alphabet and one more token than
# the longest subject, so that every collision has a witness if it has one at all.
WITNESS_TOKENS: tuple[str, ...] = ("a", "b", "c")
WITNESS_MAX_TOKENS = 4


@cache
def _subjects(alphabet: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(
        ".".join(tokens)
        for size in range(1, 4)
        for tokens in itertools.product(alphabet, repeat=size)
    )


def _is_literal(subject: str) -> bool:
    tokens = subject.split(".")
    return "*" not in tokens and ">" not in tokens


def _is_well_formed(subject: str) -> bool:
    tokens = subject.split(".")
    return all(
        t
        and (t in {"*", ">"} or t[0] not in "*>")
        and (t != ">" or i == len(tokens) - 1)
        for i, t in enumerate(tokens)
    )


def _nats_match(pattern: list[str], literal: list[str]) -> bool:
    """Plain NATS matching: '*' is one token, a last '>' is one or more tokens."""
    if pattern and pattern[-1] == ">":
        head = pattern[:-1]
        if len(literal) <= len(head):
            return False
    elif len(literal) != len(pattern):
        return False
    else:
        head = pattern
    return all(p in {"*", t} for p, t in zip(head, literal, strict=False))


@cache
def _witnesses(subject: str) -> frozenset[str]:
    """Every literal subject over WITNESS_TOKENS that ``subject`` matches."""
    pattern = subject.split(".")
    return frozenset(
        ".".join(literal)
        for size in range(1, WITNESS_MAX_TOKENS + 1)
        for literal in itertools.product(WITNESS_TOKENS, repeat=size)
        if _nats_match(pattern, list(literal))
    )


def _literal_collide(a: str, b: str) -> bool:
    """Some literal subject matches both (a literal side matches only itself)."""
    wa = frozenset({a}) if _is_literal(a) else _witnesses(a)
    wb = frozenset({b}) if _is_literal(b) else _witnesses(b)
    return bool(wa & wb)


@ALPHABETS
def test_symmetric(alphabet: tuple[str, ...]) -> None:
    """subjects_collide(a, b) == subjects_collide(b, a) for every pair."""
    subjects = _subjects(alphabet)
    actual = [
        (a, b)
        for a, b in itertools.combinations(subjects, 2)
        if subjects_collide(a, b) != subjects_collide(b, a)
    ]
    assert actual == []


@ALPHABETS
def test_reflexive(alphabet: tuple[str, ...]) -> None:
    """Every subject collides with itself, malformed or not."""
    actual = [s for s in _subjects(alphabet) if not subjects_collide(s, s)]
    assert actual == []


def test_one_literal_side_agrees_with_matching() -> None:
    """With a literal side, collide means the pattern matches that literal."""
    subjects = [s for s in _subjects(PLAIN) if _is_well_formed(s)]
    actual = [
        (a, b, subjects_collide(a, b))
        for a, b in itertools.product(subjects, repeat=2)
        if (_is_literal(a) or _is_literal(b))
        and subjects_collide(a, b) != _literal_collide(a, b)
    ]
    assert actual == []


def test_both_wildcards_agree_with_matching() -> None:
    """Well-formed patterns collide iff some literal subject matches both."""
    subjects = [
        s for s in _subjects(PLAIN) if _is_well_formed(s) and not _is_literal(s)
    ]
    actual = [
        (a, b, subjects_collide(a, b))
        for a, b in itertools.product(subjects, repeat=2)
        if subjects_collide(a, b) != _literal_collide(a, b)
    ]
    assert actual == []


def test_matcher_sanity() -> None:
    """The brute-force matcher itself follows NATS matching on known cases."""
    actual = [
        _nats_match(["a", ">"], ["a"]),
        _nats_match(["a", ">"], ["a", "b", "c"]),
        _nats_match(["*", "b"], ["a", "b"]),
        _nats_match(["*"], ["a", "b"]),
    ]
    assert actual == [False, True, True, False]


# SubjectIndex against brute force.


@ALPHABETS
def test_index_agrees_with_brute_force(alphabet: tuple[str, ...]) -> None:
    """colliding(q) returns exactly the entries subjects_collide says collide with q."""
    subjects = _subjects(alphabet)
    index = SubjectIndex()
    for i, subject in enumerate(subjects):
        index.add(f"S{i}", subject)
    entries = [(f"S{i}", s) for i, s in enumerate(subjects)]
    actual = {q: sorted(index.colliding(q)) for q in subjects}
    expected = {
        q: sorted(e for e in entries if subjects_collide(q, e[1])) for q in subjects
    }
    assert actual == expected


@ALPHABETS
def test_index_queries_outside_the_index(alphabet: tuple[str, ...]) -> None:
    """colliding() agrees with brute force for queries that are not indexed."""
    subjects = _subjects(alphabet)
    indexed = subjects[::3]
    index = SubjectIndex()
    for subject in indexed:
        index.add("S", subject)
    actual = {q: sorted(index.colliding(q)) for q in subjects}
    expected = {
        q: sorted(("S", s) for s in indexed if subjects_collide(q, s)) for q in subjects
    }
    assert actual == expected


def test_index_empty() -> None:
    """An empty index answers nothing, even to a catch-all or an odd query."""
    index = SubjectIndex()
    actual = (len(index), list(index.colliding(">")), list(index.colliding("a..b")))
    assert actual == (0, [], [])


def test_index_keeps_duplicates() -> None:
    """An entry added twice is counted and answered twice."""
    index = SubjectIndex()
    index.add("A", "foo.*")
    index.add("A", "foo.*")
    index.add("B", "foo.>")
    actual = (len(index), sorted(index.colliding("foo.bar")))
    expected = (3, [("A", "foo.*"), ("A", "foo.*"), ("B", "foo.>")])
    assert actual == expected


# find_overlaps: hand cases, then random inventories against a brute-force reference.

Inventory = list[tuple[str, list[str]]]
Row = tuple[str, str, str, str]

FIND_CASES: list[tuple[str, Inventory, list[Row]]] = [
    ("empty", [], []),
    ("disjoint", [("A", ["foo.*"]), ("B", ["bar.>"])], []),
    # TestJetStreamProperErrorDueToOverlapSubjects
    (
        "server-test",
        [("A", ["foo.*"]), ("B", ["foo.>"])],
        [("A", "foo.*", "B", "foo.>")],
    ),
    ("self-overlap-ignored", [("A", ["foo.*", "foo.>", "foo.bar"])], []),
    (
        # Colliding pairs (by position): (1, 1), (2, 0), (2, 1); (1, 1) is first.
        "first-subject-pair",
        [("A", ["x", "foo.a", "foo.b"]), ("B", ["foo.b", "foo.*"])],
        [("A", "foo.a", "B", "foo.*")],
    ),
    (
        "earlier-stream-first",
        [("A", ["a"]), ("ALL", [">"]), ("B", ["b"])],
        [("A", "a", "ALL", ">"), ("ALL", ">", "B", "b")],
    ),
    (
        "rows-sorted-by-stream-a-then-b",
        [("A", ["t.1.>"]), ("B", ["t.*.x"]), ("C", ["t.1.x"])],
        [
            ("A", "t.1.>", "B", "t.*.x"),
            ("A", "t.1.>", "C", "t.1.x"),
            ("B", "t.*.x", "C", "t.1.x"),
        ],
    ),
    (
        "multi-tenant",
        [
            ("T1-ORDERS", ["tenants.1.orders.>"]),
            ("T1-EVENTS", ["tenants.1.orders.events.*"]),
            ("T2-ORDERS", ["tenants.2.orders.>"]),
            ("T2-AUDIT", ["tenants.2.audit.>"]),
        ],
        [("T1-ORDERS", "tenants.1.orders.>", "T1-EVENTS", "tenants.1.orders.events.*")],
    ),
    (
        "name-repeated-is-one-stream",
        [("A", ["x"]), ("B", ["y"]), ("A", ["y", "x.>"])],
        [("A", "y", "B", "y")],
    ),
    (
        "odd-subjects-follow-the-server",
        [("A", ["*x.>"]), ("B", ["a.b"]), ("C", ["*x.b"])],
        [("A", "*x.>", "B", "a.b"), ("A", "*x.>", "C", "*x.b")],
    ),
    ("no-subjects", [("A", []), ("B", [">"])], []),
]


@pytest.mark.parametrize(
    ("streams", "expected"),
    [pytest.param(streams, rows, id=case) for case, streams, rows in FIND_CASES],
)
def test_find_overlaps(streams: Inventory, expected: list[Row]) -> None:
    """find_overlaps reports one documented row per overlapping pair of streams."""
    actual = find_overlaps(streams)
    assert actual == expected


def test_find_overlaps_accepts_tuples_and_generators() -> None:
    """Subjects may be any sequence and the streams any iterable."""
    streams = ((name, (f"{name}.>", "shared")) for name in ("a", "b"))
    actual = find_overlaps(streams)
    assert actual == [("a", "shared", "b", "shared")]


def test_find_overlaps_rejects_str_subjects() -> None:
    """A str given as a subject list is a caller mistake, not a list of letters."""
    with pytest.raises(TypeError) as info:
        find_overlaps([("A", "foo.>")])
    actual = str(info.value)
    assert actual == "subjects of stream 'A' must be a sequence of str, not str"


def _reference_overlaps(streams: Inventory) -> list[Row]:
    """All-pairs version of the documented find_overlaps contract (unique names)."""
    rows: list[Row] = []
    for (name_a, subjects_a), (name_b, subjects_b) in itertools.combinations(
        streams, 2
    ):
        pairs = (
            (sa, sb)
            for sa in subjects_a
            for sb in subjects_b
            if subjects_collide(sa, sb)
        )
        first = next(pairs, None)
        if first is not None:
            rows.append((name_a, first[0], name_b, first[1]))
    return rows


@pytest.mark.parametrize("seed", range(20), ids=lambda seed: f"seed{seed}")
def test_find_overlaps_agrees_with_all_pairs(seed: int) -> None:
    """find_overlaps equals the all-pairs reference on random inventories."""
    rng = random.Random(seed)  # noqa: S311 (seeded test data, not security)
    pool = _subjects(ODD)
    streams: Inventory = [
        (f"S{i}", [rng.choice(pool) for _ in range(rng.randint(0, 4))])
        for i in range(rng.randint(2, 40))
    ]
    actual = find_overlaps(streams)
    expected = _reference_overlaps(streams)
    assert actual == expected


@pytest.mark.parametrize(
    ("subjects", "mirror", "sources", "expected"),
    [
        (["a", "b.>"], None, None, ("a", "b.>")),
        (None, None, None, ("S",)),
        ([], None, [], ("S",)),
        (None, {"name": "M"}, None, ()),
        (None, None, [{"name": "O"}], ()),
        (["a"], {"name": "M"}, None, ("a",)),
    ],
    ids=["own", "none", "empty", "mirror", "sources", "mirror-with-subjects"],
)
def test_claimed_subjects(
    subjects: list[str] | None,
    mirror: object,
    sources: object,
    expected: tuple[str, ...],
) -> None:
    """A stream claims its subjects, or its name when it has none and copies nothing."""
    assert (
        claimed_subjects(subjects, name="S", mirror=mirror, sources=sources) == expected
    )
