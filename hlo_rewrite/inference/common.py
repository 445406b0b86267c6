"""What the rules share: the reason there is no shape, a computation's signature, the
kinds of element type, and the helpers of several rules."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence

from ..lexicon import COMPLEX_TYPES, FLOAT_TYPES, SIGNED_TYPES, UNSIGNED_TYPES
from ..shapes import Shape, compatible, is_array

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final


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


#: the kinds of element type the rules ask for
PRED: Final = frozenset({"pred"})
SIGNED: Final = frozenset(SIGNED_TYPES)
INTEGRAL: Final = SIGNED | frozenset(UNSIGNED_TYPES)
FLOAT: Final = FLOAT_TYPES
COMPLEX: Final = frozenset(COMPLEX_TYPES)
ANY: Final = PRED | INTEGRAL | FLOAT | COMPLEX

#: what ``complex`` makes of its parts
COMPLEX_OF: Final = {part: whole for whole, part in COMPLEX_TYPES.items()}


def expect_array(shape: Shape, what: str) -> None:
    if not is_array(shape):
        raise NoShape(f"Expected array argument for {what}, but got {shape.text()}.")


def static(*shapes: Shape) -> bool:
    """Whether every dimension of the arrays ``shapes`` has a static size."""
    return not any(any(s.dynamic) for s in shapes)


def same_kind(a: str, b: str) -> bool:
    """XLA's ``SameElementTypeIgnoringFpPrecision``."""
    return a == b or (a in FLOAT and b in FLOAT)


def array(element_type: str | None, dims: Sequence[int], dynamic: Sequence[bool] = ()) -> Shape | None:
    """An array shape; None when its element type is not known."""
    if element_type is None:
        return None
    dims = tuple(dims)
    return Shape(element_type, dims, tuple(dynamic) if any(dynamic) else (False,) * len(dims))


#: XLA's order of precision (``primitive_util::HigherPrecisionType``: the range, then the
#: significand) of the floating-point types whose mixes are worked out here
_PRECISION: Final = {"f16": (16, 11), "bf16": (128, 8), "f32": (128, 24), "f64": (1024, 53)}


def joint_type(*types: str) -> str | None:
    """The element type of a result of operands of ``types`` (of one kind): theirs when they
    are one; of ``f16``, ``bf16``, ``f32`` and ``f64``, the more precise as XLA orders them
    (``bf16`` over ``f16``: more range); else not known here."""
    kinds = set(types)
    if len(kinds) == 1:
        return types[0]
    if kinds <= _PRECISION.keys():
        return max(kinds, key=_PRECISION.__getitem__)
    return None


def ints(value: object) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return value
    return None


def in_range(dims: Sequence[int], rank: int) -> bool:
    return all(0 <= d < rank for d in dims)


def signature(attrs: Mapping[str, object], name: str, programs: Programs) -> Program | None:
    """The signature of the computation the attribute ``name`` names; None when not known."""
    callee = attrs.get(name)
    return programs(callee) if isinstance(callee, str) else None


def known(program: Program) -> Shape | None:
    """``program``'s result when every shape of its signature is known, else None."""
    return program.result if all(p is not None for p in program.parameters) else None


def check_reducer(program: Program, inits: list[Shape], input_types: list[str]) -> tuple[Shape, ...]:
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
            if not (is_array(other) and not other.rank and same_kind(acc.element_type, other.element_type)):
                raise NoShape(f"Reduction function's accumulator shape at index {i} differs from {what}: "
                              f"{acc.text()} vs {other.text()}")
        if not same_kind(ty, params[n + i].element_type):
            raise NoShape(f"Reduction function's {n + i}-th parameter shape differs from the input type element "
                          f"type: {ty} vs {params[n + i].text()}")
    return parts


def listed(dims: Sequence[int]) -> str:
    return ", ".join(map(str, dims))


Rule = Callable[[str, "list[Shape]", "Mapping[str, object]", Programs], "Shape | None"]
