"""nats-server's subject transform checks, ported: which source/destination pairs it refuses.

``NewSubjectTransform`` (server/subject_transform.go, non-strict), ``ValidateMapping``
(2.11+) and ``ValidateMappingDestination`` (2.10) (server/sublist.go) answer with the
server's error text, or ``None`` when the transform is valid. Three generations differ:

* ``2.10``: no ``{{random()}}``; a destination function with a source without ``*``
  is out of range; the invalid-destination text says ``invalid subject``;
* ``2.11``: the same functions, the text says ``invalid transform``;
* ``2.12``: ``{{random()}}`` and a one-argument ``{{partition()}}`` are known.

Apart from the generations, from 2.12.5 an error about an empty destination token has
no `` in `` suffix (``mappingDestinationErr.Error``, server/errors.go:256-261 at
v2.12.5; up to 2.12.4, and on every 2.10 and 2.11 patch, ``"%s in %s"`` always):
``bare_empty``.

The function parsers follow 2.10.26, 2.11.0 and 2.12.8; older patches of a line may
differ in a function's argument rules. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from assetgate.decoding.goscan import go_atoi

__all__ = [
    "Generation",
    "mapping_destination_error",
    "subject_transform_error",
    "validate_mapping_error",
]

Generation = Literal["2.10", "2.11", "2.12"]

_WS: Final = "[\t\n\f\r ]"  # Go RE2's \s
_FUNCTIONS: Final = {
    name: re.compile("{{" + _WS + "*" + pattern + _WS + r"*\((.*)\)" + _WS + "*}}")
    for name, pattern in (
        ("partition", "[pP]artition"),
        ("wildcard", "[wW]ildcard"),
        ("split_from_left", "[sS]plit[fF]rom[lL]eft"),
        ("split_from_right", "[sS]plit[fF]rom[rR]ight"),
        ("slice_from_left", "[sS]lice[fF]rom[lL]eft"),
        ("slice_from_right", "[sS]lice[fF]rom[rR]ight"),
        ("split", "[sS]plit"),
        ("left", "[lL]eft"),
        ("right", "[rR]ight"),
        ("random", "[rR]andom"),
    )
}
_COMMA: Final = re.compile(",[\t\n\f\r ]*")
_INT32: Final = 1 << 31
_PREFIX: Final = "invalid mapping destination"
_NOT_ENOUGH: Final = f"{_PREFIX}: not enough arguments passed to the function"
_TOO_MANY: Final = f"{_PREFIX}: too many arguments passed to the function"
_BAD_ARG: Final = f"{_PREFIX}: function argument is invalid or in the wrong format"
_UNKNOWN: Final = f"{_PREFIX}: unknown function"
_OUT_OF_RANGE: Final = f"{_PREFIX}: wildcard index out of range"
_BAD_SUBJECT: Final = "invalid subject"  # ErrBadSubject
_FWC: Final = ">"
_PWC: Final = "*"

# transform types (subject_transform.go)
_NONE, _BAD, _PARTITION, _WILDCARD, _RANDOM, _OTHER = range(6)
_INDEX_INT: Final = (
    "split_from_left",
    "split_from_right",
    "slice_from_left",
    "slice_from_right",
    "right",
    "left",
)


def _error(token: str, err: str, *, bare_empty: bool = True) -> str:
    """``mappingDestinationErr.Error``: ``<err> in <token>``.

    An empty token gives the bare ``<err>`` when ``bare_empty`` (2.12.5+), else
    ``<err> in `` (only the destination token scan can meet an empty token).
    """
    return f"{err} in {token}" if token or not bare_empty else err


def _args(name: str, token: str) -> list[str] | None:
    """``getMappingFunctionArgs``: the comma-split arguments, ``None`` if no match."""
    found = _FUNCTIONS[name].search(token)
    if found is None:
        return None
    return _COMMA.split(found.group(1))


def _index_int(token: str, args: list[str]) -> tuple[int, list[int], str | None]:
    """``transformIndexIntArgsHelper``."""
    if len(args) < 2:  # noqa: PLR2004 - a wildcard index and a number
        return _BAD, [], _error(token, _NOT_ENOUGH)
    if len(args) > 2:  # noqa: PLR2004
        return _BAD, [], _error(token, _TOO_MANY)
    index = go_atoi(args[0].strip(" "))
    if index is None or go_atoi(args[1].strip(" "), 32) is None:
        return _BAD, [], _error(token, _BAD_ARG)
    return _OTHER, [index], None


def _placeholders(
    token: str, generation: Generation
) -> tuple[int, list[int], str | None]:
    """``indexPlaceHolders``: (transform type, wildcard indexes, error text)."""
    length = len(token)
    if length <= 1:
        return _NONE, [-1], None
    if token[0] == "$":
        index = go_atoi(token[1:])
        return (_NONE, [-1], None) if index is None else (_WILDCARD, [index], None)
    if not (length > 4 and token.startswith("{{") and token.endswith("}}")):  # noqa: PLR2004
        return _NONE, [-1], None
    args = _args("wildcard", token)
    if args is not None:
        if len(args) == 1 and not args[0]:
            return _BAD, [], _error(token, _NOT_ENOUGH)
        if len(args) > 1:
            return _BAD, [], _error(token, _TOO_MANY)
        index = go_atoi(args[0].strip(" "))
        if index is None:
            return _BAD, [], _error(token, _BAD_ARG)
        return _WILDCARD, [index], None
    args = _args("partition", token)
    if args is not None:
        if len(args) < (1 if generation == "2.12" else 2):
            return _BAD, [], _error(token, _NOT_ENOUGH)
        count = go_atoi(args[0].strip(" "))
        if count is None or (generation == "2.12" and count >= _INT32):
            return _BAD, [], _error(token, _BAD_ARG)
        indexes = [go_atoi(arg.strip(" ")) for arg in args[1:]]
        if None in indexes:
            return _BAD, [], _error(token, _BAD_ARG)
        return _PARTITION, [i for i in indexes if i is not None], None
    for name in _INDEX_INT:
        args = _args(name, token)
        if args is not None:
            return _index_int(token, args)
    args = _args("split", token)
    if args is not None:
        if len(args) < 2:  # noqa: PLR2004
            return _BAD, [], _error(token, _NOT_ENOUGH)
        if len(args) > 2:  # noqa: PLR2004
            return _BAD, [], _error(token, _TOO_MANY)
        index = go_atoi(args[0].strip(" "))
        if index is None or " " in args[1] or "." in args[1]:
            return _BAD, [], _error(token, _BAD_ARG)
        return _OTHER, [index], None
    if generation == "2.12":
        args = _args("random", token)
        if args is not None:
            if len(args) != 1:
                return _BAD, [], _error(token, _NOT_ENOUGH)
            top = go_atoi(args[0].strip(" "))
            if top is None or top >= _INT32:
                return _BAD, [], _error(token, _BAD_ARG)
            return _RANDOM, [], None
    return _BAD, [], _error(token, _UNKNOWN)


def _subject_info(subject: str) -> tuple[bool, list[str], int, bool]:
    """``subjectInfo``: valid, tokens, number of ``*``, ends in ``>``."""
    if not subject:
        return False, [], 0, False
    tokens = subject.split(".")
    partial, full = 0, False
    for token in tokens:
        if not token or full:
            return False, [], 0, False
        if token == _FWC:
            full = True
        elif token == _PWC:
            partial += 1
    return True, tokens, partial, full


def subject_transform_error(
    source: str, destination: str, generation: Generation
) -> str | None:
    """``NewSubjectTransform(source, destination)``'s error text, ``None`` if valid.

    No destination is no transform (valid); no source is ``>``.
    """
    if not destination:
        return None
    valid, _tokens, partial, full = _subject_info(source or ">")
    dest_ok, dest_tokens, dest_partial, dest_full = _subject_info(destination)
    if not valid or not dest_ok or dest_partial > 0 or full != dest_full:
        return _BAD_SUBJECT
    if partial > 0 or full:
        for token in dest_tokens:
            kind, indexes, error = _placeholders(token, generation)
            if error is not None:
                return error
            if generation != "2.12" and partial == 0 and kind != _NONE:
                return _error(token, _OUT_OF_RANGE)
            if kind in {_NONE, _RANDOM}:
                continue
            for index in indexes:
                if index > partial:
                    return _error(f"{token}: [{index}]", _OUT_OF_RANGE)
        return None
    allowed = {_NONE, _RANDOM, _PARTITION} if generation == "2.12" else {_NONE}
    for token in dest_tokens:
        kind, _indexes, error = _placeholders(token, generation)
        if error is not None:
            return error
        if kind not in allowed:
            return _error(token, _OUT_OF_RANGE)
    return None


def _destination_tokens_error(
    destination: str, generation: Generation, *, bare_empty: bool = False
) -> str | None:
    """The token scan ``ValidateMapping`` and ``ValidateMappingDestination`` share.

    ``bare_empty``: an empty token's error is the bare error (2.12.5+), else it ends
    in `` in ``.
    """
    invalid = f"{_PREFIX}: invalid {'subject' if generation == '2.10' else 'transform'}"
    names = [name for name in _FUNCTIONS if name not in {"left", "right"}]
    if generation != "2.12":
        names.remove("random")
    full = False
    for token in destination.split("."):
        length = len(token)
        if length == 0 or full:
            return _error(token, invalid, bare_empty=bare_empty)
        if length > 4 and token.startswith("{{") and token.endswith("}}"):  # noqa: PLR2004
            if not any(_FUNCTIONS[name].search(token) for name in names):
                return _error(token, _UNKNOWN)
            continue
        if token == _FWC:
            full = True
        elif any(c in token for c in "\t\n\f\r "):
            return invalid
    return None


def validate_mapping_error(
    source: str, destination: str, generation: Generation, *, bare_empty: bool = False
) -> str | None:
    """``ValidateMapping(source, destination)`` (2.11+): its error text, ``None`` if valid.

    ``bare_empty``: the release words an empty token's error without `` in ``
    (2.12.5+).
    """
    if not destination:
        return None
    return _destination_tokens_error(
        destination, generation, bare_empty=bare_empty
    ) or subject_transform_error(source, destination, generation)


def mapping_destination_error(destination: str) -> str | None:
    """``ValidateMappingDestination(destination)`` (2.10): its error text, or ``None``."""
    if not destination:
        return None
    return _destination_tokens_error(destination, "2.10")
