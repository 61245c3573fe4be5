"""Go ``encoding/json`` syntax checking with Go's error texts and offsets; Go's ``Atoi``.

Used only after Python's parser has refused a document (or recursed too deep), to
name the first syntax error exactly as the server would. The state machine follows
the structure of Go's ``scanner.go`` (states, messages, the 10,000-level depth limit);
it is written from the documented behaviour, not translated line by line.
It is iterative, so any nesting depth is safe.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MAX_DEPTH",
    "SyntaxProblem",
    "go_atoi",
    "go_atoi_error",
    "go_quote",
    "go_quote_char",
    "scan",
]

MAX_DEPTH: Final = 10000  # encoding/json maxNestingDepth
_SPACE: Final = frozenset(b" \t\r\n")
_DIGITS: Final = frozenset(b"0123456789")
_HEX: Final = frozenset(b"0123456789abcdefABCDEF")
_ESCAPES: Final = frozenset(b'bfnrt\\/"')

# parse states on the stack
_OBJ_KEY: Final = 0
_OBJ_VALUE: Final = 1
_ARRAY: Final = 2


class SyntaxProblem(Exception):
    """A Go syntax error: message and byte offset (Go's ``SyntaxError.Offset``)."""

    def __init__(self, message: str, offset: int, *, eof: bool = False) -> None:
        """Keep Go's message, the offset and whether the input simply ended early."""
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.eof = eof


def go_quote(text: str) -> str:
    r"""Quote like Go's ``strconv.Quote`` (``%q``): escapes, non-printables as ``\\u``."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'  # the common name: printable ASCII quotes as itself
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in {'"', "\\"}:
            out.append("\\" + ch)
        elif code < 0x80:  # noqa: PLR2004 - ASCII
            if 0x20 <= code < 0x7F:  # noqa: PLR2004 - printable ASCII
                out.append(ch)
            else:
                out.append(_SHORT_ESCAPES.get(ch, f"\\x{code:02x}"))
        elif ch.isprintable() and not 0xD800 <= code <= 0xDFFF:  # noqa: PLR2004
            out.append(ch)
        elif code <= 0xFFFF:  # noqa: PLR2004
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def go_quote_char(byte: int) -> str:
    """Go's ``quoteChar``: a byte as it appears in ``invalid character ...``."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    return "'" + go_quote(chr(byte))[1:-1] + "'"


def scan(data: bytes, *, stream: bool = False) -> SyntaxProblem | None:
    """The first syntax error of ``data`` as Go reports it, or ``None`` if valid.

    ``stream`` checks a sequence of values as ``json.Decoder`` reads them (an
    API request body); otherwise exactly one value, as ``json.Unmarshal`` does.
    """
    scanner = _Scanner(data)
    return scanner.run_stream() if stream else scanner.run_single()


class _Scanner:
    """A byte-at-a-time JSON scanner with Go's states and messages."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.stack: list[int] = []

    def run_single(self) -> SyntaxProblem | None:
        end = self._value(0)
        if isinstance(end, SyntaxProblem):
            return end
        pos = self._skip_space(end)
        if pos < len(self.data):
            return self._error(pos, "after top-level value")
        return None

    def run_stream(self) -> SyntaxProblem | None:
        pos = 0
        while True:
            pos = self._skip_space(pos)
            if pos >= len(self.data):
                return None
            end = self._value(pos)
            if isinstance(end, SyntaxProblem):
                if end.eof:
                    return SyntaxProblem("unexpected EOF", end.offset, eof=True)
                return end
            pos = end

    def _skip_space(self, pos: int) -> int:
        data = self.data
        while pos < len(data) and data[pos] in _SPACE:
            pos += 1
        return pos

    def _error(self, pos: int, context: str) -> SyntaxProblem:
        return SyntaxProblem(
            f"invalid character {go_quote_char(self.data[pos])} {context}", pos + 1
        )

    def _eof(self) -> SyntaxProblem:
        return SyntaxProblem("unexpected end of JSON input", len(self.data), eof=True)

    def _value(self, pos: int) -> int | SyntaxProblem:  # noqa: PLR0915 - one loop, one state machine
        """Scan one value starting at ``pos`` (leading space allowed); return its end."""
        data = self.data
        stack: list[int] = []
        expect_value = True
        while True:
            pos = self._skip_space(pos)
            if pos >= len(data):
                return self._eof()
            byte = data[pos]
            if expect_value:
                if byte in b"{[":
                    stack.append(_OBJ_KEY if byte == ord("{") else _ARRAY)
                    if len(stack) > MAX_DEPTH:
                        return self._error(pos, "exceeded max depth")
                    pos = self._skip_space(pos + 1)
                    if pos >= len(data):
                        return self._eof()
                    if stack[-1] == _OBJ_KEY:
                        if data[pos] == ord("}"):
                            stack.pop()
                            pos += 1
                            expect_value = False
                        elif data[pos] == ord('"'):
                            end = self._string(pos)
                            if isinstance(end, SyntaxProblem):
                                return end
                            pos = end
                            expect_value = False
                        else:
                            return self._error(
                                pos, "looking for beginning of object key string"
                            )
                    elif data[pos] == ord("]"):
                        stack.pop()
                        pos += 1
                        expect_value = False
                    continue
                end = self._scalar(pos)
                if isinstance(end, SyntaxProblem):
                    return end
                pos = end
                expect_value = False
                if not stack:
                    return pos
                continue
            # after a value (or an object key)
            if not stack:
                return pos
            top = stack[-1]
            if top == _OBJ_KEY:
                if byte != ord(":"):
                    return self._error(pos, "after object key")
                stack[-1] = _OBJ_VALUE
                pos += 1
                expect_value = True
            elif top == _OBJ_VALUE:
                if byte == ord(","):
                    stack[-1] = _OBJ_KEY
                    pos = self._skip_space(pos + 1)
                    if pos >= len(data):
                        return self._eof()
                    if data[pos] != ord('"'):
                        return self._error(
                            pos, "looking for beginning of object key string"
                        )
                    end = self._string(pos)
                    if isinstance(end, SyntaxProblem):
                        return end
                    pos = end
                elif byte == ord("}"):
                    stack.pop()
                    pos += 1
                    if not stack:
                        return pos
                else:
                    return self._error(pos, "after object key:value pair")
            elif byte == ord(","):
                pos += 1
                expect_value = True
            elif byte == ord("]"):
                stack.pop()
                pos += 1
                if not stack:
                    return pos
            else:
                return self._error(pos, "after array element")

    def _scalar(self, pos: int) -> int | SyntaxProblem:
        byte = self.data[pos]
        if byte == ord('"'):
            return self._string(pos)
        if byte == ord("-") or byte in _DIGITS:
            return self._number(pos)
        for word in (b"true", b"false", b"null"):
            if byte == word[0]:
                return self._literal(pos, word)
        return self._error(pos, "looking for beginning of value")

    def _literal(self, pos: int, word: bytes) -> int | SyntaxProblem:
        data = self.data
        name = word.decode()
        for index in range(1, len(word)):
            at = pos + index
            if at >= len(data):
                return self._eof()
            if data[at] != word[index]:
                expected = chr(word[index])
                return self._error(at, f"in literal {name} (expecting '{expected}')")
        return pos + len(word)

    def _string(self, pos: int) -> int | SyntaxProblem:
        data = self.data
        pos += 1
        while True:
            if pos >= len(data):
                return self._eof()
            byte = data[pos]
            if byte == ord('"'):
                return pos + 1
            if byte == ord("\\"):
                pos += 1
                if pos >= len(data):
                    return self._eof()
                if data[pos] == ord("u"):
                    for _ in range(4):
                        pos += 1
                        if pos >= len(data):
                            return self._eof()
                        if data[pos] not in _HEX:
                            return self._error(
                                pos, "in \\u hexadecimal character escape"
                            )
                elif data[pos] not in _ESCAPES:
                    return self._error(pos, "in string escape code")
            elif byte < 0x20:  # noqa: PLR2004 - control characters
                return self._error(pos, "in string literal")
            pos += 1

    def _number(self, pos: int) -> int | SyntaxProblem:
        data = self.data
        size = len(data)
        if data[pos] == ord("-"):
            pos += 1
            if pos >= size:
                return self._eof()
            if data[pos] not in _DIGITS:
                return self._error(pos, "in numeric literal")
        if data[pos] == ord("0"):
            pos += 1
        else:
            while pos < size and data[pos] in _DIGITS:
                pos += 1
        if pos < size and data[pos] == ord("."):
            pos += 1
            if pos >= size:
                return self._eof()
            if data[pos] not in _DIGITS:
                return self._error(pos, "after decimal point in numeric literal")
            while pos < size and data[pos] in _DIGITS:
                pos += 1
        if pos < size and data[pos] in b"eE":
            pos += 1
            if pos < size and data[pos] in b"+-":
                pos += 1
            if pos >= size:
                return self._eof()
            if data[pos] not in _DIGITS:
                return self._error(pos, "in exponent of numeric literal")
            while pos < size and data[pos] in _DIGITS:
                pos += 1
        return pos


# --- Go strconv ----------------------------------------------------------------------

# the stamps every inventory is full of, answered without parsing
_PLAIN_INTS: Final = {str(value): value for value in range(100)}
_DIGITS_MAX: Final = 19  # len(str(2**63 - 1)): longer numbers are out of range


def go_atoi(text: str, bits: int = 64) -> int | None:
    """Go ``strconv.ParseInt(text, 10, bits)``; ``Atoi`` is 64 bits.

    An optional sign, then ASCII digits, in the range of a signed ``bits``-bit
    integer; else ``None`` (Go's syntax or range error). A number of any length is
    refused without converting it whole.
    """
    plain = _PLAIN_INTS.get(text)
    if plain is not None:
        return plain
    digits = text[1:] if text[:1] in {"+", "-"} else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    significant = digits.lstrip("0")
    if len(significant) > _DIGITS_MAX:  # out of range (ErrRange), whatever its length
        return None
    value = int(significant or "0")
    value = -value if text[:1] == "-" else value
    limit = 1 << (bits - 1)
    return value if -limit <= value < limit else None


_UINT64_DIGITS: Final = 20  # len(str(2**64 - 1))


def go_atoi_error(text: str, bits: int = 64) -> str | None:
    """Why :func:`go_atoi` refuses ``text``: Go's ``invalid syntax`` or ``value out of range``.

    ``None`` when it parses. Go reads the digits in order and stops where the number
    overflows 64 bits, so digits that overflow before a non-digit are out of range.
    """
    if go_atoi(text, bits) is not None:
        return None
    digits = text[1:] if text[:1] in {"+", "-"} else text
    end = next(
        (i for i, char in enumerate(digits) if not "0" <= char <= "9"), len(digits)
    )
    read = digits[:end].lstrip("0")
    overflows = len(read) > _UINT64_DIGITS or (
        len(read) == _UINT64_DIGITS and int(read) >= 1 << 64
    )
    if not digits or (end < len(digits) and not overflows):
        return "invalid syntax"
    return "value out of range"
