"""From :class:`~hlo_rewrite.ir.Module` back to HLO text.

Untouched pieces are written from their source text, so a module no pass
changed comes out byte for byte as it came in. An instruction a pass created or
changed is printed the way XLA's printer spells it, in the module's own style
(``%`` or not, operand shapes or not, ``/*index=N*/`` every five operands).
"""

from __future__ import annotations

from .ir import Computation, Instruction, Module, Style


def format_operands(instr: Instruction, style: Style) -> str:
    """The text between the opcode's parentheses."""
    if instr.payload is not None:
        return instr.payload
    pct = "%" if style.percent else ""
    comp = instr.computation
    parts = []
    for i, op in enumerate(instr.operands):
        text = pct + op
        if style.operand_shapes and comp is not None:
            producer = comp.get(op)
            if producer is not None and producer.shape is not None:
                text = producer.shape + " " + text
        if style.index_comments and i and i % 5 == 0:
            text = f"/*index={i}*/" + text
        parts.append(text)
    return ", ".join(parts)


def format_instruction(instr: Instruction, style: Style | None = None) -> str:
    """One instruction as XLA prints it, without indentation or newline."""
    if style is None:
        comp = instr.computation
        style = comp.module.style if comp is not None and comp.module is not None else Style()
    pct = "%" if style.percent else ""
    head = ("ROOT " if instr.is_root else "") + pct + instr.name + " = "
    if instr.shape is not None:
        head += instr.shape + " "
    attrs = "".join(f", {k}={v}" for k, v in instr.attrs)
    return f"{head}{instr.opcode}({format_operands(instr, style)}){attrs}"


def instruction_text(instr: Instruction, style: Style) -> str:
    """The full line(s) of an instruction: its source text, or a fresh print."""
    if instr.text is not None:
        return instr.prefix + instr.text if instr.prefix else instr.text
    return instr.prefix + style.indent + format_instruction(instr, style) + style.newline


def computation_text(comp: Computation, style: Style) -> str:
    if comp.edits == 0 and comp.source_span is not None and comp.module is not None:
        start, end = comp.source_span
        return comp.module.source[start:end]  # untouched: one slice of the source
    parts = [comp.head]
    parts.extend(instruction_text(i, style) for i in comp.instructions)
    parts.append(comp.tail)
    return "".join(parts)


def print_module(module: Module) -> str:
    """The module as HLO text (its source, byte for byte, when nothing changed)."""
    if not module.changed:
        return module.source
    style = module.style
    out = []
    for piece in module.pieces:
        out.append(piece if isinstance(piece, str) else computation_text(piece, style))
    return "".join(out)
