"""Safe mode: check a rewritten module before it is written anywhere.

After the passes ran, :func:`check_output` reads the output text again from
scratch, verifies it, runs the same passes over it a second time and prints
it. The output must parse, verify, and come back unchanged (the passes are
idempotent on their own output). Any difference is a bug in hlo-rewrite, so it
is raised as :class:`~hlo_rewrite.errors.HloInternalError` (exit code 5), never
silently written.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from .errors import HloError, HloInternalError
from .passes import PassOptions
from .pipeline import run_passes
from .printer import print_module
from .reader import parse_module
from .verifier import verify


def _first_difference(a: str, b: str) -> str:
    """A short unified diff of the first lines where ``a`` and ``b`` differ."""
    diff = difflib.unified_diff(
        a.splitlines(), b.splitlines(), "first run", "second run", n=1, lineterm=""
    )
    lines = []
    for i, line in enumerate(diff):
        if i >= 12:
            lines.append("...")
            break
        lines.append(line[:200])
    return "\n".join(lines)


def check_output(
    text_out: str,
    names: Sequence[str],
    options: PassOptions | None = None,
    filename: str | None = None,
) -> None:
    """Raise :class:`HloInternalError` unless ``text_out`` re-parses, verifies,
    and is left unchanged by a second run of the passes ``names``."""
    where = filename or "<output>"
    try:
        module = parse_module(text_out, where)
        verify(module)
    except HloError as exc:
        raise HloInternalError(
            f"the rewritten module does not read back (safe mode): {exc.render()}",
            filename=filename,
        ) from exc
    try:
        run_passes(module, names, options)
    except HloError as exc:
        raise HloInternalError(
            f"a second run of the passes over the output failed (safe mode): {exc.render()}",
            filename=filename,
        ) from exc
    again = print_module(module)
    if again != text_out:
        raise HloInternalError(
            "a second run of the passes over the output changed it (safe mode); the passes are "
            "not idempotent on this input:\n" + _first_difference(text_out, again),
            filename=filename,
        )
