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
floating-point types beyond ``f16``, ``bf16``, ``f32`` and ``f64`` (the result takes the more
precise one, :func:`.common.joint_type`), the opcodes without a rule here (``atan``), and the
forms of ``ragged-dot`` its rule leaves out.

The rules are grouped by kind, each module with the ``RULES`` of its opcodes: ``elementwise``,
``structure`` (tuples, broadcasts, transposes, pads, ...), ``numeric`` (dots, reductions, the
linear algebra), ``indexing`` (gather, scatter), ``windows`` (convolution, reduce-window,
select-and-scatter) and ``calls``; ``common`` holds what they share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..shapes import Shape
from . import calls, elementwise, indexing, numeric, structure, windows
from .common import NoShape, Program, Programs, Rule

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final

__all__ = ["NoShape", "Program", "infer"]

#: the rule of each opcode, from the modules of its kind (the opcodes of
#: ``opcodes.SHAPE_INFERRED`` without one are not known here)
_RULES: Final[dict[str, Rule]] = {
    **elementwise.RULES, **structure.RULES, **numeric.RULES, **indexing.RULES, **windows.RULES, **calls.RULES,
}
#: the opcodes whose rule takes operands of shapes not known (None), and checks the others
_PARTIAL: Final = calls.PARTIAL


def infer(opcode: str, operands: Sequence[Shape | None], attrs: Mapping[str, object],
          programs: Programs) -> Shape | None:
    """The shape XLA's parser gives an ``opcode`` instruction written without one, from its
    operands' shapes and its attribute values (as :mod:`hlo_rewrite.values` reads them);
    None when it is not known here. Raises :class:`NoShape` where XLA's parser finds none."""
    rule = _RULES.get(opcode)
    if rule is None or (opcode not in _PARTIAL and any(s is None for s in operands)):
        return None
    return rule(opcode, list(operands), attrs, programs)  # type: ignore[arg-type]
