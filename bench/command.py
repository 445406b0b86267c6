"""``make bench``: the command as a user runs it, against XLA measured in the same run.

Every figure is a whole process, file in, file out, timed from outside (start-up, imports,
reading, writing and exit included), the median of ``--repeats`` alternations (default 5: on a
shared machine the median of three moved by a tenth from one run to the next):

- per benchmark module (``bench/make_modules.py``): ``hlo-rewrite --passes none IN -o OUT``,
  ``hlo-rewrite IN -o OUT`` (the default pipeline), and XLA's C++ parse+print of the same
  file in a process of its own (``hlo_module_from_text`` then ``to_string``, timed inside
  that process: its start-up, importing jaxlib and reading the file are not counted). Ratios
  are XLA's time over ours (above 1: we are faster). Peak memory is the command's own
  (``VmHWM`` of its process, read at exit by ``bench/measure_cli.py``).
- the tiny module end to end;
- linear growth: ``--passes none`` on the 10 MB module and on copies of it holding its
  computations 2 and 4 times (renamed), in seconds per MB;
- ``-j``: a directory of 100 modules (the tiny module with 0 to 3 renamed copies of its
  computations) with ``-j 1`` and ``-j 2``.

``nproc`` is printed with the results: the command reads a large module with up to that many
processes (docs/performance.md).

Usage: ``python bench/command.py [--cache DIR] [--repeats N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
EXE = str(Path(sys.executable).with_name("hlo-rewrite"))
MODULES = ["post_opt_10mb.hlo", "pre_opt_50mb.hlo"]

_XLA_ONCE = """
import re, sys, time
from jax._src.lib import xla_client as xc
text = open(sys.argv[1], encoding="utf-8").read()
text = re.sub(r",\\s*api_version=API_VERSION_UNSPECIFIED", "", text)  # torch-neuronx prints it
start = time.perf_counter()
xc.hlo.hlo_module_from_text(text).to_string()
print(time.perf_counter() - start)
"""


#: the environment of every measured process: bytecode may be written and read, as it is for
#: an installed package (with PYTHONDONTWRITEBYTECODE set, every changed module is compiled
#: again in every process: tens of milliseconds)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def precompile() -> None:
    import compileall

    import hlo_rewrite

    compileall.compile_dir(os.path.dirname(hlo_rewrite.__file__), quiet=1)


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: the module changed
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr.decode(errors='replace')}")
    return elapsed


def xla_seconds(path: Path) -> float:
    out = subprocess.run([sys.executable, "-c", _XLA_ONCE, str(path)], check=True, capture_output=True, text=True,
                         env=ENV)
    return float(out.stdout.strip())


def command_peak(path: Path, out: Path, extra: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "rss.json")
        subprocess.run([sys.executable, str(HERE / "measure_cli.py"), report, str(path), "-o", str(out), *extra],
                       check=True, env=ENV)
        with open(report) as fh:
            return int(json.load(fh)["peak_rss"])


def alternate(runs: dict[str, Callable[[], float]], repeats: int) -> dict[str, float]:
    """The median of each measurement over ``repeats`` rounds, one of each per round."""
    seen: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            seen[name].append(run())
    return {name: statistics.median(values) for name, values in seen.items()}


_HEADER = re.compile(r"^(ENTRY[ \t]+)?%?([A-Za-z_][A-Za-z0-9_.\-]*)[ \t]*[({]", re.M)


def with_copies(text: str, copies: int) -> str:
    """``text`` with every computation but ENTRY there ``copies`` more times, renamed (what
    the copies call is renamed with them): a bigger module of the same kind."""
    first = _HEADER.search(text)
    assert first is not None
    head, rest = text[: first.start()], text[first.start() :]
    comps = [b for b in re.split(r"(?<=\n}\n)", rest) if (m := _HEADER.search(b)) and not m.group(1)]
    names = sorted({m.group(2) for b in comps if (m := _HEADER.search(b))}, key=len, reverse=True)
    pattern = re.compile(r"%(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_.\-])")
    extra = [pattern.sub(lambda m, k=k: f"%{m.group(1)}_copy{k}", "".join(comps)) for k in range(1, copies + 1)]
    return head + "".join(extra) + text[len(head) :]


def measure_module(path: Path, repeats: int, out: Path) -> dict:
    ours_none = [EXE, "--passes", "none", str(path), "-o", str(out)]
    ours = [EXE, str(path), "-o", str(out)]
    med = alternate(
        {"none": lambda: wall(ours_none), "default": lambda: wall(ours), "xla": lambda: xla_seconds(path)},
        repeats,
    )
    size = path.stat().st_size
    peak = command_peak(path, out, [])
    return {
        "file": path.name,
        "MB": size / 1e6,
        "none_s": med["none"],
        "default_s": med["default"],
        "xla_parse_print_s": med["xla"],
        "ratio_none": med["xla"] / med["none"],
        "ratio_default": med["xla"] / med["default"],
        "peak_rss_MB": peak / 1e6,
        "peak_rss_x_input": peak / size,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=os.environ.get("HLO_BENCH_CACHE", str(REPO / ".bench-cache")))
    ap.add_argument("--repeats", type=int, default=5, help="alternations (the median is kept)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    cache = Path(args.cache)
    precompile()
    results: dict = {"nproc": os.cpu_count(), "usable_cpus": len(os.sched_getaffinity(0)), "modules": []}
    print(f"nproc {results['nproc']}, usable {results['usable_cpus']}; median of {args.repeats} alternations")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        out = work / "out.hlo"
        for name in MODULES:
            path = cache / name
            if not path.exists():
                print(f"missing {path}: run bench/make_modules.py first", file=sys.stderr)
                continue
            row = measure_module(path, args.repeats, out)
            results["modules"].append(row)
            print(f"\n== {name} ({row['MB']:.1f} MB)")
            print(f"  hlo-rewrite --passes none IN -o OUT  {row['none_s']:6.2f} s   "
                  f"{row['ratio_none']:5.2f}x XLA   (target >= 2.5x)")
            print(f"  hlo-rewrite IN -o OUT                {row['default_s']:6.2f} s   "
                  f"{row['ratio_default']:5.2f}x XLA   (target >= 2x)")
            print(f"  XLA parse+print (in its process)     {row['xla_parse_print_s']:6.2f} s")
            print(f"  peak memory of the command           {row['peak_rss_MB']:6.1f} MB = "
                  f"{row['peak_rss_x_input']:.2f}x input (target <= 5x)")

        tiny = cache / "tiny.hlo"
        if tiny.exists():
            t = alternate({"tiny": lambda: wall([EXE, str(tiny), "-o", str(out)])}, max(args.repeats, 5))["tiny"]
            results["tiny_s"] = t
            print(f"\n== tiny module end to end: {t:.3f} s")

        base = cache / "post_opt_10mb.hlo"
        if base.exists():
            text = base.read_text(encoding="utf-8")
            sizes = []
            for copies in (0, 1, 3):
                path = work / f"scaled_{copies + 1}x.hlo"
                path.write_text(with_copies(text, copies) if copies else text, encoding="utf-8")
                sizes.append(path)
            cmds = {p.name: (lambda p=p: wall([EXE, "--passes", "none", str(p), "-o", str(out)])) for p in sizes}
            med = alternate(cmds, args.repeats)
            print("\n== linear growth (--passes none)")
            per_mb = {}
            for p in sizes:
                mb = p.stat().st_size / 1e6
                per_mb[p.name] = med[p.name] / mb
                print(f"  {p.name:18s} {mb:6.1f} MB  {med[p.name]:6.2f} s  {per_mb[p.name] * 1000:6.1f} ms/MB")
            growth = per_mb[sizes[-1].name] / per_mb[sizes[0].name]
            results["linear"] = {"seconds": med, "per_MB": per_mb, "largest_over_smallest_per_MB": growth}
            print(f"  time per MB, largest over smallest: {growth:.2f} (linear: at most 1)")
            for p in sizes:
                p.unlink()

        if tiny.exists():
            text = tiny.read_text(encoding="utf-8")
            many = work / "many"
            many.mkdir()
            variants = [with_copies(text, c) if c else text for c in range(4)]
            for i in range(100):
                (many / f"module_{i:03d}.hlo").write_text(variants[i % 4], encoding="utf-8")
            total = sum(p.stat().st_size for p in many.iterdir()) / 1e6

            def run_jobs(jobs: int) -> float:
                target = work / f"out_j{jobs}"
                shutil.rmtree(target, ignore_errors=True)
                return wall([EXE, "-j", str(jobs), str(many), "-o", f"{target}/"])

            med = alternate({"j1": lambda: run_jobs(1), "j2": lambda: run_jobs(2)}, args.repeats)
            results["jobs"] = {"modules": 100, "MB": total, "j1_s": med["j1"], "j2_s": med["j2"],
                               "speedup": med["j1"] / med["j2"]}
            print(f"\n== 100 modules ({total:.1f} MB): -j 1 {med['j1']:.2f} s, -j 2 {med['j2']:.2f} s: "
                  f"{med['j1'] / med['j2']:.2f}x (target >= 1.7x)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
