"""The reader's record of a computation it checked but did not build yet.

Reading checks every computation at once but builds the instruction objects of a computation
other than ENTRY only when something first asks for them. Until then the computation holds a
:class:`LazyBody`: where its text is, the opcodes present, and the name and line of every
instruction with one of :data:`NOTED_OPCODES`, so a pass can skip it or find its anchors without
building anything. :meth:`LazyBody.build` reads the body again, building.
"""

from __future__ import annotations

from collections.abc import KeysView

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from ..ir import Computation

#: the opcodes whose instructions the reader notes by name and line in an unbuilt computation:
#: the union of the anchor opcodes the built-in passes declare (``passes.anchor_opcodes()``;
#: ``tests/test_pass_framework.py`` holds the two equal). Spelled out here so that reading a
#: module imports no pass; an opcode missing here only costs a build (``Computation.find``).
NOTED_OPCODES: frozenset[str] = frozenset(
    {"all-reduce", "all-gather", "reduce-scatter", "all-reduce-start", "all-gather-start",
     "reduce-scatter-start", "async-start", "custom-call", "concatenate",
     "send", "recv", "send-done", "recv-done"}
)


class LazyBody:
    """What the reader knows about an unbuilt computation body.

    ``header`` is the 0-based line of the computation's header; ``block`` the (start, end)
    offsets of a body checked in one pass (one plain instruction per line), else None;
    ``names`` its instruction names (None for a block body until first asked, then read from its
    text again); ``opcodes`` the opcodes present; ``noted`` ``(name, opcode, line)`` of each
    instruction with one of :data:`NOTED_OPCODES`.
    """

    __slots__ = ("header", "block", "names", "opcodes", "noted")

    def __init__(
        self,
        header: int,
        *,
        block: tuple[int, int] | None = None,
        names: dict[str, int | None] | None = None,
        opcodes: frozenset[str] | set[str],
        noted: list[tuple[str, str, int]],
    ) -> None:
        self.header = header
        self.block = block
        self.names = names
        self.opcodes = opcodes
        self.noted = noted

    def instruction_names(self, comp: Computation) -> KeysView[str]:
        if self.names is None:
            from .block import block_names

            assert self.block is not None and comp.module is not None
            self.names = dict.fromkeys(block_names(comp.module.source, *self.block))
        return self.names.keys()

    def find(self, opcodes: set[str] | frozenset[str]) -> list[tuple[str, str, int]] | None:
        """The noted instructions with one of ``opcodes``; None when ``opcodes`` asks for
        an opcode that was not noted (the caller then builds the body and looks)."""
        if not opcodes <= NOTED_OPCODES:
            return None
        return [t for t in self.noted if t[1] in opcodes]

    def build(self, comp: Computation) -> None:
        """Build the instruction objects of ``comp`` from its source text."""
        from .plain import build_body

        build_body(comp, self)
