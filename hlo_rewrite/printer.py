"""From :class:`~hlo_rewrite.ir.Module` back to HLO text.

Untouched pieces are written from their source text, so a module no pass
changed comes out byte for byte as it came in. An instruction a pass created or
changed is printed the way XLA's printer spells it, in the module's own style
(``%`` or not, operand shapes or not, ``/*index=N*/`` every five operands).
"""

from __future__ import annotations

from collections.abc import Iterator

from .ir import Computation, Instruction, Module, Style
from .lexicon import skip_trivia


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
    source = comp.module.source if comp.module is not None else ""
    return _joined(source, _computation_segments(comp, style))


#: a stretch of the output: ``(start, end)`` of the module's source, or text printed anew
Segment = tuple[int, int] | str


class Printed:
    """A module's printed text, kept as it is made: stretches of its source and text printed
    anew, in order. Writing it takes it a piece at a time (:meth:`pieces`), so a large output
    is never held whole beside its source; ``str()`` joins it."""

    __slots__ = ("source", "segments")

    def __init__(self, source: str, segments: list[Segment]) -> None:
        self.source = source
        self.segments = segments

    def __len__(self) -> int:
        return sum(s[1] - s[0] if isinstance(s, tuple) else len(s) for s in self.segments)

    def is_source(self) -> bool:
        """Whether the text is the source, byte for byte (a pass may change a line back)."""
        source = self.source
        at = 0
        for seg in self.segments:
            if isinstance(seg, tuple):
                if seg[0] != at:
                    return False
                at = seg[1]
            else:
                if not source.startswith(seg, at):
                    return False
                at += len(seg)
        return at == len(source)

    def pieces(self, size: int) -> Iterator[str]:
        """The text in order, in pieces of at most ``size`` characters (or one new text)."""
        source = self.source
        for seg in self.segments:
            if isinstance(seg, str):
                if seg:
                    yield seg
                continue
            for at in range(seg[0], seg[1], size):
                yield source[at : min(at + size, seg[1])]

    def __str__(self) -> str:
        """The whole text. When it is the source with one stretch printed anew (most often a
        changed ENTRY), it is made with ``str.replace``, which writes it at once: joining
        slices of the untouched text would hold that text a second time while it is made."""
        source, segments = self.source, self.segments
        if not segments:
            return ""
        if len(segments) == 1 and segments[0] == (0, len(source)):
            return source
        first, last = segments[0], segments[-1]
        if (len(segments) > 2 and isinstance(first, tuple) and isinstance(last, tuple) and first[0] == 0
                and last[1] == len(source) and first[1] <= last[0]):
            old = source[first[1] : last[0]]
            if source.find(old) == first[1]:  # replace() takes the first occurrence
                return source.replace(old, _joined(source, segments[1:-1]), 1)
        return _joined(source, segments)


def _joined(source: str, segments: list[Segment]) -> str:
    """The text of ``segments``, stretches of ``source`` sliced out."""
    return "".join(source[s[0] : s[1]] if isinstance(s, tuple) else s for s in segments)


def _computation_segments(comp: Computation, style: Style) -> list[Segment]:
    """A changed computation: its unchanged lines as stretches of the source, the rest printed."""
    comp.settle_inline()
    out: list[Segment] = []
    head = comp.head
    span = comp.source_span
    source = comp.module.source if comp.module is not None else ""
    out.append((span[0], span[0] + len(head)) if span is not None and source.startswith(head, span[0]) else head)
    # a computation without a head (a text that is one instruction) starts where its text does
    at_line_start = head.endswith(("\n", "\r")) or not head and (
        span is None or span[0] == 0 or source[span[0] - 1] in "\n\r")
    last_printed = False
    for item in comp.source_runs():
        if isinstance(item, tuple):
            prev = out[-1]
            if isinstance(prev, tuple) and prev[1] == item[0]:
                out[-1] = (prev[0], item[1])
            else:
                out.append(item)
            if item[1] > item[0]:  # (instructions without text of their own make empty runs)
                at_line_start = source[item[1] - 1] in "\n\r"
                last_printed = False
            continue
        text = instruction_text(item, style)
        if not at_line_start and item.text is None:
            # a new or changed instruction after one that shared its line with a
            # neighbour: it starts a line of its own
            text = style.newline + text
        out.append(text)
        at_line_start = text.endswith(("\n", "\r"))
        last_printed = item.text is None
    if not at_line_start and not comp.tail.startswith(("\n", "\r")) and last_printed:
        out.append(style.newline)
    out.append(comp.tail)
    return out


def print_module(module: Module) -> str:
    """The module as HLO text (its source, byte for byte, when nothing changed)."""
    return str(render(module))


def render(module: Module) -> Printed:
    """The module as HLO text, kept in stretches (:class:`Printed`)."""
    source = module.source
    if not module.changed:
        return Printed(source, [(0, len(source))])
    module.settle_inline_computations()
    style = module.style
    segments: list[Segment] = []
    run0 = run1 = -1  # the stretch of the source that prints as itself, not added yet
    at: int | None = 0  # where the next piece stands in the source, when known
    for piece in module.pieces:
        span: tuple[int, int] | None = None
        if isinstance(piece, str):
            if at is not None and source.startswith(piece, at):
                span = (at, at + len(piece))
        elif piece.edits == 0 and piece.module is module:
            span = piece.source_span
        if span is not None:
            if span[0] == run1:
                run1 = span[1]
            else:
                if run0 >= 0:
                    segments.append((run0, run1))
                run0, run1 = span
            at = span[1]
            continue
        parts: list[Segment] = [piece] if isinstance(piece, str) else (
            _computation_segments(piece, style) if piece.module is module else [computation_text(piece, style)])
        first = parts[0]
        if isinstance(first, tuple) and first[0] == run1:
            parts[0] = (run0, first[1])  # the computation's first lines are unchanged
        elif run0 >= 0:
            segments.append((run0, run1))
        run0 = run1 = -1
        last = parts[-1]
        if isinstance(last, tuple):  # its last lines are: the run goes on from them
            parts.pop()
            run0, run1 = last
        segments.extend(p for p in parts if p)
        at = None if isinstance(piece, str) or piece.source_span is None else piece.source_span[1]
    if run0 >= 0:
        segments.append((run0, run1))
    return Printed(source, segments)


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
    # the first with text of its own (one written as an operand, or a parameter made for an
    # operand, has none)
    first = next((i for i in entry.instructions if i.text), None)
    if first is not None and first.text is not None:
        text = first.text
        at = skip_trivia(text, 0)  # (a comment may stand before it)
        if text.startswith("ROOT", at):
            at = skip_trivia(text, at + 4)
        style.percent = text.startswith("%", at)
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
