"""The golden cases of ``tests/golden/``: one input file per case, its options in a header line.

A case is ``tests/golden/<group>/<name>.hlo``; its first line says how the tool runs on it::

    // RUN: --passes=fuse-reduce-scatter,convert-collectives-to-custom-call --all-computations

The rest of the file is the module (the header line is a comment the reader keeps, so it is also
the first line of the output). The expected output is ``<name>.expected.hlo`` beside it, written
by ``pytest --update-golden`` and reviewed in the diff. Options are the command's own flags:
``--passes=LIST`` (required), ``--all-computations``, ``--send-recv-target=NAME``,
``--strict-tokens``. ``HLO_REWRITE_GOLDEN_DIR`` points the harness at another directory.

No jax here: the unit layer uses this module.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.ir import Module
from hlo_rewrite.passes import PassOptions
from hlo_rewrite.passes.base import PassReport
from hlo_rewrite.pipeline import run_passes

GOLDEN = Path(os.environ.get("HLO_REWRITE_GOLDEN_DIR") or Path(__file__).resolve().parent / "golden")
RUN_PREFIX = "// RUN:"
EXPECTED_SUFFIX = ".expected.hlo"


class BadRunLine(ValueError):
    """A golden input's header line is missing or names an option the harness does not know."""


@dataclass(frozen=True)
class GoldenCase:
    group: str
    name: str
    path: Path
    passes: tuple[str, ...]
    options: PassOptions

    @property
    def id(self) -> str:
        return f"{self.group}/{self.name}"

    @property
    def expected_path(self) -> Path:
        return self.path.with_name(self.name + EXPECTED_SUFFIX)

    def source(self) -> str:
        return read_exact(self.path)

    def expected(self) -> str:
        return read_exact(self.expected_path)


def read_exact(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def parse_run_line(line: str, where: str = "<golden>") -> tuple[tuple[str, ...], PassOptions]:
    """The passes and options of one ``// RUN:`` line."""
    if not line.startswith(RUN_PREFIX):
        raise BadRunLine(f"{where}: the first line must start with {RUN_PREFIX!r}, found {line!r}")
    passes: tuple[str, ...] | None = None
    options: dict[str, object] = {}
    for word in shlex.split(line[len(RUN_PREFIX):]):
        flag, _, value = word.partition("=")
        if flag == "--passes" and value:
            passes = tuple(p for p in value.split(",") if p)
        elif flag == "--all-computations" and not value:
            options["all_computations"] = True
        elif flag == "--strict-tokens" and not value:
            options["strict_tokens"] = True
        elif flag == "--send-recv-target" and value:
            options["send_recv_target"] = value
        else:
            raise BadRunLine(f"{where}: unknown option {word!r} in {line!r}")
    if not passes:
        raise BadRunLine(f"{where}: {line!r} names no --passes=")
    return passes, PassOptions(**options)  # type: ignore[arg-type]


def load(path: Path) -> GoldenCase:
    first = read_exact(path).split("\n", 1)[0].rstrip("\r")
    passes, options = parse_run_line(first, str(path))
    return GoldenCase(path.parent.name, path.name[: -len(".hlo")], path, passes, options)


def cases(group: str | None = None) -> list[GoldenCase]:
    """Every golden case (or those of one group), sorted by id."""
    paths = sorted(GOLDEN.glob(f"{group or '*'}/*.hlo"))
    return [load(p) for p in paths if not p.name.endswith(EXPECTED_SUFFIX)]


def case(group: str, name: str) -> GoldenCase:
    return load(GOLDEN / group / f"{name}.hlo")


def run(case: GoldenCase, text: str | None = None) -> tuple[Module, list[PassReport], str]:
    """Run the case's passes on its input (or on ``text``): the module, the reports, the output."""
    module = parse_module(case.source() if text is None else text, str(case.path))
    reports = run_passes(module, list(case.passes), case.options)
    return module, reports, print_module(module)
