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
    """The text between a string's quotes with its C escapes (``\\n``, ``\\"``,
    octal, hex) decoded."""
    if "\\" not in text:
        return text
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\" or i + 1 >= n:
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in _UNESCAPES:
            out += _UNESCAPES[nxt].encode()
            i += 2
        elif nxt in "01234567":
            j = i + 1
            while j < n and j < i + 4 and text[j] in "01234567":
                j += 1
            out.append(int(text[i + 1 : j], 8) & 0xFF)
            i = j
        elif nxt in "xX":
            j = i + 2
            while j < n and text[j] in _HEX:
                j += 1
            out.append(int(text[i + 2 : j] or "0", 16) & 0xFF)
            i = j
        else:
            out += ("\\" + nxt).encode("utf-8", "surrogateescape")
            i += 2
    return out.decode("utf-8", "surrogateescape")


def c_escape_problem(text: str) -> tuple[int, str] | None:
    """Where and why the text between a string's quotes holds an escape absl::CUnescape
    refuses (XLA's lexer then fails on the string), or None: ``\\`` then one of ``abfnrtv\\'"?``,
    one to three octal digits up to 377, ``x`` and hex digits up to ff, ``u`` and four or ``U``
    and eight hex digits naming a code point that is not a surrogate."""
    i = text.find("\\")
    n = len(text)
    while i >= 0:
        nxt = text[i + 1] if i + 1 < n else ""
        j = i + 2
        if nxt and nxt in _UNESCAPES:
            pass
        elif nxt and nxt in "01234567":
            j = i + 1
            while j < n and j < i + 4 and text[j] in "01234567":
                j += 1
            if int(text[i + 1 : j], 8) > 0o377:
                return i, f"octal escape {text[i:j]} is above \\377"
        elif nxt in ("x", "X"):
            while j < n and text[j] in _HEX:
                j += 1
            if j == i + 2:
                return i, "\\x must be followed by hex digits"
            if int(text[i + 2 : j], 16) > 0xFF:
                return i, f"hex escape {text[i:j]} is above \\xff"
        elif nxt in ("u", "U"):
            width = 4 if nxt == "u" else 8
            digits = text[i + 2 : i + 2 + width]
            if len(digits) < width or any(c not in _HEX for c in digits):
                return i, f"\\{nxt} must be followed by {width} hex digits"
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                return i, f"\\{nxt}{digits} is not a Unicode code point"
            j = i + 2 + width
        else:
            return i, f"unknown escape sequence \\{nxt}" if nxt else "a string ends in a lone \\"
        i = text.find("\\", j)
    return None


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
