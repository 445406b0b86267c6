"""The rules of the operations that compute over dimensions: the dots, ``reduce``, ``topk``,
``cholesky``, the batch norms, ``fft`` and ``triangular-solve``."""

from __future__ import annotations

from collections.abc import Mapping

from ..lexicon import COMPLEX_TYPES
from ..shapes import Shape, is_array
from .common import (
    COMPLEX,
    COMPLEX_OF,
    FLOAT,
    NoShape,
    Programs,
    Rule,
    array,
    check_reducer,
    expect_array,
    in_range,
    ints,
    joint_type,
    known,
    same_kind,
    signature,
    static,
)

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final


def _dot(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    if len(ops) != 2 or "sparsity" in attrs:
        return None
    lhs, rhs = ops
    expect_array(lhs, "lhs of dot")
    expect_array(rhs, "rhs of dot")
    got = [ints(attrs.get(k, [])) for k in ("lhs_contracting_dims", "rhs_contracting_dims",
                                              "lhs_batch_dims", "rhs_batch_dims")]
    lc, rc, lb, rb = (g or [] for g in got)
    if any(g is None for g in got):
        return None
    if not (in_range(lc + lb, lhs.rank) and in_range(rc + rb, rhs.rank)):
        raise NoShape("A dimension number is out of range in Dot.")
    if len(set(lc + lb)) != len(lc + lb) or len(set(rc + rb)) != len(rc + rb):
        raise NoShape("A dimension number is not unique in Dot.")
    fail = f"Cannot infer shape for dot operation: {lhs.text()} <dot> {rhs.text()}. "
    if len(lc) != len(rc):
        raise NoShape(fail + "Must specify the same number of contracting dimensions for lhs and rhs.")
    if len(lb) != len(rb):
        raise NoShape(fail + "Must the same number of batch dimensions for lhs and rhs.")
    if not static(lhs, rhs):
        return None
    if any(lhs.dims[a] != rhs.dims[b] for a, b in zip(lc, rc, strict=True)):
        raise NoShape(fail + "Contracting dimension sizes are not compatible.")
    if any(lhs.dims[a] != rhs.dims[b] for a, b in zip(lb, rb, strict=True)):
        raise NoShape(fail + "Batch dimension sizes are not compatible.")
    dims = [lhs.dims[k] for k in lb]
    dims += [n for k, n in enumerate(lhs.dims) if k not in lc and k not in lb]
    dims += [n for k, n in enumerate(rhs.dims) if k not in rc and k not in rb]
    return array(joint_type(lhs.element_type, rhs.element_type), dims)


def _scaled_dot(opcode: str, ops: list[Shape], attrs: Mapping[str, object], p: Programs) -> Shape | None:
    """``scaled-dot(lhs, lhs_scale, rhs, rhs_scale)``: XLA's parser works out the dot of ``lhs``
    and ``rhs``, and does not look at the scales."""
    if len(ops) != 4:
        return None
    return _dot(opcode, [ops[0], ops[2]], attrs, p)


def _ragged_dot(opcode: str, ops: list[Shape], attrs: Mapping[str, object], p: Programs) -> Shape | None:
    """``ragged-dot(lhs, rhs, group_sizes)``, one ragged dimension of the lhs: the dot of lhs and
    rhs (its dimension numbers those of the rhs as written), less the rhs's group dimension when
    the ragged one is not contracting; one dimension of the groups first when it is. Only the
    forms XLA's own results were seen for are worked out (a rank-1 ``group_sizes``; a
    contracting ragged dimension without batch dimensions); any other gives no shape."""
    if len(ops) != 3:
        return None
    lhs, rhs, groups = ops
    ragged, group_dims = ints(attrs.get("lhs_ragged_dims", [])), ints(attrs.get("rhs_group_dims", []))
    if ragged is None or group_dims is None or not (is_array(lhs) and is_array(rhs)):
        return None
    fail = f"Cannot infer shape for ragged dot operation: {lhs.text()} <ragged_dot> {rhs.text()}. "
    if len(ragged) != 1:
        raise NoShape(fail + "There must be exactly one ragged dimension in the lhs.")
    contracting = ints(attrs.get("lhs_contracting_dims", [])) or []
    batch = ints(attrs.get("lhs_batch_dims", [])) or []
    free = ragged[0] not in contracting and ragged[0] not in batch
    if free and len(group_dims) != 1:
        raise NoShape(fail + "There must be exactly one group dimension in the rhs when the lhs ragged dimension "
                      "is non-contracting.")
    if free and not 0 <= group_dims[0] < rhs.rank:
        raise NoShape(fail + f"rhs group dimension {group_dims[0]} is out of range [0, {rhs.rank})")
    if not (is_array(groups) and groups.rank == 1 and static(lhs, rhs, groups)):
        return None
    if ragged[0] in contracting:
        if group_dims or batch:
            return None
        dot = _dot(opcode, [lhs, rhs], attrs, p)
        return None if dot is None else array(dot.element_type, (groups.dims[0], *dot.dims))
    if ragged[0] in batch:
        return None if group_dims else _dot(opcode, [lhs, rhs], attrs, p)
    group = group_dims[0]
    dot = _dot(opcode, [lhs, rhs], attrs, p)
    if dot is None:
        return None
    if rhs.dims[group] != groups.dims[0]:
        raise NoShape(fail + f"rhs group dimension is expected to have size={groups.dims[0]}, got {rhs.dims[group]}")
    # the rhs's free dimensions stand last, in order: the group dimension's place among them
    rhs_free = [k for k in range(rhs.rank) if k not in (ints(attrs.get("rhs_contracting_dims", [])) or [])
                and k not in (ints(attrs.get("rhs_batch_dims", [])) or [])]
    if group not in rhs_free:
        return None
    at = dot.rank - len(rhs_free) + rhs_free.index(group)
    return array(dot.element_type, dot.dims[:at] + dot.dims[at + 1:])


def _reduce(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    dims = ints(attrs.get("dimensions"))
    n = len(ops) // 2
    if dims is None or not n or len(ops) % 2:
        return None
    inputs = ops[:n]
    for s in ops:
        expect_array(s, "an operand of reduce")
    first = inputs[0]
    dynamic = not static(*inputs)  # (the dimensions, the reducer and the initial values checked all the same)
    for s in [] if dynamic else inputs[1:]:
        if s.dims != first.dims:
            raise NoShape(f"All reduced tensors must have compatible dimension. Tensor at index 0 has shape "
                          f"{first.text()}, and tensor at index {inputs.index(s)} has shape {s.text()}.")
    for d in dims:
        if not 0 <= d < first.rank:
            raise NoShape(f"Reducing out-of-bounds dimension {d} in shape {first.text()}.")
    if len(set(dims)) != len(dims):
        raise NoShape(f"Duplicate reduction dimension in {dims}.")
    program = signature(attrs, "to_apply", programs)
    result = None if program is None else known(program)
    if program is None or result is None:
        return None
    parts = check_reducer(program, ops[n:], [s.element_type for s in inputs])
    if dynamic:
        return None
    kept = [size for k, size in enumerate(first.dims) if k not in dims]
    shapes = tuple(Shape(p.element_type, tuple(kept), (False,) * len(kept)) for p in parts)
    return shapes[0] if not result.is_tuple else Shape("tuple", tuple_shapes=shapes)


def _cholesky(_opcode: str, ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (a,) = ops
    expect_array(a, "operand of cholesky")
    if a.element_type not in FLOAT | COMPLEX:
        raise NoShape(f"Expected element type in shape to be floating or complex for Cholesky; got {a.text()}.")
    if a.rank < 2:
        raise NoShape(f"The 'a' argument to Cholesky must have rank >= 2, got shape {a.text()}")
    if not static(a):
        return None
    if a.dims[-1] != a.dims[-2]:
        raise NoShape(f"The two minor dimensions of 'a' must have compatible size, got {a.text()}.")
    return a


def _topk(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    (x,) = ops
    k = attrs.get("k")
    if not isinstance(k, int):
        return None
    expect_array(x, "operand of topk")
    if k < 0:
        raise NoShape(f"k of topk is negative: {k}")
    if not x.rank or not static(x):
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
        expect_array(s, f"an operand of {opcode}")
    if not isinstance(index, int):
        return None
    if x.element_type not in FLOAT:
        raise NoShape(f"The operand to {opcode} must have a floating point element type, but the shape is {x.text()}")
    if not x.rank:
        raise NoShape(f"Expected the rank of operand to {opcode} to be at least 1; got 0.")
    if not 0 <= index < x.rank:
        raise NoShape(f"Expected feature_index of {opcode} to be in [0, {x.rank}); got {index}.")
    for v in rest:
        if v.rank != 1:
            raise NoShape(f"The inputs of {opcode} but the operand are vectors, not {v.text()}.")
    for v in (*rest, *([grad] if grad is not None else [])):
        if not same_kind(v.element_type, x.element_type):
            raise NoShape(f"The inputs should have the same element type for {opcode}, but the shape of an input is "
                          f"{v.text()} and the shape of operand is {x.text()}.")
    if not static(*ops):
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
    kind, lengths = attrs.get("fft_type"), ints(attrs.get("fft_length"))
    if not isinstance(kind, str) or lengths is None:
        return None
    expect_array(x, "operand of fft")
    n = len(lengths)
    if not 1 <= n <= 3:
        raise NoShape(f"FFT only supports ranks 1-3; got {n}.")
    if x.rank < n:
        raise NoShape(f"FFT of rank {n} requires input of at least same rank; got input of rank {x.rank}")
    complex_in = x.element_type in COMPLEX
    if kind.upper() in ("FFT", "IFFT"):
        if not complex_in:
            raise NoShape(f"{kind} requires complex input type, found {x.element_type}.")
        return x
    if not static(x):
        return None
    tail = list(x.dims[x.rank - n :])
    if kind.upper() == "RFFT":
        if x.element_type not in COMPLEX_OF:
            raise NoShape(f"RFFT requires F32 or F64 input type, found {x.element_type}.")
        if tail != lengths:
            raise NoShape(f"RFFT requires innermost dimensions match fft_length but dimensions are {tail} and "
                          f"fft_length is {lengths}.")
        if not lengths[-1]:
            return None
        return array(COMPLEX_OF[x.element_type], (*x.dims[:-1], lengths[-1] // 2 + 1))
    if kind.upper() == "IRFFT":
        if not complex_in:
            raise NoShape(f"IRFFT requires complex input type, found {x.element_type}.")
        if tail != [*lengths[:-1], lengths[-1] // 2 + 1]:
            raise NoShape(f"IRFFT requires innermost dimensions to match fft_length (the last halved, plus one) but "
                          f"dimensions are {tail} and fft_length is {lengths}.")
        return array(COMPLEX_TYPES[x.element_type], (*x.dims[: x.rank - n], *lengths))
    return None


def _triangular_solve(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    a, b = ops
    expect_array(a, "a of triangular-solve")
    expect_array(b, "b of triangular-solve")
    if a.element_type not in FLOAT | COMPLEX or a.element_type != b.element_type:
        raise NoShape(f"Expected element types in shape to be identical floating or complex types for "
                      f"TriangularSolve; got {a.text()} and {b.text()}.")
    if a.rank < 2 or b.rank != a.rank:
        raise NoShape(f"The 'a' and 'b' arguments to TriangularSolve must have the same rank, at least 2; got "
                      f"{a.text()} and {b.text()}.")
    transpose = attrs.get("transpose_a")
    if transpose is None:  # (the options' default is the invalid value)
        raise NoShape("Invalid transpose option value for TriangularSolve: transpose_a is not given.")
    if not static(a, b):
        return None
    if a.dims[-1] != a.dims[-2]:
        raise NoShape(f"The two minor dimensions of 'a' must have equal size, got {a.text()}.")
    side = -2 if attrs.get("left_side") is True else -1
    if b.dims[side] != a.dims[-1]:
        raise NoShape(f"Arguments to triangular solve have incompatible shapes: {a.text()} and {b.text()}.")
    if a.dims[:-2] != b.dims[:-2]:
        raise NoShape(f"Arguments to triangular solve have different batch dimensions: {a.text()} and {b.text()}.")
    return b


#: the rules of this module's opcodes
RULES: Final[dict[str, Rule]] = {
    "dot": _dot,
    "scaled-dot": _scaled_dot,
    "ragged-dot": _ragged_dot,
    "cholesky": _cholesky,
    **dict.fromkeys(("batch-norm-training", "batch-norm-inference", "batch-norm-grad"), _batch_norm),
    "fft": _fft,
    "triangular-solve": _triangular_solve,
    "topk": _topk,
    "reduce": _reduce,
}
