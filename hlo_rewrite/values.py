"""One reader and one formatter for each kind of attribute value, without the grammar.

The kinds are those of :class:`hlo_rewrite.opcodes.Kind` (XLA's attribute types). Public names:

- :func:`read` ``(kind, text, name=None)``: the typed value of ``text`` read as XLA's parser
  reads that kind, or :class:`ValueReadError` (a ``ValueError`` with ``offset`` into ``text``)
  saying what is wrong. Blanks and comments between tokens are allowed, as for XLA.
- :func:`format_value` ``(kind, value, percent=True)``: XLA's printed spelling of a value.
- :func:`read_value` ``(name, text)``: the value of a named attribute in one of the plain
  spellings XLA prints, or :data:`UNREAD` for any other spelling (the caller then asks the
  grammar, which reads it or says where it is wrong).
- :func:`expand_iota_replica_groups`: ``[G,S]<=[dims]T(perm)`` as explicit groups.

Values read: ``int`` / ``int32`` -> int; ``float`` -> float; ``bool`` -> bool; ``bool list`` ->
list[bool]; ``int list`` -> list[int]; ``int list list`` and ``replica groups`` ->
list[list[int]]; ``computation`` -> name; ``computation list`` / ``instruction list`` ->
list of names; ``string`` -> the unescaped string; ``enum`` / ``word`` -> the word; ``shape`` ->
:class:`~hlo_rewrite.shapes.Shape`; ``shape list`` -> list of shapes; ``window`` -> a dict of
its fields (``size``, ``stride``, ``pad``, ``lhs_dilate``, ``rhs_dilate``, ``rhs_reversal``),
each one number by dimension (a pad (low, high)); every other kind -> its text once checked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Final

from . import escapes, lexicon
from .errors import HloError
from .opcodes import ANY_CASE_ENUM_NAMES, ANY_CASE_ENUMS, ATTRIBUTE_KINDS, ENUM_VALUES, Kind
from .regex import lazy_pattern

__all__ = [
    "UNREAD",
    "UnexpandedGroups",
    "ValueReadError",
    "expand_iota_replica_groups",
    "format_value",
    "read",
    "read_sub_attributes",
    "read_value",
]

#: returned by :func:`read_value` when the text is not one of the plain spellings read there
UNREAD: Final = object()
#: what a fast reading gives when the token reading must decide
_SLOW: Final = object()


class ValueReadError(ValueError):
    """A value XLA's parser would reject; ``offset`` is where in the value text."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class UnexpandedGroups(ValueReadError):
    """Iota replica groups written as XLA's parser reads them that give no groups: they do not
    cover their devices, or their transpose is no permutation. XLA reads them all the same (so
    strict mode does); whatever needs the groups themselves cannot."""


# ----------------------------------------------------------------- iota groups


def expand_iota_replica_groups(
    group_count: int, group_size: int, dims: list[int], perm: list[int] | None = None
) -> list[list[int]]:
    """``[G,S]<=[dims]T(perm)``: iota over prod(dims), reshape to dims,
    transpose by perm, reshape to [G, S] (XLA's IotaReplicaGroupList)."""
    n = math.prod(dims)
    if group_count * group_size != n:
        raise ValueError(f"iota replica groups [{group_count},{group_size}] do not cover the {n} devices of {dims}")
    if perm is None:
        perm = list(range(len(dims)))
    if sorted(perm) != list(range(len(dims))):
        raise ValueError(f"T({','.join(map(str, perm))}) is not a permutation of {len(dims)} dimensions")
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    tdims = [dims[p] for p in perm]
    tstrides = [strides[p] for p in perm]
    flat: list[int] = []
    # row-major walk over the transposed array
    idx = [0] * len(tdims)
    for _ in range(n):
        flat.append(sum(i * s for i, s in zip(idx, tstrides, strict=True)))
        for d in range(len(tdims) - 1, -1, -1):
            idx[d] += 1
            if idx[d] < tdims[d]:
                break
            idx[d] = 0
    return [flat[g * group_size : (g + 1) * group_size] for g in range(group_count)]


# ------------------------------------------------------------------ the tokens

_INT_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1

_TOKEN_RE = lazy_pattern(
    r"""(?P<ws>[ \t\r\n]+)
      | (?P<comment>/\*|//)
      | (?P<str>["'])
      | (?P<num>(?:-?\d+\.\d*|-\.\d+|-?\d+)(?:[eE][-+]?\d+)?(?![A-Za-z0-9_.\-])|-?(?:inf|nan)(?![A-Za-z0-9_.\-]))
      | (?P<pat>-?\d[0-9x_\-]*)
      | (?P<word>%?[A-Za-z_][A-Za-z0-9_.\-]*)
      | (?P<punct><=|->|[{}\[\](),=:*?])
    """,
    re.X,
)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """``(kind, text, offset)`` for each token (blanks and comments dropped)."""
    out: list[tuple[str, str, int]] = []
    pos = 0
    n = len(text)
    match = _TOKEN_RE.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            raise ValueReadError(f"unexpected {text[pos]!r}", pos)
        kind = m.lastgroup
        assert kind is not None
        if kind == "ws":
            pos = m.end()
            continue
        if kind == "comment":
            try:
                pos = lexicon.skip_comment(text, pos)
            except ValueError as exc:
                raise ValueReadError(str(exc), pos) from None
            continue
        if kind == "str":
            try:
                end = lexicon.skip_string(text, pos)
            except ValueError as exc:
                raise ValueReadError(str(exc), pos) from None
            out.append(("str", text[pos:end], pos))
            pos = end
            continue
        text_ = m.group()
        if kind == "pat" and text_.lstrip("-").isdigit():
            kind = "num"  # digits and a letter after them: XLA's lexer reads the number, then a word
        out.append((kind, text_, pos))
        pos = m.end()
    return out


class _Reader:
    """A cursor over the tokens of one value."""

    __slots__ = ("toks", "i", "end")

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.end = len(text)

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def at(self) -> int:
        tok = self.peek()
        return tok[2] if tok is not None else self.end

    def fail(self, what: str) -> ValueReadError:
        tok = self.peek()
        found = f"'{tok[1]}'" if tok is not None else "the end of the value"
        return ValueReadError(f"expected {what}, found {found}", self.at())

    def take(self, kind: str, what: str, text: str | None = None) -> str:
        tok = self.peek()
        if tok is None or tok[0] != kind or (text is not None and tok[1] != text):
            raise self.fail(what)
        self.i += 1
        return tok[1]

    def punct(self, p: str) -> None:
        self.take("punct", f"'{p}'", p)

    def is_punct(self, p: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[0] == "punct" and tok[1] == p

    def eat(self, p: str) -> bool:
        if self.is_punct(p):
            self.i += 1
            return True
        return False

    def done(self) -> None:
        if self.i < len(self.toks):
            raise ValueReadError(f"unexpected '{self.toks[self.i][1]}' after the value", self.at())

    # --- pieces -------------------------------------------------------------
    def integer(self) -> int:
        tok = self.peek()
        if tok is None or tok[0] != "num" or not re.fullmatch(r"-?\d+", tok[1]):
            raise self.fail("an integer")
        value = int(tok[1])
        if not _INT_MIN <= value <= _UINT64_MAX:
            raise ValueReadError(f"integer {tok[1]} does not fit 64 bits", tok[2])
        if value > (1 << 63) - 1:
            value -= 1 << 64  # XLA's lexer reads a non-negative integer as uint64 bits
        self.i += 1
        return value

    def number(self) -> float:
        tok = self.peek()
        if tok is None or tok[0] != "num":
            raise self.fail("a number")
        self.i += 1
        return float(tok[1])

    def boolean(self) -> bool:
        tok = self.peek()
        if tok is None or tok[0] != "word" or tok[1] not in lexicon.BOOLEANS:
            raise self.fail("true or false")
        self.i += 1
        return lexicon.BOOLEANS[tok[1]]

    def word(self, what: str = "a name") -> str:
        tok = self.peek()
        if tok is None or tok[0] != "word" or tok[1].startswith("%"):
            raise self.fail(what)
        self.i += 1
        return tok[1]

    def name(self) -> str:
        tok = self.peek()
        if tok is None or tok[0] != "word":
            raise self.fail("a name")
        self.i += 1
        return tok[1][1:] if tok[1].startswith("%") else tok[1]

    def listed(self, open_: str, close: str, item, *, empty: bool = True) -> list:
        """``open item (, item)* close`` (XLA's ParseList)."""
        self.punct(open_)
        out: list = []
        if self.is_punct(close):
            if not empty:
                raise ValueReadError("expected at least one item", self.at())
            self.i += 1
            return out
        while True:
            out.append(item())
            if self.eat(close):
                return out
            if not self.eat(","):
                raise self.fail(f"',' or '{close}'")

    def int_list(self) -> list[int]:
        return self.listed("{", "}", self.integer)

    def int_list_list(self) -> list[list[int]]:
        return self.listed("{", "}", self.int_list)


# ------------------------------------------------------------------ the readers


def _skip_group(r: _Reader, open_: str, close: str) -> None:
    """A bracketed group whose insides are not read: its brackets must balance."""
    r.punct(open_)
    depth = 1
    while depth:
        tok = r.peek()
        if tok is None:
            raise r.fail(f"'{close}'")
        r.i += 1
        if tok[0] == "punct" and tok[1] in "{}[]()":
            depth += 1 if tok[1] in "{[(" else -1


def _read_replica_groups(r: _Reader) -> list[list[int]]:
    if r.is_punct("{"):
        return r.int_list_list()
    tok = r.peek()
    if tok is not None and tok[0] == "word" and tok[1] == "mesh":
        # mesh['a'=2,'b'=4] {'b'}: the groups of a device mesh (expanded by the grammar)
        r.i += 1
        _skip_group(r, "[", "]")
        _skip_group(r, "{", "}")
        return []
    start = r.at()
    tile, reshape, perm = _tile_assignment(r, None)
    if len(tile) != 2:
        raise ValueReadError("iota replica groups need two sizes: [groups,group_size]", start)
    r.done()  # text after the groups is an error before groups that cannot be made are
    try:
        return expand_iota_replica_groups(tile[0], tile[1], reshape, perm)
    except ValueError as exc:
        raise UnexpandedGroups(str(exc), start) from None


_DOMAIN_KEYS: Final = {"kind": "string", "entry": "sharding", "exit": "sharding"}


def _read_domain(r: _Reader) -> None:
    """``{kind="sharding", entry={...}, exit={...}}``: the one kind of domain XLA's parser reads."""
    at = r.at()
    kind = _read_sub_attributes(r, _DOMAIN_KEYS, frozenset(_DOMAIN_KEYS))["kind"]
    if kind != "sharding":
        raise ValueReadError(f"unsupported domain kind: {kind}", at)


def _tile_assignment(r: _Reader, devices: list[int] | None) -> tuple[list[int], list[int], list[int]]:
    """``[dims]`` then ``<=[reshape]T(perm)`` (an iota: its dimensions and permutation are
    returned with the tile's) or, where ``devices`` is given, device numbers between commas
    (added to it), as XLA's ParseTileAssignment reads them. A permutation is needed after more
    than one reshape dimension and refused after one; its entries are dimensions of it."""
    tile = r.listed("[", "]", r.integer, empty=False)
    if not r.eat("<="):
        if devices is None:
            raise r.fail("'<='")
        devices.append(r.integer())
        while r.eat(","):
            devices.append(r.integer())
        return tile, [], []
    reshape = r.listed("[", "]", r.integer, empty=False)
    if len(reshape) == 1:
        return tile, reshape, [0]
    tok = r.peek()
    if tok is None or tok[1] != "T":
        raise r.fail("'T(' (the transpose of the iota)")
    r.i += 1
    r.punct("(")
    perm = []
    while True:
        at = r.at()
        dim = r.integer()
        if not 0 <= dim < len(reshape):
            raise ValueReadError(f"iota transpose dimension {dim} is not in [0, {len(reshape)})", at)
        perm.append(dim)
        if not r.eat(","):
            break
    r.punct(")")
    return tile, reshape, perm


#: the words that make a sharding of one kind, with no devices of its own but ``maximal``'s one
_SHARDING_KINDS: Final = ("replicated", "maximal", "manual", "unknown", "unreduced")
#: the words ``last_tile_dims={...}`` lists (XLA's sharding types)
_SUBGROUP_TYPES: Final = frozenset({"maximal", "replicated", "manual", "unreduced"})


def _read_sharding(r: _Reader) -> None:
    """``{...}`` as XLA's ParseSharding reads it: one sharding, or a tuple of them
    (``{{...}, {...}}``, ``{}`` the empty one)."""
    r.punct("{")
    if not (r.is_punct("{") or r.is_punct("}")):
        _single_sharding(r)
        return
    if not r.is_punct("}"):
        while True:
            r.punct("{")
            _single_sharding(r)
            if not r.eat(","):
                break
    r.punct("}")


class _Sharding:
    """The parts of one sharding as read, in XLA's parser's terms."""

    __slots__ = ("kinds", "devices", "tile", "reshape", "perm", "subgroups", "replicate_last")

    def __init__(self) -> None:
        self.kinds: set[str] = set()
        self.devices: list[int] = []
        self.tile: list[int] = []
        self.reshape: list[int] = []
        self.perm: list[int] = []
        self.subgroups: list[str] = []
        self.replicate_last = False

    def read_key(self, r: _Reader) -> None:
        """One ``key=value`` part."""
        key, at = _glued_key(r)
        if key == "device":
            self.devices = [r.integer()]
        elif key == "devices":
            tile, reshape, perm = _tile_assignment(r, self.devices)
            self.tile += tile
            self.reshape += reshape
            self.perm += perm
        elif key == "metadata":
            _sharding_metadata(r)
        elif key == "last_tile_dims":
            self.subgroups += r.listed("{", "}", lambda: _subgroup_type(r))
        else:
            raise ValueReadError("unknown attribute in sharding: expected device=, devices=, "
                                 f"metadata= or last_tile_dims=, found {key}=", at)

    def problem(self) -> str | None:
        """What XLA's parser refuses in the sharding once read, or None; the first kind word
        in XLA's order decides (``replicated``, ``maximal``, ``manual``, ``unknown``,
        ``unreduced``)."""
        kind = next((k for k in _SHARDING_KINDS if k in self.kinds), None)
        if kind == "maximal":
            return None if len(self.devices) == 1 else "maximal shardings should have exactly one device assigned"
        if kind is not None:
            return f"{kind} shardings should not have any devices assigned" if self.devices else None
        tile, reshape, subgroups = self.tile, self.reshape, self.subgroups
        if not tile:
            return "non-maximal shardings must have a tile assignment list including dimensions"
        if len(self.perm) != len(reshape):
            return ("iota_transpose_perm should have the same rank as iota_reshape_dims: "
                    f"expected {len(reshape)}, saw {len(self.perm)}")
        # the three below make XLA's parser abort or run out of memory rather than say so
        if self.replicate_last and subgroups:
            return "a sharding takes last_tile_dim_replicate or last_tile_dims=, not both"
        if reshape and self.devices:
            return "a sharding's devices are an iota (<=[...]) or a list, not both"
        if len(subgroups) > len(tile):
            return f"last_tile_dims= names {len(subgroups)} dimensions of a tile of {len(tile)}"
        if reshape:
            return None
        if len(self.devices) <= 1:
            return "non-maximal shardings must have more than one device assigned"
        size = math.prod(tile)
        if size < 0:  # XLA's parser runs out of memory making the tile
            return f"a tile of {'x'.join(map(str, tile))} devices has a size below 0"
        if size != len(self.devices):  # XLA's parser writes past the tile it makes, or leaves it unset
            return f"a tile of {'x'.join(map(str, tile))} takes {size} devices, the list names {len(self.devices)}"
        return None


def _single_sharding(r: _Reader) -> None:
    """One sharding after its ``{``, to its ``}``: the kind words, ``device=N``,
    ``devices=[dims]...``, ``last_tile_dim_replicate``, ``last_tile_dims={...}``,
    ``shard_as N`` / ``shard_like N`` and ``metadata=`` in any order, with no commas, then
    the checks XLA's parser makes of them; or a named sharding (:func:`_named_sharding`)."""
    start = r.at()
    tok = r.peek()
    if tok is not None and tok[0] == "word" and tok[1] in ("mesh", "maximal_mesh"):
        _named_sharding(r)
        return
    parts = _Sharding()
    while not r.eat("}"):
        tok = r.peek()
        if tok is None:
            raise r.fail("'}' to end the sharding")
        word = tok[1] if tok[0] == "word" else ""
        if _is_glued_key(r):
            parts.read_key(r)
            continue
        if word in _SHARDING_KINDS:
            parts.kinds.add(word)
            r.i += 1
        elif word == "last_tile_dim_replicate":
            parts.replicate_last = True
            r.i += 1
        elif word in ("shard_as", "shard_like"):
            r.i += 1
            r.integer()
        else:
            raise ValueReadError(f"unexpected '{tok[1]}' in a sharding", tok[2])
    problem = parts.problem()
    if problem is not None:
        raise ValueReadError(problem, start)


def _subgroup_type(r: _Reader) -> str:
    tok = r.peek()
    if tok is None or tok[0] != "word" or tok[1] not in _SUBGROUP_TYPES or _is_glued_key(r):
        raise r.fail("a sharding type (" + ", ".join(sorted(_SUBGROUP_TYPES)) + ")")
    r.i += 1
    return tok[1]


def _sharding_metadata(r: _Reader) -> None:
    """``metadata=`` in a sharding: one ``{key=value ...}``, or a list of them in braces."""
    after = r.toks[r.i + 1] if r.i + 1 < len(r.toks) else None
    if not r.is_punct("{") or after is None or after[:2] != ("punct", "{"):
        _read_metadata(r)
        return
    r.listed("{", "}", lambda: _read_metadata(r), empty=False)


def _named_sharding(r: _Reader) -> None:
    """``maximal_mesh[device_id=N]`` and perhaps ``, metadata=...``, to the closing ``}``;
    of a ``mesh[...]`` sharding only the axes are read, the rest balanced."""
    if r.word() == "mesh":
        _mesh_axes(r)
        while not r.eat("}"):
            tok = r.peek()
            if tok is None or tok[0] == "punct" and tok[1] in "])":
                raise r.fail("'}' to end the sharding")
            if tok[0] == "punct" and tok[1] in lexicon.CLOSING:
                _skip_group(r, tok[1], lexicon.CLOSING[tok[1]])
            else:
                r.i += 1
        return
    r.punct("[")
    key, at = _glued_key(r)
    if key != "device_id":
        raise ValueReadError("expected device_id= attribute in maximal_mesh", at)
    r.integer()
    r.punct("]")
    if r.eat(","):
        key, at = _glued_key(r)
        if key != "metadata":
            raise ValueReadError(f"expected metadata= after a maximal_mesh sharding, found {key}=", at)
        _sharding_metadata(r)
    r.punct("}")


def _mesh_axes(r: _Reader) -> None:
    """A named sharding's ``[a=2, b=4]``: each axis a name glued to its ``=`` (newer XLA) or
    a string and ``=`` (``["a"=2]``, older), then its size."""
    def axis() -> None:
        if _is_glued_key(r):
            _glued_key(r)
        else:
            _string(r)
            r.punct("=")
        r.integer()

    r.listed("[", "]", axis)


def _read_window(r: _Reader) -> dict[str, list]:
    start = r.at()
    r.punct("{")
    seen: dict[str, str] = {}
    while not r.eat("}"):
        at = r.at()
        key = _expected_key(r, "a window field glued to its '=' (size=, stride=, pad=, ...)")
        if key not in ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"):
            raise ValueReadError(f"unknown window field '{key}'", at)
        if key in seen:
            raise ValueReadError(f"sub-attribute '{key}=' already exists", r.at())
        tok = r.peek()
        if tok is None or tok[0] not in ("num", "pat", "word"):
            raise r.fail("window sizes like 3x3")
        pattern = _WINDOW_PAD_RE if key == "pad" else _DXD_RE
        if not pattern.fullmatch(tok[1]):
            if key == "pad" and _PAD_RE.fullmatch(tok[1]):  # low_high_interior: a pad op's, not a window's
                raise ValueReadError("expects padding_low and padding_high separated by '_'", tok[2])
            raise ValueReadError(f"malformed window {key} '{tok[1]}'", tok[2])
        seen[key] = tok[1]
        r.i += 1
    return _window_sizes(seen, start)


def _window_fast(m: re.Match[str]) -> object:
    """A window as XLA prints it, its fields each once, checked for their sizes."""
    pairs = _WINDOW_FIELD_RE.findall(m.group())
    fields = dict(pairs)
    return _window_sizes(fields, 0) if len(fields) == len(pairs) else _SLOW


#: what a window field is for a dimension it does not name
_WINDOW_DEFAULTS: Final = {"stride": 1, "lhs_dilate": 1, "rhs_dilate": 1, "pad": (0, 0), "rhs_reversal": 0}


def _window_sizes(fields: dict[str, str], at: int) -> dict[str, list]:
    """XLA's check of a window's fields once read: stride, lhs_dilate, rhs_dilate and pad each
    have one entry for each dimension of size (none when size is not given). Returns each
    field's numbers by dimension, the absent ones at their defaults (a pad as (low, high))."""
    dims = fields["size"].count("x") + 1 if "size" in fields else 0
    for key in ("stride", "lhs_dilate", "rhs_dilate", "pad"):
        if key in fields and fields[key].count("x") + 1 != dims:
            raise ValueReadError(f"expects '{key}=' has the same size as 'size='", at)
    window: dict[str, list] = {"size": [int(n) for n in fields["size"].split("x")] if dims else []}
    for key, default in _WINDOW_DEFAULTS.items():
        text = fields.get(key)
        if text is None or not dims:
            window[key] = [default] * dims
        elif key == "pad":
            window[key] = [tuple(int(n) for n in pair.split("_")) for pair in text.split("x")]
        else:
            window[key] = [int(n) for n in text.split("x")]
    return window


#: a window field: one number, which may be negative (XLA's lexer reads an integer), or sizes like
#: 3x3, which may not (its DxD token)
_DXD_RE = lazy_pattern(r"-?\d+|\d+(?:x\d+)+")
_PAD_RE = lazy_pattern(r"-?\d+_-?\d+(?:_\d+)?(?:x-?\d+_-?\d+(?:_\d+)?)*")
_WINDOW_PAD_RE = lazy_pattern(r"-?\d+_-?\d+(?:x-?\d+_-?\d+)*")
_DIM_LABELS_RE = lazy_pattern(r"[0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}")
#: (PACKED_NIBBLE, which XLA's precisions once held, it knows no more: "Unknown precision")
_PRECISIONS: Final = frozenset({"default", "high", "highest"})


def _check_dim_labels(labels: str) -> None:
    """XLA's checks of ``lhs_rhs->out``: in each part every dimension once (``?`` aside), spatial
    ones numbered below the part's length, and as many spatial dimensions in all three; and
    the spatial ones numbered below their count (``0`` to ``n-1``), where XLA's parser writes
    past its list of them and may stop the process or read on."""
    lhs, rest = labels.split("_", 1)
    rhs, out = rest.split("->", 1)
    spatial = []
    for part, what, letters in ((lhs, "lhs", "bf"), (rhs, "rhs", "io"), (out, "output", "bf")):
        named = part.replace("?", "")
        if len(set(named)) != len(named):
            raise ValueReadError(f"expects unique {what} dimension numbers, but sees {part}", 0)
        if any(c.isdigit() and int(c) >= len(part) for c in named):
            raise ValueReadError(f"expects [0-{len(part) - 1}{letters}?] in {what} dimension numbers", 0)
        count = sum(c.isdigit() for c in named)
        beyond = next((c for c in named if c.isdigit() and int(c) >= count), None)
        if beyond is not None:  # (XLA's parser writes past the spatial dimensions it counted)
            raise ValueReadError(f"{what} dimension numbers {part}: a spatial dimension numbered past its count "
                                 f"({beyond}, of {count})", 0)
        spatial.append(count)
    if len(set(spatial)) != 1:
        raise ValueReadError("input, kernel, and output must have same number of spatial dimensions, but got "
                             f"{spatial[0]}, {spatial[1]}, {spatial[2]}, respectively.", 0)


def _read_slice(r: _Reader) -> list[tuple[int, int, int]]:
    def one() -> tuple[int, int, int]:
        r.punct("[")
        parts = [r.integer()]
        while r.eat(":"):
            parts.append(r.integer())
        r.punct("]")
        if len(parts) not in (2, 3):
            raise ValueReadError("a slice range is [start:limit] or [start:limit:stride]", r.at())
        return parts[0], parts[1], parts[2] if len(parts) == 3 else 1

    return r.listed("{", "}", one)


def _braced_raw(text: str, strings: bool = False) -> object:
    """A ``{...}`` value whose insides are not read (JSON, shardings, ...): its brackets must
    balance; with ``strings``, a quoted string is taken too (its unescaped value is returned)."""
    try:
        start = lexicon.skip_trivia(text, 0)
        if strings and text.startswith('"', start):
            end = lexicon.skip_string(text, start)
            value: object = escapes.c_unescape(text[start + 1 : end - 1])
        elif text.startswith("{", start):  # backend_config's braces are JSON text to XLA's lexer
            end = lexicon.brace_group_end(text, start, json_from=1) if strings else lexicon.matching_close(text, start)
            value = ""
        else:
            what = "a string or {...}" if strings else "{...}"
            found = text[start : start + 10] or "the end of the value"
            raise ValueReadError(f"expected {what}, found '{found}'", start)
        rest = lexicon.skip_trivia(text, end)
    except ValueReadError:
        raise
    except ValueError as exc:
        raise ValueReadError(str(exc), start) from None
    if rest < len(text):
        raise ValueReadError(f"unexpected '{text[rest:rest + 10]}' after the value", rest)
    return value


def _frontend_attributes_raw(text: str) -> dict[str, str]:
    """``{key="value", key2={...}}``: a value in braces is taken as written (XLA reads it as
    JSON text), a string is unescaped."""
    out: dict[str, str] = {}
    try:
        pos = lexicon.skip_trivia(text, 0)
        if not text.startswith("{", pos):
            raise ValueReadError("expected '{'", pos)
        pos = lexicon.skip_trivia(text, pos + 1)
        if not text.startswith("}", pos):
            while True:
                m = lexicon.ATTRIBUTE_NAME_RE.match(text, pos)
                if m is None:
                    raise ValueReadError("expected an attribute name=", pos)
                pos = lexicon.skip_trivia(text, m.end())
                if text.startswith('"', pos):
                    end = lexicon.skip_string(text, pos)
                    out[m.group(1)] = escapes.c_unescape(text[pos + 1 : end - 1])
                elif text.startswith("{", pos):
                    end = lexicon.brace_group_end(text, pos, json_from=1)
                    out[m.group(1)] = text[pos:end]
                else:
                    raise ValueReadError("expected a string or {...}", pos)
                pos = lexicon.skip_trivia(text, end)
                if text.startswith(",", pos):
                    pos = lexicon.skip_trivia(text, pos + 1)
                    continue
                break
        if not text.startswith("}", pos):
            raise ValueReadError("expected ',' or '}'", pos)
        rest = lexicon.skip_trivia(text, pos + 1)
    except ValueReadError:
        raise
    except ValueError as exc:
        raise ValueReadError(str(exc), 0) from None
    if rest < len(text):
        raise ValueReadError(f"unexpected '{text[rest:rest + 10]}' after the value", rest)
    return out


def _read_statistics(r: _Reader) -> dict[str, float]:
    r.punct("{")
    out: dict[str, float] = {}
    if r.eat("}"):
        return out
    key = _expected_key(r, "visualizing_index=")
    out[key] = r.integer()
    while r.eat(","):
        key = _expected_key(r, "a statistic name glued to its '='")
        out[key] = r.number()
    r.punct("}")
    return out


def _expected_key(r: _Reader, what: str) -> str:
    """A sub-attribute's ``name=``, which XLA's lexer reads as one token (``what``, in the
    error, when there is none); the reader is left after it."""
    if not _is_glued_key(r):
        raise r.fail(what)
    return _glued_key(r)[0]


def _string(r: _Reader) -> str:
    tok = r.peek()
    if tok is None or tok[0] != "str":
        raise r.fail("a quoted string")
    r.i += 1
    return escapes.c_unescape(tok[1][1:-1])


def _metadata_fast(text: str) -> object:
    """What the plain spelling of a metadata value reads as: "" (nothing is kept), or ``_SLOW``
    when a key seems to repeat (perhaps only inside a string): the token reading decides."""
    keys = _METADATA_KEY_RE.findall(text)
    return "" if len(set(keys)) == len(keys) else _SLOW


def _read_metadata(r: _Reader) -> None:
    """``{key=value ...}``, the keys among XLA's (:data:`_METADATA_KEYS`)."""
    _read_sub_attributes(r, _METADATA_KEYS, frozenset())


def read_sub_attributes(text: str, keys: Mapping[str, str], required: frozenset[str]) -> None:
    """Check ``text`` as ``{key=value ...}`` the way XLA's parser reads sub-attributes (a
    stack-frame table entry, ``metadata``, a domain): each key one of ``keys`` (key to
    ``"string"``, ``"int32"``, ``"int"``, ``"int list"``, ``"profile types"`` or ``"sharding"``),
    once, glued to its ``=``; those in ``required`` present; a comma allowed before each item,
    none after the last. Raises :class:`ValueReadError`."""
    r = _Reader(text)
    _read_sub_attributes(r, keys, required)
    r.done()


def _read_sub_attributes(r: _Reader, keys: Mapping[str, str], required: frozenset[str]) -> dict[str, str]:
    """:func:`read_sub_attributes` on the reader; returns the strings read, by key."""
    start = r.at()
    r.punct("{")
    seen: set[str] = set()
    strings: dict[str, str] = {}
    while not r.eat("}"):
        r.eat(",")
        key, at = _glued_key(r)
        kind = keys.get(key)
        if kind is None:
            raise ValueReadError(f'unexpected attribute "{key}". Allowed attributes: {", ".join(sorted(keys))}', at)
        if key in seen:
            raise ValueReadError(f"attribute {key} already exists", at)
        seen.add(key)
        if kind == "string":
            strings[key] = _string(r)
        elif kind == "sharding":
            _read_sharding(r)
        elif kind == "int list":
            r.int_list()
        elif kind == "profile types":
            def profile_type() -> int:
                at = r.at()
                value = r.integer()
                if value not in _PROFILE_TYPES:
                    raise ValueReadError(f"{value} is not a profile type (0 to {len(_PROFILE_TYPES) - 1})", at)
                return value

            r.listed("{", "}", profile_type)
        else:
            at = r.at()
            value = r.integer()
            if kind == "int32" and not -(1 << 31) <= value < (1 << 31):
                raise ValueReadError("value out of range for int32_t", at)
    missing = sorted(required - seen)
    if missing:
        raise ValueReadError(f"sub-attribute {missing[0]} is expected but not seen", start)
    return strings


def _is_glued_key(r: _Reader) -> bool:
    """Whether the reader is at a ``key=`` XLA's lexer reads as one token."""
    tok = r.peek()
    after = r.toks[r.i + 1] if r.i + 1 < len(r.toks) else None
    return (tok is not None and tok[0] == "word" and not tok[1].startswith("%") and after is not None
            and after[:2] == ("punct", "=") and after[2] == tok[2] + len(tok[1]))


def _glued_key(r: _Reader) -> tuple[str, int]:
    """The ``key`` of a ``key=`` XLA's lexer reads as one token (the ``=`` glued to it), and
    where it is; the reader is left after the ``=``."""
    if not _is_glued_key(r):
        raise ValueReadError("expects attribute name (a name glued to its '=')", r.at())
    tok = r.toks[r.i]
    r.i += 2
    return tok[1], tok[2]


_ALIAS_KINDS: Final = frozenset({"must-alias", "may-alias"})


class _Refused(ValueReadError):
    """A list item read whole but refused (its format was right): not given as a format error."""


def _items(r: _Reader, item: Callable[[], None], what: str, end: str | None = None) -> None:
    """``{ item, item }``, a comma allowed after the last, as XLA's parser reads the aliasing and
    donor lists: an item that does not read is an error about ``what``, the expected format;
    ``end`` is the error when neither ',' nor '}' follows an item (by default the reader's)."""
    r.punct("{")
    if r.eat("}"):
        return
    while True:
        at = r.at()
        try:
            item()
        except _Refused:
            raise
        except ValueReadError as exc:
            raise ValueReadError(f"{what}: {exc.message}", max(exc.offset, at)) from None
        if r.eat("}"):
            return
        if end is not None and not r.is_punct(","):
            raise ValueReadError(end, r.at())
        r.punct(",")
        if r.eat("}"):
            return


def _read_aliasing(r: _Reader, *, parameters: bool) -> None:
    """``{ {0}: (1, {}, must-alias), ... }`` as XLA's parser reads it: for the module's
    ``input_output_alias`` (``parameters``) an output index, a parameter number (not negative),
    its index and perhaps a kind; for an instruction's ``output_to_operand_aliasing`` an
    output index, an operand number and its index. A comma may follow the last item."""

    def item() -> None:
        _shape_index(r)
        r.punct(":")
        r.punct("(")
        number_at = r.at()
        number = r.integer()
        r.punct(",")
        _shape_index(r)
        if parameters and r.eat(","):
            kind_at = r.at()
            if r.word("an aliasing kind") not in _ALIAS_KINDS:
                raise _Refused("Unexpected aliasing kind; expected must-alias or may-alias", kind_at)
        r.punct(")")
        if parameters and number < 0:
            raise _Refused("a parameter number must not be negative", number_at)

    _items(r, item, "Expected format: <output_shape_index>: (<input_param>, <input_param_shape_index>)"
           if parameters else "Expected format: <output_shape_index>: (<operand>, <operand_shape_index>)")


def _read_buffer_donor(r: _Reader) -> None:
    """``{ (0, {}), (1, {0}) }``: a parameter number (not negative) and its index in each item,
    a comma allowed after the last."""

    def item() -> None:
        r.punct("(")
        number_at = r.at()
        number = r.integer()
        r.punct(",")
        _shape_index(r)
        r.punct(")")
        if number < 0:
            raise _Refused("a parameter number must not be negative", number_at)

    _items(r, item, "Expected format: (<input_param>, <input_param_shape_index>)",
           end="Expects '}' at the end of buffer donor description")


_ACCURACY_MODES: Final = frozenset({"default", "highest"})
_TOLERANCE_KEYS: Final = frozenset({"atol", "rtol", "ulps"})


def _read_result_accuracy(r: _Reader) -> None:
    """``{mode=highest}`` (a mode in any case) or ``{tolerance={atol=0.5,rtol=0.1,ulps=2}}``
    (numbers between commas): one of the two, keys glued to their ``=``."""
    r.punct("{")
    key, at = _glued_key(r)
    if key == "mode":
        word_at = r.at()
        word = r.word("an accuracy mode")
        if word.lower() not in _ACCURACY_MODES:
            raise ValueReadError(f"expects ResultAccuracy type but sees: {word}", word_at)
    elif key == "tolerance":
        r.punct("{")
        if not r.eat("}"):
            while True:
                part, part_at = _glued_key(r)
                if part not in _TOLERANCE_KEYS:
                    raise ValueReadError(f"invalid attribute name: {part}", part_at)
                if not (r.is_punct(",") or r.is_punct("}")):  # no number: XLA's parser keeps 0
                    number_at = r.at()
                    if r.number() < 0:  # (XLA's parser stops the process on it)
                        raise ValueReadError(f"{part} is negative, which a tolerance must not be", number_at)
                if r.eat("}"):
                    break
                if not r.eat(","):
                    raise ValueReadError("expects '}' at the end of result precision", r.at())
    else:
        raise ValueReadError(f"invalid attribute name: {key}", at)
    if not r.eat("}"):
        raise ValueReadError("expected '}' to end result_accuracy", r.at())


#: what is said where an original value's tuple is left open or closed unopened: XLA's parser
#: reads the tuples as the instruction's shape has them, notes a missing ')' or '(' and goes on
#: (docs/decisions.md)
ORIGINAL_TUPLE_OPEN: Final = "an original value's '(' is not closed"
ORIGINAL_TUPLE_UNOPENED: Final = "an original value's ')' has no '(' before it"


def _read_original_value(r: _Reader) -> None:
    """``origin={...}``: nothing, ``[synthetic_call]``, or one tree of original arrays: an array is
    ``{"name" {shape index}}`` (either left out: ``{}``), a tuple is trees in parentheses, a
    ',' between two optional and one after the last allowed, as XLA's parser takes them.
    Iterative: tuples nest as deep as shapes do."""
    r.punct("{")
    if r.eat("}"):
        return  # none
    if r.eat("["):
        at = r.at()
        if r.peek() is None or r.word("synthetic_call") != "synthetic_call":
            raise ValueReadError("Expects 'synthetic_call' after '[' for a synthetic_call value.", at)
        r.punct("]")
    else:
        depth = 0
        tree_next = True
        while tree_next or depth:
            if not tree_next:  # after a tree inside a tuple: ')' or the next tree, ',' before it or not
                if r.eat(")"):
                    depth -= 1
                    continue
                if r.is_punct("}"):
                    raise ValueReadError(ORIGINAL_TUPLE_OPEN, r.at())
                r.eat(",")
                tree_next = True
            elif r.eat("("):
                depth += 1
            elif depth and r.eat(")"):  # an empty tuple, or a ',' after the last tree
                depth -= 1
                tree_next = False
            elif r.is_punct("{"):
                _original_array(r)
                tree_next = False
            else:
                raise ValueReadError("Expects '[synthetic]' or a tuple tree of original arrays in original_value "
                                     "field.", r.at())
    if r.is_punct(")"):
        raise ValueReadError(ORIGINAL_TUPLE_UNOPENED, r.at())
    if not r.eat("}"):
        raise ValueReadError("expects '}' after the original value's tree", r.at())


def _original_array(r: _Reader) -> None:
    """``{"name" {shape index}}``, either part left out (``{}``), at its ``{``."""
    r.punct("{")
    tok = r.peek()
    if tok is not None and tok[0] == "str":
        r.i += 1
        if r.is_punct("{"):
            _shape_index(r)
    if not r.eat("}"):
        raise ValueReadError("Expects '}' at end of OriginalArray", r.at())


def _read_recovery_table(r: _Reader) -> None:
    """``origin_recovery_table={...}``: entries one after another with nothing between them,
    each an original array, ``:``, another, then ``,`` and a module's text in a string or
    neither, as XLA's parser reads them (the modules are read by strict mode's own checks)."""
    r.punct("{")
    while not r.eat("}"):
        if not r.is_punct("{"):
            raise ValueReadError("Expects '{'", r.at())
        _original_array(r)
        if not r.eat(":"):
            raise ValueReadError("Expected format: <original_array>: <original_array>, <HloModule>", r.at())
        if not r.is_punct("{"):
            raise ValueReadError("Expects '{'", r.at())
        _original_array(r)
        if r.eat(","):
            r.take("str", "a string (the recovery module)")


def _shape_index(r: _Reader) -> None:
    """``{0, 1}``: integers between commas, a comma allowed after the last (XLA's ParseShapeIndex)."""
    r.punct("{")
    while not r.eat("}"):
        r.integer()
        if not r.eat(","):
            r.punct("}")
            return


#: the kinds read token by token, each by one reader (``name``: the attribute's name)
_TOKEN_READERS: Final = {
    Kind.ALIASING: lambda r, name: _read_aliasing(r, parameters=name == "input_output_alias"),
    Kind.BUFFER_DONOR: lambda r, name: _read_buffer_donor(r),
    Kind.RESULT_ACCURACY: lambda r, name: _read_result_accuracy(r),
    Kind.ORIGINAL_VALUE: lambda r, name: _read_original_value(r),
    Kind.RECOVERY_TABLE: lambda r, name: _read_recovery_table(r),
    Kind.SHARDING: lambda r, name: _read_sharding(r),
    Kind.DOMAIN: lambda r, name: _read_domain(r),
}


#: the words of the enumerations XLA reads in any case, lower-cased
_ANY_CASE_WORDS: Final = {name: frozenset(w.lower() for w in ENUM_VALUES[name]) for name in ANY_CASE_ENUM_NAMES}


def _enum_word(name: str | None, word: str) -> bool:
    """Whether ``word`` is a value of the enumerated attribute ``name`` (any word when the
    attribute's words are not listed)."""
    allowed = ENUM_VALUES.get(name or "")
    if allowed is None or word in allowed:
        return True
    any_case = _ANY_CASE_WORDS.get(name or "")
    return any_case is not None and word.lower() in any_case


def _enum(r: _Reader, name: str | None) -> str:
    start = r.at()
    word = r.word("a word")
    if not _enum_word(name, word):
        choices = ", ".join(sorted(ENUM_VALUES[name or ""]))
        raise ValueReadError(f"'{word}' is not a value of {name} (one of {choices})", start)
    return word


def read(kind: str, text: str, name: str | None = None) -> object:
    """The value of ``text`` read as a ``kind`` value (``name``, the attribute's name, picks
    the words of an enumeration). Raises :class:`ValueReadError`."""
    fast = _FAST.get(kind)
    if fast is not None:
        m = fast[0].fullmatch(text)
        if m is not None:
            got = fast[1](m)
            if got is not _SLOW:
                return got
    if kind in _TOKEN_READERS:
        r = _Reader(text)
        _TOKEN_READERS[kind](r, name)
        r.done()
        return ""
    if kind == Kind.ENUM:
        m = _WORD_RE.fullmatch(text)
        if m is not None and _enum_word(name, m.group(1)):
            return m.group(1)
    elif kind in _BRACED_KINDS and "/" not in text:
        got = _braced_fast(text)
        if got is not None:
            return got
    elif kind == Kind.PRECISION_LIST and _PRECISION_RE.fullmatch(text) is not None:
        words = [w.strip() for w in text.strip(" \t")[1:-1].split(",") if w.strip()]
        if all(w.lower() in _PRECISIONS for w in words):
            return words
    if kind in (Kind.SHAPE, Kind.LITERAL, Kind.SHAPE_LIST):
        return _read_shapes(kind, text)
    if kind == Kind.DIM_LABELS or kind == Kind.PADDING:
        body = _strip_trivia(text)
        pattern = _DIM_LABELS_RE if kind == Kind.DIM_LABELS else _PAD_RE
        if pattern.fullmatch(body) is None:
            raise ValueReadError(f"malformed {kind} '{body}'", 0)
        if kind == Kind.DIM_LABELS:
            _check_dim_labels(body)
        return body
    if kind == Kind.METADATA:
        r = _Reader(text)
        _read_metadata(r)
        r.done()
        return ""
    if kind in _BRACED_KINDS:
        return _braced_raw(text, strings=kind == Kind.STRING_OR_DICT)
    if kind == Kind.FRONTEND_ATTRIBUTES:
        return _frontend_attributes_raw(text)
    r = _Reader(text)
    value: object
    if kind == Kind.INT:
        value = r.integer()
    elif kind == Kind.INT32:
        at = r.at()
        value = r.integer()
        if not -(1 << 31) <= value < (1 << 31):  # type: ignore[operator]
            raise ValueReadError("value out of range for int32", at)
    elif kind == Kind.FLOAT:
        at = r.at()
        value = r.number()
        if math.isfinite(value) and abs(value) > lexicon.float_max("f32")[0]:  # type: ignore[arg-type]
            raise ValueReadError("value out of range for float", at)
    elif kind == Kind.BOOL:
        value = r.boolean()
    elif kind == Kind.BOOL_LIST:
        value = r.listed("{", "}", r.boolean) if r.is_punct("{") else [r.boolean()]
    elif kind == Kind.BRACED_BOOL_LIST:
        value = r.listed("{", "}", r.boolean)
    elif kind == Kind.INT_LIST:
        value = r.int_list()
    elif kind == Kind.INT_LIST_LIST:
        value = r.int_list_list()
    elif kind == Kind.REPLICA_GROUPS:
        value = _read_replica_groups(r)
    elif kind == Kind.COMPUTATION:
        value = r.name()
    elif kind == Kind.COMPUTATION_LIST:
        value = r.listed("{", "}", r.name)
    elif kind == Kind.INSTRUCTION_LIST:
        value = r.listed("{", "}", r.name, empty=False)
    elif kind == Kind.STRING:
        value = _string(r)
    elif kind == Kind.ENUM:
        value = _enum(r, name)
    elif kind == Kind.WORD:
        value = r.word()
    elif kind in ANY_CASE_ENUMS:
        at = r.at()
        value = _any_case(kind, r.word(f"a {kind}"), at)
    elif kind == Kind.WINDOW:
        value = _read_window(r)
    elif kind == Kind.SLICE:
        value = _read_slice(r)
    elif kind == Kind.PRECISION_LIST:
        def precision() -> str:
            at = r.at()
            word = r.word("a precision")
            if word.lower() not in _PRECISIONS:
                raise ValueReadError(f"'{word}' is not a precision (default, high, highest)", at)
            return word
        value = r.listed("{", "}", precision)
    elif kind == Kind.STATISTICS:
        value = _read_statistics(r)
    else:  # pragma: no cover - every kind has a reader
        raise ValueReadError(f"no reader for {kind}", 0)
    r.done()
    return value


def _strip_trivia(text: str) -> str:
    if "/" in text:
        pieces = []
        pos = 0
        while True:
            start = lexicon.skip_trivia(text, pos)
            end = start
            while end < len(text) and text[end] not in " \t\r\n/":
                end += 1
            if end == start:
                break
            pieces.append(text[start:end])
            pos = end
        return " ".join(pieces)
    return text.strip(" \t\r\n")


def _read_shapes(kind: str, text: str) -> object:
    from .shapes import parse_shape, shape_syntax_error

    def one(piece: str, at: int) -> object:
        problem = shape_syntax_error(piece)
        if problem is not None:
            raise ValueReadError(f"malformed shape: {problem[1]}", at)
        try:
            return parse_shape(_strip_trivia(piece))
        except HloError as exc:
            raise ValueReadError(str(exc.message), at) from None

    if kind == Kind.SHAPE:
        return one(text, 0)
    if kind == Kind.SHAPE_LIST:
        start = lexicon.skip_trivia(text, 0)  # blanks, line ends and comments around the braces
        if not text.startswith("{", start):
            raise ValueReadError("expected {shape, ...}", start)
        try:
            close = lexicon.matching_close(text, start)
            inner = text[start + 1 : close - 1]
            pieces = lexicon.split_top_level(inner)
        except ValueError as exc:
            raise ValueReadError(str(exc), start) from None
        if lexicon.skip_trivia(text, close) < len(text):
            raise ValueReadError("unexpected text after the shapes' '}'", close)
        if lexicon.skip_trivia(inner, 0) == len(inner):
            return []
        at = start + 1
        shapes = []
        for piece in pieces:
            shapes.append(one(piece, at + lexicon.skip_trivia(piece, 0)))
            at += len(piece) + 1
        return shapes
    # literal=: a shape, then a literal of that shape; or a tuple of them, ( shape {...}, ... ),
    # whose elements may be tuples, with a ',' between them or not (XLA's parser notes a missing
    # one and goes on), and one after the last or not
    from .literals import check_literal, literal_end, split_shape_prefix

    def shaped(at: int, end: int) -> int:
        """Check the shape and literal at ``at``; where the literal ends."""
        shape_text, literal_at = split_shape_prefix(text[at:end])
        shape = one(shape_text, at)
        literal_at += at
        stop = literal_end(text, literal_at, end)
        check_literal(shape, text[literal_at:stop], literal_at)  # type: ignore[arg-type]
        return stop

    pos = lexicon.skip_trivia(text, 0)
    if not text.startswith("(", pos):  # one literal: all the rest is its text
        shape_text, literal_at = split_shape_prefix(text)
        check_literal(one(shape_text, 0), text[literal_at:], literal_at)  # type: ignore[arg-type]
        return text
    ends: list[int] = []  # where each tuple open around ``pos`` closes (its ')')
    while True:
        if text.startswith("(", pos):
            try:
                close = lexicon.matching_close(text, pos)
            except ValueError as exc:
                raise ValueReadError(str(exc), pos) from None
            ends.append(close - 1)
            pos = lexicon.skip_trivia(text, pos + 1, close - 1)
            continue
        if pos >= ends[-1]:
            pos = ends.pop() + 1
            if not ends:
                break
        else:
            pos = shaped(pos, ends[-1])
        pos = lexicon.skip_trivia(text, pos, ends[-1])
        if pos < ends[-1] and text[pos] == ",":
            pos = lexicon.skip_trivia(text, pos + 1, ends[-1])
    if lexicon.skip_trivia(text, pos) < len(text):
        raise ValueReadError("unexpected text after the tuple literal", pos)
    return text


# the plain spellings, read with one regular expression each
_W = r"[ \t]*"
_INT_RE = lazy_pattern(_W + r"(-?[0-9]{1,18})" + _W)
_BOOL_RE = lazy_pattern(_W + r"(true|false)" + _W)
_INTS = _W + r"-?[0-9]{1,18}" + _W + r"(?:," + _W + r"-?[0-9]{1,18}" + _W + r")*"
_INT_LIST_RE = lazy_pattern(r"\{(" + _INTS + r")?\}")
_GROUPS_RE = lazy_pattern(r"\{" + _W + r"(?:\{(?:" + _INTS + r")?\}" + _W
                          + r"(?:," + _W + r"\{(?:" + _INTS + r")?\}" + _W + r")*)?\}")
_GROUP_RE = lazy_pattern(r"\{([^{}]*)\}")
_NAME_ONLY_RE = lazy_pattern(_W + r"%?(" + lexicon.IDENTIFIER + r")" + _W)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",")] if text and text.strip() else []


_ESCAPED_STRING_RE = lazy_pattern(_W + r'"((?:[^"\\]|\\.)*)"' + _W, re.S)
_WORD_RE = lazy_pattern(_W + r"(" + lexicon.IDENTIFIER + r")" + _W)
#: metadata={op_type="..." source_line=1}: the keys XLA's parser takes, with their values' kinds
_METADATA_KEYS: Final = {
    **dict.fromkeys(("op_type", "op_name", "source_file", "deduplicated_name", "scheduling_name",
                     "metadata_payload"), "string"),
    **dict.fromkeys(("source_line", "source_end_line", "source_column", "source_end_column", "stack_frame_id"),
                    "int32"),
    "profile_type": "profile types",
}
#: the values of XLA's ``ProfileType`` (INVALID, FLAG, FUSION, LAYOUT), which metadata's
#: profile_type lists
_PROFILE_TYPES: Final = range(4)
# the plain spelling: string keys with "..." values, int32 keys with at most 9 digits, separated by
# blanks or one comma; a key that seems to repeat (perhaps inside a string) is read token by token
_METADATA_ITEM = (r'(?:(?:op_type|op_name|source_file|deduplicated_name|scheduling_name|metadata_payload)'
                  r'="(?:[^"\\\n]|\\.)*"|(?:source_line|source_end_line|source_column|source_end_column'
                  r'|stack_frame_id)=-?\d{1,9}(?![\w.\-]))')
_METADATA_RE = lazy_pattern(r"[ \t]*\{[ \t]*(?:" + _METADATA_ITEM + r"(?:[ \t]*,?[ \t]*" + _METADATA_ITEM
                            + r")*)?[ \t]*\}[ \t]*")
_METADATA_KEY_RE = lazy_pattern(r"([a-z_]+)=")
_FRONTEND_RE = lazy_pattern(
    r"[ \t]*\{(?:" + lexicon.IDENTIFIER + r'="(?:[^"\\]|\\.)*"(?:,[ \t]*' + lexicon.IDENTIFIER
    + r'="(?:[^"\\]|\\.)*")*)?\}[ \t]*', re.S)
_WINDOW_RE = lazy_pattern(r"[ \t]*\{(?:[ \t]*(?:size|stride|lhs_dilate|rhs_dilate|rhs_reversal)=\d+(?:x\d+)*"
                          r"|[ \t]*pad=-?\d+_-?\d+(?:x-?\d+_-?\d+)*)*[ \t]*\}[ \t]*")
_WINDOW_FIELD_RE = lazy_pattern(r"([a-z_]+)=([0-9x_\-]+)")
_PRECISION_RE = lazy_pattern(r"[ \t]*\{[ \t]*(?:[A-Za-z_]+[ \t]*(?:,[ \t]*[A-Za-z_]+[ \t]*)*)?\}[ \t]*")


def _braced_fast(text: str) -> object:
    """A balanced ``{...}`` value, walked with the lexicon's walker; None when it is not one."""
    start = len(text) - len(text.lstrip(" \t"))
    if not text.startswith("{", start):
        return None
    try:
        end = lexicon.matching_close(text, start)
    except ValueError:
        return None
    return "" if not text[end:].strip(" \t") else None


def _enum_fast(m: re.Match[str]) -> object:
    return m.group(1)


def _any_case(kind: str, word: str, at: int) -> str:
    """``word`` when it is one of the ``kind`` enumeration's, in any case (XLA's message else)."""
    if word.lower() not in ANY_CASE_ENUMS[kind]:
        raise ValueReadError(f"expects {kind} but sees: {word}, error: Unknown algorithm", at)
    return word


_FAST: Final = {
    Kind.INT: (_INT_RE, lambda m: int(m.group(1))),
    Kind.STRING_OR_DICT: (_ESCAPED_STRING_RE, lambda m: escapes.c_unescape(m.group(1))),
    Kind.WORD: (_WORD_RE, _enum_fast),
    Kind.DOT_ALGORITHM: (_WORD_RE, lambda m: _any_case(Kind.DOT_ALGORITHM, m.group(1), m.start(1))),
    Kind.RNG_ALGORITHM: (_WORD_RE, lambda m: _any_case(Kind.RNG_ALGORITHM, m.group(1), m.start(1))),
    Kind.METADATA: (_METADATA_RE, lambda m: _metadata_fast(m.group())),
    Kind.FRONTEND_ATTRIBUTES: (_FRONTEND_RE, lambda m: ""),
    Kind.WINDOW: (_WINDOW_RE, _window_fast),
    Kind.BOOL: (_BOOL_RE, lambda m: m.group(1) == "true"),
    Kind.INT_LIST: (_INT_LIST_RE, lambda m: _ints(m.group(1))),
    Kind.INT_LIST_LIST: (_GROUPS_RE, lambda m: [_ints(g) for g in _GROUP_RE.findall(m.group()[1:-1])]),
    Kind.REPLICA_GROUPS: (_GROUPS_RE, lambda m: [_ints(g) for g in _GROUP_RE.findall(m.group()[1:-1])]),
    Kind.COMPUTATION: (_NAME_ONLY_RE, lambda m: m.group(1)),
    Kind.STRING: (_ESCAPED_STRING_RE, lambda m: escapes.c_unescape(m.group(1))),
}
#: kinds whose plain spelling is checked by a pattern, then a word list or a walk
_BRACED_KINDS: Final = frozenset({Kind.BRACED, Kind.ALIASING, Kind.STRING_OR_DICT})


# ---------------------------------------------------------------- formatters


def format_value(kind: str, value: object, percent: bool = True) -> str:
    """XLA's printed spelling of a ``kind`` value (``percent``: names written as ``%name``)."""
    p = "%" if percent else ""
    if kind in (Kind.INT, Kind.INT32, Kind.ENUM, Kind.WORD) or kind in ANY_CASE_ENUMS:
        return str(value)
    if kind == Kind.FLOAT:
        return repr(float(value))  # type: ignore[arg-type]
    if kind == Kind.BOOL:
        return "true" if value else "false"
    if kind in (Kind.BOOL_LIST, Kind.BRACED_BOOL_LIST):
        return "{" + ",".join("true" if v else "false" for v in value) + "}"  # type: ignore[attr-defined]
    if kind == Kind.INT_LIST:
        return "{" + ",".join(map(str, value)) + "}"  # type: ignore[call-overload]
    if kind in (Kind.INT_LIST_LIST, Kind.REPLICA_GROUPS):
        return "{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in value) + "}"  # type: ignore[attr-defined]
    if kind == Kind.COMPUTATION:
        return f"{p}{value}"
    if kind in (Kind.COMPUTATION_LIST, Kind.INSTRUCTION_LIST):
        return "{" + ", ".join(f"{p}{v}" for v in value) + "}"  # type: ignore[attr-defined]
    if kind == Kind.STRING:
        return '"' + escapes.c_escape(str(value)) + '"'
    if kind == Kind.SHAPE:
        return value.text()  # type: ignore[attr-defined]
    if kind == Kind.SHAPE_LIST:
        return "{" + ", ".join(s.text() for s in value) + "}"  # type: ignore[attr-defined]
    if kind == Kind.FRONTEND_ATTRIBUTES:
        items = sorted(value.items())  # type: ignore[attr-defined]
        return "{" + ",".join(f'{k}="{escapes.c_escape(v)}"' for k, v in items) + "}"
    return str(value)


# ------------------------------------------------------------ named attributes

_READ_BY_NAME: Final = frozenset({"channel_id", "replica_groups", "dimensions", "use_global_device_ids",
                                  "constrain_layout", "is_host_transfer"})


def read_value(name: str, text: str) -> object:
    """The typed value of attribute ``name`` written as ``text`` in a plain spelling, or
    :data:`UNREAD` (any other spelling, or a value that is wrong: the grammar then reads it
    or says where it is wrong)."""
    if name not in _READ_BY_NAME:
        return UNREAD
    kind = ATTRIBUTE_KINDS[name]
    fast = _FAST.get(kind)
    if fast is not None:
        m = fast[0].fullmatch(text)
        if m is not None:
            return fast[1](m)
    if name != "replica_groups" or "[" not in text:
        return UNREAD
    try:
        return read(kind, text, name)
    except ValueReadError:
        return UNREAD
