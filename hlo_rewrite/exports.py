"""A package's names loaded when first asked for (PEP 562's module ``__getattr__``).

The console script reads a large input and starts its checking workers before it loads the
rest of the command (:mod:`hlo_rewrite.early`), so the packages on that path (the package
itself, :mod:`hlo_rewrite.reader`, :mod:`hlo_rewrite.formats`) load nothing when imported: each
name they export is imported from the module that defines it on first use, and kept. A
submodule is an attribute of its package as before, imported when first asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module


def lazy_exports(package: str, defined_in: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose exported names are each
    defined in the module ``defined_in`` gives (relative to the package)."""

    def __getattr__(name: str) -> object:
        where = defined_in.get(name)
        if where is None:
            return _submodule(package, name)
        value = getattr(import_module(where, package), name)
        setattr(sys.modules[package], name, value)  # asked for once
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *defined_in})

    return __getattr__, __dir__


def _submodule(package: str, name: str) -> object:
    """The submodule ``name`` of ``package``, imported; AttributeError when there is none."""
    missing = AttributeError(f"module {package!r} has no attribute {name!r}")
    if name.startswith("_"):
        raise missing
    try:
        return import_module(f"{package}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.{name}":
            raise  # the submodule exists and imports something missing
        raise missing from None
