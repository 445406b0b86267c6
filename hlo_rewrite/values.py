"""Typed readings of the attribute values the collective passes use, without the grammar.

The grammar of record (:mod:`hlo_rewrite.syntax`) reads every attribute value,
but loading it costs about a tenth of a second and ten megabytes, and reading
with it a quarter of a millisecond per instruction. The plain spellings XLA
prints for ``channel_id``, ``replica_groups`` (explicit or iota),
``dimensions`` and the boolean flags are read here instead; any other spelling
gives :data:`UNREAD` and the caller asks the grammar, which reads it or says
where it is wrong. A test holds these readings equal to the grammar's over the
corpus and generated values.
"""

from __future__ import annotations

import math
import re
from typing import Final

#: returned when the text is not one of the plain spellings read here
UNREAD: Final = object()

_WS = r"[ \t]*"
_INT = _WS + r"(-?[0-9]+)" + _WS
_INTS = _WS + r"[0-9]+" + _WS + r"(?:," + _WS + r"[0-9]+" + _WS + r")*"
_INT_RE = re.compile(_INT)
_BOOL_RE = re.compile(_WS + r"(true|false)" + _WS)
_INT_LIST_RE = re.compile(r"\{(" + _INTS + r")?\}")
_GROUPS_RE = re.compile(r"\{" + _WS + r"(?:\{(?:" + _INTS + r")?\}" + _WS
                        + r"(?:," + _WS + r"\{(?:" + _INTS + r")?\}" + _WS + r")*)?\}")
_GROUP_RE = re.compile(r"\{([^{}]*)\}")
_IOTA_RE = re.compile(
    r"\[" + _INT + r"," + _INT + r"\]" + _WS + r"<=" + _WS + r"\[(" + _INTS + r")\]"
    + r"(?:" + _WS + r"T" + _WS + r"\((" + _INTS + r")\))?"
)

_BOOLEAN: Final = frozenset({"use_global_device_ids", "constrain_layout", "is_host_transfer"})
_INTEGER: Final = frozenset({"channel_id"})
_INT_LIST: Final = frozenset({"dimensions"})


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",")] if text.strip() else []


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


def _replica_groups(text: str) -> object:
    if _GROUPS_RE.fullmatch(text) is not None:
        return [_ints(g) for g in _GROUP_RE.findall(text[1:-1])] if "{" in text[1:] else []
    m = _IOTA_RE.fullmatch(text)
    if m is None:
        return UNREAD
    count, size, dims, perm = m.groups()
    try:
        return expand_iota_replica_groups(int(count), int(size), _ints(dims), _ints(perm) if perm else None)
    except ValueError:
        return UNREAD  # the grammar says where and why


def read_value(name: str, text: str) -> object:
    """The typed value of attribute ``name`` written as ``text``, or :data:`UNREAD`."""
    if name in _INTEGER:
        m = _INT_RE.fullmatch(text)
        return int(m.group(1)) if m is not None else UNREAD
    if name in _BOOLEAN:
        m = _BOOL_RE.fullmatch(text)
        return m.group(1) == "true" if m is not None else UNREAD
    if name in _INT_LIST:
        m = _INT_LIST_RE.fullmatch(text)
        return (_ints(m.group(1)) if m.group(1) else []) if m is not None else UNREAD
    if name == "replica_groups":
        return _replica_groups(text)
    return UNREAD
