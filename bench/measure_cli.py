"""Run the ``hlo-rewrite`` command in this process and report its peak memory.

``python bench/measure_cli.py REPORT.json ARGS...`` runs ``hlo-rewrite ARGS...``
exactly as the console script does, and when it exits writes the process's
peak resident set size (``measure_ours.peak_rss``, read inside the process, so a
parent's peak is not mixed in) to ``REPORT.json``.
"""

from __future__ import annotations

import atexit
import json
import sys

from measure_ours import peak_rss


def main() -> None:
    report = sys.argv[1]
    sys.argv = ["hlo-rewrite", *sys.argv[2:]]

    def write() -> None:
        with open(report, "w") as fh:
            json.dump({"peak_rss": peak_rss()}, fh)

    atexit.register(write)
    from hlo_rewrite.cli import console_main

    console_main()


if __name__ == "__main__":
    main()
