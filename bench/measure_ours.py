"""Measure hlo-rewrite on one file, in a process of its own (so peak RSS is its own).

Prints one JSON object: best-of-N seconds for parse, print (every piece joined),
parse+print as the tool runs a no-op, and parse + default passes + print; the
instruction count; and the peak resident set size of this process.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from measure_cli import peak_rss

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.pipeline import run_passes


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rss-only", action="store_true", help="one parse+passes+print, then report peak RSS")
    args = ap.parse_args()
    with open(args.path, encoding="utf-8", newline="") as fh:
        text = fh.read()
    if args.rss_only:
        module = parse_module(text, args.path)
        run_passes(module)
        print_module(module)
        peak = peak_rss()
        json.dump({"peak_rss": peak, "bytes": len(text.encode())}, sys.stdout)
        return 0
    module = parse_module(text, args.path)
    instructions = sum(len(c.instructions) for c in module.computations)

    def parse():
        parse_module(text, args.path)

    def reprint():
        # mark every computation edited, so every instruction line is joined
        # again (an untouched computation is otherwise one slice of the source)
        for comp in module.computations:
            comp.edits += 1
        module.touch()
        print_module(module)

    def noop():
        print_module(parse_module(text, args.path))

    def passes():
        m = parse_module(text, args.path)
        run_passes(m)
        print_module(m)

    result = {
        "bytes": len(text.encode()),
        "instructions": instructions,
        "parse_s": best_of(parse, args.repeats),
        "print_s": best_of(reprint, args.repeats),
        "parse_print_s": best_of(noop, args.repeats),
        "parse_passes_print_s": best_of(passes, args.repeats),
    }
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
