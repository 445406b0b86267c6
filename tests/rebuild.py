"""Print a module with every instruction rebuilt from the IR, none sliced from its source."""

from __future__ import annotations

from hlo_rewrite import parse_module, print_module


def rebuilt(text: str, filename: str = "<input>") -> str:
    """``text`` read, every instruction marked changed, and printed: each line comes from the
    printer (``format_instruction``), so comparing it with the input tests the printer."""
    module = parse_module(text, filename)
    for comp in module.computations:
        for instr in comp.instructions:
            instr.mark_changed()
            assert instr.text is None  # no source slice left for the printer to reuse
    return print_module(module)
