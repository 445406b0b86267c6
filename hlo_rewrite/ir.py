"""The in-memory form of an HLO module that remembers its source text.

A :class:`Module` is a sequence of raw text pieces (the header, blank lines,
comments, anything between computations) and :class:`Computation` objects. A
computation keeps its header and closing text verbatim and holds
:class:`Instruction` objects, each of which keeps the exact source text of its
line(s). Printing an instruction that no pass touched writes that text back, so
a module comes out byte for byte as it went in; an instruction a pass created or
changed has ``text = None`` and is printed by :mod:`hlo_rewrite.printer`.

The edit API (``add_instruction``, ``remove_instruction``,
``replace_instruction``, ``replace_all_uses``, ``fresh_name``, users and
post-order) is what passes use; :mod:`hlo_rewrite.verifier` checks the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, KeysView, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, overload

from . import attributes
from .errors import HloError, HloVerifyError
from .shapes import Shape, element_type_of, parse_shape

if TYPE_CHECKING:
    from .syntax import InstructionSyntax


@dataclass(slots=True)
class Style:
    """How the input spells things, so new lines look like their neighbours."""

    percent: bool = True  # names written as %name
    operand_shapes: bool = False  # operands written as "f32[2]{0} %x"
    index_comments: bool = False  # /*index=5*/ before every 5th operand
    indent: str = "  "
    newline: str = "\n"


T = TypeVar("T")


class UnbuiltBody(Protocol):
    """What a reader leaves in a computation whose instruction objects are not built yet."""

    opcodes: set[str] | frozenset[str]

    def instruction_names(self, comp: Computation) -> KeysView[str]: ...

    def find(self, opcodes: set[str] | frozenset[str]) -> list[tuple[str, str, int]] | None: ...

    def build(self, comp: Computation) -> None: ...


class _Rare(Generic[T]):
    """An instruction field most instructions never set, kept in the
    instruction's ``_rare`` dict instead of a slot of its own."""

    def __init__(self, key: str, default: T | None = None) -> None:
        self.key = key
        self.default = default

    @overload
    def __get__(self, obj: None, owner: type) -> _Rare[T]: ...
    @overload
    def __get__(self, obj: Instruction, owner: type) -> T: ...
    def __get__(self, obj: Instruction | None, owner: type) -> T | _Rare[T]:
        if obj is None:
            return self
        rare = obj._rare
        value = None if rare is None else rare.get(self.key)
        return value if value is not None else self.default  # type: ignore[return-value]

    def __set__(self, obj: Instruction, value: T) -> None:
        obj._put(self.key, value)


class Instruction:
    """One HLO instruction.

    ``shape`` is the result shape text as written (``None`` when the input
    omitted it), ``operands`` are operand names without ``%``. ``attrs`` is an
    ordered list of ``(name, value_text)`` pairs; the value text is kept exactly
    as written (or as a pass built it). ``text`` is the instruction's exact source
    text (indentation through trailing newline) while it is unchanged.
    """

    __slots__ = (
        "name",
        "opcode",
        "shape",
        "operands",
        "is_root",
        "line",
        "column",
        "computation",
        "payload",
        "_nlines",
        "_attrs_at",
        "_attrs",
        "_rare",
    )

    def __init__(
        self,
        name: str,
        opcode: str,
        shape: str | None,
        operands: list[str],
        attrs: list[tuple[str, str]] | None = None,
        *,
        is_root: bool = False,
        line: int = 0,
        column: int = 0,
        text: str | None = None,
        attrs_text: str | None = None,
        prefix: str = "",
        payload: str | None = None,
        nlines: int = 0,
        attrs_at: int = -1,
    ) -> None:
        self.name = name
        self.opcode = opcode
        self.shape = shape
        self.operands = operands
        self.is_root = is_root
        self.line = line
        self.column = column
        self.computation: Computation | None = None
        # the text inside the parentheses of parameter(N) and constant(literal)
        self.payload = payload
        # the source text is the ``nlines`` source lines from ``line`` on, sliced
        # from the module's source on demand (a module holds no second copy of
        # its text); ``attrs_at`` is where the attribute text starts, relative
        # to the first line
        self._nlines = nlines
        self._attrs_at = attrs_at
        self._attrs = attrs
        # fields most instructions never use live in one dict, so that the
        # hundreds of thousands of instructions of a big module stay small
        self._rare: dict[str, object] | None = None
        if text is not None:
            self._own_text = text
        if attrs_text is not None:
            self._attrs_text = attrs_text
        if prefix:
            self.prefix = prefix

    @classmethod
    def from_scan(
        cls,
        name: str,
        opcode: str,
        shape: str | None,
        operands: list[str],
        is_root: bool,
        line: int,
        column: int,
        nlines: int,
        attrs_at: int,
        payload: str | None,
        computation: Computation,
    ) -> Instruction:
        """An instruction read from source lines (the scanner's fast constructor)."""
        self = cls.__new__(cls)
        self.name = name
        self.opcode = opcode
        self.shape = shape
        self.operands = operands
        self.is_root = is_root
        self.line = line
        self.column = column
        self.computation = computation
        self.payload = payload
        self._nlines = nlines
        self._attrs_at = attrs_at
        self._attrs = None
        self._rare = None
        return self

    @classmethod
    def from_text_span(
        cls,
        name: str,
        opcode: str,
        shape: str | None,
        operands: list[str],
        attrs: list[tuple[str, str]],
        *,
        is_root: bool,
        line: int,
        column: int,
        nlines: int,
        span: tuple[int, int],
        attrs_span: tuple[int, int],
        payload: str | None,
        computation: Computation,
    ) -> Instruction:
        """An instruction whose source text is ``source[span[0]:span[1]]`` rather than whole
        lines (it shares a line with another, or comments stand between its tokens); its
        attributes come already split, and ``attrs_span`` is where their text is."""
        self = cls.from_scan(name, opcode, shape, operands, is_root, line, column, max(nlines, 1), -1, payload,
                             computation)
        self._attrs = attrs
        self._rare = {"span": (*span, *attrs_span)}
        return self

    def _put(self, key: str, value: object) -> None:
        if self._rare is None:
            if value is None or value == "":
                return
            self._rare = {}
        self._rare[key] = value

    #: blank or comment lines that stand before this instruction, verbatim
    prefix: _Rare[str] = _Rare("prefix", "")
    _own_text: _Rare[str | None] = _Rare("text")
    _attrs_text: _Rare[str | None] = _Rare("attrs_text")
    _syntax: _Rare[InstructionSyntax | None] = _Rare("syntax")
    _shape_obj: _Rare[Shape | None] = _Rare("shape_obj")
    #: an instruction written as an operand of another (XLA's nested form, ``add(f32[] negate(x),
    #: y)``): where its own text (shape, opcode, operands) is in the module's source; it has no
    #: line of its own, its text is inside the instruction that holds it (``written_in``)
    anonymous_span: _Rare[tuple[int, int] | None] = _Rare("anon")
    #: the operands written as instructions in this one's text: ``(start, end, name)`` of each, in
    #: the module's source
    inline_operands: _Rare[tuple[tuple[int, int, str], ...] | None] = _Rare("inline")
    #: the instruction whose text holds this one (its outermost named instruction)
    written_in: _Rare[Instruction | None] = _Rare("host")
    #: the instructions written inside this one's text, in order (they stand just before it)
    holds: _Rare[list[Instruction] | None] = _Rare("members")
    #: a parameter XLA's parser makes for an operand of a text that is one instruction: it is
    #: never printed (the instruction names its shape in its operand list)
    implied: _Rare[bool] = _Rare("implied", False)
    #: the computations written inline as values of this instruction's callee attributes
    #: (``to_apply={ ... }``), in order: their text is inside this one's
    #: (``Module.settle_inline_computations``)
    inline_callees: _Rare[tuple[Computation, ...] | None] = _Rare("callees")

    def hold(self, members: list[Instruction]) -> None:
        """Note that ``members`` are written inside this instruction's text."""
        self.holds = members
        for m in members:
            m.written_in = self

    # ---------------------------------------------------------------- source text
    def _span(self) -> tuple[str, int, int] | None:
        """(module source, start, end) of this instruction's source lines."""
        comp = self.computation
        if self._nlines <= 0 or comp is None or comp.module is None:
            return None
        mod = comp.module
        src = mod.source
        rare = self._rare
        if rare is not None and "span" in rare:
            start, end = rare["span"][:2]  # type: ignore[index]
            return src, start, end
        starts = mod.line_starts
        return src, starts[self.line - 1], min(starts[self.line - 1 + self._nlines], len(src))

    @property
    def from_source(self) -> bool:
        """True while the instruction is its source text (``text`` is not None),
        told without slicing the text out of the source."""
        rare = self._rare  # (its own text, looked up without the descriptor: this is asked often)
        if rare is not None and rare.get("text") is not None:
            return True
        comp = self.computation
        return self._nlines > 0 and comp is not None and comp.module is not None

    @property
    def source_span(self) -> tuple[int, int] | None:
        """(start, end) offsets of the source text in the module's source, while unchanged."""
        span = self._span()
        return None if span is None else (span[1], span[2])

    @property
    def spans_text(self) -> bool:
        """Whether the source text is a span of the source rather than whole plain lines
        (read by the token reader: comments between tokens, or a line shared)."""
        rare = self._rare
        return self._nlines > 0 and rare is not None and "span" in rare

    @property
    def text(self) -> str | None:
        """The exact source text (indentation through newline), None once changed."""
        if self._own_text is not None:
            return self._own_text
        span = self._span()
        return None if span is None else span[0][span[1] : span[2]]

    @text.setter
    def text(self, value: str | None) -> None:
        self._own_text = value
        if value is None:
            self._nlines = 0

    @property
    def attrs_text(self) -> str | None:
        """The raw text after the operand list, as written (None if not from source)."""
        if self._attrs_text is None and self._attrs_at >= 0:
            span = self._span()
            if span is not None:
                src, start, end = span
                raw = src[start + self._attrs_at : end]
                if raw.endswith("\n"):
                    raw = raw[:-1]
                return raw.rstrip("\r")
        rare = self._rare
        if self._attrs_text is None and rare is not None and "span" in rare and self._nlines > 0:
            comp = self.computation
            if comp is not None and comp.module is not None:
                start, end = rare["span"][2:]  # type: ignore[index]
                return comp.module.source[start:end]
        return self._attrs_text

    # ----------------------------------------------------------------- attributes
    @property
    def attrs(self) -> list[tuple[str, str]]:
        """The attributes as ``(name, value_text)`` pairs, in order."""
        if self._attrs is None:
            self._attrs = attributes.split_attributes(self.attrs_text or "", self)
        return self._attrs

    @attrs.setter
    def attrs(self, value: list[tuple[str, str]]) -> None:
        self._attrs = value
        self._attrs_text = None
        self.mark_changed()

    def attr_text(self, name: str) -> str | None:
        """The value text of attribute ``name``, or None when absent."""
        for key, value in self.attrs:
            if key == name:
                return value
        return None

    def has_attr(self, name: str) -> bool:
        return self.attr_text(name) is not None

    def set_attr(self, name: str, value_text: str | None) -> None:
        """Set (or with None, remove) an attribute; the line will be reprinted."""
        attrs = [(k, v) for k, v in self.attrs if k != name or value_text is not None]
        for i, (k, _) in enumerate(attrs):
            if k == name:
                attrs[i] = (name, value_text)  # type: ignore[assignment]
                break
        else:
            if value_text is not None:
                attrs.append((name, value_text))
        self.attrs = attrs

    def syntax(self) -> InstructionSyntax:
        """This instruction read by the full grammar (typed attribute values)."""
        if self._syntax is None:
            from . import printer, syntax

            text = self.text
            if text is None or self.spans_text:
                text = printer.format_instruction(self)  # the grammar reads one plain line
            mod = self.computation.module if self.computation else None
            self._syntax = syntax.parse_instruction(
                text.lstrip(" \t"),
                filename=mod.filename if mod else None,
                line=self.line or 1,
            )
        return self._syntax

    def attr(self, name: str, default: object = None) -> object:
        """Typed value of attribute ``name`` (read through the grammar)."""
        for a in self.syntax().attrs:
            if a.name == name:
                return a.value
        return default

    # typed accessors used by the passes ---------------------------------------
    @property
    def replica_groups(self) -> list[list[int]] | None:
        value = self.attr("replica_groups")
        return value if value is None else list(value)  # type: ignore[call-overload]

    @property
    def channel_id(self) -> int | None:
        return self.attr("channel_id")  # type: ignore[return-value]

    @property
    def dimensions(self) -> list[int] | None:
        return self.attr("dimensions")  # type: ignore[return-value]

    @property
    def to_apply(self) -> str | None:
        return self.attr("to_apply")  # type: ignore[return-value]

    @property
    def use_global_device_ids(self) -> bool:
        return bool(self.attr("use_global_device_ids", False))

    @property
    def constrain_layout(self) -> bool:
        return bool(self.attr("constrain_layout", False))

    @property
    def is_host_transfer(self) -> bool:
        return bool(self.attr("is_host_transfer", False))

    @property
    def control_predecessors(self) -> list[str]:
        return attributes.name_list(self.attr_text("control-predecessors"))

    @property
    def backend_config(self) -> str | None:
        return self.attr("backend_config")  # type: ignore[return-value]

    @property
    def frontend_attributes(self) -> dict[str, str]:
        return dict(self.attr("frontend_attributes") or {})  # type: ignore[call-overload]

    @property
    def metadata(self) -> str | None:
        """Metadata as written, braces included."""
        return self.attr_text("metadata")

    @property
    def sharding(self) -> str | None:
        return self.attr_text("sharding")

    @property
    def custom_call_target(self) -> str | None:
        return self.attr("custom_call_target")  # type: ignore[return-value]

    def called_computations(self) -> list[str]:
        """Names of the computations this instruction calls (to_apply, calls, body, ...)."""
        if self._attrs is None:
            quick = attributes.quick_called_computations(self.attrs_text or "")
            if quick is not None:
                return quick
        return attributes.called_computation_names(self.attrs)

    # ---------------------------------------------------------------------- shape
    @property
    def shape_obj(self) -> Shape:
        """The result shape, parsed (requires the shape to be written)."""
        if self._shape_obj is None:
            if self.shape is None:
                raise HloVerifyError(
                    f"the shape of '{self.name}' is not written in the input",
                    line=self.line,
                    column=self.column,
                )
            try:
                self._shape_obj = parse_shape(self.shape)
            except HloError as exc:  # name the place: the shape text was never checked before
                comp = self.computation
                mod = comp.module if comp is not None else None
                src = self.text if self.line else None
                exc.filename = exc.filename or (mod.filename if mod is not None else None)
                exc.line, exc.column = exc.line or self.line or None, exc.column or self.column or None
                exc.source_line = exc.source_line or (src.split("\n")[0] if src else None)
                raise
        return self._shape_obj

    @property
    def element_type(self) -> str | None:
        return None if self.shape is None else element_type_of(self.shape)

    # ---------------------------------------------------------------------- edits
    def mark_changed(self) -> None:
        """Forget the source text so the instruction is reprinted."""
        if self._attrs is None:
            _ = self.attrs
        self._attrs_at = -1
        self.text = None
        self._syntax = None
        self._shape_obj = None
        if self.computation is not None:
            self.computation._invalidate()

    def __repr__(self) -> str:
        return f"<Instruction {self.name} = {self.opcode}({', '.join(self.operands)})>"


class Computation:
    """A computation: header text, instructions in order, closing text."""

    def __init__(
        self,
        name: str,
        *,
        is_entry: bool = False,
        head: str = "",
        tail: str = "",
        line: int = 0,
        head_length: int | None = None,
    ) -> None:
        self.name = name
        self.is_entry = is_entry
        # the exact text from the header line through "{\n"; a reader gives its length
        # instead, and it is sliced from the source (where ``source_span`` starts) when asked
        self._head: str | None = head if head_length is None else None
        self._head_length = head_length or 0
        self.tail = tail  # exact text of the closing "}" line(s)
        self.line = line
        self._instructions: list[Instruction] = []
        self._by_name: dict[str, Instruction] = {}
        # a computation read from text is checked at once but its instruction
        # objects may be built on first use: until then ``_lazy`` is the reader's
        # record of the body (names, opcodes present, anchors passes look for)
        self._lazy: UnbuiltBody | None = None
        self.module: Module | None = None
        self._users: dict[str, list[Instruction]] | None = None
        #: how many times a pass changed this computation (0: print it from source)
        self.edits = 0
        #: (start, end) offsets of the whole computation in the module source
        self.source_span: tuple[int, int] | None = None
        #: a computation written inline, as the value of a callee attribute of this instruction
        #: (``to_apply={ ... }``): its text is inside that one's, until it is printed on its own
        self.inline_in: Instruction | None = None

    # ------------------------------------------------------------------- queries
    @property
    def head(self) -> str:
        """The exact text of the header, from its line through ``{`` and the newline."""
        if self._head is None:
            assert self.module is not None and self.source_span is not None
            start = self.source_span[0]
            return self.module.source[start : start + self._head_length]
        return self._head

    @head.setter
    def head(self, value: str) -> None:
        self._head = value

    @property
    def is_built(self) -> bool:
        """Whether the instruction objects exist (a reader may leave them to first use)."""
        return self._lazy is None

    def _materialize(self) -> None:
        lazy = self._lazy
        assert lazy is not None
        self._lazy = None
        try:
            lazy.build(self)
        except BaseException:
            self._lazy = lazy
            raise

    def fill(self, instructions: list[Instruction], by_name: dict[str, Instruction]) -> None:
        """Install the instructions a reader built from the source (not an edit)."""
        self._instructions = instructions
        self._by_name = by_name

    @property
    def instructions(self) -> list[Instruction]:
        """The instructions, in text order."""
        if self._lazy is not None:
            self._materialize()
        return self._instructions

    @property
    def by_name(self) -> dict[str, Instruction]:
        """Instruction name -> instruction."""
        if self._lazy is not None:
            self._materialize()
        return self._by_name

    @by_name.setter
    def by_name(self, value: dict[str, Instruction]) -> None:
        self._by_name = value

    def settle_inline(self) -> None:
        """Instructions written as operands of another (XLA's nested form) print inside that
        one's text while it and they stand as written. Once a pass has changed, moved or removed
        any of them, each one left is printed on a line of its own, under its name."""
        if self.module is None or not self.module.writes_inline:
            return  # (the common case: no instruction is written so, nothing to look at)
        groups = [i for i in self.instructions if i.holds is not None or i.written_in is not None]
        if not groups:
            return
        index = {id(i): k for k, i in enumerate(self.instructions)}
        seen: set[int] = set()
        for instr in groups:
            host = instr.written_in or instr
            if id(host) in seen:
                continue
            seen.add(id(host))
            members = host.holds or []
            at = index.get(id(host), -1) if host.computation is self else -1
            intact = at >= 0 and host.text is not None and all(
                m.computation is self and m.text is not None and index.get(id(m)) == at - len(members) + k
                for k, m in enumerate(members))
            if intact:
                continue
            left = [m for m in members if m.computation is self]
            if at >= 0 and left and host.prefix:
                left[0].prefix, host.prefix = host.prefix + left[0].prefix, ""
            for m in left:
                m.written_in = None
                if m.text is not None:
                    m.mark_changed()
            host.holds = None
            if at >= 0 and host.text is not None:
                host.mark_changed()

    def source_runs(self) -> list[tuple[int, int] | Instruction]:
        """The instructions in order: runs of those that are still their own source lines, as
        ``(start, end)`` offsets of the module's source, and each other one as itself (the
        printer writes a run as one stretch of the source)."""
        mod = self.module
        if mod is None:
            return list(self.instructions)
        starts = mod.line_starts
        size = len(mod.source)
        out: list[tuple[int, int] | Instruction] = []
        run0 = run1 = -1
        for instr in self.instructions:
            rare = instr._rare
            if instr._nlines > 0 and instr.computation is self and (
                    rare is None or not (rare.get("text") is not None or rare.get("prefix"))):
                if rare is not None and "span" in rare:
                    s, e = rare["span"][:2]  # type: ignore[index]
                else:
                    first = instr.line - 1
                    s, e = starts[first], min(starts[first + instr._nlines], size)
                if s == run1:
                    run1 = e
                    continue
                if run0 >= 0:
                    out.append((run0, run1))
                run0, run1 = s, e
                continue
            if run0 >= 0:
                out.append((run0, run1))
                run0 = run1 = -1
            out.append(instr)
        if run0 >= 0:
            out.append((run0, run1))
        return out

    def instruction_names(self) -> KeysView[str]:
        """The instruction names, without building instruction objects."""
        if self._lazy is not None:
            return self._lazy.instruction_names(self)
        return self.by_name.keys()

    def find(self, opcodes: set[str] | frozenset[str]) -> list[tuple[str, str, int]]:
        """``(name, opcode, line)`` of every instruction with one of ``opcodes``,
        without building instruction objects when they are not built yet and the
        reader noted those opcodes."""
        if self._lazy is not None:
            found = self._lazy.find(opcodes)
            if found is not None:
                return found
        return [(i.name, i.opcode, i.line) for i in self.instructions if i.opcode in opcodes]

    def opcodes(self) -> set[str] | frozenset[str]:
        """The opcodes present, without building instruction objects, so a pass
        can skip a computation that has nothing for it."""
        if self._lazy is not None:
            return self._lazy.opcodes
        return {i.opcode for i in self.instructions}

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)

    def get(self, name: str) -> Instruction | None:
        return self.by_name.get(name)

    @property
    def root(self) -> Instruction:
        for instr in reversed(self.instructions):
            if instr.is_root:
                return instr
        if not self.instructions:
            raise HloVerifyError(f"computation '{self.name}' has no instructions", line=self.line)
        return self.instructions[-1]

    def parameters(self) -> list[Instruction]:
        return [i for i in self.instructions if i.opcode == "parameter"]

    def users_map(self) -> dict[str, list[Instruction]]:
        """name -> instructions using it as an operand (each user once, in order)."""
        if self._users is None:
            users: dict[str, list[Instruction]] = {}
            for instr in self.instructions:
                seen: set[str] = set()
                for op in instr.operands:
                    if op not in seen:
                        seen.add(op)
                        users.setdefault(op, []).append(instr)
            self._users = users
        return self._users

    def users(self, instr: Instruction | str) -> list[Instruction]:
        name = instr if isinstance(instr, str) else instr.name
        return list(self.users_map().get(name, ()))

    def control_successors(self, instr: Instruction | str) -> list[Instruction]:
        """Instructions that list ``instr`` in their control-predecessors."""
        name = instr if isinstance(instr, str) else instr.name
        return [
            i
            for i in self.instructions
            if i.attr_text("control-predecessors") is not None and name in i.control_predecessors
        ]

    def post_order(self) -> list[Instruction]:
        """Instructions in a post-order from the root (operands and control
        predecessors first); instructions unreachable from the root follow in
        source order, each after its own dependencies."""
        order: list[Instruction] = []
        state: dict[str, int] = {}
        by_name = self.by_name

        def deps(i: Instruction) -> list[str]:
            d = list(i.operands)
            if i.text is None or "control-predecessors" in (i.attrs_text or ""):
                d += i.control_predecessors
            return d

        for start in [self.root, *self.instructions]:
            if state.get(start.name):
                continue
            stack: list[tuple[Instruction, Iterator[str]]] = [(start, iter(deps(start)))]
            state[start.name] = 1
            while stack:
                node, it = stack[-1]
                for dep in it:
                    child = by_name.get(dep)
                    if child is not None and not state.get(dep):
                        state[dep] = 1
                        stack.append((child, iter(deps(child))))
                        break
                else:
                    stack.pop()
                    state[node.name] = 2
                    order.append(node)
        return order

    def depends_on(self, instr: Instruction, target: Instruction | Iterable[Instruction]) -> bool:
        """True when ``instr`` transitively uses any of ``target`` (data or control)."""
        targets = {target.name} if isinstance(target, Instruction) else {t.name for t in target}
        seen: set[str] = set()
        stack = [instr.name]
        while stack:
            name = stack.pop()
            if name in targets:
                return True
            if name in seen:
                continue
            seen.add(name)
            node = self.by_name.get(name)
            if node is None:
                continue
            stack.extend(node.operands)
            if node.attr_text("control-predecessors") is not None:
                stack.extend(node.control_predecessors)
        return False

    # --------------------------------------------------------------------- edits
    def _invalidate(self) -> None:
        """Note an edit: cached users are stale, and the computation (and its
        module) no longer equal their source text."""
        self._users = None
        self.edits += 1
        if self.module is not None:
            self.module.touch(self)

    def index_of(self, instr: Instruction) -> int:
        for i, x in enumerate(self.instructions):
            if x is instr:
                return i
        raise ValueError(f"{instr.name} is not in computation {self.name}")

    def add_instruction(
        self,
        instr: Instruction,
        *,
        before: Instruction | None = None,
        after: Instruction | None = None,
    ) -> Instruction:
        """Insert ``instr`` (at the end unless ``before``/``after`` is given)."""
        if instr.name in self.by_name:
            raise HloVerifyError(f"instruction name '{instr.name}' is already used in '{self.name}'")
        if before is not None:
            self.instructions.insert(self.index_of(before), instr)
        elif after is not None:
            self.instructions.insert(self.index_of(after) + 1, instr)
        else:
            self.instructions.append(instr)
        instr.computation = self
        self.by_name[instr.name] = instr
        if self.module is not None:
            self.module.names.add(instr.name)
            self.module.added_names.add(instr.name)
        self._invalidate()
        return instr

    def remove_instruction(self, instr: Instruction, *, force: bool = False) -> None:
        """Remove an instruction that nothing uses any more (``force`` skips the check)."""
        if not force and self.users(instr):
            users = ", ".join(u.name for u in self.users(instr))
            raise HloVerifyError(f"cannot remove '{instr.name}': still used by {users}")
        idx = self.index_of(instr)
        del self.instructions[idx]
        if instr.prefix and idx < len(self.instructions):
            nxt = self.instructions[idx]
            nxt.prefix = instr.prefix + nxt.prefix
        del self.by_name[instr.name]
        if instr.is_root and self.instructions:
            raise HloVerifyError(f"cannot remove the ROOT '{instr.name}' of '{self.name}'")
        instr.computation = None
        self._invalidate()

    def replace_instruction(self, old: Instruction, new: Instruction) -> Instruction:
        """Put ``new`` where ``old`` stood; uses of old's name now mean ``new``.

        ``new`` may reuse old's name (the usual case: users stay byte-identical).
        """
        idx = self.index_of(old)
        new.is_root = old.is_root
        new.prefix = old.prefix
        new.line = new.line or old.line
        new.column = new.column or old.column
        new.computation = self
        self.instructions[idx] = new
        del self.by_name[old.name]
        if new.name in self.by_name:
            raise HloVerifyError(f"instruction name '{new.name}' is already used in '{self.name}'")
        self.by_name[new.name] = new
        if self.module is not None and new.name != old.name:
            self.module.names.add(new.name)
            self.module.added_names.add(new.name)
        old.computation = None
        self._invalidate()
        if new.name != old.name:
            self.replace_all_uses(old.name, new.name)
        return new

    def replace_all_uses(self, old: str, new: str, *, control: bool = True) -> list[Instruction]:
        """Make every user of ``old`` use ``new`` instead; returns the changed users.

        With ``control`` the control-predecessors lists are rewritten too.
        """
        changed: list[Instruction] = []
        for instr in self.instructions:
            touched = False
            if old in instr.operands:
                instr.mark_changed()
                instr.operands = [new if o == old else o for o in instr.operands]
                touched = True
            if control and instr.attr_text("control-predecessors") is not None:
                preds = instr.control_predecessors
                if old in preds:
                    merged: list[str] = []
                    for p in preds:
                        q = new if p == old else p
                        if q not in merged:
                            merged.append(q)
                    set_control_predecessors(instr, merged)
                    touched = True
            if touched:
                changed.append(instr)
        self._invalidate()
        return changed

    def set_instructions(self, instructions: list[Instruction]) -> None:
        """Replace the whole instruction list at once.

        For passes that rewrite many instructions in one walk (adding and
        removing them one by one would search the list each time). Instructions
        not yet in the computation are adopted; a name the computation did not
        have counts as added by the pass; instructions left out are detached.
        """
        old_names = self.by_name
        by_name: dict[str, Instruction] = {}
        for instr in instructions:
            if instr.name in by_name:
                raise HloVerifyError(f"instruction name '{instr.name}' is used twice in '{self.name}'")
            by_name[instr.name] = instr
        kept = {id(i) for i in instructions}
        for instr in self.instructions:
            if id(instr) not in kept:
                instr.computation = None
        module = self.module
        for instr in instructions:
            if instr.computation is not self:
                instr.computation = self
                if module is not None and instr.name not in old_names:
                    module.added_names.add(instr.name)
                    if module._names is not None:
                        module._names.add(instr.name)
        self.instructions[:] = instructions
        self.by_name = by_name
        self._invalidate()

    def move_before(self, instr: Instruction, anchor: Instruction) -> None:
        """Move ``instr`` to stand just before ``anchor`` (keeps its text)."""
        self.instructions.pop(self.index_of(instr))
        self.instructions.insert(self.index_of(anchor), instr)
        self._invalidate()


def set_control_predecessors(instr: Instruction, names: list[str]) -> None:
    """Set (or, with an empty list, remove) an instruction's control-predecessors."""
    mod = instr.computation.module if instr.computation else None
    pct = "%" if (mod is None or mod.style.percent) else ""
    instr.mark_changed()
    instr.set_attr(
        "control-predecessors",
        ("{" + ", ".join(pct + n for n in names) + "}") if names else None,
    )


class Module:
    """A whole HLO module: raw text pieces and computations, in source order."""

    def __init__(self, source: str, filename: str | None = None) -> None:
        self.source = source
        self.filename = filename
        self.name: str | None = None
        self.pieces: list[str | Computation] = []
        self.computations: list[Computation] = []
        self._style: Style | None = None  # how the source spells things, once known
        self.line_starts: Sequence[int] = ()  # offset of each source line (set by the reader)
        self._names: set[str] | None = None  # every instruction name, built on first use
        self.added_names: set[str] = set()  # names introduced by passes
        self._fresh_counters: dict[str, int] = {}
        self._source_words: dict[str, bool] = {}
        self.edits = 0
        #: the computations edited since this was last cleared (by id; the pipeline verifies
        #: these after each pass without looking at every computation)
        self.touched: dict[int, Computation] = {}
        #: the text is one instruction, which XLA's parser makes a module of (ENTRY ``_``)
        self.single_instruction = False
        #: some operand is written as an instruction (XLA's nested form; ``Computation.settle_inline``)
        self.writes_inline = False
        #: some computation is written inline, as a callee attribute's value (``to_apply={ ... }``)
        self.writes_inline_computations = False

    @property
    def style(self) -> Style:
        """How the source spells things, so that lines a pass prints look like their
        neighbours. The reader works it out from ENTRY when ENTRY is built (before any edit
        can reach it); asking first builds ENTRY. A module made by hand has the default."""
        if self._style is None:
            entry = self.entry if self.computations else None
            if entry is not None and not entry.is_built:
                entry._materialize()  # the reader's build sets the style
            if self._style is None:
                self._style = Style()
        return self._style

    @style.setter
    def style(self, value: Style) -> None:
        self._style = value

    @property
    def style_known(self) -> bool:
        """Whether the style has been worked out (or set) already."""
        return self._style is not None

    @property
    def names(self) -> set[str]:
        """Every instruction name in the module (and every name handed out)."""
        if self._names is None:
            names: set[str] = set()
            for comp in self.computations:
                names.update(comp.instruction_names())
            self._names = names
        return self._names

    def source_has(self, word: str) -> bool:
        """Whether the source text contains ``word`` (looked up once per word)."""
        found = self._source_words.get(word)
        if found is None:
            found = self._source_words[word] = word in self.source
        return found

    def add_computation(self, comp: Computation) -> None:
        comp.module = self
        self.computations.append(comp)
        self.pieces.append(comp)

    def add_inline_computation(self, comp: Computation, before: Computation | None) -> None:
        """Add a computation written inline in an instruction's text (``comp.inline_in``):
        among the computations before ``before``, the one being read that holds it (callees
        stand before their callers), and not a piece of the text (its text is its holder's)."""
        comp.module = self
        at = next((k for k, c in enumerate(self.computations) if c is before), len(self.computations))
        self.computations.insert(at, comp)
        self.writes_inline_computations = True

    def settle_inline_computations(self) -> None:
        """A computation written inline prints inside its holder's text while both stand as
        written. Once a pass has changed either, or removed the holder, it is printed as a
        computation of its own, just before the outermost computation holding it, each of its
        instructions printed anew, and the holder is printed anew naming it (as XLA prints such
        a computation). Settling one changes its holder, so an inline computation holding it
        settles too."""
        if not self.writes_inline_computations:
            return
        settled = True
        while settled:
            settled = False
            for comp in self.computations:
                holder = comp.inline_in
                if holder is None:
                    continue
                home = holder.computation
                kept = home is not None and home.module is self and home.by_name.get(holder.name) is holder
                if comp.edits == 0 and holder.text is not None and kept:
                    continue
                self._settle(comp)
                if kept and holder.text is not None:
                    holder.mark_changed()
                settled = True

    def _settle(self, comp: Computation) -> None:
        holder = comp.inline_in
        assert holder is not None
        outer = holder.computation
        while outer is not None and outer.inline_in is not None:
            outer = outer.inline_in.computation
        comp.inline_in = None
        comp.source_span = None
        style = self.style
        comp.head = ("%" if style.percent else "") + comp.name + " {" + style.newline
        comp.tail = "}" + style.newline
        for instr in comp.instructions:
            if instr.text is not None:
                instr.prefix = ""
                instr.mark_changed()
        comp._invalidate()
        at = next((k for k, p in enumerate(self.pieces) if p is outer), len(self.pieces))
        before = self.pieces[at - 1] if at else "\n"
        ended = (before if isinstance(before, str) else before.tail).endswith(("\n", "\r"))
        self.pieces[at:at] = [comp, style.newline] if ended else [style.newline, comp, style.newline]

    def computation(self, name: str) -> Computation | None:
        for comp in self.computations:
            if comp.name == name:
                return comp
        return None

    @property
    def entry(self) -> Computation:
        for comp in reversed(self.computations):  # (one at most; XLA prints it last)
            if comp.is_entry:
                return comp
        if not self.computations:
            raise HloVerifyError("the module has no computation", filename=self.filename)
        return self.computations[-1]

    @property
    def changed(self) -> bool:
        """True when a pass created, changed, moved or removed anything."""
        return self.edits > 0

    def touch(self, computation: Computation | None = None) -> None:
        """Note that the module no longer equals its source text (``computation``: by an edit
        of that one)."""
        self.edits += 1
        if computation is not None:
            self.touched[id(computation)] = computation

    def fresh_name(self, base: str) -> str:
        """A name not used anywhere in the module: ``base``, else ``base.N``."""
        if base not in self.names:
            self.names.add(base)
            return base
        n = self._fresh_counters.get(base, 0)
        while True:
            n += 1
            candidate = f"{base}.{n}"
            if candidate not in self.names:
                self._fresh_counters[base] = n
                self.names.add(candidate)
                return candidate

    def non_fusion_computations(self) -> list[Computation]:
        """Computations other than fusion bodies (those called by ``fusion`` instructions)."""
        fused: set[str] = set()
        for comp in self.computations:
            if "fusion" not in comp.opcodes():
                continue
            for instr in comp.instructions:
                if instr.opcode == "fusion":
                    fused.update(instr.called_computations())
        return [c for c in self.computations if c.name not in fused]

    def scope(self, all_computations: bool) -> list[Computation]:
        """The computations a pass looks at: ENTRY, or every non-fusion computation."""
        return self.non_fusion_computations() if all_computations else [self.entry]
