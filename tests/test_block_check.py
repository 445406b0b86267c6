"""The one-pass check of a computation body agrees with the line-by-line reading.

A computation that is not built at once (any, ENTRY included, outside strict mode) is
checked in one pass over its text when every line of its body is one plain instruction
(``Scanner._check_block``; a long body a few thousand lines at a time); otherwise it is
read line by line. Both must accept
the same modules, reject the same ones with the same located error, and leave
the same names, opcodes and noted instructions for the passes.
"""

from __future__ import annotations

import random

import fuzz_corpus
import pytest
from conftest import CORPUS, corpus_files, read_exact

from hlo_rewrite import HloError, parse_module, print_module


def _outcome(text: str, blocks: bool) -> tuple:
    """What reading ``text`` gives: the error, or per computation what the passes see."""
    return fuzz_corpus.reading(text, "m.hlo", blocks=blocks)


def _blocks_used(text: str) -> int:
    module = parse_module(text)
    return sum(1 for c in module.computations if c._lazy is not None and c._lazy.block is not None)


COMPLETE = []
for _path in corpus_files():
    try:
        parse_module(read_exact(_path))
    except HloError:
        continue
    COMPLETE.append(_path)


@pytest.mark.parametrize("path", COMPLETE, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_reads_the_same_both_ways(path):
    text = read_exact(path)
    assert _outcome(text, True) == _outcome(text, False)


def test_xla_printed_modules_use_the_one_pass_check():
    path = CORPUS / "xla-benchmarks" / "hlo_llama3_8b_cp_bf16_1x4.hlo"
    if not path.exists():
        pytest.skip("corpus not found")
    module = parse_module(read_exact(path))
    lazy = [c for c in module.computations if c._lazy is not None]
    assert sum(1 for c in lazy if c._lazy is not None and c._lazy.block is not None) >= 0.8 * len(lazy)


BODY = """HloModule m

%region (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%fused (p0: f32[8], p1: f32[8]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0)
  %p1 = f32[8]{0} parameter(1)
  %c = f32[] constant(0)
  %m = f32[8]{0} multiply(%p0, %p1), metadata={op_name="jit(f)/mul" source_line=3}
  %r = f32[] reduce(%m, %c), dimensions={0}, to_apply=%region
  ROOT %o = f32[8]{0} broadcast(%r), dimensions={}
}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  ROOT %f = f32[8]{0} fusion(%x, %x), kind=kLoop, calls=%fused
}
"""


def test_the_example_body_is_checked_in_one_pass():
    assert _blocks_used(BODY) == 3  # ENTRY too: it is built when a pass first asks


def _long_body(lines: int) -> str:
    """A module whose ENTRY is a chain of ``lines`` adds: longer than one check's stretch."""
    body = ["  %p = f32[8]{0} parameter(0)", "  %a0 = f32[8]{0} add(%p, %p)"]
    body += [f"  %a{k} = f32[8]{{0}} add(%a{k - 1}, /*index=1*/%p)" for k in range(1, lines - 2)]
    body.append(f"  ROOT %r = f32[8]{{0}} negate(%a{lines - 3})")
    return "HloModule m\n\nENTRY %main (p: f32[8]) -> f32[8] {\n" + "\n".join(body) + "\n}\n"


def test_a_long_body_is_checked_in_stretches_as_one():
    from hlo_rewrite.reader.patterns import BLOCK_MAX_LINES

    text = _long_body(2 * BLOCK_MAX_LINES + 100)
    assert _blocks_used(text) == 1
    assert _outcome(text, True) == _outcome(text, False)
    module = parse_module(text)
    assert module.entry.get(f"a{BLOCK_MAX_LINES + 7}").operands == [f"a{BLOCK_MAX_LINES + 6}", "p"]


@pytest.mark.parametrize("old, new, message", [
    # an operand defined in a later stretch, a name defined again in a later stretch
    ("add(%a9, /*index=1*/%p)", "add(%a9, /*index=1*/%a9000)", "used before its definition"),
    ("%a9000 = f32[8]{0} add(%a8999", "%a10 = f32[8]{0} add(%a8999", "defined twice"),
    ("%a9000 = f32[8]{0} add(%a8999, /*index=1*/%p)", "%a9000 = f32[8]{0} add(%a8999, /*index=1*/%q)",
     "operand 'q' of 'a9000' is not defined"),
    ("%a5001 = f32[8]{0} add(", "ROOT %a5001 = f32[8]{0} add(", "a second ROOT"),
])
def test_a_flaw_in_a_later_stretch_of_a_long_body_is_located_as_line_by_line(old, new, message):
    text = _long_body(12000)
    assert old in text
    text = text.replace(old, new, 1)
    both = _outcome(text, True)
    assert both == _outcome(text, False)
    assert both[0] == "error" and message in both[1]


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("multiply(%p0, %p1)", "multiply(%p0, %q)", "operand 'q' of 'm' is not defined"),
        ("multiply(%p0, %p1)", "multiply(%p0, %r)", "used before its definition"),
        ("multiply(%p0, %p1)", "multiply(%p0, %m)", "used before its definition"),
        ("%c = f32[] constant(0)", "%m = f32[] constant(0)", "defined twice"),
        ("%c = f32[] constant(0)", "ROOT %c = f32[] constant(0)", "a second ROOT"),
        ("%c = f32[] constant(0)", "%c = f33[] constant(0)", ""),
        ("to_apply=%region", "to_apply=%nowhere", "calls computation 'nowhere', which is not defined"),
        ("source_line=3}", "source_line=3", "expected metadata"),
        ("dimensions={0}, to_apply", "dimensions={0, to_apply", ""),
        ("multiply(%p0, %p1)", "multiply(%p0, , %p1)", ""),
        ("multiply(%p0, %p1)", "multiply(%p0 %p1)", ""),
        ("multiply(%p0, %p1)", "multiply(%p0, %p1), control-predecessors={%zz}", "control predecessor 'zz'"),
        ("source_line=3}", "source_line=3} /* open", ""),
        ("%c = f32[] constant(0)", "%c = f32[] constantconstant(0)(0)", ""),
        ("%c = f32[] constant(0)", "%c = f3constant(0)2[] constant(0)", ""),
        ("%p1 = f32[8]{0} parameter(1)", "%p1 = f32[8]{0} xparameter(1)", ""),
        # an attribute whose value never comes (a body's last line ends in '=')
        ("ROOT %o = f32[8]{0} broadcast(%r), dimensions={}", "ROOT %o = f32[8]{0} broadcast(%r), dimensions=",
         "expected a value for attribute 'dimensions'"),
    ],
)
def test_a_flaw_in_a_body_is_found_and_located_as_line_by_line(old, new, message):
    text = BODY.replace(old, new, 1)
    assert text != BODY
    both = _outcome(text, True)
    assert both == _outcome(text, False)
    assert both[0] == "error" and message in both[1]


def test_brackets_that_balance_only_across_lines_are_not_read_as_two_instructions():
    """`backend_config={` on one line closed on the next, where the next line looks
    like an instruction of its own: one instruction whose value spans both lines, as
    XLA's parser reads it, never two."""
    text = BODY.replace(
        "  %c = f32[] constant(0)\n",
        "  %c = f32[] constant(0), backend_config={\n  %d = f32[] add(%c, %c)}\n",
    )
    outcome = _outcome(text, True)
    assert outcome == _outcome(text, False)
    assert outcome[0] == "ok"
    module = parse_module(text)
    comp = next(c for c in module.computations if "c" in c.instruction_names())
    assert "d" not in comp.instruction_names()
    # (JSON text to XLA's lexer: its line end is the value's own)
    assert comp.get("c").attr_text("backend_config") == "{\n  %d = f32[] add(%c, %c)}"
    assert print_module(module) == text


def test_callee_words_on_an_opcode_that_calls_nothing_are_kept_as_written():
    """Opcodes that never call a computation keep such an attribute verbatim,
    unchecked, like any attribute they cannot have (docs/decisions.md)."""
    text = BODY.replace("multiply(%p0, %p1)", "multiply(%p0, %p1), to_apply=%nowhere")
    assert _outcome(text, True) == _outcome(text, False)
    assert print_module(parse_module(text)) == text


@pytest.mark.parametrize("old, new", [
    ("%c = f32[] constant(0)", "ROOT = f32[] constant(0)"),
    ("%c = f32[] constant(0)", "ROOT %ROOT = f32[] constant(0)"),
    ("%c = f32[] constant(0)", "%c = f32[]  constant(0)"),
])
def test_odd_but_possible_spellings_read_the_same_both_ways(old, new):
    text = BODY.replace(old, new, 1)
    assert _outcome(text, True) == _outcome(text, False)


def test_root_in_a_string_falls_back_and_still_reads():
    text = BODY.replace('op_name="jit(f)/mul"', 'op_name="ROOT"')
    assert _outcome(text, True) == _outcome(text, False)
    assert _blocks_used(text) == 2  # 'fused' was read line by line


def test_index_comments_in_operand_lists():
    text = BODY.replace("fusion(%x, %x)", "fusion(%x, /*index=1*/%x)").replace(
        "multiply(%p0, %p1)", "multiply(%p0, /*index=1*/%p1)"
    )
    assert _outcome(text, True) == _outcome(text, False)
    assert _blocks_used(text) == 3
    assert parse_module(text).computation("fused").get("m").operands == ["p0", "p1"]


def test_names_of_a_block_are_read_again_from_the_text():
    module = parse_module(BODY)
    fused = module.computation("fused")
    assert fused is not None and fused._lazy is not None and fused._lazy.block is not None
    assert set(fused.instruction_names()) == {"p0", "p1", "c", "m", "r", "o"}
    assert module.fresh_name("m") == "m.1"


#: what a mutation inserts into a line: punctuation, and words that steer the reading
INSERTS = ["{", "}", "(", ")", "[", "]", '"', "/*", "*/", ", ", "%", "=", " ", "parameter(0)", "constant(1)",
           "ROOT ", "f32[]", "f32[8]{0} ", "%p0", "add(", "/*index=1*/", "-", ".", "0"]


def _mutate(text: str, rng: random.Random) -> str:
    """One or two line-level edits, the kind that stress the body check."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 2)):
        i = rng.randrange(len(lines))
        line = lines[i]
        kind = rng.randrange(10)
        if kind == 0 and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], line
        elif kind == 1:
            del lines[i]
        elif kind == 2:
            lines.insert(i, line)
        elif kind == 3 and line:
            j = rng.randrange(len(line))
            lines[i] = line[:j] + rng.choice(INSERTS) + line[j:]
        elif kind == 4 and i + 1 < len(lines):
            lines[i : i + 2] = [line + " " + lines[i + 1]]
        elif kind == 5 and line:
            j = rng.randrange(len(line))
            lines[i : i + 1] = [line[:j], line[j:]]
        elif kind == 6:
            lines[i] = line.replace("  %", "  ROOT %", 1) if "ROOT" not in line else line.replace("ROOT ", "", 1)
        elif kind == 7 and "=" in line:
            lines[i] = line + rng.choice([", to_apply=%nowhere", ", control-predecessors={%p0}", " // x {", ", b={}"])
        elif kind == 8:
            lines[i] = line.replace("f32", rng.choice(["f33", "bf16", "(f32"]), 1)
        else:
            lines[i] = line.replace("%", "", 1)
    return "\n".join(lines)


def _seeds() -> list[str]:
    texts = [BODY]
    for name in ("jax/rs_concat/concat-rs-mean_outputs-divided_scatter0_concat1.pre.hlo",
                 "jax/allreduce/all-reduce_variadic-tuple_psum-of-4-mixed-shapes.pre.hlo"):
        path = CORPUS / name
        if path.exists():
            texts.append(read_exact(path))
    return texts


def test_mutated_modules_read_the_same_both_ways():
    rng = random.Random(20261129)
    seeds = _seeds()
    kinds = {"ok": 0, "error": 0}
    for _ in range(3000):
        text = _mutate(rng.choice(seeds), rng)
        outcome = _outcome(text, True)
        assert outcome == _outcome(text, False), text
        kinds[outcome[0]] += 1
    assert kinds["ok"] > 100 and kinds["error"] > 100  # both kinds really exercised


def _chain_module(length: int, shape: str = "f32[8]{0}") -> str:
    body = [f"  %p = {shape} parameter(0)"]
    body += [f"  %a{k} = {shape} negate(%{'p' if k == 0 else f'a{k - 1}'})" for k in range(length)]
    body.append(f"  ROOT %r = ({shape}, {shape}) tuple(%p, %a{length - 1})")
    return (
        "HloModule m\n\n%body (p: f32[8]) -> (f32[8], f32[8]) {\n" + "\n".join(body) + "\n}\n\n"
        "ENTRY %main (x: f32[8]) -> (f32[8], f32[8]) {\n  %x = f32[8]{0} parameter(0)\n"
        "  ROOT %c = (f32[8]{0}, f32[8]{0}) call(%x), to_apply=%body\n}\n"
    )


def test_tuple_shapes_are_read_in_one_pass_and_built_the_same():
    text = _chain_module(50)
    assert _blocks_used(text) == 2  # the body and ENTRY
    assert _outcome(text, True) == _outcome(text, False)
    body = parse_module(text).computation("body")
    assert body is not None and body.root.shape == "(f32[8]{0}, f32[8]{0})"


@pytest.mark.parametrize("old, new", [
    ("ROOT %r = (f32[8]{0}, f32[8]{0})", 'ROOT %r = (f32[8]{0}", f32[8]{0})'),
    ("ROOT %r = (f32[8]{0}, f32[8]{0})", 'ROOT %r = (f32[8]{"0}, f32[8]{0})'),
    ("%a0 = f32[8]{0}", '%a0 = (f32[8]{0}, "f32[]) tuple(%p), x="a"\n  %a00 = f32[8]{0}'),
])
def test_a_quote_in_a_tuple_shape_reads_as_line_by_line(old, new):
    text = _chain_module(5).replace(old, new, 1)
    assert text != _chain_module(5)
    outcome = _outcome(text, True)
    assert outcome == _outcome(text, False)
    assert outcome[0] == "error"


def test_a_very_long_body_with_a_tuple_root_is_checked_in_one_pass():
    from hlo_rewrite.reader.patterns import BLOCK_MAX_LINES as _BLOCK_MAX_LINES

    text = _chain_module(_BLOCK_MAX_LINES + 10)
    assert _blocks_used(text) == 2
    assert _outcome(text, True) == _outcome(text, False)


def test_passes_do_not_build_computations_they_have_nothing_to_do_in():
    from hlo_rewrite.passes import PassOptions
    from hlo_rewrite.pipeline import run_passes

    module = parse_module(_chain_module(20))
    run_passes(module, ["fuse-reduce-scatter", "fuse-send-recv"], PassOptions(all_computations=True))
    body = module.computation("body")
    assert body is not None and body._lazy is not None


def test_crlf_line_endings_read_the_same_both_ways():
    text = BODY.replace("\n", "\r\n")
    assert _blocks_used(text) == 3
    assert _outcome(text, True) == _outcome(text, False)
