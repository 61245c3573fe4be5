"""Subject collision, as nats-server decides it, and overlap finding over an inventory.

`subjects_collide` reproduces nats-server's ``SubjectsCollide`` (``server/sublist.go``,
identical semantics v2.10 to main) bit for bit, including its behaviour on subjects the
server would never accept from a client (empty tokens, ``>`` before the last token,
tokens such as ``*foo`` whose first character is a wildcard). `SubjectIndex` answers
"which indexed subjects collide with this one" with a token trie instead of comparing
against every entry, and `find_overlaps` uses it to report every pair of streams of one
account whose subjects overlap, the check behind ``JSStreamSubjectOverlapErr`` (10065).

This module deliberately does not validate subjects (it never raises for a malformed
one: the server compares whatever a stored config holds), does no I/O and does not log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

__all__ = [
    "KEEP_SUBJECTS",
    "SubjectIndex",
    "claimed_subjects",
    "find_overlaps",
    "is_subset_match",
    "subjects_collide",
]

_PWC: Final = "*"
_FWC: Final = ">"
_SEP: Final = "."

_Entry = tuple[str, str]

KEEP_SUBJECTS: Final = frozenset({"online", "degraded", "offline"})
"""The states in which a stream keeps its subjects on the server (an offline one too):
only such streams take part in overlaps."""


def claimed_subjects(
    subjects: Sequence[str] | None, *, name: str, mirror: object, sources: object
) -> tuple[str, ...]:
    """The subjects a stream claims: its own, or else its name.

    A stream with no subjects, no mirror and no sources gets its name as its subject
    (the server's default for it); a mirror or a sourcing stream claims none.
    """
    if subjects:
        return tuple(subjects)
    if mirror is None and not sources:
        return (name,)
    return ()


def subjects_collide(a: str, b: str) -> bool:
    """Tell whether two subjects could both match one literal subject, as nats-server.

    This is ``SubjectsCollide`` from nats-server ``server/sublist.go``, including its
    quirks: tokens are split on ``.`` with empty tokens kept; a subject has wildcards
    only if some token is exactly ``*`` or ``>``; when exactly one side is literal, a
    pattern token whose first character is ``*`` (such as ``*foo``) matches any
    non-empty token; when both sides have wildcards, any token starting with ``*`` or
    ``>`` matches any non-empty token, and a ``>`` anywhere in the shorter subject lets
    the longer one run on.

    Args:
        a: A subject or subject filter, not validated.
        b: Another one; the result is symmetric in ``a`` and ``b``.

    Returns:
        True if the server would consider the subjects overlapping.
    """
    if a == b:
        return True
    ta = a.split(_SEP)
    tb = b.split(_SEP)
    fwc_a = _FWC in ta
    fwc_b = _FWC in tb
    literal_a = not fwc_a and _PWC not in ta
    literal_b = not fwc_b and _PWC not in tb
    if literal_a:
        # Both literal and not byte-equal: they differ.
        return False if literal_b else _literal_matches(ta, tb)
    if literal_b:
        return _literal_matches(tb, ta)
    # Both have wildcards. Lengths may differ only if the shorter one has a '>'
    # (anywhere: the server does not require it to be the last token).
    len_a = len(ta)
    len_b = len(tb)
    if (len_a < len_b and not fwc_a) or (len_b < len_a and not fwc_b):
        return False
    for x, y in zip(ta, tb, strict=False):
        if not x or not y:
            return False
        if x != y and x[0] not in "*>" and y[0] not in "*>":
            return False
    return True


def is_subset_match(subject: str, test: str) -> bool:
    """Tell whether every subject ``subject`` matches is matched by ``test``.

    This is ``subjectIsSubsetMatch`` from nats-server ``server/sublist.go``: both may
    hold wildcards; ``foo.*`` is a subset of ``>``, ``*.*`` and ``foo.*`` but not of
    ``foo.bar``; a ``*`` in ``subject`` is a subset only of a ``*`` (or a ``>``) in
    ``test``; an empty token never matches.
    """
    tokens = subject.split(_SEP)
    tests = test.split(_SEP)
    for index, wanted in enumerate(tests):
        if index >= len(tokens) or not wanted:
            return False
        if wanted == _FWC:
            return True
        token = tokens[index]
        if not token or token == _FWC:
            return False
        if token == _PWC:
            if wanted != _PWC:
                return False
            continue
        if wanted[0] != _PWC and token != wanted:  # the server looks at one character
            return False
    return len(tokens) == len(tests)


def _literal_matches(literal: list[str], pattern: list[str]) -> bool:
    """Walk ``pattern`` over ``literal`` exactly as the server's subset match does."""
    size = len(literal)
    for i, p in enumerate(pattern):
        if i >= size or not p:
            return False
        if p == _FWC:
            return True
        t = literal[i]
        if not t or t == _FWC:
            return False
        # The first-character test (not equality with "*") is the server's.
        if p[0] != _PWC and p != t:
            return False
    return len(pattern) == size


def _is_odd(subject: str, tokens: list[str]) -> bool:
    """Tell whether the trie's plain NATS semantics may disagree with the server here.

    Odd subjects have an empty token, a token starting with ``*`` or ``>`` that is not
    exactly ``*`` or ``>``, or a ``>`` before the last token. Between two subjects that
    are not odd, `subjects_collide` is plain NATS matching ("some literal subject
    matches both"), which is what the trie walk computes. ``tokens`` is
    ``subject.split(".")``, passed in so that it is split only once.
    """
    if not all(tokens):
        return True
    if _PWC not in subject and _FWC not in subject:  # the common, literal case
        return False
    for t in tokens:
        if len(t) > 1 and t[0] in "*>":
            return True
    return _FWC in tokens and tokens.index(_FWC) != len(tokens) - 1


def _prepare(subject: str) -> tuple[str, list[str], bool]:
    """Split a subject once for both lookup and insertion."""
    tokens = subject.split(_SEP)
    return subject, tokens, _is_odd(subject, tokens)


class _Node(dict[str, "_Node"]):
    """One trie level: maps the next token (a literal or ``*``) to the next level.

    Being the dict, rather than holding one, saves the garbage collector one object
    per level, which counts at 100,000 streams; entry lists are created on first use.
    """

    __slots__ = ("ends", "fwc")

    def __init__(self) -> None:
        # dict's __new__ has made the empty mapping: no super().__init__() to call
        self.ends: list[_Entry] | None = None  # subjects ending at this node
        self.fwc: list[_Entry] | None = None  # subjects with ">" right after it


def _extend_subtree(node: _Node, out: list[_Entry]) -> None:
    """Append every entry stored at or below ``node`` to ``out``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.ends:
            out.extend(current.ends)
        if current.fwc:
            out.extend(current.fwc)
        stack.extend(current.values())


class SubjectIndex:
    """A multiset of ``(stream, subject)`` entries, searchable by subject collision.

    Well-formed subjects live in a token trie, so a query visits only the branches its
    tokens can match: a literal query costs about one dict lookup per token and per
    ``*`` met along the way, whatever the number of entries. A query token ``*``
    visits every branch at its level and a trailing ``>`` enumerates a whole subtree,
    so wildcard-heavy queries cost up to the number of entries (plus the answer).

    Odd subjects (with an empty token, a token starting with ``*`` or ``>`` that is not
    exactly ``*`` or ``>``, or ``>`` before the last token) are where nats-server's
    function departs from plain matching; they are kept in a list and compared with
    `subjects_collide` one by one. Each odd entry adds one comparison to every query,
    and an odd query is compared with every entry.

    Example:
        >>> index = SubjectIndex()
        >>> index.add("ORDERS", "orders.>")
        >>> index.add("EVENTS", "events.*")
        >>> list(index.colliding("orders.eu.created"))
        [('ORDERS', 'orders.>')]
    """

    __slots__ = ("_odd", "_root", "_size")

    def __init__(self) -> None:
        """Create an empty index."""
        self._root = _Node()
        self._odd: list[_Entry] = []
        self._size = 0

    def __len__(self) -> int:
        """Return the number of entries added, duplicates included."""
        return self._size

    def add(self, stream: str, subject: str) -> None:
        """Add one entry; adding the same entry twice makes it answer twice.

        Args:
            stream: The stream name carried along with the subject.
            subject: The subject or filter, not validated.
        """
        tokens = subject.split(_SEP)
        self._insert((stream, subject), tokens, _is_odd(subject, tokens))

    def colliding(self, subject: str) -> Iterator[tuple[str, str]]:
        """Iterate over the entries whose subject collides with ``subject``.

        The answer is exactly the entries ``e`` for which
        ``subjects_collide(subject, e[1])`` is true, in an order that depends only
        on the sequence of `add` calls.

        Args:
            subject: The subject or filter to look up, not validated.

        Returns:
            An iterator of ``(stream, subject)`` entries as they were added.
        """
        tokens = subject.split(_SEP)
        return iter(self._colliding(subject, tokens, _is_odd(subject, tokens)))

    def _insert(self, entry: _Entry, tokens: list[str], odd: bool) -> None:
        self._size += 1
        if odd:
            self._odd.append(entry)
            return
        node = self._root
        for token in tokens:
            if token == _FWC:  # last token, since the subject is not odd
                if node.fwc is None:
                    node.fwc = []
                node.fwc.append(entry)
                return
            child = node.get(token)
            if child is None:
                child = node[token] = _Node()
            node = child
        if node.ends is None:
            node.ends = []
        node.ends.append(entry)

    def _colliding(self, subject: str, tokens: list[str], odd: bool) -> list[_Entry]:
        out: list[_Entry] = []
        if odd:
            _extend_subtree(self._root, out)
            out.extend(self._odd)
            return [e for e in out if subjects_collide(subject, e[1])]
        self._walk(tokens, out)
        if self._odd:
            out.extend(e for e in self._odd if subjects_collide(subject, e[1]))
        return out

    def _walk(self, tokens: list[str], out: list[_Entry]) -> None:
        """Collect the trie entries that plain NATS matching says match tokens."""
        size = len(tokens)
        stack = [(self._root, 0)]
        while stack:
            node, i = stack.pop()
            if i == size:
                if node.ends:
                    out.extend(node.ends)
                continue
            # An entry ending in ">" here needs one more token: the query has one.
            if node.fwc:
                out.extend(node.fwc)
            if not node:
                continue
            token = tokens[i]
            if token == _FWC:  # last query token: every longer entry below matches
                for child in node.values():
                    _extend_subtree(child, out)
            elif token == _PWC:
                stack.extend((child, i + 1) for child in node.values())
            else:
                same = node.get(token)
                if same is not None:
                    stack.append((same, i + 1))
                star = node.get(_PWC)
                if star is not None:
                    stack.append((star, i + 1))


def find_overlaps(
    streams: Iterable[tuple[str, Sequence[str]]],
) -> list[tuple[str, str, str, str]]:
    """Find every pair of streams whose subjects overlap, without comparing all pairs.

    Streams are taken in input order and each is compared, through a `SubjectIndex`,
    with the streams before it, as the server compares a new stream with the existing
    ones. A stream is never compared with itself; as in clustered nats-server, "itself"
    means "same name", so a name given twice is one stream whose subjects are the
    concatenation of both lists, placed where the name first appears.

    One row is reported per pair of overlapping streams: ``(stream_a, subject_a,
    stream_b, subject_b)`` with ``stream_a`` before ``stream_b`` in the input. Of the
    colliding subject pairs of those streams, the row names the first in input order:
    the lowest position of ``subject_a`` in its stream's list, then the lowest position
    of ``subject_b``. Rows are sorted by the input positions of ``stream_a``, then
    ``stream_b``.

    Cost: about linear in the number of subjects for literal and prefix-partitioned
    subjects (such as ``tenants.<id>.<app>.>``), plus the size of the answer. A
    catch-all stream (``>``) overlaps every other stream, so it alone adds one row
    per stream: n - 1 rows, O(n) memory, not O(n^2). Subjects with a ``*`` in a
    leading token, odd subjects (see `SubjectIndex`) and streams that all overlap
    one another can make the cost quadratic, as the answer itself may be.

    Args:
        streams: ``(stream name, subjects)`` pairs, for the streams of one account;
            the subjects are those stored in the config (after server defaults).

    Returns:
        The rows described above, possibly empty.

    Raises:
        TypeError: If a stream's subjects are given as one ``str``.
    """
    merged: dict[str, Sequence[str]] = {}
    for name, subjects in streams:
        if isinstance(subjects, str):
            raise TypeError(
                f"subjects of stream {name!r} must be a sequence of str, not str"
            )
        known = merged.get(name)
        merged[name] = subjects if known is None else [*known, *subjects]
    position = {name: i for i, name in enumerate(merged)}
    index = SubjectIndex()
    first_at: dict[_Entry, int] = {}  # entry -> its first position in its stream
    found: list[tuple[int, int, tuple[str, str, str, str]]] = []
    for name, subjects in merged.items():
        best: dict[str, tuple[int, int, str, str]] = {}
        split = [_prepare(subject) for subject in subjects]
        for pos_b, (subject_b, tokens, odd) in enumerate(split):
            hits = index._colliding(subject_b, tokens, odd)  # noqa: SLF001 (same module)
            for entry in hits:
                other, subject_a = entry
                pos_a = first_at[entry]
                seen = best.get(other)
                if seen is None or (pos_a, pos_b) < seen[:2]:
                    best[other] = (pos_a, pos_b, subject_a, subject_b)
        for other, (_, _, subject_a, subject_b) in best.items():
            row = (other, subject_a, name, subject_b)
            found.append((position[other], position[name], row))
        for pos, (subject, tokens, odd) in enumerate(split):
            entry = (name, subject)
            if entry not in first_at:  # a repeated subject changes no answer
                first_at[entry] = pos
                index._insert(entry, tokens, odd)  # noqa: SLF001 (same module)
    found.sort(key=lambda item: (item[0], item[1]))
    return [row for _, _, row in found]
