"""The plain command lines, read without loading click.

Most runs are one of a few forms: ``hlo-rewrite IN -o OUT``, with ``--passes LIST``, ``-i``,
``--check``, ``-j N``. Loading click and building the command line's options (its per-pass flags
need every pass module and a look for plugins) took about a tenth of such a run on a module of
a few MB (docs/performance.md). So the console script first reads its words here: when each
word is an input or one of :data:`FLAGS` and :data:`VALUED`, spelled as this module reads them,
and the run needs no configuration, it goes straight to :mod:`hlo_rewrite.command` with the
options click would have given (:data:`DEFAULTS` for the rest). Anything else (another option or
spelling, a value click would refuse, a usage problem, a ``[tool.hlo-rewrite]`` table, shell
completion) is left to the command line (:mod:`hlo_rewrite.cli`), which reads the words anew:
nothing has been read, written or said by then. The outcome (output, messages, exit status)
is the one the command line gives; tests/test_plain_args.py compares the two.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from . import command
from .config import ConfigError, find_config, search_start
from .outputs import UsageProblem
from .passes import DEFAULT_PIPELINE, PassOptions
from .pipeline import parse_pass_list

#: every option's value when the command line does not give it, by parameter name, as click
#: gives them (tests/test_plain_args.py checks them against the command line's own)
DEFAULTS: dict[str, Any] = {
    "inputs": (),
    "output": None,
    "in_place": False,
    "output_format": None,
    "include": (),
    "exclude": (),
    "passes": None,
    "all_computations": False,
    "strict": False,
    "check": False,
    "show_diff": False,
    "stats": False,
    "report_path": None,
    "split_input_file": False,
    "safe": False,
    "jobs": 1,
    "color": "auto",
    "no_config": False,
    "quiet": False,
    "verbose": False,
}

#: the flags read here: spelling -> parameter name
FLAGS: dict[str, str] = {
    "-i": "in_place",
    "--in-place": "in_place",
    "--check": "check",
    "--diff": "show_diff",
    "--strict": "strict",
    "--all-computations": "all_computations",
    "-q": "quiet",
    "--quiet": "quiet",
}

#: the options with a value read here (``-o X``, ``--output X``, ``--output=X``): spelling ->
#: parameter name
VALUED: dict[str, str] = {
    "-o": "output",
    "--output": "output",
    "--passes": "passes",
    "-j": "jobs",
    "--jobs": "jobs",
}


def read(words: Sequence[str]) -> dict[str, Any] | None:
    """The options ``words`` give, as the command line's parameters, when they are a plain
    command line; None otherwise."""
    params = dict(DEFAULTS)
    inputs: list[str] = []
    given: set[str] = set()
    at = 0
    while at < len(words):
        word = words[at]
        at += 1
        if word == "-" or not word.startswith("-"):
            inputs.append(word)
            continue
        spelling, eq, value = word.partition("=")
        name = VALUED.get(spelling)
        if name is None:
            name = FLAGS.get(word)
            if name is None or name in given:
                return None  # not read here, or given twice
            given.add(name)
            params[name] = True
            continue
        if not eq:
            if at == len(words):
                return None  # no value: the command line says so
            value = words[at]
            at += 1
        elif not spelling.startswith("--"):
            return None  # "-o=X": click reads the value "=X"
        if name in given or not value or value.startswith("-"):
            return None
        given.add(name)
        converted = _value(name, value)
        if converted is None:
            return None
        params[name] = converted
    params["inputs"] = tuple(inputs)
    return params


def _value(name: str, value: str) -> Any:
    """An option's value as click converts it, or None when click would refuse it (or it is not
    spelled plainly)."""
    if name == "jobs":
        return int(value) if value.isascii() and value.isdigit() else None
    if name == "passes":
        if not value.strip():
            return None
        try:
            return parse_pass_list(value)
        except ValueError:
            return None
    return value


def plain_run(words: Sequence[str], prog_name: str) -> Callable[[], NoReturn] | None:
    """The run ``words`` ask for, ready to start (it ends the process with the run's exit
    code), when they are a plain command line that needs no configuration; None otherwise."""
    complete_var = f"_{prog_name}_COMPLETE".replace("-", "_").upper()  # as click names it
    if os.environ.get(complete_var):
        return None
    params = read(words)
    if params is None:
        return None
    names = params["passes"] if params["passes"] is not None else list(DEFAULT_PIPELINE)
    try:
        command.check_usage(params)
        if find_config(search_start(command.input_paths(params))) is not None:
            return None  # the table may set options: the command line applies it
        prepared = command.prepare(params, names, PassOptions(all_computations=params["all_computations"]))
    except (UsageProblem, ConfigError):
        return None
    reporter = command.new_reporter(params, words)

    def body() -> int:
        try:
            return int(command.run(prepared, reporter))
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            return 1  # standard error closed: as click ends such a run

    def start() -> NoReturn:
        command.leave(command.guard(body, standalone=True, stopped=command.leave))

    return start
