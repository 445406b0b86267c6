"""Structural checks on a module, run after every pass.

The rules: every operand is defined in its computation *before* it is used
(instruction order is the order in the text), every control predecessor is
defined, every called computation exists, each computation has exactly one
ROOT, and every name a pass added is unique in the whole module.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import HloVerifyError
from .ir import Computation, Module


def verify(module: Module, computations: Iterable[Computation] | None = None) -> None:
    """Raise :class:`HloVerifyError` on the first broken rule.

    ``computations`` limits the per-computation rules to those (the ones a
    pass changed); the uniqueness of added names is always checked.
    """
    known = {c.name for c in module.computations}
    fname = module.filename
    # an instruction as read names a control predecessor only if the source has the word
    control_in_source = module.source_has("control-predecessors")
    for comp in module.computations if computations is None else computations:
        defined: set[str] = set()
        roots = 0
        for instr in comp.instructions:
            operands = instr.operands
            if operands and not defined.issuperset(operands):
                op = next(op for op in operands if op not in defined)
                where = "later" if op in comp.by_name else "nowhere"
                raise HloVerifyError(
                    f"operand '{op}' of '{instr.name}' in computation '{comp.name}' is "
                    f"defined {where} (it must be defined before its use)",
                    filename=fname, line=instr.line or None,
                )
            from_source = instr.from_source
            if not from_source or (control_in_source and "control-predecessors" in (instr.attrs_text or "")):
                for pred in instr.control_predecessors:
                    if pred not in comp.by_name:
                        raise HloVerifyError(
                            f"control predecessor '{pred}' of '{instr.name}' is not defined in '{comp.name}'",
                            filename=fname, line=instr.line or None,
                        )
            if not from_source:
                for callee in instr.called_computations():
                    if callee not in known:
                        raise HloVerifyError(
                            f"'{instr.name}' calls computation '{callee}', which is not defined",
                            filename=fname, line=instr.line or None,
                        )
            if instr.name in defined:
                raise HloVerifyError(
                    f"instruction '{instr.name}' is defined twice in '{comp.name}'",
                    filename=fname, line=instr.line or None,
                )
            defined.add(instr.name)
            roots += instr.is_root
        if roots > 1:
            raise HloVerifyError(f"computation '{comp.name}' has {roots} ROOT instructions", filename=fname)
        if not comp.instructions:
            raise HloVerifyError(f"computation '{comp.name}' has no instructions", filename=fname)
    if module.added_names:
        added = module.added_names
        seen: dict[str, str] = {}
        for comp in module.computations:
            for name in added & comp.instruction_names():
                if name in seen:
                    raise HloVerifyError(
                        f"added name '{name}' is used in both '{seen[name]}' and '{comp.name}'",
                        filename=fname,
                    )
                seen[name] = comp.name
