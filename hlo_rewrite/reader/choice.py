"""The choice between the two readers (:mod:`hlo_rewrite.reader`): :func:`parse_module` gives
the text to the line reader when a few whole-text looks show nothing it cannot vouch for, and to
the token reader otherwise, or when the line reader stops. Both check the same rules and keep
the text, so either module prints the input back byte for byte.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Collection

from ..errors import HloError, HloInternalError
from ..ir import Module
from ..lexicon import DOUBLE_QUOTED
from ..printer import detect_style
from ..regex import lazy_pattern
from . import parallel
from .plain import GrammarError, NotPlain, Scanner, read_plain

# a string, or a line that is a comment: whichever starts first (a quote in a comment opens no
# string, and "//" in a string starts no comment)
_STRING_OR_COMMENT_LINE = lazy_pattern(DOUBLE_QUOTED + r"|^[ \t]*//.*$", re.M)
# "//", or a comment other than XLA's own /*index=N*/, which it prints after ", " only (before an
# operand, a tuple element, a parameter); one '/' first, so that the search looks for it alone
_COMMENT_START = re.compile(r"/(?:/|\*(?:(?!index=[0-9]+\*/)|(?<!, /\*)(?=index=)))")


def looks_plain(text: str) -> bool:
    """Whether the line reader may read ``text``: no lone ``\\r`` line end, no comment but
    XLA's ``/*index=N*/`` after ``, ``, and ``//`` only at the start of a line."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return False
    m = _COMMENT_START.search(text)  # one pass for both kinds of comment
    while m is not None:
        at = m.start()
        if m.group() != "//" or text[text.rfind("\n", 0, at) + 1 : at].strip(" \t"):
            return False  # another comment, or "//" after other text on its line (or in a string)
        end = text.find("\n", at)
        if end < 0:
            return True
        m = _COMMENT_START.search(text, end)
    return True


def read_tokens(text: str, filename: str | None) -> Module:
    """Read text in any layout XLA's parser reads, token by token (:mod:`.general`, imported
    only when a module needs it)."""
    from .general import read_tokens as read

    return read(text, filename)


def parse_module(text: str, filename: str | None = None, *, strict: bool = False, processes: int = 1,
                 build_entry_for: Collection[str] = ()) -> Module:
    """Read HLO module text into a :class:`Module`.

    Raises :class:`~hlo_rewrite.errors.HloError` with the file, line and column
    of the first problem. ``strict`` also checks the module against what XLA's
    parser accepts (:func:`hlo_rewrite.strict.check_module`). With ``processes`` above 1,
    a large module's computation bodies are checked by that many processes (forked
    workers, :mod:`hlo_rewrite.reader.parallel`): the result and any error are the same.
    ``build_entry_for``: opcodes a caller is about to look for (a pass pipeline's anchors);
    when workers read and ENTRY holds one, its instructions are built while they check
    rather than on first use (the module is the same either way).
    """
    was_enabled = gc.isenabled()
    gc.disable()  # reading allocates many small objects and frees none of them
    try:
        module = _read(text, filename, strict, processes, frozenset(build_entry_for))
        if module.entry.is_built:  # else when ENTRY is first built (see build_body)
            module.style = detect_style(module)
        if strict:
            from .. import strict as strict_checks

            strict_checks.check_module(module)
        return module
    finally:
        if was_enabled:
            gc.enable()


def _read(text: str, filename: str | None, strict: bool, processes: int, build_entry_for: frozenset[str]) -> Module:
    # the workers start first, so that they check while everything else is done here (called
    # with one process too: it ends workers started early for another reading)
    prechecked = parallel.start(text, processes if Scanner.check_blocks and not strict else 1)
    try:
        if not looks_plain(text):
            if prechecked is not None:
                prechecked.close()  # not the line reader's text: the workers' findings are not wanted
            return read_tokens(text, filename)
        return _read_plain(text, filename, strict, prechecked, build_entry_for)  # (the line reader ends them)
    finally:
        if prechecked is not None:
            prechecked.close()


def _read_plain(text: str, filename: str | None, strict: bool, prechecked: parallel.Prechecked | None,
                build_entry_for: frozenset[str] = frozenset()) -> Module:
    try:
        return read_plain(text, filename, strict, prechecked, build_entry_for)
    except NotPlain:
        return read_tokens(text, filename)
    except HloInternalError:
        raise
    except HloError as plain_error:
        # the line reader stops at what it cannot read; the token reader reads whatever
        # XLA reads, and where it fails too the line reader's error stands
        if not _brackets_balance(text):
            raise  # no layout reads brackets that do not balance: spare a second reading
        try:
            return read_tokens(text, filename)
        except HloError as token_error:
            if isinstance(plain_error, GrammarError) and _place(plain_error) <= _place(token_error):
                # the same place, or the token reader read on past the grammar's complaint (the
                # grammar reads less than XLA: an operand written as an instruction): the token
                # reader names the problem in its own terms
                raise
            raise plain_error from None


def _brackets_balance(text: str) -> bool:
    """Whether {} are as many opened as closed outside strings and line comments (the text
    looks plain: no other comments). () and [] are not counted: a braced attribute value is
    text in which only braces need to pair, as for XLA's lexer. A line comment that holds a
    brace may be no comment (inside a braced backend_config, JSON text, it is text): then the
    count cannot tell, and says they balance."""
    if '"' in text or "//" in text:
        unsure = False

        def dropped(m: re.Match[str]) -> str:
            nonlocal unsure
            piece = m.group()
            if piece.lstrip().startswith("//") and ("{" in piece or "}" in piece):
                unsure = True
            return ""

        text = _STRING_OR_COMMENT_LINE.sub(dropped, text)
        if unsure:
            return True
    return text.count("{") == text.count("}")


def _place(error: HloError) -> tuple[int, int]:
    return (error.line or 0, error.column or 0)
