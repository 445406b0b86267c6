"""The rules of the operations that rearrange their operands: tuples and their elements,
the ids, dimension sizes, ``broadcast``, ``concatenate``, ``transpose``, ``reverse``, ``pad``
and ``sort``."""

from __future__ import annotations

from collections.abc import Mapping

from ..shapes import Shape, is_array
from .common import NoShape, Programs, Rule, array, expect_array, in_range, ints, joint_type, same_kind, static

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final


def _tuple(_opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    return Shape("tuple", tuple_shapes=tuple(ops))


def _tuple_element(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    index = attrs.get("index")
    if not isinstance(index, int):
        return None
    if not x.is_tuple or not 0 <= index < len(x.tuple_shapes):
        # (XLA's parser stops the process on it: a failed check)
        raise NoShape(f"the shape {x.text()} has no tuple element {index}")
    return x.tuple_shapes[index]


def _u32(_opcode: str, _ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    return Shape("u32")


def _dimension(opcode: str, x: Shape, attrs: Mapping[str, object]) -> int | None:
    dims = ints(attrs.get("dimensions"))
    if not dims:
        return None
    if not is_array(x):  # (XLA's parser stops the process on it: a failed check)
        raise NoShape(f"{opcode} of {x.text()}, which is not an array")
    if not 0 <= dims[0] < x.rank:
        raise NoShape(f"dimension {dims[0]} of {opcode} is out of range for {x.text()}")
    return dims[0]


def _get_dimension_size(opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    return None if _dimension(opcode, ops[0], attrs) is None else Shape("s32")


def _set_dimension_size(opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    x, size = ops
    d = _dimension(opcode, x, attrs)
    if size.is_tuple or size.element_type != "s32" or size.rank:
        raise NoShape(f"the size of {opcode} is an s32 scalar, not {size.text()}")
    if d is None or not static(x):
        return None
    dynamic = [False] * x.rank
    dynamic[d] = True
    return array(x.element_type, x.dims, dynamic)


def _broadcast(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    expect_array(x, "operand of broadcast")
    sizes = ints(attrs.get("dimensions", []))
    if sizes is None:
        return None
    # without a shape, XLA's parser reads the dimensions as the sizes of new major dimensions
    negative = next((s for s in sizes if s < 0), None)
    if negative is not None:
        raise NoShape(f"Broadcast with negative dimension size {negative}.")
    dynamic = (False,) * len(sizes) + (x.dynamic or (False,) * x.rank)
    return array(x.element_type, (*sizes, *x.dims), dynamic)


def _concatenate(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    dims = ints(attrs.get("dimensions"))
    if not ops or not dims:
        return None
    d = dims[0]
    for s in ops:
        expect_array(s, "operand of concatenation")
    first = ops[0]
    if not 0 <= d < first.rank:
        raise NoShape(f"Concatenate dimension out of bounds: {d}.")
    for s in ops[1:]:
        if s.rank != first.rank:
            raise NoShape(f"Cannot concatenate arrays with different ranks: {first.rank} ({first.text()}) vs "
                          f"{s.rank} ({s.text()}).")
        if not same_kind(first.element_type, s.element_type):
            raise NoShape(f"Cannot concatenate arrays with different element types: {first.text()} vs {s.text()}.")
    if not static(*ops):
        return None
    for s in ops[1:]:
        if any(a != b for k, (a, b) in enumerate(zip(first.dims, s.dims, strict=True)) if k != d):
            raise NoShape(f"Cannot concatenate arrays that differ in dimensions other than the one being "
                          f"concatenated. Dimension {d} in both shapes must be equal: {first.text()} vs {s.text()}.")
    out = list(first.dims)
    out[d] = sum(s.dims[d] for s in ops)
    return array(joint_type(*(s.element_type for s in ops)), out)


def _transpose(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    perm = ints(attrs.get("dimensions"))
    if perm is None:
        return None
    expect_array(x, "transpose")
    if sorted(perm) != list(range(x.rank)):
        raise NoShape(f"Transpose dimensions [{','.join(map(str, perm))}] are not a permutation of the operand "
                      f"dimensions (operand shape is {x.text()}).")
    dynamic = x.dynamic or (False,) * x.rank
    return array(x.element_type, [x.dims[k] for k in perm], [dynamic[k] for k in perm])


def _reverse(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    dims = ints(attrs.get("dimensions"))
    if dims is None:
        return None
    expect_array(x, "operand of reverse")
    if len(set(dims)) != len(dims):
        raise NoShape(f"a dimension number is duplicated in reverse: {dims}")
    if not in_range(dims, x.rank):
        raise NoShape(f"One of the reverse dimensions ({dims}) is out-of-bounds in shape {x.text()}.")
    return x


def _padding(text: object) -> list[tuple[int, int, int]] | None:
    """``lo_hi[_interior]`` per dimension, from ``0_0x1_1_2``; None for text read otherwise."""
    if not isinstance(text, str):
        return None
    out = []
    for part in text.strip().split("x") if text.strip() else []:
        try:
            nums = [int(n) for n in part.strip().split("_")]
        except ValueError:
            return None
        if len(nums) not in (2, 3):
            return None
        out.append((nums[0], nums[1], nums[2] if len(nums) == 3 else 0))
    return out


def _pad(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    x, value = ops
    config = _padding(attrs.get("padding"))
    if config is None:
        return None
    expect_array(x, "operand of pad")
    expect_array(value, "padding value of pad")
    if value.rank:
        raise NoShape("Pad operation does not support non-scalar padding values.")
    if len(config) != x.rank:
        raise NoShape(f"The rank of the operand and the padding configuration do not match: {x.text()} vs "
                      f"{len(config)} dimensions.")
    if not same_kind(x.element_type, value.element_type):
        raise NoShape("The element types of the operands to Pad do not match.")
    if not static(x):
        return None
    dims = []
    for k, (size, (lo, hi, interior)) in enumerate(zip(x.dims, config, strict=True)):
        out = size + lo + hi + max(size - 1, 0) * interior
        if out < 0:
            raise NoShape(f"Padding result in negative size for dimension {k}.")
        dims.append(out)
    return array(joint_type(x.element_type, value.element_type), dims)


def _sort(_opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    if len(ops) == 1:
        return ops[0]
    if not all(is_array(s) for s in ops) or not static(*ops):
        return None
    for k, s in enumerate(ops[1:], 1):
        if s.dims != ops[0].dims:
            raise NoShape(f"Sort keys and values dimensions must match. Keys shape is: {ops[0].text()}, "
                          f"Values shape (operand index {k}) is: {s.text()}")
    return Shape("tuple", tuple_shapes=tuple(ops))


#: the rules of this module's opcodes
RULES: Final[dict[str, Rule]] = {
    "tuple": _tuple,
    "get-tuple-element": _tuple_element,
    "replica-id": _u32,
    "partition-id": _u32,
    "get-dimension-size": _get_dimension_size,
    "set-dimension-size": _set_dimension_size,
    "broadcast": _broadcast,
    "concatenate": _concatenate,
    "transpose": _transpose,
    "reverse": _reverse,
    "pad": _pad,
    "sort": _sort,
}
