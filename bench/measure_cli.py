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
    """Peak resident set size of this process image, in bytes.

    /proc's VmHWM belongs to the address space, which exec replaces; getrusage's
    ru_maxrss survives exec on Linux and would report the parent's peak when
    that was larger (the benchmark runner holds XLA and a parsed module), so it is
    only the fallback where /proc is missing.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> None:
    report = sys.argv[1]
    sys.argv = ["hlo-rewrite", *sys.argv[2:]]

    def write() -> None:
        with open(report, "w") as fh:
            fh.write(f'{{"peak_rss": {peak_rss()}}}\n')

    atexit.register(write)
    from hlo_rewrite.cli import console_main

    console_main()


if __name__ == "__main__":
    main()
