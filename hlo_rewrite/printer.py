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
    at_line_start = comp.head.endswith(("\n", "\r"))
    for instr in comp.instructions:
        text = instruction_text(instr, style)
        if not at_line_start and instr.text is None:
            # a new or changed instruction after one that shared its line with a
            # neighbour: it starts a line of its own
            text = style.newline + text
        parts.append(text)
        at_line_start = text.endswith(("\n", "\r"))
    if not at_line_start and not comp.tail.startswith(("\n", "\r")) and comp.instructions[-1].text is None:
        parts.append(style.newline)
    parts.append(comp.tail)
    return "".join(parts)


def print_module(module: Module) -> str:
    """The module as HLO text (its source, byte for byte, when nothing changed)."""
    if not module.changed:
        return module.source
    style = module.style
    source = module.source
    # the output as runs of untouched source text, (start, end), and text printed anew, with
    # the stretch of the source each new text stands for (None: a new piece)
    segments: list[tuple[int, int] | str] = []
    stands_for: list[tuple[int, int] | None] = []
    run: tuple[int, int] | None = None  # source text that prints as itself, not written yet
    at: int | None = 0  # where the next piece stands in the source, when known
    for piece in module.pieces:
        span: tuple[int, int] | None = None
        if isinstance(piece, str):
            if at is not None and source.startswith(piece, at):
                span = (at, at + len(piece))
        elif piece.edits == 0 and piece.source_span is not None and piece.module is module:
            span = piece.source_span
        if span is not None and run is not None and run[1] == span[0]:
            run = (run[0], span[1])  # untouched pieces in a row: one slice of the source
        else:
            if run is not None:
                segments.append(run)
            run = span
            if span is None:
                if isinstance(piece, str):
                    segments.append(piece)
                    stands_for.append(None)
                else:
                    segments.append(computation_text(piece, style))
                    stands_for.append(piece.source_span if piece.module is module else None)
        if span is not None:
            at = span[1]
        else:
            at = None if isinstance(piece, str) or piece.source_span is None else piece.source_span[1]
    if run is not None:
        segments.append(run)
    return _join(source, segments, stands_for)


def _join(source: str, segments: list[tuple[int, int] | str], stands_for: list[tuple[int, int] | None]) -> str:
    """The output text from its segments (see :func:`print_module`).

    When it is the source with one stretch printed anew (a pass changed one computation, most
    often ENTRY), it is made with ``str.replace``, which writes it at once: joining slices of
    the untouched text would hold that text a second time while the output is made (10 MB of a
    10 MB module; growing the text before the stretch in place measured no better).
    """
    if len(stands_for) == 1 and stands_for[0] is not None:
        start, end = stands_for[0]
        expected = 0
        for seg in segments:
            seg_start, seg_end = (start, end) if isinstance(seg, str) else seg
            if seg_start != expected:
                break
            expected = seg_end
        else:
            if expected == len(source):
                new = next(seg for seg in segments if isinstance(seg, str))
                old = source[start:end]
                if source.find(old) == start:  # replace() takes the first occurrence
                    return source.replace(old, new, 1)
    return "".join(source[seg[0] : seg[1]] if isinstance(seg, tuple) else seg for seg in segments)


def detect_style(module: Module) -> Style:
    """How the input spells its instructions, so lines a pass prints look like their
    neighbours: ``%`` names or not, indentation, operand shapes, ``/*index=N*/`` comments.
    Read from ENTRY (where passes add), which must be built and not edited yet."""
    style = Style()
    source = module.source
    nl = source.find("\n")
    if nl > 0 and source[nl - 1] == "\r":
        style.newline = "\r\n"
    entry = module.entry
    first = entry.instructions[0] if entry.instructions else None
    if first is not None and first.text is not None:
        text = first.text
        head = text.lstrip(" \t\r\n")
        if head.startswith("ROOT"):
            head = head[4:].lstrip()
        style.percent = head.startswith("%")
        if first.spans_text:
            line = text[text.rfind("\n", 0, len(text) - len(text.lstrip())) + 1 :]
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            style.indent = indent if line.lstrip(" \t")[:1] not in ("", "/") else "  "
        else:
            style.indent = text[: len(text) - len(text.lstrip(" \t"))]
    for instr in entry.instructions:
        if instr.operands and instr.text is not None:
            style.operand_shapes = _operands_have_shapes(instr)
            break
    style.index_comments = ("/*index=" in source) or style.percent
    return style


def _operands_have_shapes(instr: Instruction) -> bool:
    """Whether an instruction read from text writes a shape before its first operand."""
    text = instr.text or ""
    at = text.find(instr.opcode + "(")
    if at < 0:
        return False
    rest = text[at + len(instr.opcode) + 1 :].lstrip()
    return bool(rest) and (rest[0] == "(" or (rest[0].islower() and "[" in rest[:12].split(" ")[0]))
