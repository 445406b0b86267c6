"""Run the ``hlo-rewrite`` command in this process and report its peak memory.

``python bench/measure_cli.py REPORT.json ARGS...`` runs ``hlo-rewrite ARGS...``
exactly as the console script does, and when it exits writes the process's
peak resident set size (``VmHWM``, read inside the process, so a parent's peak is not
mixed in) to ``REPORT.json``. It imports nothing the command does not (no ``json``):
what it measures is the command's own memory.
"""

from __future__ import annotations

import atexit
import sys


def peak_rss() -> int:
    """``VmHWM`` of this process, in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main() -> None:
    report = sys.argv[1]
    sys.argv = ["hlo-rewrite", *sys.argv[2:]]

    def write() -> None:
        with open(report, "w") as fh:
            fh.write('{"peak_rss": %d}\n' % peak_rss())

    atexit.register(write)
    from hlo_rewrite.cli import console_main

    console_main()


if __name__ == "__main__":
    main()
