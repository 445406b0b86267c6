"""From HLO text to :class:`~hlo_rewrite.ir.Module`: the two readers and the choice between them.

- :mod:`.plain`, the line reader: text as XLA prints it (one instruction a line, or one whose
  brackets run over lines), read line by line with regular expressions, a plain body checked in
  one pass (:mod:`.block`) and built on first use (:mod:`.lazy`).
- :mod:`.general`, the token reader: any layout XLA's parser reads (instructions over several
  lines or several on a line, comments between any two tokens, lone ``\\r`` line ends).
- :mod:`.choice`, :func:`parse_module`: which of the two reads a text.

The names below are loaded when first asked for: the console script starts the checking
workers (:mod:`.parallel`) before it loads the readers themselves (:mod:`hlo_rewrite.early`).
"""

from __future__ import annotations

from ..exports import lazy_exports

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from .choice import parse_module, read_tokens
    from .lazy import NOTED_OPCODES
    from .plain import Scanner, read_plain

__all__ = ["NOTED_OPCODES", "Scanner", "parse_module", "read_plain", "read_tokens"]

#: the module that defines each name above
_DEFINED_IN = {
    "NOTED_OPCODES": ".lazy",
    "Scanner": ".plain",
    "parse_module": ".choice",
    "read_plain": ".plain",
    "read_tokens": ".choice",
}

__getattr__, __dir__ = lazy_exports(__name__, _DEFINED_IN)
