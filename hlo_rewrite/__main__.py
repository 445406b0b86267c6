"""The ``hlo-rewrite`` console script, and ``python -m hlo_rewrite``, which names itself so in
its help: a large input is read early (:mod:`hlo_rewrite.early`) while the command line's
modules load, then :func:`hlo_rewrite.cli.console_main` runs."""

from __future__ import annotations

import gc
import sys
from typing import NoReturn


def console_main(prog_name: str = "hlo-rewrite") -> NoReturn:
    # loading the command makes many objects and no garbage: the collections it set off were
    # about 4 ms of every run (docs/performance.md)
    gc.disable()
    from .early import begin

    begin(sys.argv[1:])
    from .cli import console_main as run

    gc.freeze()  # what is loaded stays for the whole run: later collections need not walk it
    gc.enable()
    run(prog_name=prog_name)


if __name__ == "__main__":
    console_main(prog_name="python -m hlo_rewrite")
