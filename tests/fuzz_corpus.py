"""Mutation fuzzing of the whole pipeline: bad input never crashes or hangs hlo-rewrite.

Takes real modules (the corpus files up to ``--max-size`` bytes, ``examples/`` and the golden
inputs), mutates each example at the byte level (byte flips, deletions, insertions of HLO
punctuation and keywords, line duplications / swaps / deletions, truncation; 1 to 3 of them),
and runs what the command line runs, in process: ``io.decode`` → ``parse_module`` → passes
(the default pipeline, half of the time with ``all_computations``) → ``print_module``, then the
safe-mode check on the output. Every example ends in one of:

- ``accepted``: no error; the output passed the safe-mode check, and when no pass rewrote
  anything it equals the input byte for byte;
- ``rejected``: an ``HloError`` (not an internal one) that names the file and the line;
- ``unlocated``: an ``HloError`` without file or line (a failure);
- ``internal``: ``HloInternalError`` (a pass or safe mode found a bug in the tool, or reading
  the input with and without the one-pass body check gave different results; a failure);
- ``crashed``: any other exception (a failure);
- ``slow``: longer than ``--time-limit`` seconds (stopped by an alarm; a failure).

The exit status is 1 when any failure was seen, 0 otherwise. Failing inputs are written to
``--save DIR`` (if given) as ``<kind>-<index>.hlo`` to reproduce them with ``hlo-rewrite``.
Run from the repository root: ``python tests/fuzz_corpus.py --count 100000``.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from hlo_rewrite.errors import HloError, HloInternalError  # noqa: E402
from hlo_rewrite.io import decode  # noqa: E402
from hlo_rewrite.passes import DEFAULT_PIPELINE, PassOptions  # noqa: E402
from hlo_rewrite.pipeline import run_passes  # noqa: E402
from hlo_rewrite.printer import print_module  # noqa: E402
from hlo_rewrite.reader import (  # noqa: E402
    NOTED_OPCODES,  # noqa: E402
    Scanner,
    parse_module,
)
from hlo_rewrite.safety import check_output  # noqa: E402

FAILURES = ("unlocated", "internal", "crashed", "slow")
KINDS = ("accepted", "rejected", *FAILURES)

#: what an insertion puts in: HLO punctuation, and words and fragments that steer the scanner
TOKENS = [
    b"{", b"}", b"(", b")", b"[", b"]", b",", b"=", b"%", b":", b'"', b"\\", b"/*", b"*/", b"//",
    b"<=", b"T(", b"->", b"\n", b"\r\n", b" ", b"\t", b"\x00", b"\xff", b"\xc3", b"ROOT ", b"ENTRY ",
    b"HloModule ", b"parameter(0)", b"tuple()", b"token[]", b"f32[]", b"(f32[], token[])", b"s32[2,4]{1,0}",
    b"all-reduce(", b"reduce-scatter(", b"all-gather(", b"send(", b"recv(", b"send-done(", b"recv-done(",
    b"concatenate(", b"custom-call(", b", channel_id=1", b", replica_groups={{0,1},{2,3}}",
    b", replica_groups=[2,4]<=[8]", b", replica_groups=[2,4]<=[4,2]T(1,0)", b", dimensions={0}",
    b", to_apply=", b", backend_config={}", b', backend_config="x"', b", is_host_transfer=true",
    b', custom_call_target="AwsNeuronAllReduceAdd_f32"', b", control-predecessors={}", b"/*index=5*/",
    b"9999999999999999999999", b"-1", b"nan", b"inf",
]


class _Timeout(BaseException):
    """Raised by the alarm when one example runs too long."""


def _on_alarm(_signum, _frame):
    raise _Timeout()


@dataclass
class Outcome:
    kind: str
    seconds: float
    detail: str = ""


def reading(text: str, filename: str, *, blocks: bool) -> tuple:
    """What reading ``text`` gives, with or without the one-pass body check: the
    error, or per computation what passes see before and after building it."""
    Scanner.check_blocks = blocks
    try:
        module = parse_module(text, filename)
    except HloError as exc:
        return ("error", exc.message, exc.line, exc.column)
    finally:
        Scanner.check_blocks = True
    seen = []
    for comp in module.computations:
        hints = (sorted(comp.instruction_names()), sorted(comp.opcodes()), comp.find(NOTED_OPCODES))
        built = [(i.name, i.opcode, i.shape, i.operands, i.is_root, i.line, i.column, i.text, i.payload,
                  i.attrs_text, i.prefix) for i in comp.instructions]
        seen.append((comp.name, comp.head, comp.tail, hints, built))
    if print_module(module) != text:
        raise AssertionError("the module read does not print back as its input")
    return ("ok", seen)


def run_pipeline(text: str, filename: str, options: PassOptions) -> str:
    """What the command line does with one module (safe mode included); returns the output.

    The module is first read both with and without the one-pass body check, and both
    readings must agree."""
    one_pass, by_line = reading(text, filename, blocks=True), reading(text, filename, blocks=False)
    if one_pass != by_line:
        raise HloInternalError(f"the one-pass body check read {str(one_pass)[:300]} but the "
                               f"line-by-line reading {str(by_line)[:300]}", filename=filename, line=1)
    module = parse_module(text, filename)
    reports = run_passes(module, DEFAULT_PIPELINE, options)
    out = print_module(module)
    check_output(out, DEFAULT_PIPELINE, options, filename)
    if not any(r.rewritten for r in reports) and out != text:
        raise AssertionError("no pass rewrote anything, yet the output differs from the input")
    return out


def check_one(data: bytes, filename: str = "fuzz.hlo", *, all_computations: bool = False,
              time_limit: float = 10.0) -> Outcome:
    """Run one input through decode + pipeline under an alarm; classify what happened."""
    options = PassOptions(all_computations=all_computations)
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit)
    start = time.perf_counter()
    try:
        try:
            run_pipeline(decode(data, filename), filename, options)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        kind, detail = "accepted", ""
    except _Timeout:
        kind, detail = "slow", f"stopped after {time_limit:g} s"
    except HloInternalError as exc:
        kind, detail = "internal", exc.render()
    except HloError as exc:
        if exc.filename and exc.line:
            kind, detail = "rejected", exc.message
        else:
            kind, detail = "unlocated", exc.render()
    except Exception:  # noqa: BLE001 - the point is to catch everything (RecursionError too)
        kind, detail = "crashed", traceback.format_exc()
    finally:
        signal.signal(signal.SIGALRM, old)
    return Outcome(kind, time.perf_counter() - start, detail)


# --------------------------------------------------------------------------- inputs


def corpus_dir() -> Path:
    env = os.environ.get("HLO_CORPUS")
    return Path(env) if env else REPO.parent / "shared" / "corpus"


def seed_files(max_size: int) -> list[Path]:
    """The modules mutations start from."""
    files: list[Path] = []
    corpus = corpus_dir()
    if corpus.is_dir():
        files += [p for p in sorted(corpus.rglob("*.hlo")) if p.stat().st_size <= max_size]
    files += sorted((REPO / "examples").glob("*.hlo"))
    files += [p for p in sorted((REPO / "tests" / "golden").rglob("*.hlo")) if not p.name.endswith(".expected.hlo")]
    return files


# --------------------------------------------------------------------------- mutations


def _flip(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    b = data[i] ^ (1 << rng.randrange(8)) if rng.random() < 0.5 else rng.randrange(256)
    return data[:i] + bytes([b]) + data[i + 1 :]


def _delete(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    i = rng.randrange(len(data))
    return data[:i] + data[i + rng.randint(1, 24) :]


def _insert(rng: random.Random, data: bytes) -> bytes:
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(TOKENS) + data[i:]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _dup_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    if not lines:
        return data
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return b"".join(lines)


def _swap_lines(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    if len(lines) < 2:
        return data
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


def _drop_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    if not lines:
        return data
    del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


MUTATIONS = {
    "flip": _flip,
    "delete": _delete,
    "insert": _insert,
    "dup-line": _dup_line,
    "swap-lines": _swap_lines,
    "drop-line": _drop_line,
    "truncate": _truncate,
}
#: truncation destroys most of a module: make it rarer than the local edits
WEIGHTS = {"flip": 4, "delete": 3, "insert": 6, "dup-line": 2, "swap-lines": 2, "drop-line": 2, "truncate": 1}


def mutate(rng: random.Random, data: bytes) -> tuple[bytes, list[str]]:
    names = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()), k=rng.randint(1, 3))
    for name in names:
        data = MUTATIONS[name](rng, data)
    return data, names


# --------------------------------------------------------------------------- driver


def fuzz(count: int, seed: int, time_limit: float, max_seconds: float | None, max_size: int,
         save: Path | None, quiet: bool) -> tuple[Counter, int, float]:
    files = seed_files(max_size)
    if not files:
        raise SystemExit("no input modules found")
    sources = [(p, p.read_bytes()) for p in files]
    counts: Counter = Counter({k: 0 for k in KINDS})
    rng = random.Random(seed)
    start = time.perf_counter()
    done = 0
    shown = 0
    for index in range(count):
        if max_seconds is not None and time.perf_counter() - start > max_seconds:
            break
        path, original = rng.choice(sources)
        data, names = mutate(rng, original)
        all_comps = rng.random() < 0.5
        outcome = check_one(data, path.name, all_computations=all_comps, time_limit=time_limit)
        counts[outcome.kind] += 1
        done += 1
        if outcome.kind in FAILURES:
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                (save / f"{outcome.kind}-{index}.hlo").write_bytes(data)
            if shown < 20:
                shown += 1
                print(f"[{index}] {outcome.kind}: {path} mutated by {'+'.join(names)}"
                      f"{' (all computations)' if all_comps else ''} in {outcome.seconds:.2f} s\n"
                      f"{outcome.detail.rstrip()}\n", file=sys.stderr)
        if not quiet and done % 5000 == 0:
            rate = done / (time.perf_counter() - start)
            print(f"{done} examples, {rate:.0f}/s: " + ", ".join(f"{k} {counts[k]}" for k in KINDS), file=sys.stderr)
    return counts, done, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=1000, help="number of mutated inputs (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--time-limit", type=float, default=10.0,
                        help="seconds one input may take before it counts as a hang (default 10)")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="stop after this many seconds in all, reporting how many inputs ran")
    parser.add_argument("--max-size", type=int, default=100_000,
                        help="largest corpus file (bytes) to start from (default 100000)")
    parser.add_argument("--save", type=Path, default=None, help="write failing inputs to this directory")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    counts, done, seconds = fuzz(args.count, args.seed, args.time_limit, args.max_seconds, args.max_size,
                                 args.save, args.quiet)
    print(f"{done} inputs in {seconds:.1f} s ({done / max(seconds, 1e-9):.0f}/s), seed {args.seed}: "
          + ", ".join(f"{k} {counts[k]}" for k in KINDS))
    return 1 if any(counts[k] for k in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
