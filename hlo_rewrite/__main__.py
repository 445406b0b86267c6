"""The ``hlo-rewrite`` console script, and ``python -m hlo_rewrite``, which names itself so in
its help: a large input is read early (:mod:`hlo_rewrite.early`) while the command's modules
load; then a plain command line runs without loading click (:mod:`hlo_rewrite.plain_args`), and
any other through :func:`hlo_rewrite.cli.console_main`."""

from __future__ import annotations

import gc
import signal
import sys

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import NoReturn


def console_main(prog_name: str = "hlo-rewrite") -> NoReturn:
    # no automatic collections for the whole run: loading the command makes many objects and
    # no garbage, and neither does reading a module (the collections after loading it, and
    # during the passes, walked every object just read: 4-6 ms of a 10 MB run). What the
    # modules before leave is collected before each module is read
    # (hlo_rewrite.runner.process_module), so a run over many modules does not keep their cycles
    gc.disable()
    for stop in (signal.SIGINT, signal.SIGTERM):  # until the command takes them over
        signal.signal(stop, _stopped_while_loading)
    from .early import begin  # (loads the exit codes)

    begin(sys.argv[1:])
    from .plain_args import plain_run

    plain = plain_run(sys.argv[1:], prog_name)
    if plain is None:
        from .cli import console_main as run

        gc.freeze()  # what is loaded stays for the whole run: those collections need not walk it
        run(prog_name=prog_name)
    gc.freeze()
    plain()


def _stopped_while_loading(signum: int, _frame: object) -> None:
    """Ctrl-C or SIGTERM before the command has started: nothing is written yet; say so as the
    command would (no traceback) and leave with its exit code, ending any early workers. In the
    first milliseconds, before even the exit codes are loaded (a handler must not import while
    a module loads), the signal's own default action ends the process, also without a
    traceback."""
    stop_message = getattr(sys.modules.get(f"{__package__}.errors"), "stop_message", None)
    if stop_message is None:
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)
        return  # (not reached)
    message, code = stop_message(signum)
    sys.stderr.write(message)
    raise SystemExit(int(code))


if __name__ == "__main__":
    console_main(prog_name="python -m hlo_rewrite")
