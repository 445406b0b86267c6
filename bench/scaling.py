"""``make bench``: fuse-reduce-scatter's time grows linearly with the number of fusable groups.

Builds chains of N fusable concatenates (4 reduce-scatters each, about 10 instructions per
group) for N = 750, 1500, 3000, runs the pass on each (best of three), and prints the time per
group. Linear means the time per group stays flat; the run exits 1 if the largest chain costs
more than twice as much per group as the smallest, or takes over 10 s.
"""

from __future__ import annotations

import gc
import sys
import time

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.pipeline import run_passes

HEADER = """HloModule chain, num_partitions=8

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p0: f32[16,4]) -> f32[16,4] {
  %p0 = f32[16,4]{1,0} parameter(0)
"""
ATTRS = "channel_id=1, replica_groups={{0,1,2,3,4,5,6,7}}, use_global_device_ids=true, dimensions={0}, to_apply=%add"


def chain(groups: int) -> str:
    lines = [HEADER.rstrip("\n")]
    prev = "p0"
    for i in range(groups):
        ops = []
        for j in range(4):
            lines.append(f"  %x{i}_{j} = f32[16,4]{{1,0}} negate(f32[16,4]{{1,0}} %{prev})")
            lines.append(f"  %rs{i}_{j} = f32[2,4]{{1,0}} reduce-scatter(f32[16,4]{{1,0}} %x{i}_{j}), {ATTRS}")
            ops.append(f"f32[2,4]{{1,0}} %rs{i}_{j}")
        lines.append(f"  %cat{i} = f32[2,16]{{1,0}} concatenate({', '.join(ops)}), dimensions={{1}}")
        lines.append(f"  %y{i} = f32[16,4]{{1,0}} reshape(f32[2,16]{{1,0}} %cat{i})")
        prev = f"y{i}"
    lines += [f"  ROOT %out = f32[16,4]{{1,0}} negate(f32[16,4]{{1,0}} %{prev})", "}", ""]
    return "\n".join(lines)


def seconds(groups: int) -> float:
    text = chain(groups)
    best = float("inf")
    for _ in range(3):
        module = None
        gc.collect()  # the modules read before, cycles included, are gone: each run starts alike
        module = parse_module(text)
        start = time.perf_counter()
        (report,) = run_passes(module, ["fuse-reduce-scatter"])
        best = min(best, time.perf_counter() - start)
        assert len(report.rewritten) == groups
        assert " reduce-scatter(" in print_module(module)
    return best


def main() -> int:
    per_group = {}
    for groups in (750, 1500, 3000):
        t = seconds(groups)
        per_group[groups] = t / groups
        print(f"fuse-reduce-scatter, {groups:5d} groups ({groups * 10} instructions): {t:6.3f} s, "
              f"{t / groups * 1e6:7.1f} us/group")
    ratio = per_group[3000] / per_group[750]
    print(f"per-group cost, 3000 vs 750 groups: {ratio:.2f}x (linear: about 1)")
    return 0 if ratio <= 2 and per_group[3000] * 3000 < 10 else 1


if __name__ == "__main__":
    sys.exit(main())
