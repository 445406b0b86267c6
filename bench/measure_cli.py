"""Run the ``hlo-rewrite`` command in this process and report its peak memory.

``python bench/measure_cli.py REPORT.json ARGS...`` runs ``hlo-rewrite ARGS...``
exactly as the console script does, and when it exits writes the process's
peak resident set size (``VmHWM``) to ``REPORT.json``. Reading ``VmHWM`` inside
the process counts only this program image: a parent's peak, which
``ru_maxrss`` of a forked child can include, is not mixed in.
"""

from __future__ import annotations

import atexit
import json
import sys


def _peak_rss() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    report = sys.argv[1]
    sys.argv = ["hlo-rewrite", *sys.argv[2:]]

    def write() -> None:
        with open(report, "w") as fh:
            json.dump({"peak_rss": _peak_rss()}, fh)

    atexit.register(write)
    from hlo_rewrite.cli import main as cli

    cli(prog_name="hlo-rewrite")


if __name__ == "__main__":
    main()
