"""C escaping of quoted strings, as XLA's printer and parser do it
(absl::CEscape / absl::CUnescape).

Escapes stand for bytes, and the bytes are UTF-8; bytes that are not valid
UTF-8 survive a round trip as surrogates (``surrogateescape``).
"""

from __future__ import annotations

_UNESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "?": "?",
              "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"', ord("'"): "\\'",
            ord("\\"): "\\\\"}
_HEX = "0123456789abcdefABCDEF"


def c_unescape(text: str) -> str:
    """The text between a string's quotes with its C escapes (``\\n``, ``\\"``, octal, hex,
    ``\\u``/``\\U`` code points) decoded; an escape absl::CUnescape refuses is kept as written,
    or its value cut to a byte (:func:`c_escape_problem` says which)."""
    i = text.find("\\")
    if i < 0:
        return text
    out = bytearray()
    pos = 0
    while i >= 0:
        out += text[pos:i].encode("utf-8", "surrogateescape")
        pos, data, _ = _escape_at(text, i)
        out += data
        i = text.find("\\", pos)
    out += text[pos:].encode("utf-8", "surrogateescape")
    return out.decode("utf-8", "surrogateescape")


def c_escape_problem(text: str) -> tuple[int, str] | None:
    """Where and why the text between a string's quotes holds an escape absl::CUnescape
    refuses (XLA's lexer then fails on the string), or None: ``\\`` then one of ``abfnrtv\\'"?``,
    one to three octal digits up to 377, ``x`` and hex digits up to ff, ``u`` and four or ``U``
    and eight hex digits naming a code point that is not a surrogate."""
    i = text.find("\\")
    while i >= 0:
        end, _, problem = _escape_at(text, i)
        if problem is not None:
            return i, problem
        i = text.find("\\", end)
    return None


def _escape_at(text: str, i: int) -> tuple[int, bytes, str | None]:
    """The escape whose ``\\`` is at ``i``: where it ends, the bytes it stands for, and why
    absl::CUnescape refuses it (None when it does not; the bytes are then what :func:`c_unescape`
    keeps: the escape as written, or its value cut to a byte)."""
    n = len(text)
    nxt = text[i + 1] if i + 1 < n else ""
    if not nxt:
        return n, b"\\", "a string ends in a lone \\"
    if nxt in _UNESCAPES:
        return i + 2, _UNESCAPES[nxt].encode(), None
    if nxt in "01234567":
        j = i + 1
        while j < n and j < i + 4 and text[j] in "01234567":
            j += 1
        value = int(text[i + 1 : j], 8)
        return j, bytes([value & 0xFF]), f"octal escape {text[i:j]} is above \\377" if value > 0o377 else None
    if nxt in "xX":
        j = i + 2
        while j < n and text[j] in _HEX:
            j += 1
        value = int(text[i + 2 : j] or "0", 16)
        if j == i + 2:
            problem: str | None = "\\x must be followed by hex digits"
        else:
            problem = f"hex escape {text[i:j]} is above \\xff" if value > 0xFF else None
        return j, bytes([value & 0xFF]), problem
    as_written = ("\\" + nxt).encode("utf-8", "surrogateescape")
    if nxt in "uU":
        width = 4 if nxt == "u" else 8
        digits = text[i + 2 : i + 2 + width]
        if len(digits) < width or any(c not in _HEX for c in digits):
            return i + 2, as_written, f"\\{nxt} must be followed by {width} hex digits"
        code = int(digits, 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return i + 2, as_written, f"\\{nxt}{digits} is not a Unicode code point"
        return i + 2 + width, chr(code).encode("utf-8"), None
    return i + 2, as_written, f"unknown escape sequence \\{nxt}"


def c_escape(text: str) -> str:
    """What XLA's printer writes between the quotes of a string value."""
    out = []
    for byte in text.encode("utf-8", "surrogateescape"):
        if byte in _ESCAPES:
            out.append(_ESCAPES[byte])
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)
