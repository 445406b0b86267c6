"""The shape XLA's parser works out for an instruction written without one.

XLA's parser lets the shape be left out for the opcodes of ``opcodes.SHAPE_INFERRED``
(``ROOT r = add(a, b)``) and takes it from its shape inference: an elementwise operation has its
operands' dimensions (a scalar, or a dimension of size 1, broadcast to the other's), a ``dot``
its batch dimensions then the free ones of each side, a ``call`` its callee's result, and so on.
Where the operands and attributes give no shape (``transpose(f32[3,4] p), dimensions={0}``,
``exponential-minus-one`` of an integer) it refuses the instruction: "failed to infer shape".

Strict mode asks :func:`infer` for both: the shape, which later instructions see as their
operand's, and the reason when there is none (:class:`NoShape`). The rules here are sure or
silent: a rule raises only where XLA's inference refuses, which the tests check against XLA
itself, and gives None where it cannot tell, so that strict mode then checks less, never more:
an operand whose shape is not known, dimensions of dynamic size, operands of different
floating-point types (the result takes the more precise one, which is not worked out here), and
the opcodes without a rule here (``ragged-dot``, ``scaled-dot``, ``scan``, ``atan``).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence

from .lexicon import COMPLEX_TYPES, FLOAT_TYPES, SIGNED_TYPES, UNSIGNED_TYPES
from .shapes import Shape, compatible, is_array

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final

__all__ = ["NoShape", "Program", "infer"]


class NoShape(Exception):
    """XLA's shape inference gives the instruction no shape; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Program(namedtuple("Program", ["parameters", "result"])):
    """A computation's signature as XLA's parser computes it from its body (its parameters'
    shapes by number, its root's shape); None for a shape that is not known."""

    __slots__ = ()
    parameters: tuple[Shape | None, ...]
    result: Shape | None


#: the computations' signatures, by name (None: not known)
Programs = Callable[[str], "Program | None"]

_PRED: Final = frozenset({"pred"})
_SIGNED: Final = frozenset(SIGNED_TYPES)
_INTEGRAL: Final = _SIGNED | frozenset(UNSIGNED_TYPES)
_FLOAT: Final = FLOAT_TYPES
_COMPLEX: Final = frozenset(COMPLEX_TYPES)
_ANY: Final = _PRED | _INTEGRAL | _FLOAT | _COMPLEX

#: the element types each unary operation takes (XLA's ``InferUnaryOpShape``)
_UNARY_TYPES: Final = {
    **dict.fromkeys("""acos acosh asin asinh atanh cosh cosine exponential exponential-minus-one log
                       log-plus-one logistic rsqrt sine sinh sqrt tan tanh""".split(), _FLOAT | _COMPLEX),
    **dict.fromkeys("cbrt ceil erf floor is-finite round-nearest-afz round-nearest-even".split(), _FLOAT),
    **dict.fromkeys(("abs", "sign"), _SIGNED | _FLOAT | _COMPLEX),
    **dict.fromkeys(("real", "imag"), _FLOAT | _COMPLEX),
    "negate": _INTEGRAL | _FLOAT | _COMPLEX,
    "not": _PRED | _INTEGRAL,
    **dict.fromkeys(("popcnt", "count-leading-zeros"), _INTEGRAL),
}
#: unary operations whose result has another element type than their operand: complex to its
#: parts' (``None``: the operand's otherwise), or one type for all
_UNARY_RESULT: Final = {"abs": None, "real": None, "imag": None, "is-finite": "pred"}

#: the element types each binary operation takes (XLA's ``InferBinaryOpShape``); both operands
#: have one type, or two floating-point ones
_BINARY_TYPES: Final = {
    **dict.fromkeys("add multiply maximum minimum mulhi compare".split(), _ANY),
    **dict.fromkeys("""subtract divide power remainder shift-left shift-right-arithmetic
                       shift-right-logical""".split(), _ANY - _PRED),
    "atan2": _FLOAT | _COMPLEX,
    **dict.fromkeys(("and", "or", "xor"), _PRED | _INTEGRAL),
    "complex": frozenset({"f32", "f64"}),
}
#: what ``complex`` makes of its parts
_COMPLEX_OF: Final = {part: whole for whole, part in COMPLEX_TYPES.items()}


def infer(opcode: str, operands: Sequence[Shape | None], attrs: Mapping[str, object],
          programs: Programs) -> Shape | None:
    """The shape XLA's parser gives an ``opcode`` instruction written without one, from its
    operands' shapes and its attribute values (as :mod:`hlo_rewrite.values` reads them);
    None when it is not known here. Raises :class:`NoShape` where XLA's parser finds none."""
    rule = _RULES.get(opcode)
    if rule is None or any(s is None for s in operands):
        return None
    return rule(opcode, list(operands), attrs, programs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- helpers


def _expect_array(shape: Shape, what: str) -> None:
    if not is_array(shape):
        raise NoShape(f"Expected array argument for {what}, but got {shape.text()}.")


def _static(*shapes: Shape) -> bool:
    """Whether every dimension of the arrays ``shapes`` has a static size."""
    return not any(any(s.dynamic) for s in shapes)


def _same_kind(a: str, b: str) -> bool:
    """XLA's ``SameElementTypeIgnoringFpPrecision``."""
    return a == b or (a in _FLOAT and b in _FLOAT)


def _array(element_type: str | None, dims: Sequence[int], dynamic: Sequence[bool] = ()) -> Shape | None:
    """An array shape; None when its element type is not known."""
    if element_type is None:
        return None
    dims = tuple(dims)
    return Shape(element_type, dims, tuple(dynamic) if any(dynamic) else (False,) * len(dims))


def _joint_type(*types: str) -> str | None:
    """The element type of a result of operands of ``types`` (of one kind): theirs when they
    are one, else not known here (XLA takes the more precise floating-point type)."""
    return types[0] if len(set(types)) == 1 else None


def _ints(value: object) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return value
    return None


def _in_range(dims: Sequence[int], rank: int) -> bool:
    return all(0 <= d < rank for d in dims)


def _program(attrs: Mapping[str, object], name: str, programs: Programs) -> Program | None:
    """The signature of the computation the attribute ``name`` names; None when not known."""
    callee = attrs.get(name)
    return programs(callee) if isinstance(callee, str) else None


def _known(program: Program) -> Shape | None:
    """``program``'s result when every shape of its signature is known, else None."""
    return program.result if all(p is not None for p in program.parameters) else None


# --------------------------------------------------------------------------- elementwise


def _unary(opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    _expect_array(x, "operand of unary operation")
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
    _expect_array(lhs, "lhs of binary operation")
    _expect_array(rhs, "rhs of binary operation")
    if not _same_kind(lhs.element_type, rhs.element_type):
        raise NoShape(f"Binary op {opcode} with different element types: {lhs.text()} and {rhs.text()}.")
    if lhs.rank != rhs.rank:
        if lhs.rank and rhs.rank:
            raise NoShape(f"Shapes must be equal rank, but are {lhs.text()} and {rhs.text()}")
        larger = lhs if lhs.rank else rhs
        return larger._replace(element_type=lhs.element_type)
    if not _static(lhs, rhs):
        return lhs if lhs.dims == rhs.dims and lhs.dynamic == rhs.dynamic else None
    dims = []
    for a, b in zip(lhs.dims, rhs.dims, strict=True):
        if a != b and a != 1 and b != 1:
            raise NoShape(f"Binary op {opcode} with incompatible shapes: {lhs.text()} and {rhs.text()}.")
        dims.append(b if a == 1 else a)
    return _array(lhs.element_type, dims)


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
        return shape._replace(element_type=_COMPLEX_OF[lhs.element_type], layout=None)
    ty = _joint_type(lhs.element_type, rhs.element_type)
    return None if ty is None else shape._replace(element_type=ty)


def _select(_opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    pred, on_true, on_false = ops
    for s in ops:
        _expect_array(s, "an operand of select")
    if not _same_kind(on_true.element_type, on_false.element_type):
        raise NoShape(f"Operands to select must be the same shape; got {on_true.text()} and {on_false.text()}.")
    if pred.element_type != "pred":
        raise NoShape(f"Select's pred operand must have PRED element type; got {pred.text()}.")
    if not _static(*ops):
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
        _expect_array(s, "an operand of clamp")
    for bound in (low, high):
        if not _same_kind(bound.element_type, x.element_type):
            raise NoShape(f"Clamp with different element types: {low.text()}, {x.text()}, {high.text()}.")
    if not _static(*ops):
        return None
    for bound in (low, high):
        if bound.rank and bound.dims != x.dims:
            raise NoShape(f"Clamp with incompatible shapes: {low.text()}, {x.text()}, {high.text()}.")
    return x


# --------------------------------------------------------------------------- structure


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
    dims = _ints(attrs.get("dimensions"))
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
    if d is None or not _static(x):
        return None
    dynamic = [False] * x.rank
    dynamic[d] = True
    return _array(x.element_type, x.dims, dynamic)


def _broadcast(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    _expect_array(x, "operand of broadcast")
    sizes = _ints(attrs.get("dimensions", []))
    if sizes is None:
        return None
    # without a shape, XLA's parser reads the dimensions as the sizes of new major dimensions
    negative = next((s for s in sizes if s < 0), None)
    if negative is not None:
        raise NoShape(f"Broadcast with negative dimension size {negative}.")
    dynamic = (False,) * len(sizes) + (x.dynamic or (False,) * x.rank)
    return _array(x.element_type, (*sizes, *x.dims), dynamic)


def _concatenate(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    dims = _ints(attrs.get("dimensions"))
    if not ops or not dims:
        return None
    d = dims[0]
    for s in ops:
        _expect_array(s, "operand of concatenation")
    first = ops[0]
    if not 0 <= d < first.rank:
        raise NoShape(f"Concatenate dimension out of bounds: {d}.")
    for s in ops[1:]:
        if s.rank != first.rank:
            raise NoShape(f"Cannot concatenate arrays with different ranks: {first.rank} ({first.text()}) vs "
                          f"{s.rank} ({s.text()}).")
        if not _same_kind(first.element_type, s.element_type):
            raise NoShape(f"Cannot concatenate arrays with different element types: {first.text()} vs {s.text()}.")
    if not _static(*ops):
        return None
    for s in ops[1:]:
        if any(a != b for k, (a, b) in enumerate(zip(first.dims, s.dims, strict=True)) if k != d):
            raise NoShape(f"Cannot concatenate arrays that differ in dimensions other than the one being "
                          f"concatenated. Dimension {d} in both shapes must be equal: {first.text()} vs {s.text()}.")
    out = list(first.dims)
    out[d] = sum(s.dims[d] for s in ops)
    return _array(_joint_type(*(s.element_type for s in ops)), out)


def _transpose(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    perm = _ints(attrs.get("dimensions"))
    if perm is None:
        return None
    _expect_array(x, "transpose")
    if sorted(perm) != list(range(x.rank)):
        raise NoShape(f"Transpose dimensions [{','.join(map(str, perm))}] are not a permutation of the operand "
                      f"dimensions (operand shape is {x.text()}).")
    dynamic = x.dynamic or (False,) * x.rank
    return _array(x.element_type, [x.dims[k] for k in perm], [dynamic[k] for k in perm])


def _reverse(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    dims = _ints(attrs.get("dimensions"))
    if dims is None:
        return None
    _expect_array(x, "operand of reverse")
    if len(set(dims)) != len(dims):
        raise NoShape(f"a dimension number is duplicated in reverse: {dims}")
    if not _in_range(dims, x.rank):
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
    _expect_array(x, "operand of pad")
    _expect_array(value, "padding value of pad")
    if value.rank:
        raise NoShape("Pad operation does not support non-scalar padding values.")
    if len(config) != x.rank:
        raise NoShape(f"The rank of the operand and the padding configuration do not match: {x.text()} vs "
                      f"{len(config)} dimensions.")
    if not _same_kind(x.element_type, value.element_type):
        raise NoShape("The element types of the operands to Pad do not match.")
    if not _static(x):
        return None
    dims = []
    for k, (size, (lo, hi, interior)) in enumerate(zip(x.dims, config, strict=True)):
        out = size + lo + hi + max(size - 1, 0) * interior
        if out < 0:
            raise NoShape(f"Padding result in negative size for dimension {k}.")
        dims.append(out)
    return _array(_joint_type(x.element_type, value.element_type), dims)


def _dot(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    if len(ops) != 2 or "sparsity" in attrs:
        return None
    lhs, rhs = ops
    _expect_array(lhs, "lhs of dot")
    _expect_array(rhs, "rhs of dot")
    got = [_ints(attrs.get(k, [])) for k in ("lhs_contracting_dims", "rhs_contracting_dims",
                                              "lhs_batch_dims", "rhs_batch_dims")]
    lc, rc, lb, rb = (g or [] for g in got)
    if any(g is None for g in got):
        return None
    if not (_in_range(lc + lb, lhs.rank) and _in_range(rc + rb, rhs.rank)):
        raise NoShape("A dimension number is out of range in Dot.")
    if len(set(lc + lb)) != len(lc + lb) or len(set(rc + rb)) != len(rc + rb):
        raise NoShape("A dimension number is not unique in Dot.")
    fail = f"Cannot infer shape for dot operation: {lhs.text()} <dot> {rhs.text()}. "
    if len(lc) != len(rc):
        raise NoShape(fail + "Must specify the same number of contracting dimensions for lhs and rhs.")
    if len(lb) != len(rb):
        raise NoShape(fail + "Must the same number of batch dimensions for lhs and rhs.")
    if not _static(lhs, rhs):
        return None
    if any(lhs.dims[a] != rhs.dims[b] for a, b in zip(lc, rc, strict=True)):
        raise NoShape(fail + "Contracting dimension sizes are not compatible.")
    if any(lhs.dims[a] != rhs.dims[b] for a, b in zip(lb, rb, strict=True)):
        raise NoShape(fail + "Batch dimension sizes are not compatible.")
    dims = [lhs.dims[k] for k in lb]
    dims += [n for k, n in enumerate(lhs.dims) if k not in lc and k not in lb]
    dims += [n for k, n in enumerate(rhs.dims) if k not in rc and k not in rb]
    return _array(_joint_type(lhs.element_type, rhs.element_type), dims)


def _sort(_opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    if len(ops) == 1:
        return ops[0]
    if not all(is_array(s) for s in ops) or not _static(*ops):
        return None
    for k, s in enumerate(ops[1:], 1):
        if s.dims != ops[0].dims:
            raise NoShape(f"Sort keys and values dimensions must match. Keys shape is: {ops[0].text()}, "
                          f"Values shape (operand index {k}) is: {s.text()}")
    return Shape("tuple", tuple_shapes=tuple(ops))


def _reduce(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    dims = _ints(attrs.get("dimensions"))
    n = len(ops) // 2
    if dims is None or not n or len(ops) % 2:
        return None
    inputs = ops[:n]
    for s in ops:
        _expect_array(s, "an operand of reduce")
    first = inputs[0]
    if not _static(*inputs):
        return None
    for s in inputs[1:]:
        if s.dims != first.dims:
            raise NoShape(f"All reduced tensors must have compatible dimension. Tensor at index 0 has shape "
                          f"{first.text()}, and tensor at index {inputs.index(s)} has shape {s.text()}.")
    for d in dims:
        if not 0 <= d < first.rank:
            raise NoShape(f"Reducing out-of-bounds dimension {d} in shape {first.text()}.")
    if len(set(dims)) != len(dims):
        raise NoShape(f"Duplicate reduction dimension in {dims}.")
    program = _program(attrs, "to_apply", programs)
    result = None if program is None else _known(program)
    if program is None or result is None:
        return None
    parts = _check_reducer(program, ops[n:], [s.element_type for s in inputs])
    kept = [size for k, size in enumerate(first.dims) if k not in dims]
    shapes = tuple(Shape(p.element_type, tuple(kept), (False,) * len(kept)) for p in parts)
    return shapes[0] if not result.is_tuple else Shape("tuple", tuple_shapes=shapes)


def _check_reducer(program: Program, inits: list[Shape], input_types: list[str]) -> tuple[Shape, ...]:
    """The accumulators of a reducer of ``len(inits)`` inputs, checked against its parameters,
    the initial values and the inputs' element types (XLA's ``VerifyReducerShape``)."""
    n = len(inits)
    params: tuple[Shape, ...] = program.parameters  # type: ignore[assignment]  # (known: see the caller)
    result: Shape = program.result  # type: ignore[assignment]
    if len(params) != 2 * n:
        raise NoShape(f"Reduction function must take {2 * n} parameters, but takes {len(params)} parameter(s).")
    parts = result.tuple_shapes if result.is_tuple else (result,)
    if len(parts) != n:
        raise NoShape(f"Reduction function must produce a tuple with {n} elements, but produces {result.text()}")
    for part in parts:
        if not is_array(part) or part.rank:
            raise NoShape(f"Reduction function must return a scalar or tuple of scalars but returns shape: "
                          f"{result.text()}")
    for i, (acc, init, ty) in enumerate(zip(parts, inits, input_types, strict=True)):
        if not compatible(acc, params[i]):
            raise NoShape(f"Reduction function's {i}-th parameter shape differs from the result shape: "
                          f"{params[i].text()} vs {acc.text()}")
        for other, what in ((init, "the init_value shape"), (params[n + i], "the input type element type")):
            if not (is_array(other) and not other.rank and _same_kind(acc.element_type, other.element_type)):
                raise NoShape(f"Reduction function's accumulator shape at index {i} differs from {what}: "
                              f"{acc.text()} vs {other.text()}")
        if not _same_kind(ty, params[n + i].element_type):
            raise NoShape(f"Reduction function's {n + i}-th parameter shape differs from the input type element "
                          f"type: {ty} vs {params[n + i].text()}")
    return parts


def _cholesky(_opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (a,) = ops
    _expect_array(a, "operand of cholesky")
    if a.element_type not in _FLOAT | _COMPLEX:
        raise NoShape(f"Expected element type in shape to be floating or complex for Cholesky; got {a.text()}.")
    if a.rank < 2:
        raise NoShape(f"The 'a' argument to Cholesky must have rank >= 2, got shape {a.text()}")
    if not _static(a):
        return None
    if a.dims[-1] != a.dims[-2]:
        raise NoShape(f"The two minor dimensions of 'a' must have compatible size, got {a.text()}.")
    return a


def _topk(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    k = attrs.get("k")
    if not isinstance(k, int):
        return None
    _expect_array(x, "operand of topk")
    if k < 0:
        raise NoShape(f"k of topk is negative: {k}")
    if not x.rank or not _static(x):
        return None
    if k > x.dims[-1]:
        raise NoShape(f"k={k} is larger than the last dimension of {x.text()}")
    dims = (*x.dims[:-1], k)
    return Shape("tuple", tuple_shapes=(Shape(x.element_type, dims, (False,) * len(dims)),
                                        Shape("s32", dims, (False,) * len(dims))))


def _batch_norm(opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    """The three batch norms: ``operand`` and vectors of its feature count (``scale``, ``offset``,
    ``mean``, ``variance``), and for the gradient the output's gradient of the operand's shape."""
    x, *rest = ops
    index = attrs.get("feature_index")
    grad = rest.pop() if opcode == "batch-norm-grad" else None
    for s in ops:
        _expect_array(s, f"an operand of {opcode}")
    if not isinstance(index, int):
        return None
    if x.element_type not in _FLOAT:
        raise NoShape(f"The operand to {opcode} must have a floating point element type, but the shape is {x.text()}")
    if not x.rank:
        raise NoShape(f"Expected the rank of operand to {opcode} to be at least 1; got 0.")
    if not 0 <= index < x.rank:
        raise NoShape(f"Expected feature_index of {opcode} to be in [0, {x.rank}); got {index}.")
    for v in rest:
        if v.rank != 1:
            raise NoShape(f"The inputs of {opcode} but the operand are vectors, not {v.text()}.")
    for v in (*rest, *([grad] if grad is not None else [])):
        if not _same_kind(v.element_type, x.element_type):
            raise NoShape(f"The inputs should have the same element type for {opcode}, but the shape of an input is "
                          f"{v.text()} and the shape of operand is {x.text()}.")
    if not _static(*ops):
        return None
    features = x.dims[index]
    for v in rest:
        if v.dims[0] != features:
            raise NoShape(f"The size of an input of {opcode} should be the same as feature count, but it is "
                          f"{v.dims[0]} and the feature count is {features}.")
    if grad is not None and grad.dims != x.dims:
        raise NoShape(f"The shape of output_grad ({grad.text()}) and operand ({x.text()}) of {opcode} differ.")
    if opcode == "batch-norm-inference":
        return x
    vector = Shape(x.element_type, (features,), (False,))
    return Shape("tuple", tuple_shapes=(x, vector, vector))


def _fft(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    kind, lengths = attrs.get("fft_type"), _ints(attrs.get("fft_length"))
    if not isinstance(kind, str) or lengths is None:
        return None
    _expect_array(x, "operand of fft")
    n = len(lengths)
    if not 1 <= n <= 3:
        raise NoShape(f"FFT only supports ranks 1-3; got {n}.")
    if x.rank < n:
        raise NoShape(f"FFT of rank {n} requires input of at least same rank; got input of rank {x.rank}")
    complex_in = x.element_type in _COMPLEX
    if kind.upper() in ("FFT", "IFFT"):
        if not complex_in:
            raise NoShape(f"{kind} requires complex input type, found {x.element_type}.")
        return x
    if not _static(x):
        return None
    tail = list(x.dims[x.rank - n :])
    if kind.upper() == "RFFT":
        if x.element_type not in _COMPLEX_OF:
            raise NoShape(f"RFFT requires F32 or F64 input type, found {x.element_type}.")
        if tail != lengths:
            raise NoShape(f"RFFT requires innermost dimensions match fft_length but dimensions are {tail} and "
                          f"fft_length is {lengths}.")
        if not lengths[-1]:
            return None
        return _array(_COMPLEX_OF[x.element_type], (*x.dims[:-1], lengths[-1] // 2 + 1))
    if kind.upper() == "IRFFT":
        if not complex_in:
            raise NoShape(f"IRFFT requires complex input type, found {x.element_type}.")
        if tail != [*lengths[:-1], lengths[-1] // 2 + 1]:
            raise NoShape(f"IRFFT requires innermost dimensions to match fft_length (the last halved, plus one) but "
                          f"dimensions are {tail} and fft_length is {lengths}.")
        return _array(COMPLEX_TYPES[x.element_type], (*x.dims[: x.rank - n], *lengths))
    return None


def _triangular_solve(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    a, b = ops
    _expect_array(a, "a of triangular-solve")
    _expect_array(b, "b of triangular-solve")
    if a.element_type not in _FLOAT | _COMPLEX or a.element_type != b.element_type:
        raise NoShape(f"Expected element types in shape to be identical floating or complex types for "
                      f"TriangularSolve; got {a.text()} and {b.text()}.")
    if a.rank < 2 or b.rank != a.rank:
        raise NoShape(f"The 'a' and 'b' arguments to TriangularSolve must have the same rank, at least 2; got "
                      f"{a.text()} and {b.text()}.")
    transpose = attrs.get("transpose_a")
    if transpose is None:  # (the options' default is the invalid value)
        raise NoShape("Invalid transpose option value for TriangularSolve: transpose_a is not given.")
    if not _static(a, b):
        return None
    if a.dims[-1] != a.dims[-2]:
        raise NoShape(f"The two minor dimensions of 'a' must have equal size, got {a.text()}.")
    side = -2 if attrs.get("left_side") is True else -1
    if b.dims[side] != a.dims[-1]:
        raise NoShape(f"Arguments to triangular solve have incompatible shapes: {a.text()} and {b.text()}.")
    if a.dims[:-2] != b.dims[:-2]:
        raise NoShape(f"Arguments to triangular solve have different batch dimensions: {a.text()} and {b.text()}.")
    return b


# --------------------------------------------------------------------------- gather and scatter


def _listed(dims: Sequence[int]) -> str:
    return ", ".join(map(str, dims))


def _check_dim_set(dims: Sequence[int], name: str, rank: int) -> None:
    """A sorted set of operand dimensions (``collapsed_slice_dims`` and the like), as XLA checks
    it; ``name`` is how its messages call it (``collapsed_slice_dims in gather op``)."""
    attr, _, op = name.partition(" in ")
    if list(dims) != sorted(dims):
        raise NoShape(f"{name} must be sorted; got: {_listed(dims)}")
    for d in dims:
        if not 0 <= d < rank:
            raise NoShape(f"Invalid {attr} set in {op}; valid range is [0, {rank}), got: {d}.")
    if len(set(dims)) != len(dims):
        raise NoShape(f"Repeated dimensions not allowed in {name}; got: {_listed(dims)}.")


def _check_dim_map(dims: Sequence[int], name: str, rank: int, *, mapping: str = "", are: str = "are ") -> None:
    """A map from positions to dimensions (``start_index_map`` and the like): in range, and no
    dimension twice (``mapping`` and ``are``: the words XLA's messages have, or not)."""
    for k, d in enumerate(dims):
        if not 0 <= d < rank:
            raise NoShape(f"Invalid {name}{mapping}; domain is [0, {rank}), got: {k}->{d}.")
    if len(set(dims)) != len(dims):
        raise NoShape(f"Repeated dimensions {are}not allowed in {name}; got: {_listed(dims)}.")


def _index_dims(indices: Shape, index_vector_dim: object, what: str) -> list[int] | None:
    """The dimensions of gather's or scatter's indices with the index vector's made explicit (a
    trailing 1 when ``index_vector_dim`` is their rank); None when not known here."""
    if indices.element_type not in _INTEGRAL:
        raise NoShape(f"{what.capitalize()} indices parameter must be an integral tensor; got {indices.text()}.")
    if not isinstance(index_vector_dim, int):
        return None
    if not 0 <= index_vector_dim <= indices.rank:
        name = "start_indices" if what == "gather" else "scatter_indices"
        raise NoShape(f"{what.capitalize()} index leaf dimension must be within [0, rank({name}) + 1). "
                      f"rank({name}) is {indices.rank} and {what} index leaf dimension is {index_vector_dim}.")
    dims = list(indices.dims)
    return dims + [1] if index_vector_dim == indices.rank else dims


def _dim_lists(attrs: Mapping[str, object], names: str) -> list[list[int]] | None:
    got = [_ints(attrs.get(name, [])) for name in names.split()]
    return None if any(g is None for g in got) else got  # type: ignore[return-value]


def _gather(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    operand, indices = ops
    _expect_array(operand, "input tensor operand of gather op")
    _expect_array(indices, "gather indices operand of gather op")
    ivd = attrs.get("index_vector_dim")
    expanded = _index_dims(indices, ivd, "gather")
    lists = _dim_lists(attrs, "offset_dims collapsed_slice_dims start_index_map slice_sizes "
                              "operand_batching_dims start_indices_batching_dims")
    if expanded is None or lists is None or not _static(operand, indices):
        return None
    assert isinstance(ivd, int)
    offset, collapsed, start_map, sizes, batching, index_batching = lists
    if offset != sorted(offset):
        raise NoShape(f"Output window dimensions in gather op must be ascending; got: {_listed(offset)}.")
    if len(set(offset)) != len(offset):
        raise NoShape(f"Output window dimensions in gather op must not repeat; got: {_listed(offset)}.")
    rank = len(offset) + len(expanded) - 1
    for k, d in enumerate(offset):
        if not 0 <= d < rank:
            raise NoShape(f"Offset dimension {k} in gather op is out of bounds; got {d}, but should have been in "
                          f"[0,{rank}).")
    if len(start_map) != expanded[ivd]:
        raise NoShape(f"Gather op has {len(start_map)} elements in start_index_map and the bound of dimension "
                      f"index_vector_dim={ivd} of start_indices is {expanded[ivd]}. These two numbers must be equal.")
    _check_dim_map(start_map, "start_index_map", operand.rank)
    _check_dim_set(collapsed, "collapsed_slice_dims in gather op", operand.rank)
    _check_dim_set(batching, "operand_batching_dims in gather op", operand.rank)
    _check_dim_map(index_batching, "start_indices_batching_dims", len(expanded))
    if len(batching) != len(index_batching):
        raise NoShape(f"operand_batching_dims and start_indices_batching_dims in gather op must be of the same "
                      f"size; got: {len(batching)} and {len(index_batching)}.")
    if len(sizes) != operand.rank:
        raise NoShape(f"Gather op must have one slice size for every input dimension; got: "
                      f"len(slice_sizes)={len(sizes)}, input_shape.rank={operand.rank}.")
    if len(sizes) != len(offset) + len(collapsed) + len(batching):
        raise NoShape(f"All components of the offset index in a gather op must either be a offset dimension or "
                      f"explicitly collapsed or explicitly batched; got len(slice_sizes)={len(sizes)}, "
                      f"output_slice_sizes={_listed(offset)}, collapsed_slice_dims={_listed(collapsed)}, "
                      f"operand_batching_dims={_listed(batching)}.")
    for k, (size, bound) in enumerate(zip(sizes, operand.dims, strict=True)):
        if not 0 <= size <= bound:
            raise NoShape(f"Slice size at index {k} in gather op is out of range, must be within [0, {bound + 1}), "
                          f"got {size}.")
    for dims, what in ((collapsed, "collapse slice dims"), (batching, "have operand_batching_dims")):
        for k, d in enumerate(dims):
            if sizes[d] > 1:
                raise NoShape(f"Gather op can only {what} with bound 1 or 0, but bound is {sizes[d]} for index {d} "
                              f"at position {k}.")
    # the result: the offset dimensions take the slice's sizes that are neither collapsed nor
    # batched, the others the indices' dimensions but the index vector's, each in order
    slice_dims = iter(s for k, s in enumerate(sizes) if k not in collapsed and k not in batching)
    batch_dims = iter(n for k, n in enumerate(expanded) if k != ivd)
    placed = set(offset)
    return _array(operand.element_type, [next(slice_dims) if k in placed else next(batch_dims) for k in range(rank)])


def _scatter(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    n = len(ops) // 2
    if len(ops) != 2 * n + 1:
        return None  # (refused where the operands are counted)
    operands, indices, updates = ops[:n], ops[n], ops[n + 1:]
    _expect_array(indices, "scatter indices of scatter op")
    ivd = attrs.get("index_vector_dim")
    expanded = _index_dims(indices, ivd, "scatter")
    lists = _dim_lists(attrs, "update_window_dims inserted_window_dims scatter_dims_to_operand_dims "
                              "input_batching_dims scatter_indices_batching_dims")
    if expanded is None or lists is None:
        return None
    assert isinstance(ivd, int)
    window, inserted, to_operand, batching, index_batching = lists
    for k, (operand, update) in enumerate(zip(operands, updates, strict=True)):
        _expect_array(operand, f"operand {k} of scatter op")
        _expect_array(update, f"updates {k} of scatter op")
        if not _static(operand, update, indices):
            return None
        _check_scatter_dims(operand, update, expanded, ivd, window, inserted, to_operand, batching, index_batching)
    program = _program(attrs, "to_apply", programs)
    if program is not None and _known(program) is not None:
        _check_reducer(program, [Shape(s.element_type) for s in operands], [s.element_type for s in updates])
    return operands[0] if n == 1 else Shape("tuple", tuple_shapes=tuple(operands))


def _check_scatter_dims(operand: Shape, update: Shape, expanded: list[int], ivd: int, window: list[int],
                        inserted: list[int], to_operand: list[int], batching: list[int],
                        index_batching: list[int]) -> None:
    """One operand of a scatter and its updates against the indices and the dimension numbers
    (XLA's ``ValidateScatterDimensionNumbers`` and the bounds after it)."""
    rank = len(expanded) - 1 + len(window)
    if update.rank != rank:
        raise NoShape(f"Updates tensor must be of rank {rank}; got {update.rank}.")
    if window != sorted(window):
        raise NoShape(f"update_window_dims in scatter op must be sorted; got: {_listed(window)}.")
    if len(set(window)) != len(window):
        raise NoShape(f"update_window_dims in scatter op must not repeat; got: {_listed(window)}.")
    for d in window:
        if not 0 <= d < update.rank:
            raise NoShape(f"Invalid update_window_dims set in scatter op; valid range is [0, {update.rank}). "
                          f"got: {d}.")
    _check_dim_set(inserted, "inserted_window_dims in scatter op", operand.rank)
    _check_dim_set(batching, "input_batching_dims in scatter op", operand.rank)
    for d in index_batching:
        if not 0 <= d < len(expanded):
            raise NoShape(f"Invalid scatter_indices_batching_dims set in scatter op; valid range is "
                          f"[0, {len(expanded)}), got: {d}.")
    if len(set(index_batching)) != len(index_batching):
        raise NoShape(f"Repeated dimensions not allowed in scatter_indices_batching_dims in scatter op; got: "
                      f"{_listed(index_batching)}.")
    if len(batching) != len(index_batching):
        raise NoShape(f"input_batching_dims and scatter_indices_batching_dims in scatter op must be of the same "
                      f"size; got: {len(batching)} and {len(index_batching)}.")
    size = len(window) + len(inserted) + len(batching)
    if size != operand.rank:
        raise NoShape(f"Scatter op has window of size {size}; doesn't match operand of rank {operand.rank}.")
    if len(to_operand) != expanded[ivd]:
        raise NoShape(f"Scatter op has {len(to_operand)} elements in scatter_dims_to_operand_dims and the bound of "
                      f"dimension index_vector_dim={ivd} of scatter_indices is {expanded[ivd]}. These two numbers "
                      f"must be equal.")
    _check_dim_map(to_operand, "scatter_dims_to_operand_dims", operand.rank, mapping=" mapping", are="")
    bounds = [n for k, n in enumerate(operand.dims) if k not in inserted and k not in batching]
    for d, bound in zip(window, bounds, strict=False):
        if update.dims[d] > bound:
            raise NoShape(f"Bounds of the window dimensions of updates must not exceed the bounds of the "
                          f"corresponding dimensions of operand. For dimension {d}, updates bound is "
                          f"{update.dims[d]}, operand bound is {bound}.")
    scattered = iter(n for k, n in enumerate(expanded) if k != ivd)
    for k, got in enumerate(update.dims):
        if k in window:
            continue
        want = next(scattered)
        if got != want:
            raise NoShape(f"Bounds of the scatter dimensions of updates must be same as the bounds of the "
                          f"corresponding dimensions of scatter indices. For scatter dimension {k}, updates bound "
                          f"is {got}, scatter_indices bound is {want}.")


# --------------------------------------------------------------------------- windows


def _window_output(base: Shape, window: Mapping[str, list], element_type: str) -> Shape | None:
    """The shape of ``window`` slid over ``base`` (XLA's ``InferWindowOutputShape``): each
    dimension padded and dilated, then the window's positions counted at its stride."""
    sizes = window["size"]
    if len(sizes) != base.rank:
        raise NoShape(f"Window has dimension {len(sizes)} but base shape has dimension {base.rank}.")
    dims = []
    for k, size in enumerate(sizes):
        stride, (low, high) = window["stride"][k], window["pad"][k]
        base_dilation, window_dilation = window["lhs_dilate"][k], window["rhs_dilate"][k]
        for value, what in ((size, "dimension"), (stride, "stride"), (base_dilation, "base area dilation factor"),
                            (window_dilation, "window dilation factor")):
            if value < 1:
                raise NoShape(f"Window has a non-positive {what} in dimension {k}.")
        n = base.dims[k]
        padded = low + ((n - 1) * base_dilation + 1 if n else 0) + high
        span = (size - 1) * window_dilation + 1
        if padded < 0:  # (XLA's parser stops the process on it: a failed check)
            raise NoShape(f"Window of dimension {k} pads {base.text()} to a negative size, {padded}.")
        dims.append(0 if not padded or span > padded else (padded - span) // stride + 1)
    return _array(element_type, dims)


def _window(attrs: Mapping[str, object]) -> Mapping[str, list] | None:
    window = attrs.get("window", _NO_WINDOW)
    return window if isinstance(window, dict) else None


#: the window of an instruction written without one
_NO_WINDOW: Final[Mapping[str, list]] = {key: [] for key in ("size", "stride", "pad", "lhs_dilate", "rhs_dilate")}


def _conv_dims(labels: object) -> tuple[list[int], list[int], list[int]] | None:
    """``dim_labels`` (``b01f_01io->b01f``) as three lists of dimension numbers, in the order
    batch (or input feature), feature (or output feature), then the spatial dimensions; None
    when a part leaves a dimension unnamed (``?``)."""
    if not isinstance(labels, str) or "?" in labels:
        return None
    lhs, _, rest = labels.partition("_")
    rhs, _, out = rest.partition("->")
    parts = []
    for part, letters in ((lhs, "bf"), (rhs, "io"), (out, "bf")):
        spatial = sorted((c for c in part if c.isdigit()), key=int)
        if any(c not in part for c in letters) or len(part) != len(spatial) + 2:
            return None
        parts.append([part.index(letters[0]), part.index(letters[1])] + [part.index(c) for c in spatial])
    return parts[0], parts[1], parts[2]


def _convolution(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    lhs, rhs = ops
    _expect_array(lhs, "lhs of convolution")
    _expect_array(rhs, "rhs of convolution")
    features, batches = attrs.get("feature_group_count", 1), attrs.get("batch_group_count", 1)
    if not isinstance(features, int) or not isinstance(batches, int):
        return None
    if features <= 0:
        raise NoShape(f"feature_group_count must be a positive number, got {features}")
    if batches <= 0:
        raise NoShape(f"batch_group_count must be a positive number, got {batches}")
    if batches > 1 and features > 1:
        raise NoShape(f"both batch_group_count {batches} and feature_group_count {features} cannot be greater "
                      f"than 1")
    dims, window = _conv_dims(attrs.get("dim_labels")), _window(attrs)
    if dims is None or window is None:
        return None
    (in_batch, in_feature, *in_spatial), (k_in, k_out, *k_spatial), (out_batch, out_feature, *out_spatial) = dims
    rank = len(in_spatial) + 2
    if len(window["size"]) != len(in_spatial):
        raise NoShape("Window must have same number of dimensions as dimension numbers.")
    for side, shape in (("LHS", lhs), ("RHS", rhs)):
        if shape.rank != rank:
            raise NoShape(f"The {side} argument to a convolution should have rank {rank}; "
                          f"{side.lower()}: {shape.text()}.")
    if not _static(lhs, rhs):
        return None
    conv = f"got <conv>({lhs.text()}, {rhs.text()})"
    batch, feature, kernel_in, kernel_out = lhs.dims[in_batch], lhs.dims[in_feature], rhs.dims[k_in], rhs.dims[k_out]
    if kernel_out % batches:
        raise NoShape(f"Expected output feature dimension size (value {kernel_out}) to be a multiple of batch group "
                      f"count {batches}; {conv}")
    if feature % features or feature // features != kernel_in:
        raise NoShape(f"Expected LHS feature dimension (value {feature}) to be a multiple of feature_group_count "
                      f"(value {features}), and LHS feature dimension / feature_group_count = RHS feature dimension "
                      f"(value {kernel_in}); {conv}")
    if kernel_out % features:
        raise NoShape(f"Expected output feature dimension (value {kernel_out}) to be divisible by "
                      f"feature_group_count (value {features}); {conv}")
    if batch % batches:
        raise NoShape(f"Expected input batch dimension (value {batch}) to be divisible by batch_group_count "
                      f"(value {batches}); {conv}")
    if [rhs.dims[d] for d in k_spatial] != list(window["size"]):
        raise NoShape(f"Window dimensions do not match RHS shape: RHS shape: {rhs.text()}")
    base = _array(lhs.element_type, [lhs.dims[d] for d in in_spatial])
    spatial = _window_output(base, window, lhs.element_type)  # type: ignore[arg-type]
    out = [0] * rank
    out[out_batch], out[out_feature] = batch // batches, kernel_out
    for d, n in zip(out_spatial, spatial.dims, strict=True):  # type: ignore[union-attr]
        out[d] = n
    return _array(_joint_type(lhs.element_type, rhs.element_type), out)


def _reduce_window(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    """XLA's parser works out a reduce-window's shape from its first two operands alone, as
    the input and the initial value of a reduce-window of one input; one of several inputs
    written without a shape is so refused (its reducer takes more than two parameters)."""
    window = _window(attrs)
    if len(ops) < 2 or window is None:
        return None
    operand, init = ops[0], ops[1]
    program = _program(attrs, "to_apply", programs)
    if program is None or _known(program) is None:
        return None
    _expect_array(operand, "operand of reduce-window")  # (XLA's parser stops the process on a tuple)
    _check_reducer(program, [init], [operand.element_type])
    return _window_output(operand, window, init.element_type) if _static(operand) else None


def _select_and_scatter(_opcode: str, ops: list[Shape], attrs: Mapping[str, object],
                        programs: Programs) -> Shape | None:
    operand, source, init = ops
    _expect_array(operand, "operand of select-and-scatter")
    window = _window(attrs)
    select, reducer = _program(attrs, "select", programs), _program(attrs, "scatter", programs)
    if window is None or select is None or reducer is None or not _static(operand):
        return None
    if len(select.parameters) != 2:
        raise NoShape(f"Select function must take 2 parameters, but takes {len(select.parameters)} parameter(s).")
    chosen = _known(select)
    if chosen is None:
        return None
    if chosen.is_tuple or chosen.element_type != "pred" or chosen.rank:
        raise NoShape("Select function must have rank-0 PRED result.")
    params: tuple[Shape, ...] = select.parameters  # type: ignore[assignment]  # (known: see above)
    for which, p in zip(("first", "second"), params, strict=True):
        if not (is_array(p) and not p.rank and _same_kind(p.element_type, operand.element_type)):
            raise NoShape(f"Select function's {which} parameter shape currently must match the operand element "
                          f"shape, but got {p.text()} vs {operand.element_type}[].")
    if _known(reducer) is None or not is_array(source):
        return None
    _check_reducer(reducer, [init], [source.element_type])
    reduced = _window_output(operand, window, operand.element_type)
    if reduced is not None and _static(source) and (
            source.dims != reduced.dims or not _same_kind(source.element_type, reduced.element_type)):
        raise NoShape(f"Source shape does not match the shape of window-reduced operand: source({source.text()}), "
                      f"window-reduced operand({reduced.text()}).")
    return operand


# --------------------------------------------------------------------------- calls


def _call(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    program = _program(attrs, "to_apply", programs)
    if program is None:
        return None
    if len(ops) != len(program.parameters):
        raise NoShape(f"Call applied function arity must match number of arguments; got: arity: "
                      f"{len(program.parameters)}, arguments: {len(ops)}.")
    for k, (arg, param) in enumerate(zip(ops, program.parameters, strict=True)):
        if param is not None and not compatible(arg, param):
            raise NoShape(f"Call parameter must match argument; got parameter {k} shape: {param.text()}, "
                          f"argument shape: {arg.text()}.")
    return program.result


def _map(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    if not ops:
        raise NoShape("Map expects at least one argument.")
    for s in ops:
        _expect_array(s, "an operand of map")  # (XLA's parser stops the process on a tuple)
    first = ops[0]
    if not _static(*ops):
        return None
    for s in ops[1:]:
        if s.dims != first.dims:
            raise NoShape(f"Map operation requires all operands to have the same shape; got: "
                          f"{', '.join(x.text() for x in ops)}.")
    dims = _ints(attrs.get("dimensions"))
    if "dimensions" in attrs and dims is None:
        return None
    if dims is None or len(dims) != first.rank:
        # (without dimensions XLA compares the rank with a number it never set, and refuses)
        given = "none given" if dims is None else len(dims)
        raise NoShape(f"Map applied to a subset of dimensions currently not supported: arg_dimension_size: "
                      f"{first.rank}, requested_map_dimensions_size: {given}.")
    if dims != list(range(first.rank)):
        raise NoShape(f"Map requires monotonically increasing dimension numbers; got: {_listed(dims)}.")
    program = _program(attrs, "to_apply", programs)
    if program is None:
        return None
    if len(program.parameters) != len(ops):
        raise NoShape(f"Map applied function arity must match number of arguments; got: arity: "
                      f"{len(program.parameters)}, arguments: {len(ops)}.")
    result = _known(program)
    if result is None:
        return None
    if not is_array(result) or result.rank:
        raise NoShape(f"Mapped computation's result has to be a scalar; got: {result.text()}.")
    params: tuple[Shape, ...] = program.parameters  # type: ignore[assignment]  # (known: see above)
    for k, (p, arg) in enumerate(zip(params, ops, strict=True)):
        if not is_array(p) or p.rank:
            raise NoShape(f"Mapped computation's parameter has to be a scalar; got parameter {k} shape: {p.text()}.")
        if not _same_kind(p.element_type, arg.element_type):
            raise NoShape(f"Mapped computation's parameter type has to match argument element type; got parameter "
                          f"{k} shape: {p.text()}, argument shape: {arg.text()}.")
    return _array(result.element_type, first.dims)


def _while(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    (init,) = ops
    cond, body = _program(attrs, "condition", programs), _program(attrs, "body", programs)
    if cond is None or body is None:
        return None
    if len(cond.parameters) != 1:
        raise NoShape(f"Condition must take 1 arguments; got {len(cond.parameters)}.")
    if len(body.parameters) != 1:
        raise NoShape(f"Body must take 1 arguments; got {len(body.parameters)}.")
    if cond.result is not None and not compatible(cond.result, Shape("pred")):
        raise NoShape(f"Condition must return a boolean; got {cond.result.text()}.")
    result = body.result
    if result is not None and any(s is not None and not compatible(result, s)
                                  for s in (cond.parameters[0], body.parameters[0], init)):
        raise NoShape("The parameter of condition and body, the result of the body, and init must all have the "
                      f"same shape; got {result.text()}.")
    return init


def _conditional(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    index, *args = ops
    if index.is_tuple or index.rank or index.element_type not in ("pred", "s32"):
        return None  # (refused where the attributes are checked)
    if index.element_type == "pred":
        names: object = [attrs.get("true_computation"), attrs.get("false_computation")]
    else:
        names = attrs.get("branch_computations")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return None
    branches = [programs(n) for n in names]
    if len(args) != len(branches) or any(b is None for b in branches):
        return None
    first = branches[0].result  # type: ignore[union-attr]
    for j, (branch, arg) in enumerate(zip(branches, args, strict=True)):
        assert branch is not None
        if len(branch.parameters) != 1:
            raise NoShape(f"branch computation {j} must take 1 argument; got {len(branch.parameters)}.")
        param = branch.parameters[0]
        if param is not None and not compatible(param, arg):
            raise NoShape(f"branch operand {j} must match the shape of the only parameter of branch computation "
                          f"{j}: got {arg.text()} for branch operand and {param.text()} for branch computation "
                          "parameter")
        if first is not None and branch.result is not None and not compatible(first, branch.result):
            raise NoShape(f"the result of branch 0 computation and branch {j} computation must have the same "
                          f"shape: got {first.text()} and {branch.result.text()}.")
    return first


def _no_rule(opcode: str, _ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    raise NoShape(f"XLA's shape inference has no rule for {opcode}")


_Rule = Callable[[str, "list[Shape]", "Mapping[str, object]", Programs], "Shape | None"]

#: the rule of each opcode (the opcodes of ``opcodes.SHAPE_INFERRED`` without one are not known
#: here)
_RULES: Final[dict[str, _Rule]] = {
    **dict.fromkeys(_UNARY_TYPES, _unary),
    **dict.fromkeys(_BINARY_TYPES, _binary),
    "copy": _same,
    "domain": _same,
    "select": _select,
    "clamp": _clamp,
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
    "dot": _dot,
    "sort": _sort,
    "cholesky": _cholesky,
    **dict.fromkeys(("batch-norm-training", "batch-norm-inference", "batch-norm-grad"), _batch_norm),
    "fft": _fft,
    "triangular-solve": _triangular_solve,
    "topk": _topk,
    "reduce": _reduce,
    "gather": _gather,
    "scatter": _scatter,
    "convolution": _convolution,
    "reduce-window": _reduce_window,
    "select-and-scatter": _select_and_scatter,
    "call": _call,
    "map": _map,
    "while": _while,
    "conditional": _conditional,
    "opt-barrier": _no_rule,
}
