"""The elementwise rules: unary and binary operations (with XLA's broadcasting of
scalars and dimensions of size 1), ``compare``, ``select``, ``clamp``, ``copy`` and ``domain``."""

from __future__ import annotations

from collections.abc import Mapping

from ..lexicon import COMPLEX_TYPES
from ..shapes import Shape
from .common import (
    ANY,
    COMPLEX,
    COMPLEX_OF,
    FLOAT,
    INTEGRAL,
    PRED,
    SIGNED,
    NoShape,
    Programs,
    Rule,
    array,
    expect_array,
    joint_type,
    same_kind,
    static,
)

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final


#: the element types each unary operation takes (XLA's ``InferUnaryOpShape``)
_UNARY_TYPES: Final = {
    **dict.fromkeys("""acos acosh asin asinh atanh cosh cosine exponential exponential-minus-one log
                       log-plus-one logistic rsqrt sine sinh sqrt tan tanh""".split(), FLOAT | COMPLEX),
    **dict.fromkeys("cbrt ceil erf floor is-finite round-nearest-afz round-nearest-even".split(), FLOAT),
    **dict.fromkeys(("abs", "sign"), SIGNED | FLOAT | COMPLEX),
    **dict.fromkeys(("real", "imag"), FLOAT | COMPLEX),
    "negate": INTEGRAL | FLOAT | COMPLEX,
    "not": PRED | INTEGRAL,
    **dict.fromkeys(("popcnt", "count-leading-zeros"), INTEGRAL),
}


#: unary operations whose result has another element type than their operand: complex to its
#: parts' (``None``: the operand's otherwise), or one type for all
_UNARY_RESULT: Final = {"abs": None, "real": None, "imag": None, "is-finite": "pred"}


#: the element types each binary operation takes (XLA's ``InferBinaryOpShape``); both operands
#: have one type, or two floating-point ones
_BINARY_TYPES: Final = {
    **dict.fromkeys("add multiply maximum minimum mulhi compare".split(), ANY),
    **dict.fromkeys("""subtract divide power remainder shift-left shift-right-arithmetic
                       shift-right-logical""".split(), ANY - PRED),
    "atan2": FLOAT | COMPLEX,
    **dict.fromkeys(("and", "or", "xor"), PRED | INTEGRAL),
    "complex": frozenset({"f32", "f64"}),
}




def _unary(opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    expect_array(x, "operand of unary operation")
    ty = x.element_type
    if ty not in _UNARY_TYPES[opcode]:
        raise NoShape(f"Expected element type in shape to be one {opcode} takes; got {ty}.")
    if opcode not in _UNARY_RESULT:
        return x
    result = _UNARY_RESULT[opcode] or COMPLEX_TYPES.get(ty, ty)
    return x if result == ty else x._replace(element_type=result, layout=None)


def _same(_opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    """``copy`` and ``domain``: the operand's shape, whatever it is."""
    return ops[0]


def _broadcast_dims(opcode: str, lhs: Shape, rhs: Shape) -> Shape | None:
    """The dimensions of an elementwise operation on ``lhs`` and ``rhs`` (XLA's
    ``InferElementwiseBinaryOpShape`` without broadcast dimensions), with ``lhs``'s element type;
    None when they are not known here."""
    expect_array(lhs, "lhs of binary operation")
    expect_array(rhs, "rhs of binary operation")
    if not same_kind(lhs.element_type, rhs.element_type):
        raise NoShape(f"Binary op {opcode} with different element types: {lhs.text()} and {rhs.text()}.")
    if lhs.rank != rhs.rank:
        if lhs.rank and rhs.rank:
            raise NoShape(f"Shapes must be equal rank, but are {lhs.text()} and {rhs.text()}")
        larger = lhs if lhs.rank else rhs
        return larger._replace(element_type=lhs.element_type)
    if not static(lhs, rhs):
        return lhs if lhs.dims == rhs.dims and lhs.dynamic == rhs.dynamic else None
    dims = []
    for a, b in zip(lhs.dims, rhs.dims, strict=True):
        if a != b and a != 1 and b != 1:
            raise NoShape(f"Binary op {opcode} with incompatible shapes: {lhs.text()} and {rhs.text()}.")
        dims.append(b if a == 1 else a)
    return array(lhs.element_type, dims)


def _binary(opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    lhs, rhs = ops
    shape = _broadcast_dims(opcode, lhs, rhs)
    for side in (lhs, rhs):
        if side.element_type not in _BINARY_TYPES[opcode]:
            raise NoShape(f"Expected element type in shape to be one {opcode} takes; got {side.element_type}.")
    if opcode == "complex" and lhs.element_type != rhs.element_type:
        raise NoShape(f"complex of {lhs.element_type} and {rhs.element_type}: only F32 and F64 parts are supported.")
    if shape is None:
        return None
    if opcode == "compare":
        return shape._replace(element_type="pred", layout=None)
    if opcode == "complex":
        return shape._replace(element_type=COMPLEX_OF[lhs.element_type], layout=None)
    ty = joint_type(lhs.element_type, rhs.element_type)
    return None if ty is None else shape._replace(element_type=ty)


def _select(_opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    pred, on_true, on_false = ops
    for s in ops:
        expect_array(s, "an operand of select")
    if not same_kind(on_true.element_type, on_false.element_type):
        raise NoShape(f"Operands to select must be the same shape; got {on_true.text()} and {on_false.text()}.")
    if pred.element_type != "pred":
        raise NoShape(f"Select's pred operand must have PRED element type; got {pred.text()}.")
    if not static(*ops):
        return None
    if on_true.dims != on_false.dims:
        raise NoShape(f"Operands to select must be the same shape; got {on_true.text()} and {on_false.text()}.")
    if pred.rank and pred.dims != on_true.dims:
        raise NoShape(f"Operands to select and predicate must be the same shape; got {on_true.text()} and "
                      f"{pred.text()}.")
    return on_true if on_true.element_type == on_false.element_type else None


def _clamp(_opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    low, x, high = ops
    for s in ops:
        expect_array(s, "an operand of clamp")
    for bound in (low, high):
        if not same_kind(bound.element_type, x.element_type):
            raise NoShape(f"Clamp with different element types: {low.text()}, {x.text()}, {high.text()}.")
    if not static(*ops):
        return None
    for bound in (low, high):
        if bound.rank and bound.dims != x.dims:
            raise NoShape(f"Clamp with incompatible shapes: {low.text()}, {x.text()}, {high.text()}.")
    return x


#: the rules of this module's opcodes
RULES: Final[dict[str, Rule]] = {
    **dict.fromkeys(_UNARY_TYPES, _unary),
    **dict.fromkeys(_BINARY_TYPES, _binary),
    "copy": _same,
    "domain": _same,
    "select": _select,
    "clamp": _clamp,
}
