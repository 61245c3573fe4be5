"""Tests for assetgate.decoding.goscan: Go encoding/json syntax errors, offsets and %q quoting."""

from __future__ import annotations

import pytest

from assetgate.decoding.goscan import MAX_DEPTH, go_quote, go_quote_char, scan

# (document, Go message, Go SyntaxError.Offset) for json.Unmarshal (one value).
SINGLE_ERRORS: list[tuple[bytes, str, int]] = [
    # structure
    (b'{"a" 1}', "invalid character '1' after object key", 6),
    (
        b'{"a":1,}',
        "invalid character '}' looking for beginning of object key string",
        8,
    ),
    (b"{1}", "invalid character '1' looking for beginning of object key string", 2),
    (b'{"a":}', "invalid character '}' looking for beginning of value", 6),
    (b'{"a":1 "b"}', "invalid character '\"' after object key:value pair", 8),
    (b"[1,]", "invalid character ']' looking for beginning of value", 4),
    (b"[1 2]", "invalid character '2' after array element", 4),
    (b"{} x", "invalid character 'x' after top-level value", 4),
    (b"01", "invalid character '1' after top-level value", 2),
    # literals
    (b"trux", "invalid character 'x' in literal true (expecting 'e')", 4),
    (b"'", "invalid character '\\'' looking for beginning of value", 1),
    (b"\xff", "invalid character 'ÿ' looking for beginning of value", 1),
    # strings
    (b'"a\x01"', "invalid character '\\x01' in string literal", 3),
    (b'"\\x"', "invalid character 'x' in string escape code", 3),
    (b'"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape", 6),
    # numbers
    (b"-a", "invalid character 'a' in numeric literal", 2),
    (b"1.a", "invalid character 'a' after decimal point in numeric literal", 3),
    (b"1ea", "invalid character 'a' in exponent of numeric literal", 3),
    # depth
    (b"[" * (MAX_DEPTH + 1), "invalid character '[' exceeded max depth", MAX_DEPTH + 1),
]


@pytest.mark.parametrize(
    ("data", "message", "offset"),
    SINGLE_ERRORS,
    ids=[
        "space-after-key",
        "trailing-comma-object",
        "number-key",
        "missing-value",
        "missing-comma",
        "trailing-comma-array",
        "missing-array-comma",
        "second-value",
        "leading-zero",
        "bad-literal",
        "single-quote",
        "byte-ff",
        "control-char",
        "bad-escape",
        "bad-hex-escape",
        "minus-letter",
        "dot-letter",
        "exponent-letter",
        "too-deep",
    ],
)
def test_single_value_errors(data: bytes, message: str, offset: int) -> None:
    """json.Unmarshal's first syntax error: exact message and byte offset."""
    problem = scan(data)
    actual = None if problem is None else (problem.message, problem.offset, problem.eof)
    assert actual == (message, offset, False)


@pytest.mark.parametrize(
    ("data", "single", "stream"),
    [
        (b"", "unexpected end of JSON input", None),
        (b"  ", "unexpected end of JSON input", None),
        (b"tru", "unexpected end of JSON input", "unexpected EOF"),
        (b"1.", "unexpected end of JSON input", "unexpected EOF"),
        (b"1e", "unexpected end of JSON input", "unexpected EOF"),
        (b"-", "unexpected end of JSON input", "unexpected EOF"),
        (b'{"a"', "unexpected end of JSON input", "unexpected EOF"),
        (b'{"name":"S1",', "unexpected end of JSON input", "unexpected EOF"),
        (b"{} {", "invalid character '{' after top-level value", "unexpected EOF"),
    ],
    ids=[
        "empty",
        "blank",
        "literal",
        "dot",
        "exponent",
        "minus",
        "key",
        "probe-S1",
        "second-open",
    ],
)
def test_truncated_input(data: bytes, single: str, stream: str | None) -> None:
    """Truncation: Unmarshal says `unexpected end of JSON input`, a Decoder `unexpected EOF`."""
    one = scan(data)
    many = scan(data, stream=True)
    actual = (one.message if one else None, many.message if many else None)
    assert actual == (single, stream)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{} x", "invalid character 'x' looking for beginning of value"),
        (b"[1 2]", "invalid character '2' after array element"),
    ],
    ids=["garbage-after-value", "inside-value"],
)
def test_stream_errors(data: bytes, message: str) -> None:
    """A Decoder reading values in turn reports garbage as the start of a new value."""
    problem = scan(data, stream=True)
    assert (problem.message if problem else None) == message


@pytest.mark.parametrize(
    "data",
    [
        b'{"name":"S"}',
        b'{"name":"S"} {"subjects":["s"]}',
        b"01",
        b'  {}  [] 1 "x" null true false  ',
        b"",
    ],
    ids=["object", "two-objects", "two-numbers", "mixed", "empty"],
)
def test_valid_streams(data: bytes) -> None:
    """Sequences of values (and an empty body) are valid for a Decoder."""
    assert scan(data, stream=True) is None


@pytest.mark.parametrize(
    "data",
    [
        b'{"name":"S","subjects":["a"],"max_msgs":-1.5e+3}',
        b'  {"a":[true,false,null,"\\u00e9\\n"]}  ',
        b"[" * MAX_DEPTH + b"]" * MAX_DEPTH,
    ],
    ids=["object", "literals-escapes", "max-depth"],
)
def test_valid_single(data: bytes) -> None:
    """Well-formed single values, up to exactly 10,000 levels deep, are valid."""
    assert scan(data) is None


def test_depth_limit_inside_object() -> None:
    """The depth limit counts the enclosing object: 1 + 10,000 arrays is one too many."""
    data = b'{"x":' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}"
    problem = scan(data)
    actual = None if problem is None else (problem.message, problem.offset)
    assert actual == ("invalid character '[' exceeded max depth", 5 + MAX_DEPTH)


def test_deep_nesting_is_iterative() -> None:
    """A 1,000,000-deep document is scanned without recursion errors."""
    problem = scan(b"[" * 1_000_000)
    assert (
        problem.message if problem else None
    ) == "invalid character '[' exceeded max depth"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('a"b', '"a\\"b"'),
        ("back\\slash", '"back\\\\slash"'),
        ("\n\t\r", '"\\n\\t\\r"'),
        ("\x00", '"\\x00"'),
        ("\x7f", '"\\x7f"'),
        ("é", '"é"'),
        ("😀", '"😀"'),
        ("\u00a0", '"\\u00a0"'),
        ("\u200b", '"\\u200b"'),
        ("\U000e0001", '"\\U000e0001"'),
        ("\ufffd", '"\ufffd"'),
    ],
    ids=[
        "quote",
        "backslash",
        "short-escapes",
        "nul",
        "del",
        "latin",
        "emoji",
        "nbsp",
        "zero-width-space",
        "tag-char",
        "replacement-char",
    ],
)
def test_go_quote(text: str, expected: str) -> None:
    """go_quote matches Go's strconv.Quote: escapes, printable non-ASCII kept."""
    assert go_quote(text) == expected


@pytest.mark.parametrize(
    ("byte", "expected"),
    [
        (ord("'"), "'\\''"),
        (ord('"'), "'\"'"),
        (ord("x"), "'x'"),
        (ord("\\"), "'\\\\'"),
        (0x01, "'\\x01'"),
        (0xFF, "'ÿ'"),
    ],
    ids=["apostrophe", "quote", "letter", "backslash", "control", "high-byte"],
)
def test_go_quote_char(byte: int, expected: str) -> None:
    """go_quote_char matches Go's quoteChar used in `invalid character ...` messages."""
    assert go_quote_char(byte) == expected


@pytest.mark.parametrize(
    "text",
    [chr(code) * 2 for code in range(128)] + ["ORDERS", "a b", 'a"b', "a\\b", ""],
)
def test_go_quote_plain_ascii_shortcut_agrees_with_the_walk(text: str) -> None:
    """Quoting printable ASCII directly gives what the character walk gives."""
    # a printable non-ASCII first character sends the text through the walk
    assert go_quote("é" + text) == '"é' + go_quote(text)[1:]
