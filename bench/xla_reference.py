"""XLA's own HLO text parse and parse+print throughput, through jaxlib (the reference).

``measure_xla(path, repeats=3)`` times, best of ``repeats`` runs with ``time.perf_counter``:

- ``parse_s``: ``xla_client.hlo.hlo_module_from_text(text)`` (XLA's C++ parser; it builds the
  HloModule but does not run the full verifier);
- ``parse_print_s``: the same followed by ``module.to_string()`` (XLA's default printer).

Reading the file and decoding it to ``str`` are not timed; neither is freeing the module.
The result also carries ``bytes`` (UTF-8 size of the text), ``instructions`` (as XLA's parser
counts them, all computations), and the derived ``parse_mb_s``, ``parse_print_mb_s``,
``parse_instr_s``, ``parse_print_instr_s`` (MB = 10**6 bytes).

``python bench/xla_reference.py [FILE ...]`` prints a table (default: the ``.hlo`` files in
the benchmark cache, ``$HLO_BENCH_CACHE`` or ``<repo>/.bench-cache/``).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from jax._src.lib import xla_client as xc

_UNSPECIFIED_RE = re.compile(r",\s*api_version=API_VERSION_UNSPECIFIED")


def _best_of(fn: Any, repeats: int) -> float:
    best = float("inf")
    for _ in range(max(1, repeats)):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            result = fn()
            elapsed = time.perf_counter() - t0
        finally:
            gc.enable()
        del result  # freeing the module is not part of the measurement
        best = min(best, elapsed)
    return best


def measure_xla_text(text: str, repeats: int = 3) -> dict[str, Any]:
    """Like ``measure_xla`` on text already in memory."""
    # torch-neuronx prints api_version=API_VERSION_UNSPECIFIED, which XLA rejects; drop it
    # (before timing) so such modules can be measured too.
    text = _UNSPECIFIED_RE.sub("", text)
    parse = xc.hlo.hlo_module_from_text
    module = parse(text)  # also warms up
    instructions = sum(len(c.instructions()) for c in module.computations())
    del module
    parse_s = _best_of(lambda: parse(text), repeats)
    parse_print_s = _best_of(lambda: parse(text).to_string(), repeats)
    nbytes = len(text.encode())
    return {
        "parse_s": parse_s,
        "parse_print_s": parse_print_s,
        "bytes": nbytes,
        "instructions": instructions,
        "parse_mb_s": nbytes / 1e6 / parse_s,
        "parse_print_mb_s": nbytes / 1e6 / parse_print_s,
        "parse_instr_s": instructions / parse_s,
        "parse_print_instr_s": instructions / parse_print_s,
    }


def measure_xla(path: str | os.PathLike[str], repeats: int = 3) -> dict[str, Any]:
    """XLA's best-of-``repeats`` parse and parse+print times for the HLO text file ``path``.

    Returns ``dict(parse_s=..., parse_print_s=..., bytes=..., instructions=..., parse_mb_s=...,
    parse_print_mb_s=..., parse_instr_s=..., parse_print_instr_s=...)``.
    """
    return measure_xla_text(Path(path).read_text(), repeats)


def _default_files() -> list[Path]:
    env = os.environ.get("HLO_BENCH_CACHE")
    cache = Path(env) if env else Path(__file__).resolve().parents[1] / ".bench-cache"
    return sorted(cache.glob("*.hlo"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="XLA's own HLO parse / parse+print throughput")
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    files = args.files or _default_files()
    if not files:
        print("no files (run bench/make_modules.py first)", file=sys.stderr)
        return 2
    print(
        f"{'file':<24} {'MB':>7} {'instrs':>8} {'parse s':>8} {'MB/s':>7} {'instr/s':>10}"
        f" {'parse+print s':>13} {'MB/s':>7} {'instr/s':>10}"
    )
    for path in files:
        r = measure_xla(path, args.repeats)
        print(
            f"{path.name:<24} {r['bytes'] / 1e6:>7.2f} {r['instructions']:>8} "
            f"{r['parse_s']:>8.3f} {r['parse_mb_s']:>7.1f} {r['parse_instr_s']:>10.0f} "
            f"{r['parse_print_s']:>13.3f} {r['parse_print_mb_s']:>7.1f} "
            f"{r['parse_print_instr_s']:>10.0f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
