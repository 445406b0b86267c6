"""``[tool.hlo-rewrite]`` in the nearest ``pyproject.toml`` (docs/cli.md, "Configuration").

The table sets the command line's pass selection and options, so CI, pre-commit and local runs
agree. Keys are the long option names without ``--`` (``passes``, ``all-computations``,
``send-recv-target``, ...); a value given on the command line wins.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from .regex import lazy_pattern

#: the file and the table looked for
FILENAME = "pyproject.toml"
TABLE = ("tool", "hlo-rewrite")


#: the ways a TOML text can spell the key path tool.hlo-rewrite other than with escapes: a table
#: header or dotted key naming both (``[tool.hlo-rewrite]``, ``[tool."hlo-rewrite".x]``,
#: ``tool.hlo-rewrite.passes = ...``), or a ``[tool]`` table or inline ``tool = {...}`` table, in
#: which ``hlo-rewrite`` may stand as a key of its own (quotes and blanks as TOML allows them)
_MAY_SPELL_TABLE = lazy_pattern(
    rb"""["']?tool["']?[ \t]*\.[ \t]*["']?hlo-rewrite"""
    rb"""|\[[ \t]*["']?tool["']?[ \t]*\]"""
    rb"""|["']?tool["']?[ \t]*=[ \t]*\{"""
)


class ConfigError(ValueError):
    """The configuration cannot be read or holds a key or value it should not (a usage error)."""


class Config(NamedTuple):
    path: str  # the pyproject.toml the values come from
    values: dict[str, Any]  # key (as written) -> value


def _load_toml(path: str) -> dict[str, Any] | None:
    """The file parsed, or None when its text cannot hold the tool's table: it never names the
    tool, or names it (as a project's name, a dependency or a script) where no table can be
    (:data:`_MAY_SPELL_TABLE`), and holds no escape with which a quoted key could spell it.
    Parsing such a file, with importing the TOML reader, would be most of a run's look for its
    configuration."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror}") from None
    escaped = b"\\u" in data or b"\\U" in data
    if not escaped and (b"hlo-rewrite" not in data or _MAY_SPELL_TABLE.search(data) is None):
        return None
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise ConfigError(f"{path}: reading it needs Python 3.11 or the 'tomli' package "
                              "(or pass --no-config)") from None
    try:
        return tomllib.loads(data.decode())  # what tomllib.load does with the bytes
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def search_start(paths: Sequence[str]) -> str:
    """Where to start looking: the directory holding all inputs (the current one for stdin)."""
    dirs = [os.path.dirname(os.path.abspath(p)) for p in paths if p != "-"]
    if not dirs:
        return os.getcwd()
    try:
        return os.path.commonpath(dirs)
    except ValueError:  # different drives
        return os.getcwd()


def find_config(start: str) -> Config | None:
    """The nearest ``pyproject.toml`` at or above ``start`` that has a ``[tool.hlo-rewrite]`` table."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, FILENAME)
        if os.path.isfile(candidate):
            data: Any = _load_toml(candidate)
            for key in TABLE:
                data = data.get(key) if isinstance(data, dict) else None
            if data is not None:
                if not isinstance(data, dict):
                    raise ConfigError(f"{candidate}: [tool.hlo-rewrite] must be a table")
                return Config(candidate, dict(data))
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
