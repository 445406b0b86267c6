"""Regular expressions compiled on first use.

Most patterns a module defines serve paths a given run never takes: the line-by-line reading
of a body the one-pass check refused, values spelled unusually, formats other than HLO text.
Compiling all of them at import was about a tenth of the command's start-up. A pattern made
with :func:`lazy_pattern` is compiled when one of its attributes is first asked for; it then
holds the compiled pattern's methods as its own attributes, so later calls cost what a
compiled pattern's do.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Any, AnyStr

#: what a compiled pattern is asked for; copied onto the stand-in once it is compiled
_ATTRIBUTES = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split",
               "pattern", "flags", "groups", "groupindex", "scanner")


class _Lazy:
    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only until compiled: then the attributes are set
        pattern, flags = self._source
        compiled: re.Pattern[Any] = re.compile(pattern, flags)  # type: ignore[type-var]
        for attr in _ATTRIBUTES:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self._source[0]!r})"


def lazy_pattern(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, done when the pattern is first used."""
    return _Lazy(pattern, flags)  # type: ignore[return-value]  # (it compiles itself on first use)
