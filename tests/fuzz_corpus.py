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

With ``--xla``, a module both parsers read that the passes (or the check of their output) then
refuse counts as ``passes-refuse``: not a failure (a pass may refuse what a parser reads), but
saved and shown, since a reading that misses a layout can first show there.

The exit status is 1 when any failure was seen, 0 otherwise. Failing inputs are written to
``--save DIR`` (if given) as ``<kind>-<index>.hlo`` to reproduce them with ``hlo-rewrite``.
Run from the repository root: ``python tests/fuzz_corpus.py --count 100000``.

``--files PATH...`` judges each module of the files given (a directory: its files) as it is,
with no mutation: a file of XLA's tests may hold several modules, with a ``// -----`` line
between them. With ``--xla`` (and ``--strict``), against XLA's parser: the way to check a
directory of XLA's own test modules, or of one's dumps.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(REPO / "tests") not in sys.path:  # xla_oracle, for --xla
    sys.path.insert(1, str(REPO / "tests"))

from hlo_rewrite.errors import HloError, HloInternalError  # noqa: E402
from hlo_rewrite.io import decode  # noqa: E402
from hlo_rewrite.opcodes import OPCODE_NAMES, split_async_opcode  # noqa: E402
from hlo_rewrite.passes import DEFAULT_PIPELINE, PassOptions  # noqa: E402
from hlo_rewrite.pipeline import run_passes  # noqa: E402
from hlo_rewrite.printer import print_module  # noqa: E402
from hlo_rewrite.reader import (  # noqa: E402
    NOTED_OPCODES,  # noqa: E402
    Scanner,
    parse_module,
)
from hlo_rewrite.safety import check_output  # noqa: E402
from hlo_rewrite.strict import WRITTEN_AS_OPERAND  # noqa: E402
from hlo_rewrite.values import ORIGINAL_TUPLE_OPEN, ORIGINAL_TUPLE_UNOPENED  # noqa: E402

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


def reading(text: str, filename: str, *, blocks: bool, processes: int = 1, build_entry_for=()) -> tuple:
    """What reading ``text`` gives, with or without the one-pass body check (in up to
    ``processes`` processes, ENTRY built during the reading for ``build_entry_for``): the
    error, or per computation what passes see before and after building it."""
    Scanner.check_blocks = blocks
    try:
        module = parse_module(text, filename, processes=processes, build_entry_for=build_entry_for)
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
    seen.append(("(style)", repr(module.style)))
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
    env = os.environ.get("HLO_REWRITE_CORPUS") or os.environ.get("HLO_CORPUS")
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


# --- token-level mutations: the text cut into XLA's tokens (blanks and comments between them)

_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|/\*.*?\*/|//[^\n\r]*|%?[A-Za-z_][A-Za-z0-9_.\-]*|[0-9]+|->|<=|\S', re.S)
_OPCODE_CALL = re.compile(rb"(?<![A-Za-z0-9_.%\-])([a-z][a-z0-9\-]*)\(")
_LINE_BREAK = re.compile(rb"\r\n|\n")
#: comments to put between two tokens: some hold what a bracket or string walker must not count
#: (a brace, a bracket, a quote), and ``// `` comments out the rest of its line
COMMENTS = [b"/* c */", b"/*\n  x = f32[] negate(p)\n*/", b"/**/", b"/* ROOT */", b"/*index=3*/", b"/* } */",
            b"/* { */", b'/* " */', b"/* ) */", b"// ", b"// } "]


def _tokens(data: bytes) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(data)]


def _split_line(rng: random.Random, data: bytes) -> bytes:
    """A line break (and some indentation) between two tokens."""
    toks = _tokens(data)
    if len(toks) < 2:
        return data
    k = rng.randrange(1, len(toks))
    at = toks[k][0]
    return data[:at] + rng.choice([b"\n", b"\n    ", b"\r\n  ", b"\n\n"]) + data[at:]


def _join_lines(rng: random.Random, data: bytes) -> bytes:
    """Two lines made one (e.g. two instructions on one line)."""
    breaks = list(_LINE_BREAK.finditer(data))
    if not breaks:
        return data
    m = rng.choice(breaks)
    return data[: m.start()] + rng.choice([b" ", b"  ", b"\t"]) + data[m.end() :]


def _insert_comment(rng: random.Random, data: bytes) -> bytes:
    """A comment between two tokens, or a line comment at a line end."""
    if rng.random() < 0.3:
        breaks = list(_LINE_BREAK.finditer(data))
        if breaks:
            m = rng.choice(breaks)
            note = rng.choice([b" // note, ROOT x = f32[] negate(p)", b" // }", b' // "{'])
            return data[: m.start()] + note + data[m.start() :]
    toks = _tokens(data)
    if not toks:
        return data
    k = rng.randrange(len(toks) + 1)
    at = toks[k][0] if k < len(toks) else len(data)
    return data[:at] + rng.choice(COMMENTS) + data[at:]


def _swap_tokens(rng: random.Random, data: bytes) -> bytes:
    toks = _tokens(data)
    if len(toks) < 2:
        return data
    k = rng.randrange(len(toks) - 1)
    (a, b), (c, d) = toks[k], toks[k + 1]
    return data[:a] + data[c:d] + data[b:c] + data[a:b] + data[d:]


def _drop_token(rng: random.Random, data: bytes) -> bytes:
    toks = _tokens(data)
    if not toks:
        return data
    a, b = rng.choice(toks)
    return data[:a] + data[b:]


def _misspell_opcode(rng: random.Random, data: bytes) -> bytes:
    """An opcode spelled wrong: a letter dropped or doubled, a '-' dropped, or another opcode."""
    calls = [m for m in _OPCODE_CALL.finditer(data) if m.group(1).decode() in OPCODE_NAMES]
    if not calls:
        return data
    m = rng.choice(calls)
    word = m.group(1)
    how = rng.randrange(4)
    if how == 0 and len(word) > 1:
        i = rng.randrange(len(word))
        new = word[:i] + word[i + 1 :]
    elif how == 1:
        i = rng.randrange(len(word))
        new = word[: i + 1] + word[i:]
    elif how == 2 and b"-" in word:
        new = word.replace(b"-", b"", 1)
    else:
        new = rng.choice(sorted(OPCODE_NAMES)).encode()
    return data[: m.start(1)] + new + data[m.end(1) :]


#: an instruction's result shape (an array, or a tuple of arrays and tuples of arrays) before
#: its opcode
_RESULT_SHAPE = re.compile(rb"=[ \t]*((?:[a-z][a-z0-9]*\[[^\]\n]*\](?:\{[^{}\n]*\})?"
                           rb"|\((?:[^()\n]|\([^()\n]*\))*\)))[ \t]+[a-z][a-z0-9-]*\(")
#: a dimension's size in a shape, and an element type before its dimensions
_DIM_SIZE = re.compile(rb"(?<=[\[,])[0-9]+(?=[\],])")
_ELEMENT_TYPE = re.compile(rb"\b(?:pred|s8|s32|u8|u32|f16|bf16|f32|f64|c64)(?=\[)")


def _drop_shape(rng: random.Random, data: bytes) -> bytes:
    """An instruction's result shape left out: XLA's parser works it out, or refuses."""
    found = list(_RESULT_SHAPE.finditer(data))
    if not found:
        return data
    m = rng.choice(found)
    return data[: m.start(1)] + data[m.end(1) :]


def _change_shape(rng: random.Random, data: bytes) -> bytes:
    """A dimension's size or an element type changed in one shape."""
    if rng.random() < 0.5:
        found = list(_DIM_SIZE.finditer(data))
        new = str(rng.choice([0, 1, 2, 3, 7, 64])).encode()
    else:
        found = list(_ELEMENT_TYPE.finditer(data))
        new = rng.choice([b"pred", b"s32", b"u32", b"bf16", b"f32", b"c64"])
    if not found:
        return data
    m = rng.choice(found)
    return data[: m.start()] + new + data[m.end() :]


#: an attribute's value made of numbers: a list, a window, a padding, a number (not a shape's
#: dimensions, whose sizes ``change-shape`` changes)
_ATTR_NUMBERS = re.compile(rb"\b[a-z_]+=(\{[-0-9,x_ {}=a-z]*\}|-?[0-9][-0-9x_]*)")
_NUMBER = re.compile(rb"-?[0-9]+")


def _change_number(rng: random.Random, data: bytes) -> bytes:
    """One number in an attribute's value changed (``dimensions={0,1}``, ``index=2``, a window's
    size): XLA's parser reads most such values without a look at the instruction."""
    found = [(m.start(1) + n.start(), m.start(1) + n.end()) for m in _ATTR_NUMBERS.finditer(data)
             for n in _NUMBER.finditer(m.group(1))]
    if not found:
        return data
    a, b = rng.choice(found)
    new = rng.choice([n for n in (b"-1", b"0", b"1", b"2", b"3", b"5", b"8") if n != data[a:b]])
    return data[:a] + new + data[b:]


#: an attribute after a ',': a value in braces (two levels deep), a string, or one token
_ATTRIBUTE = re.compile(rb',[ \t]*[a-z_]+=(?:\{(?:[^{}\n]|\{(?:[^{}\n]|\{[^{}\n]*\})*\})*\}|"(?:[^"\\\n]|\\.)*"'
                        rb'|[^,\s(){}]+)')


def _drop_attribute(rng: random.Random, data: bytes) -> bytes:
    """One attribute left out (``, channel_id=1``, ``, dimensions={0}``): XLA's parser refuses a
    required one, and reads the instruction without an optional one."""
    found = list(_ATTRIBUTE.finditer(data))
    if not found:
        return data
    m = rng.choice(found)
    return data[: m.start()] + data[m.end() :]


def _bare_cr(rng: random.Random, data: bytes) -> bytes:
    """Line ends made a lone CR: one of them, or all."""
    if rng.random() < 0.5:
        return data.replace(b"\r\n", b"\r").replace(b"\n", b"\r")
    breaks = list(_LINE_BREAK.finditer(data))
    if not breaks:
        return data
    m = rng.choice(breaks)
    return data[: m.start()] + b"\r" + data[m.end() :]


MUTATIONS = {
    "flip": _flip,
    "delete": _delete,
    "insert": _insert,
    "dup-line": _dup_line,
    "swap-lines": _swap_lines,
    "drop-line": _drop_line,
    "truncate": _truncate,
    "split-line": _split_line,
    "join-lines": _join_lines,
    "insert-comment": _insert_comment,
    "swap-tokens": _swap_tokens,
    "drop-token": _drop_token,
    "misspell-opcode": _misspell_opcode,
    "drop-shape": _drop_shape,
    "change-shape": _change_shape,
    "change-number": _change_number,
    "drop-attribute": _drop_attribute,
    "bare-cr": _bare_cr,
}
#: truncation destroys most of a module: make it rarer than the local edits
WEIGHTS = {"flip": 4, "delete": 3, "insert": 6, "dup-line": 2, "swap-lines": 2, "drop-line": 2, "truncate": 1}
#: the token-level mutations (``--tokens``): edits XLA's lexer may well accept
TOKEN_WEIGHTS = {"split-line": 6, "join-lines": 4, "insert-comment": 5, "swap-tokens": 2, "drop-token": 2,
                 "misspell-opcode": 2, "drop-shape": 2, "change-shape": 2, "change-number": 2,
                 "drop-attribute": 2, "bare-cr": 1}


def mutate(rng: random.Random, data: bytes, weights: dict[str, int] | None = None) -> tuple[bytes, list[str]]:
    weights = WEIGHTS if weights is None else weights
    names = rng.choices(list(weights), weights=list(weights.values()), k=rng.randint(1, 3))
    for name in names:
        data = MUTATIONS[name](rng, data)
    return data, names


# --------------------------------------------------------------------------- XLA's reading

#: how our reading of a module compares with XLA's parser (``--xla``)
XLA_KINDS = ("same", "both-reject", "ours-only", "xla-bug", "renamed", "xla-abort", "xla-abort-ours-accept",
             "xla-older", "xla-drops", "xla-only", "misread", "strict-only", "passes-refuse")
#: the disagreements that are failures: XLA reads a module we reject, or both read it differently;
#: with ``--strict`` also strict mode reading a module XLA rejects ("strict-only")
XLA_FAILURES = ("xla-only", "misread", "strict-only")
#: what is saved and shown: the failures, the modules the passes refuse after both parsers read
#: them, and those we read where XLA's parser stops the process (strict mode should refuse them)
XLA_SHOWN = (*XLA_FAILURES, "passes-refuse", "xla-abort-ours-accept")
#: the one attribute strict mode accepts by decision although XLA rejects it (docs/decisions.md):
#: XLA is asked about the text without it
_COMMENT_RE = r"/\*(?:(?!\*/).)*\*/"  # one comment: it holds no "*/"
_UNSPECIFIED_API = re.compile(r",(?:\s|" + _COMMENT_RE + r")*api_version=(?:\s|" + _COMMENT_RE
                              + r")*API_VERSION_UNSPECIFIED", re.S)
#: our messages for modules XLA's parser accepts only through a flaw of its own (docs/decisions.md)
XLA_BUG_MESSAGES = ("expected an operand after ','", "is spelled like an element type",
                    "operand has a shape but no name",
                    # strict mode: a scalar for an array literal, and 64-bit integers as written
                    "expects a nested array of rank", "is out of range for literal's primitive type U64",
                    "is out of range for literal's primitive type S64",
                    # input_output_alias with the parameter number left out
                    "(<input_param>, <input_param_shape_index>): expected an integer, found ','",
                    # and output_to_operand_aliasing with the operand number left out (read as 0)
                    "(<operand>, <operand_shape_index>): expected an integer, found ','",
                    # a get-tuple-element of a tuple beyond its operands: XLA's parser reads past
                    # them, stopping the process on some such inputs and reading others, run to run
                    "is out of range for the tuple",
                    # likewise past a convolution's spatial dimensions, for a number beyond them
                    "spatial dimension numbered past its count",
                    # an instruction written as an operand that XLA notes a problem in, then drops
                    WRITTEN_AS_OPERAND,
                    "is written as an operand, and such an instruction takes no attributes",
                    # an original value's tuple left open or closed unopened: XLA reads the tuples
                    # as the shape has them, noting the missing ')' or '('
                    ORIGINAL_TUPLE_OPEN, ORIGINAL_TUPLE_UNOPENED,
                    # a sharding's device list shorter than its tile: XLA leaves the rest unset
                    # (a longer one breaks its heap)
                    " devices, the list names ")
#: our message for an operand that is not defined
_UNDEFINED_OPERAND = re.compile(r"^operand '([^']+)' of '[^']*' is not defined")
#: XLA's message for an opcode it does not know: one of the newest XLA's opcodes (the table's) that
#: the XLA in jaxlib is too old to know is "xla-older", not a disagreement
_XLA_UNKNOWN_OPCODE = re.compile(r"Unknown opcode: ([a-z0-9-]+)")
_XLA_HEADER = re.compile(r"(?:ENTRY )?%?(\S+) .*\{$")
_XLA_ROOT = re.compile(r"\s+ROOT %?(\S+) = ")


def our_skeleton(module) -> dict:
    """``{computation: ([(name, opcode, [operands])...], root name)}`` as we read it."""
    return {
        comp.name: ([(i.name, i.opcode, list(i.operands)) for i in comp.instructions], comp.root.name)
        for comp in module.computations
    }


def xla_skeleton(text: str) -> dict | None:
    """The same as XLA's parser reads it (jaxlib imported on first use), None when it rejects."""
    reading = xla_reading(text)
    return None if isinstance(reading, str) else {comp: v for comp, v in reading.items() if comp != ENTRY_KEY}


#: the key of a skeleton compared with XLA's under which the ENTRY computation's name stands,
#: as ``([], name)`` (no computation is named so)
ENTRY_KEY = ""


def xla_reading(text: str) -> dict | str:
    """The skeleton as XLA's parser reads it, with the ENTRY computation's name under
    :data:`ENTRY_KEY`, or its message when it rejects the text."""
    import xla_oracle

    try:
        instructions = xla_oracle.xla_skeleton(text)
        printed = xla_oracle.xla_parse(text).to_string()
    except xla_oracle.XlaRejected as exc:
        return str(exc)
    roots: dict[str, str] = {}
    comp = None
    entry = ""
    for line in printed.splitlines():
        m = _XLA_HEADER.match(line)
        if m is not None:
            comp = m.group(1)
            if line.startswith("ENTRY "):
                entry = comp
            continue
        m = _XLA_ROOT.match(line)
        if m is not None and comp is not None:
            roots[comp] = m.group(1)
    reading: dict = {name: (instrs, roots.get(name, "")) for name, instrs in instructions.items()}
    reading[ENTRY_KEY] = ([], entry)
    return reading


def _xla_worker(conn) -> None:  # pragma: no cover - runs in the worker process
    while True:
        text = conn.recv()
        conn.send(xla_reading(text))


class XlaReader:
    """XLA's parser in one worker process, started again if XLA aborts on an input (its
    parser stops the whole process on some malformed modules: a failed internal check)."""

    def __init__(self) -> None:
        self.process = None
        self.conn = None

    def _start(self) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_xla_worker, args=(child,), daemon=True)
        self.process.start()

    def read(self, text: str, timeout: float = 60.0) -> tuple[bool, dict | str | None]:
        """(False, None) when XLA's parser aborted the worker, else (True, its skeleton, or its
        message when it rejects the text)."""
        if self.process is None or not self.process.is_alive():
            self._start()
        assert self.conn is not None and self.process is not None
        self.conn.send(text)
        try:
            if self.conn.poll(timeout):
                return True, self.conn.recv()
        except (EOFError, OSError):
            pass
        self.process.kill()
        self.process.join()
        self.process = None
        return False, None

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
            self.process = None


def compare_with_xla(text: str, xla_reader: XlaReader | None = None, *, strict: bool = False) -> tuple[str, str]:
    """(kind, detail): how our reading of ``text`` compares with XLA's parser's (``strict``:
    ours in strict mode, where accepting what XLA rejects is a failure too)."""
    try:
        module = parse_module(text, "fuzz.hlo", strict=strict)
        ours = {**our_skeleton(module), ENTRY_KEY: ([], module.entry.name)}
        ours_error = None
    except HloError as exc:
        ours, ours_error = None, exc
    if strict:
        text = _UNSPECIFIED_API.sub("", text)
    if xla_reader is None:
        reading: dict | str | None = xla_reading(text)
    else:
        finished, reading = xla_reader.read(text)
        if not finished:
            return ("xla-abort", "") if ours is None else ("xla-abort-ours-accept", "")
    xla = None if isinstance(reading, str) else reading
    if xla is None and ours is not None:
        m = _XLA_UNKNOWN_OPCODE.search(str(reading))
        if m is not None and m.group(1) in OPCODE_NAMES:
            return "xla-older", f"this XLA does not know the opcode {m.group(1)!r}"
    if ours is None and xla is None:
        return "both-reject", ""
    if ours is None:
        assert ours_error is not None
        if any(m in ours_error.message for m in XLA_BUG_MESSAGES):
            return "xla-bug", ours_error.message
        m = _UNDEFINED_OPERAND.search(ours_error.message)
        if m is not None and m.group(1) in OPCODE_NAMES:
            # XLA's parser tries such a word as an instruction written as an operand, then as a
            # name, notes both failures, and drops the operand
            return "xla-bug", ours_error.message
        return "xla-only", ours_error.render()
    if xla is None:
        return ("strict-only", "strict mode reads a module XLA rejects") if strict else ("ours-only", "")
    if ours == xla:
        return "same", ""
    if _xla_dropped_written_operands(ours, xla):
        return "xla-bug", "XLA's parser dropped an instruction written as an operand"
    built = _as_xla_builds(ours)
    if built != ours:
        kind, detail = _compare_skeletons(built, xla)
        return ("xla-drops", "XLA's parser dropped operands past a dot's second or a rng-bit-generator's "
                "first") if kind in ("same", "renamed") else (kind, detail)
    return _compare_skeletons(ours, xla)


def _compare_skeletons(ours: dict, xla: dict) -> tuple[str, str]:
    """(kind, detail) for two skeletons that differ as they are: the same but for XLA's short
    forms of async ops or its renaming of repeated names, or read differently."""
    ours, xla = _without_async_sugar(ours), _without_async_sugar(xla, ours)
    if _made_collective_starts(ours, xla):
        ours, xla = _as_async_ops(ours), _as_async_ops(xla, ours)
    if ours == xla:
        return "same", ""
    # XLA's name uniquer renames names repeated across computations, and a name whose numeric
    # suffix another name's number takes (``p.0`` after ``p``, which holds number 0, is ``p.1``),
    # computations' names too (``f`` after ``f.0`` is ``f.2``): the same computations in order
    ours, xla = _unnamed(ours), _unnamed(xla)
    if ours == xla or _in_order(ours) == _in_order(xla):
        return "renamed", ""
    diff = [c for c in sorted(set(ours) | set(xla)) if ours.get(c) != xla.get(c)]
    if diff == [ENTRY_KEY]:
        return "misread", f"ENTRY is {ours[ENTRY_KEY][1]!r} to us, {xla[ENTRY_KEY][1]!r} to XLA"
    return "misread", f"computations read differently: {diff[:3]}; ours {ours.get(diff[0])!r:.300} xla {xla.get(diff[0])!r:.300}"


def _in_order(skeleton: dict) -> tuple[list, int]:
    """The computations of a skeleton in order, without their names, and which one is ENTRY."""
    names = [k for k in skeleton if k != ENTRY_KEY]
    entry = skeleton.get(ENTRY_KEY, ([], ""))[1]
    return [skeleton[k] for k in names], names.index(entry) if entry in names else -1


def _unnamed(skeleton: dict) -> dict:
    """A skeleton without instruction names: each operand and root by its place in its computation."""
    out = {}
    for comp, (instrs, root) in skeleton.items():
        at = {i[0]: k for k, i in enumerate(instrs)}
        out[comp] = ([(i[1], [at.get(o, o) for o in i[2]]) for i in instrs], at.get(root, root))
    return out


#: opcodes XLA's parser builds from their first operands, dropping the rest without a word
#: (docs/decisions.md): how many it keeps
_XLA_KEEPS = {"dot": 2, "rng-bit-generator": 1}


def _xla_dropped_written_operands(ours: dict, xla: dict) -> bool:
    """Whether XLA's reading is ours without some instructions written as operands (``.anon``)
    and their uses: XLA's parser notes a problem in such an instruction, then drops it."""
    xla_names = {i[0] for instrs, _ in xla.values() for i in instrs}
    dropped = {i[0] for instrs, _ in ours.values() for i in instrs if ".anon" in i[0] and i[0] not in xla_names}
    if not dropped:
        return False
    kept = {comp: ([(n, op, [o for o in operands if o not in dropped], *rest)
                    for n, op, operands, *rest in instrs if n not in dropped], root)
            for comp, (instrs, root) in ours.items()}
    return kept == xla


def _as_xla_builds(skeleton: dict) -> dict:
    """Our skeleton with the operands XLA's parser drops (:data:`_XLA_KEEPS`) dropped too."""
    return {
        comp: ([(n, op, operands[:_XLA_KEEPS[op]] if op in _XLA_KEEPS else operands, *rest)
                for n, op, operands, *rest in instrs], root)
        for comp, (instrs, root) in skeleton.items()
    }


#: the collectives' own async opcodes, as the async ones they stand for
_COLLECTIVE_STARTS = {f"{op}-{part}": f"async-{part}" for op in ("all-gather", "all-reduce", "collective-permute")
                      for part in ("start", "done")}


def _made_collective_starts(ours: dict, xla: dict) -> bool:
    """Whether ours has an async-start where XLA's reading has none but a collective's own start
    (``all-gather-start``)."""
    def opcodes(skeleton: dict) -> set[str]:
        return {i[1] for instrs, _ in skeleton.values() for i in instrs}

    theirs = opcodes(xla)
    return "async-start" in opcodes(ours) and "async-start" not in theirs and not theirs.isdisjoint(_COLLECTIVE_STARTS)


def _as_async_ops(skeleton: dict, ours: dict | None = None) -> dict:
    """A skeleton whose collectives' own starts and dones are async ones (``ours``: given for
    XLA's side): XLA's parser makes an async-start whose callee is one such collective the
    collective's start, and prints no callee, whose unprinted root then counts as ours."""
    result = {}
    for comp, (instrs, root) in skeleton.items():
        if ours is not None and comp not in ours:
            continue
        undone = [(i[0], _COLLECTIVE_STARTS.get(i[1], i[1]), *i[2:]) for i in instrs]
        result[comp] = (undone, ours[comp][1] if ours is not None and root == "" else root)
    return result


def _without_async_sugar(skeleton: dict, ours: dict | None = None) -> dict:
    """A skeleton with XLA's short forms of async ops undone, for comparing (``ours``: given for
    XLA's side). XLA prints an async-start whose callee is one instruction as that opcode with
    ``-start`` (``custom-call-start``), and so -update and -done, with the callee inline, so its
    root is not printed; reading such a short form, it makes the callee itself (``async_wrapped``).
    Where either side has a short form, both sides' opcodes become ``async-start``, ``-update``
    and ``-done``, and on XLA's side a callee's unprinted root counts as ours and computations
    only XLA has are left out."""
    def short_forms(sk: dict) -> bool:
        return any(split_async_opcode(i[1]) for instrs, _ in sk.values() for i in instrs)

    if not short_forms(skeleton) and not (ours is not None and short_forms(ours)):
        return skeleton
    result = {}
    for comp, (instrs, root) in skeleton.items():
        if ours is not None and comp not in ours:
            continue
        undone = [(i[0], (split_async_opcode(i[1]) or (i[1],))[0], *i[2:]) for i in instrs]
        result[comp] = (undone, ours[comp][1] if ours is not None and root == "" else root)
    return result


# --------------------------------------------------------------------------- driver


#: the line between two modules of one file in XLA's test files (its tools read each apart)
_MODULE_BREAK = re.compile(rb"(?m)^// -----.*\n?")


def modules_of(files: list[Path]) -> Iterator[tuple[Path, bytes]]:
    """Each module of each file as it is: a file of XLA's tests may hold several, one after
    another with a ``// -----`` line between them (the part of a file before or after every
    module, only comments and blanks, is left out). A file of several gives ``NAME#K`` paths."""
    for path in files:
        data = path.read_bytes()
        parts = _MODULE_BREAK.split(data)
        if len(parts) == 1:
            yield path, data
            continue
        for k, part in enumerate(parts):
            if re.search(rb"(?m)^\s*[^\s/]", part):
                yield path.with_name(f"{path.name}#{k}"), part


def fuzz(count: int, seed: int, time_limit: float, max_seconds: float | None, max_size: int,
         save: Path | None, quiet: bool, *, tokens: bool = False, xla: bool = False,
         xla_counts: Counter | None = None, strict: bool = False,
         given: list[Path] | None = None) -> tuple[Counter, int, float]:
    """``count`` mutated inputs; or, with ``given`` (files), each module of those files as it is."""
    pieces = None if given is None else list(modules_of(given))
    files = seed_files(max_size) if given is None else given
    if not files:
        raise SystemExit("no input modules found")
    sources = [(p, p.read_bytes()) for p in files] if pieces is None else []
    counts: Counter = Counter({k: 0 for k in KINDS})
    rng = random.Random(seed)
    start = time.perf_counter()
    done = 0
    shown = 0
    xla_reader = XlaReader() if xla else None
    for index in range(count if pieces is None else len(pieces)):
        if max_seconds is not None and time.perf_counter() - start > max_seconds:
            break
        if pieces is None:
            path, original = rng.choice(sources)
            data, names = mutate(rng, original, TOKEN_WEIGHTS if tokens else None)
            all_comps = rng.random() < 0.5
        else:
            path, data = pieces[index]
            names, all_comps = ["none"], False
        how = f"mutated by {'+'.join(names)}" if pieces is None else "as it is"
        outcome = check_one(data, path.name, all_computations=all_comps, time_limit=time_limit)
        if xla and xla_counts is not None and outcome.kind in ("accepted", "rejected"):
            text = data.decode("utf-8", errors="replace")
            kind, detail = compare_with_xla(text, xla_reader, strict=strict)
            if outcome.kind == "rejected" and kind in ("same", "renamed"):
                # both read the module, and the passes (or the check of their output) refused it:
                # not a failure (a pass may refuse what the parser reads), saved to be looked at
                kind, detail = "passes-refuse", outcome.detail
            xla_counts[kind] += 1
            xla_counts[f"{kind} by {'+'.join(sorted(set(names)))}"] += 1
            if kind in XLA_SHOWN:
                if save is not None:
                    save.mkdir(parents=True, exist_ok=True)
                    (save / f"{kind}-{index}.hlo").write_bytes(data)
                if shown < 20:
                    shown += 1
                    print(f"[{index}] {kind}: {path} {how}\n{detail.rstrip()}\n",
                          file=sys.stderr)
        counts[outcome.kind] += 1
        done += 1
        if outcome.kind in FAILURES:
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                (save / f"{outcome.kind}-{index}.hlo").write_bytes(data)
            if shown < 20:
                shown += 1
                print(f"[{index}] {outcome.kind}: {path} {how}"
                      f"{' (all computations)' if all_comps else ''} in {outcome.seconds:.2f} s\n"
                      f"{outcome.detail.rstrip()}\n", file=sys.stderr)
        if not quiet and done % 5000 == 0:
            rate = done / (time.perf_counter() - start)
            print(f"{done} examples, {rate:.0f}/s: " + ", ".join(f"{k} {counts[k]}" for k in KINDS), file=sys.stderr)
    if xla_reader is not None:
        xla_reader.close()
    return counts, done, time.perf_counter() - start


def given_files(paths: list[Path]) -> list[Path]:
    """The files named, a directory's files in order of name (not those whose name starts with a dot)."""
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(q for q in p.iterdir() if q.is_file() and not q.name.startswith(".")) if p.is_dir() else [p])
    return out


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
    parser.add_argument("--tokens", action="store_true",
                        help="token-level mutations (split a line, join lines, insert a comment, swap or drop a "
                             "token, misspell an opcode, lone CR line ends) instead of byte-level ones")
    parser.add_argument("--xla", action="store_true",
                        help="also read every input with XLA's parser (jaxlib) and report every disagreement by kind")
    parser.add_argument("--files", type=Path, nargs="+", default=None, metavar="PATH",
                        help="instead of mutating, judge each module of these files (a directory: its files) as it is; "
                             "with --xla, against XLA's parser")
    parser.add_argument("--strict", action="store_true",
                        help="with --xla, read in strict mode, where reading a module XLA rejects is a failure too")
    args = parser.parse_args(argv)
    if args.xla:
        try:
            import jaxlib  # noqa: F401
        except ImportError:
            print("jaxlib is not installed: no comparison with XLA's parser", file=sys.stderr)
            args.xla = False
    xla_counts: Counter = Counter()
    counts, done, seconds = fuzz(args.count, args.seed, args.time_limit, args.max_seconds, args.max_size,
                                 args.save, args.quiet, tokens=args.tokens, xla=args.xla, xla_counts=xla_counts,
                                 strict=args.strict, given=None if args.files is None else given_files(args.files))
    print(f"{done} inputs in {seconds:.1f} s ({done / max(seconds, 1e-9):.0f}/s), seed {args.seed}: "
          + ", ".join(f"{k} {counts[k]}" for k in KINDS))
    if args.xla:
        print("against XLA's parser: " + ", ".join(f"{k} {xla_counts[k]}" for k in XLA_KINDS))
        for key in sorted(k for k in xla_counts if " by " in k and k.split(" by ")[0] in (*XLA_SHOWN, "xla-bug")):
            print(f"  {key}: {xla_counts[key]}")
    failed = any(counts[k] for k in FAILURES) or any(xla_counts[k] for k in XLA_FAILURES)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
