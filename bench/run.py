"""``make bench``: hlo-rewrite against XLA's own parser and printer, in one run.

For each benchmark module (made by ``bench/make_modules.py`` in the cache
directory) it reports MB/s and instructions/s for parse, print and
parse+print, beside XLA's parse and parse+print measured by jaxlib on the same
machine in the same run, their ratio, and hlo-rewrite's peak RSS as a multiple
of the input size (in a process that parses, runs the default passes and
prints, and in the command ``hlo-rewrite IN -o OUT`` as a user runs it, with
its wall time); then the wall time of the command on a tiny module.
Targets (docs/performance.md): parse+print >= 2x XLA, peak RSS <= 6x input,
tiny module end to end <= 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from xla_reference import measure_xla  # noqa: E402

FILES = ["post_opt_10mb.hlo", "pre_opt_50mb.hlo"]


def ours(path: Path, repeats: int) -> dict:
    cmd = [sys.executable, str(HERE / "measure_ours.py"), str(path), "--repeats", str(repeats)]
    result = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    rss = json.loads(
        subprocess.run(cmd[:3] + ["--rss-only"], check=True, capture_output=True, text=True).stdout
    )
    result["peak_rss"] = rss["peak_rss"]
    return result


def command(path: Path, extra: list[str], runs: int) -> dict:
    """``hlo-rewrite PATH -o OUT EXTRA``: best wall time of ``runs``, and its peak RSS."""
    best = float("inf")
    peak = 0
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "rss.json")
        out = os.path.join(tmp, "out.hlo")
        for _ in range(runs):
            cmd = [sys.executable, str(HERE / "measure_cli.py"), report, str(path), "-o", out, *extra]
            start = time.perf_counter()
            subprocess.run(cmd, check=True)
            best = min(best, time.perf_counter() - start)
            with open(report) as fh:
                peak = max(peak, json.load(fh)["peak_rss"])
    return {"wall_s": best, "peak_rss": peak}


def tiny_wall(path: Path, runs: int = 5) -> float:
    exe = Path(sys.executable).with_name("hlo-rewrite")
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([str(exe), str(path), "-o", os.devnull], check=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_cache = os.environ.get("HLO_BENCH_CACHE", str(REPO / ".bench-cache"))
    ap.add_argument("--cache", default=default_cache, help="directory holding the benchmark modules")
    ap.add_argument("--repeats", type=int, default=3, help="runs per measurement (best is kept)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    cache = Path(args.cache)
    rows = []
    for name in FILES:
        path = cache / name
        if not path.exists():
            print(f"missing {path}: run bench/make_modules.py first", file=sys.stderr)
            continue
        mine = ours(path, args.repeats)
        xla = measure_xla(path, repeats=args.repeats)
        mb = mine["bytes"] / 1e6
        n = mine["instructions"]
        row = {
            "file": name,
            "MB": round(mb, 2),
            "instructions": n,
            "ours_parse_MBps": mb / mine["parse_s"],
            "ours_print_MBps": mb / mine["print_s"],
            "ours_parse_print_MBps": mb / mine["parse_print_s"],
            "ours_parse_passes_print_MBps": mb / mine["parse_passes_print_s"],
            "ours_parse_instr_per_s": n / mine["parse_s"],
            "xla_parse_MBps": mb / xla["parse_s"],
            "xla_parse_print_MBps": mb / xla["parse_print_s"],
            "ratio_parse": xla["parse_s"] / mine["parse_s"],
            "ratio_parse_print": xla["parse_print_s"] / mine["parse_print_s"],
            "ratio_parse_passes_print": xla["parse_print_s"] / mine["parse_passes_print_s"],
            "peak_rss_MB": mine["peak_rss"] / 1e6,
            "peak_rss_x_input": mine["peak_rss"] / mine["bytes"],
        }
        cli = command(path, [], args.repeats)
        row["command_wall_s"] = cli["wall_s"]
        row["command_peak_rss_MB"] = cli["peak_rss"] / 1e6
        row["command_peak_rss_x_input"] = cli["peak_rss"] / mine["bytes"]
        rows.append(row)
        print(f"\n== {name}: {mb:.1f} MB, {n} instructions")
        print(f"  hlo-rewrite parse              {row['ours_parse_MBps']:7.1f} MB/s  {row['ours_parse_instr_per_s']:9.0f} instr/s")
        print(f"  hlo-rewrite print (re-joined)  {row['ours_print_MBps']:7.1f} MB/s")
        print(f"  hlo-rewrite parse+print        {row['ours_parse_print_MBps']:7.1f} MB/s")
        print(f"  hlo-rewrite parse+passes+print {row['ours_parse_passes_print_MBps']:7.1f} MB/s")
        print(f"  XLA parse                      {row['xla_parse_MBps']:7.1f} MB/s")
        print(f"  XLA parse+print                {row['xla_parse_print_MBps']:7.1f} MB/s")
        print(f"  ratio parse (ours/XLA)         {row['ratio_parse']:7.2f}x")
        print(f"  ratio parse+print              {row['ratio_parse_print']:7.2f}x   (target >= 2x)")
        print(f"  ratio parse+passes+print       {row['ratio_parse_passes_print']:7.2f}x")
        print(f"  peak RSS                       {row['peak_rss_MB']:7.1f} MB = {row['peak_rss_x_input']:.2f}x input (target <= 6x)")
        print(f"  command `hlo-rewrite IN -o OUT` {row['command_wall_s']:6.2f} s wall, peak RSS "
              f"{row['command_peak_rss_MB']:.1f} MB = {row['command_peak_rss_x_input']:.2f}x input (target <= 6x)")
    tiny = cache / "tiny.hlo"
    if tiny.exists():
        wall = tiny_wall(tiny)
        print(f"\n== tiny module end to end: {wall:.3f} s wall (target <= 0.3 s)")
        rows.append({"file": "tiny.hlo", "wall_s": wall})
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
