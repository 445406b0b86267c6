"""The rules of the operations that call computations: ``call``, ``map``, ``while``,
``conditional``; and ``opt-barrier``, which XLA lets leave its shape out and has no rule for."""

from __future__ import annotations

from collections.abc import Mapping

from ..shapes import Shape, compatible, is_array
from .common import NoShape, Programs, Rule, array, expect_array, ints, known, listed, same_kind, signature, static

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final


def _call(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    program = signature(attrs, "to_apply", programs)
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
        expect_array(s, "an operand of map")  # (XLA's parser stops the process on a tuple)
    first = ops[0]
    if not static(*ops):
        return None
    for s in ops[1:]:
        if s.dims != first.dims:
            raise NoShape(f"Map operation requires all operands to have the same shape; got: "
                          f"{', '.join(x.text() for x in ops)}.")
    dims = ints(attrs.get("dimensions"))
    if "dimensions" in attrs and dims is None:
        return None
    if dims is None or len(dims) != first.rank:
        # (without dimensions XLA compares the rank with a number it never set, and refuses)
        given = "none given" if dims is None else len(dims)
        raise NoShape(f"Map applied to a subset of dimensions currently not supported: arg_dimension_size: "
                      f"{first.rank}, requested_map_dimensions_size: {given}.")
    if dims != list(range(first.rank)):
        raise NoShape(f"Map requires monotonically increasing dimension numbers; got: {listed(dims)}.")
    program = signature(attrs, "to_apply", programs)
    if program is None:
        return None
    if len(program.parameters) != len(ops):
        raise NoShape(f"Map applied function arity must match number of arguments; got: arity: "
                      f"{len(program.parameters)}, arguments: {len(ops)}.")
    result = known(program)
    if result is None:
        return None
    if not is_array(result) or result.rank:
        raise NoShape(f"Mapped computation's result has to be a scalar; got: {result.text()}.")
    params: tuple[Shape, ...] = program.parameters  # type: ignore[assignment]  # (known: see above)
    for k, (p, arg) in enumerate(zip(params, ops, strict=True)):
        if not is_array(p) or p.rank:
            raise NoShape(f"Mapped computation's parameter has to be a scalar; got parameter {k} shape: {p.text()}.")
        if not same_kind(p.element_type, arg.element_type):
            raise NoShape(f"Mapped computation's parameter type has to match argument element type; got parameter "
                          f"{k} shape: {p.text()}, argument shape: {arg.text()}.")
    return array(result.element_type, first.dims)


def _scan(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    """Its inputs (the operands before the last ``num_carries``) scanned along ``dimensions``:
    each of the computation's results but the carries stacked along it, the carries as they
    are."""
    dims, carries = ints(attrs.get("dimensions")), attrs.get("num_carries")
    if dims is None or len(dims) != 1 or not isinstance(carries, int):
        return None  # (one dimension only: refused where the attributes are checked)
    inputs = ops[: len(ops) - carries]
    if not inputs:
        raise NoShape("Cannot infer shape for scan with no inputs")
    (d,), first = dims, inputs[0]
    if not is_array(first) or not static(first):
        return None
    if not 0 <= d < first.rank:  # (XLA's parser stops the process on it: a failed check)
        raise NoShape(f"dimension {d} of scan is out of range for its input {first.text()}")
    program = signature(attrs, "to_apply", programs)
    result = None if program is None else known(program)
    if result is None or not result.is_tuple or len(result.tuple_shapes) < carries:
        return None
    stacked = result.tuple_shapes[: len(result.tuple_shapes) - carries]
    if not all(is_array(s) and static(s) and d <= s.rank for s in stacked):
        return None
    length = first.dims[d]
    parts = [array(s.element_type, (*s.dims[:d], length, *s.dims[d:])) for s in stacked]
    return Shape("tuple", tuple_shapes=(*parts, *result.tuple_shapes[len(stacked):]))  # type: ignore[arg-type]


def _while(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    (init,) = ops
    cond, body = signature(attrs, "condition", programs), signature(attrs, "body", programs)
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
    """Each branch against its own operand: one whose shape is not known (None: a conditional
    is among ``PARTIAL``) is not checked, the others are."""
    known: list[Shape | None] = list(ops)
    index, args = known[0], known[1:]
    if index is None or index.is_tuple or index.rank or index.element_type not in ("pred", "s32"):
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
        if param is not None and arg is not None and not compatible(param, arg):
            raise NoShape(f"branch operand {j} must match the shape of the only parameter of branch computation "
                          f"{j}: got {arg.text()} for branch operand and {param.text()} for branch computation "
                          "parameter")
        if first is not None and branch.result is not None and not compatible(first, branch.result):
            raise NoShape(f"the result of branch 0 computation and branch {j} computation must have the same "
                          f"shape: got {first.text()} and {branch.result.text()}.")
    return first


def _no_rule(opcode: str, _ops: list[Shape], _attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    raise NoShape(f"XLA's shape inference has no rule for {opcode}")


#: the opcodes whose rule takes operands of shapes not known
PARTIAL: Final = frozenset({"conditional"})

#: the rules of this module's opcodes
RULES: Final[dict[str, Rule]] = {
    "call": _call,
    "map": _map,
    "scan": _scan,
    "while": _while,
    "conditional": _conditional,
    "opt-barrier": _no_rule,
}
