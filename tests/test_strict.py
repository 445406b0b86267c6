"""Strict mode rejects what XLA's parser rejects, each time with the file, line, column and why.

Cases are built from the checks in XLA's parser (``xla/hlo/parser/hlo_parser.cc``); the same
texts go through XLA itself in ``test_strict_xla.py`` where jaxlib is installed.
"""

from __future__ import annotations

import pytest

from hlo_rewrite import HloError, parse_module, run_passes
from hlo_rewrite.errors import HloParseError

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
"""


#: an ENTRY body of one instruction, for cases about what stands around it
FUSED = "fused {\n  x = f32[4] parameter(0)\n  ROOT n = f32[4] negate(x)\n}\n"
SCAN_STEP = ("step {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  s = f32[] add(x, y)\n"
             "  ROOT t = (f32[], f32[]) tuple(s, s)\n}\n")
ONE_PARAMETER = "  ROOT p = f32[] parameter(0)\n"


def module(body: str, *, head: str = "HloModule m\n\n", before: str = ADD) -> str:
    """A module whose ENTRY holds ``body`` (one instruction per line, indented by the caller)."""
    return f"{head}{before}\nENTRY e {{\n{body}}}\n"


def sharded(sharding: str) -> str:
    """A module whose ENTRY is one parameter with ``sharding``: its ``{`` is on line 10, column 44."""
    return module(f"  ROOT p = f32[8,8] parameter(0), sharding={sharding}\n")


def sharded_all(*shardings: str) -> str:
    """A module whose ENTRY has one parameter for each of ``shardings``."""
    lines = [f"  p{i} = f32[8,8] parameter({i}), sharding={s}\n" for i, s in enumerate(shardings)]
    names = ", ".join(f"p{i}" for i in range(len(shardings)))
    shape = ", ".join("f32[8,8]" for _ in shardings)
    return module("".join(lines) + f"  ROOT t = ({shape}) tuple({names})\n")


def domain(value: str) -> str:
    """A module whose ENTRY root is a domain with ``value``, on line 11 from column 39."""
    return module(f"  p = f32[8,8] parameter(0)\n  ROOT c = f32[8,8] domain(p), domain={value}\n")


#: (label, text, line, column, words the message must hold); the ENTRY body starts on line 10
REJECTED: list[tuple[str, str, int, int, str]] = [
    ("async update on another thread", module(
        "  p = f32[10] parameter(0)\n"
        '  s = ((f32[10]), f32[20], s32[]) custom-call-start(p), custom_call_target="foo"\n'
        '  u = ((f32[10]), f32[20], s32[]) custom-call-update(s), async_execution_thread="foo_thread"\n'
        "  ROOT d = f32[20] custom-call-done(u)\n"),
     12, 81, "Expect async_execution_thread to be main, but got foo_thread"),
    # a shorthand start (add-start) wraps an instruction XLA's parser makes from its operands
    # without counting them; the wrapped opcode's other rules hold, on the start's second shape
    ("shorthand start with fewer operands than it wraps", module(
        "  a = f32[4] parameter(0)\n  s = ((f32[4]), f32[4]) add-start(a)\n  ROOT d = f32[4] add-done(s)\n"),
     11, 35, "the add that add-start wraps takes 2 operands, and it has 1"),
    ("shorthand start of a reduce with an odd operand count", module(
        "  a = f32[4] parameter(0)\n  s = ((f32[4]), f32[]) reduce-start(a), dimensions={0}, to_apply=add\n"
        "  ROOT d = f32[] reduce-done(s)\n"),
     11, 37, "expects an even number of operands, but has 1 operands"),
    ("shorthand start of a partition-id of another shape", module(
        "  s = ((), s32[]) partition-id-start()\n  ROOT d = s32[] partition-id-done(s)\n"),
     10, 7, "a partition-id gives a u32[] scalar, not s32[]"),
    ("shorthand start of a concatenate with two dimensions", module(
        "  a = f32[4] parameter(0)\n  s = ((f32[4], f32[4]), f32[8]) concatenate-start(a, a), dimensions={0,0}\n"
        "  ROOT d = f32[8] concatenate-done(s)\n"),
     11, 70, "concatenate-start expects exactly one dimension"),
    ("shorthand fusion start without its computation", module(
        "  a = f32[4] parameter(0)\n  s = ((f32[4]), f32[4]) fusion-start(a), kind=kLoop\n"
        "  ROOT d = f32[4] fusion-done(s)\n", before=FUSED),
     10, 41, "attribute calls is expected but not seen"),
    ("scan of fewer operands than its computation's parameters", module(
        "  a = f32[4] parameter(0)\n  ROOT s = (f32[4], f32[]) scan(a), dimensions={0}, num_carries=1, "
        "to_apply=step\n", before=SCAN_STEP),
     12, 32, "expects 1 operands to match the number of parameters of to_apply, but to_apply has 2 parameters"),
    ("scan of more carries than operands", module(
        "  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT s = (f32[4], f32[]) scan(a, z), "
        "dimensions={0}, num_carries=3, to_apply=step\n", before=SCAN_STEP),
     13, 68, "expects at least 3 operands to match the number of carries, but has 2 operands"),
    # XLA's lexer reads a sub-attribute's name glued to its '=' as one token
    ("statistic name apart from its '='", module(
        "  ROOT c = s32[] constant(-42), statistics={visualizing_index=1,stat-1 =33}\n"),
     10, 65, "expected a statistic name glued to its '='"),
    ("window field apart from its '='", module(
        "  p = f32[4,4] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[2,2] reduce-window(p, z), window={size=2x2 stride\n=2x2}, to_apply=add\n"),
     12, 59, "expected a window field glued to its '='"),
    ("infeed without a tuple shape", module("  t = token[] after-all()\n  ROOT i = pred[] infeed(t)\n"),
     11, 19, "infeed must have a non-empty tuple shape"),
    ("window pad with an interior part", module(
        "  p = f32[1,2,1] parameter(0)\n  f = f32[1,1,1] parameter(1)\n"
        "  ROOT c = f32[1,2,1] convolution(p, f), dim_labels=b0f_0io->b0f, window={pad=1_1_0 size=1}\n"),
     12, 79, "expects padding_low and padding_high separated by '_'"),
    ("f64 constant beyond a double", module("  ROOT c = f64[2] constant({1, -1.8e308})\n"),
     10, 32, "Constant is out of range for double"),
    # every decimal is read as a double first, whatever the literal's type
    ("reshape changing the number of elements", module(
        "  p = f32[4,4] parameter(0)\n  ROOT r = f32[15] reshape(p)\n"),
     11, 20, "a reshape keeps the number of elements: its operand has 16, its shape 15"),
    ("partition-id of another shape", module("  ROOT r = s32[] partition-id()\n"),
     10, 12, "a partition-id gives a u32[] scalar, not s32[]"),
    # XLA's parser reads these shapes as arrays or as tuples, and stops the process on the other
    ("tuple with an array shape", module("  p = f32[2] parameter(0)\n  ROOT t = f32[2] tuple(p)\n"),
     11, 12, "a tuple's shape is a tuple, not f32[2]"),
    ("recv with an array shape", module("  t = token[] after-all()\n  ROOT r = f32[4] recv(t), channel_id=1\n"),
     11, 12, "a recv's shape is a tuple whose first element is the data received, not f32[4]"),
    ("recv with an empty tuple shape", module("  t = token[] after-all()\n  ROOT r = () recv(t), channel_id=1\n"),
     11, 12, "a recv's shape is a tuple whose first element is the data received, not ()"),
    ("reshape to a tuple shape", module("  p = f32[2,3] parameter(0)\n  ROOT r = (f32[6]) reshape(p)\n"),
     11, 12, "a reshape gives an array, not (f32[6])"),
    ("reshape of a token", module("  p = token[] parameter(0)\n  ROOT r = f32[] reshape(p)\n"),
     11, 26, "operand 0 of reshape must be an array, and 'p' is token[]"),
    ("map to a tuple shape", module("  p = f32[2] parameter(0)\n  ROOT r = (f32[2]) map(p), dimensions={0}, "
                                    "to_apply=add\n"),
     11, 12, "a map gives an array, not (f32[2])"),
    ("compare of tuples", module("  p = (f32[2]) parameter(0)\n  ROOT r = pred[2] compare(p, p), direction=EQ\n"),
     11, 28, "operand 0 of compare must be an array, and 'p' is (f32[2])"),
    ("dynamic slice with a tuple as its one index", module(
        "  a = f32[4] parameter(0)\n  i = (s32[]) parameter(1)\n"
        "  ROOT r = f32[1] dynamic-slice(a, i), dynamic_slice_sizes={1}\n"),
     12, 36, "operand 1 of dynamic-slice must be an array, and 'i' is (s32[])"),
    ("dynamic update slice of a tuple", module(
        "  a = (f32[4]) parameter(0)\n  u = f32[1] parameter(1)\n  i = s32[] parameter(2)\n"
        "  ROOT r = f32[4] dynamic-update-slice(a, u, i)\n"),
     13, 40, "operand 0 of dynamic-update-slice must be an array, and 'a' is (f32[4])"),
    ("negative layout dimension inside a tuple", module(
        "  p = f32[2,3] parameter(0)\n  ROOT t = (f32[2,3]{-1,0}) tuple(p)\n"),
     11, 22, "a layout inside a tuple shape takes no negative dimension"),
    ("compare direction in lower case", module(
        "  p = f32[4] parameter(0)\n  ROOT r = pred[4] compare(p, p), direction=eq\n"),
     11, 45, "'eq' is not a value of direction"),
    ("f32 constant beyond a double", module("  ROOT c = f32[] constant(1e400)\n"),
     10, 27, "Constant is out of range for double"),
    ("complex part beyond a double", module("  ROOT c = c64[] constant((1e400, 1))\n"),
     10, 28, "Constant is out of range for double"),
    ("long bf16 row with a value beyond a double", module(
        "  ROOT c = bf16[2001] constant({" + "1.5, " * 2000 + "-1e999})\n"),
     10, 10033, "Constant is out of range for double"),
    ("slice_sizes on two operands", module(
        "  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
        "  ROOT r = (f32[4], f32[4]) collective-permute(p, q), source_target_pairs={{0,1}}, slice_sizes={{1}}\n"),
     12, 47, "must have exactly four operands with slice_sizes"),
    ("tuple literal of the wrong size", module(
        '  p = f32[1] parameter(0)\n  ROOT r = f32[1] custom-call(p), custom_call_target="foo", '
        "literal=( s32[4]{0} {4, 128, 3} )\n"), 11, 91, "expects 4 elements"),
    ("operand count", module("  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p, p)\n"),
     11, 24, "expects 1 operands, but has 2 operands"),
    ("operand count, % names", module("  %p = f32[] parameter(0)\n  ROOT %r = f32[] negate(%p, %p)\n"),
     11, 25, "expects 1 operands, but has 2 operands"),
    ("no operands for add", module("  ROOT r = f32[] add()\n"), 10, 21, "expects 2 operands, but has 0"),
    ("attribute the opcode does not take", module("  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p), foo=bar\n"),
     11, 29, 'unexpected attribute "foo" for negate'),
    ("missing required attribute", module("  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(p)\n"),
     11, 32, "attribute to_apply is expected but not seen"),
    ("attribute twice", module('  p = f32[8] parameter(0)\n  ROOT r = f32[8] custom-call(p), custom_call_target="x", '
                               'custom_call_target="y"\n'), 11, 59, "attribute custom_call_target already exists"),
    ("boolean in capitals", module("  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), to_apply=add, "
                                   "constrain_layout=TRUE\n"), 11, 65, "expected true or false, found 'TRUE'"),
    ("integer attribute", module("  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), to_apply=add, "
                                 "channel_id=x\n"), 11, 59, "expected an integer"),
    ("int32 attribute out of range", module("  p = f32[] parameter(0)\n  ROOT r = (f32[], f32[], u32[]) "
                                            "copy-start(p), cross_program_prefetch_index=3000000000\n"),
     11, 78, "value out of range for int32"),
    ("s8 constant out of range", module("  ROOT c = s8[] constant(300)\n"), 10, 26,
     "value 300 is out of range for literal's primitive type S8 namely [-128, 127]"),
    ("u32 constant negative", module("  ROOT c = u32[] constant(-1)\n"), 10, 27,
     "value -1 is out of range for literal's primitive type U32 namely [0, 4294967295]"),
    ("u64 constant negative", module("  ROOT c = u64[] constant(-1)\n"), 10, 27, "out of range"),
    ("s64 constant beyond int64", module("  ROOT c = s64[] constant(9223372036854775808)\n"), 10, 27, "out of range"),
    ("f16 constant out of range", module("  ROOT c = f16[] constant(70000)\n"), 10, 27,
     "value 70000 is out of range for literal's primitive type F16"),
    ("f8e4m3fn constant out of range", module("  ROOT c = f8e4m3fn[] constant(1e3)\n"), 10, 32, "out of range"),
    ("float in an integer constant", module("  ROOT c = s32[] constant(1.5)\n"), 10, 27,
     "expects integer for primitive type S32"),
    ("too few elements", module("  ROOT c = s32[3] constant({1, 2})\n"), 10, 33,
     "expects 3 elements in the []th element, but sees 2"),
    ("too many elements", module("  ROOT c = s32[2] constant({1, 2, 3})\n"), 10, 29,
     "expects 2 elements on the minor-most dimension, but sees more"),
    ("nesting deeper than the rank", module("  ROOT c = s32[2] constant({{1}, {2}})\n"), 10, 29,
     "expects nested array in rank 1, but sees larger"),
    ("rows of the wrong length", module("  ROOT c = s32[2,2] constant({{1, 2}, {3}})\n"), 10, 41,
     "expects 2 elements in the [1]th element, but sees 1"),
    ("scalar literal for an array", module("  ROOT c = f32[2] constant(1)\n"), 10, 28,
     "expects a nested array of rank 1 in braces"),
    ("braces for a scalar", module("  ROOT c = f32[] constant({1})\n"), 10, 27, "expects nested array in rank 0"),
    ("original value of a word in brackets", module("  ROOT p = f32[] parameter(0), origin={[synthetic]}\n"),
     10, 41, "Expects 'synthetic_call' after '[' for a synthetic_call value."),
    ("original value of a bare string", module('  ROOT p = f32[] parameter(0), origin={"a"}\n'),
     10, 40, "Expects '[synthetic]' or a tuple tree of original arrays"),
    ("original array of a word", module("  ROOT p = f32[] parameter(0), origin={{a}}\n"),
     10, 41, "Expects '}' at end of OriginalArray"),
    ("original value of two trees", module('  ROOT p = f32[] parameter(0), origin={{"a"}, {"b"}}\n'),
     10, 45, "expects '}' after the original value's tree"),
    ("original value with a tuple closed but not opened", module(
        '  ROOT p = (f32[]) parameter(0), origin={{"a"})}\n'), 10, 47, "an original value's ')' has no '(' before it"),
    ("original value with a tuple left open", module(
        '  ROOT p = ((f32[], f32[]), f32[]) parameter(0), origin={(({"a"}, {"b"}, {"c"})}\n'),
     10, 80, "an original value's '(' is not closed"),
    ("literal number followed at once by a word, one element too many", module(
        "  ROOT c = f32[2] constant({7nan, 1})\n"), 10, 29, "expects 2 elements on the minor-most dimension, but sees more"),
    ("tuple literal of the wrong length", module("  ROOT c = (f32[], s32[]) constant((1))\n"), 10, 36,
     "expects 2 tuple elements, sees 1"),
    ("tuple literal with an element too many", module("  ROOT c = (f32[], s32[]) constant((1, 2, 3))\n"), 10, 41,
     "expects ')' at the end of the tuple with 2 elements"),
    ("tuple literal with two commas between elements", module("  ROOT c = (f32[], s32[]) constant((1,, 2))\n"), 10, 39,
     "unexpected ',' in a tuple literal"),
    ("tuple literal of no elements for a tuple of two", module("  ROOT c = (f32[], s32[]) constant(())\n"), 10, 36,
     "expects 2 tuple elements, sees 0"),
    ("token constant", module("  ROOT c = token[] constant(0)\n"), 10, 29, "cannot be written"),
    ("api_version unknown", module('  p = f32[8] parameter(0)\n  ROOT r = f32[8] custom-call(p), custom_call_target="x", '
                                   "api_version=API_VERSION_NOPE\n"), 11, 71,
     "'API_VERSION_NOPE' is not a value of api_version"),
    ("comparison direction", module("  p = f32[] parameter(0)\n  ROOT r = pred[] compare(p, p), direction=LESS\n"),
     11, 44, "'LESS' is not a value of direction"),
    ("iota groups without T", module("  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), to_apply=add, "
                                     "replica_groups=[2,4]<=[2,4]\n"), 11, 75, "'T('"),
    ("broadcast of a tuple without dimensions", module(
        "  p = (f32[2], f32[2]) parameter(0)\n  ROOT r = f32[2] broadcast(p)\n"), 11, 31,
     "attribute dimensions is expected but not seen"),
    ("tuple shape with an element layout that is not an order of its dimensions", module(
        "  p = f32[2,2] parameter(0)\n  ROOT t = (f32[2,2]{0,0}) tuple(p)\n"), 11, 12, "is not an order of its dimensions"),
    ("constant with a layout that is not an order of its dimensions", module(
        "  ROOT c = f32[2,2]{0,0} constant({{1,2},{3,4}})\n"), 10, 12, "is not an order of its dimensions"),
    ("declared tuple operand with an element layout that is not an order of its dimensions", module(
        "  p = f32[2,2] parameter(0)\n  t = (f32[2,2]) tuple(p)\n  ROOT c = (f32[2,2]) copy((f32[2,2]{1,2}) t)\n"),
     12, 28, "the layout {1,2} of f32[2,2]{1,2} is not an order"),
    ("entry computation layout whose result tuple has an element layout out of order",
     "HloModule m, entry_computation_layout={(f32[2,3]{1,0})->(f32[2,3]{1,7})}\n\n"
     "ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT t = (f32[2,3]) tuple(p)\n}\n", 1, 57,
     "the layout {1,7} of f32[2,3]{1,7} is not an order"),
    ("entry computation layout whose tuple parameter has an element layout out of order",
     "HloModule m, entry_computation_layout={((f32[2,3]{1,5}))->f32[2,3]{1,0}}\n\n"
     "ENTRY e {\n  p = (f32[2,3]) parameter(0)\n  ROOT g = f32[2,3] get-tuple-element(p), index=0\n}\n", 1, 40,
     "the layout {1,5} of f32[2,3]{1,5} is not an order"),
    ("broadcast of a token without dimensions", module(
        "  t = token[] after-all()\n  ROOT r = pred[] broadcast(t)\n"), 11, 31,
     "attribute dimensions is expected but not seen"),
    ("iota groups of one dimension that cover no devices, with a transpose after it", module(
        "  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), to_apply=add, "
        "replica_groups=[2,4]<=[42]T(1,0)\n"), 11, 74, "unexpected 'T' after the value"),
    ("declared operand shape", module("  p = f32[8] parameter(0)\n  ROOT r = f32[4] negate(f32[4] p)\n"),
     11, 26, "the declared operand shape f32[4] is not compatible with the shape f32[8] of 'p'"),
    ("callee defined after its use", "HloModule m\n\nENTRY e {\n  p = f32[4] parameter(0)\n"
     "  ROOT r = f32[4] all-reduce(p), to_apply=add\n}\n\n" + ADD, 5, 43, "computation 'add' is defined after its use"),
    ("control predecessor defined later", module("  p = f32[] parameter(0), control-predecessors={q}\n"
                                                 "  q = f32[] parameter(1)\n  ROOT r = f32[] add(p, q)\n"),
     10, 49, "instruction 'q' is not defined"),
    ("conditional on f32", module("  p = f32[] parameter(0)\n  ROOT r = f32[] conditional(p, p), "
                                  "branch_computations={add}\n"), 11, 30, "must be a scalar of PRED or S32"),
    ("conditional on pred without branches", module("  p = pred[] parameter(0)\n  x = f32[] parameter(1)\n"
                                                    "  ROOT r = f32[] conditional(p, x)\n"),
     12, 35, "attribute false_computation is expected but not seen"),
    ("broadcast of an array without dimensions", module("  p = f32[2] parameter(0)\n  ROOT b = f32[2,3] broadcast(p)\n"),
     11, 33, "attribute dimensions is expected but not seen"),
    ("duplicate parameter number", module("  p = f32[] parameter(0)\n  q = f32[] parameter(0)\n"
                                          "  ROOT r = f32[] add(p, q)\n"), 11, 23, "Duplicate parameter number 0"),
    ("reduce with an odd operand count", module("  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                                                "  ROOT r = f32[] reduce(p, z, p), dimensions={0}, to_apply=add\n"),
     12, 24, "expects an even number of operands, but has 3 operands"),
    ("concatenate on two dimensions", module("  p = f32[2,2] parameter(0)\n  ROOT r = f32[4,4] concatenate(p, p), "
                                             "dimensions={0,1}\n"), 11, 51, "expects exactly one dimension"),
    # XLA's parser builds a send's shape from the data it sends, a recv-done's from its recv's
    ("send-done declaring the send's shape as written", module(
        "  t = token[] after-all()\n  c = f32[2] constant({1, 2})\n  s = f32[] send(c, t), channel_id=1\n"
        "  ROOT d = token[] send-done((f32[], u32[], token[]) s), channel_id=1\n"),
     13, 30, "the declared operand shape (f32[], u32[], token[]) is not compatible with the shape "
     "(f32[2], u32[], token[]) of 's'"),
    ("signature with a recv-done's shape as written", "HloModule m\nENTRY e () -> f32[] {\n"
     "  t = token[] after-all()\n  r = (f32[2], u32[], token[]) recv(t), channel_id=1\n"
     "  ROOT d = f32[] recv-done(r), channel_id=1\n}\n",
     2, 15, "Shape of computation e, f32[], is not compatible with that of its root instruction d, "
     "(f32[2], token[])"),
    # the modules of an origin_recovery_table are read as XLA's parser reads them
    ("stack frame tables without the HloModule line", '// HloModule m\n\nFileNames\n1 "a.py"\n\n'
     "ENTRY %e () -> pred[] {\n  ROOT %c = pred[] constant(true)\n}\n",
     3, 1, "expects the HloModule line before the stack frame tables"),
    ("recovery module with an unknown opcode", 'HloModule m, origin_recovery_table={\n  {"a"} : {"b"},\n  "\n'
     "    ENTRY %r (p: f32[2]) -> f32[2] {\n      ROOT %p = f32[2]{0} bogus(parameter(0))\n    }\n"
     '  "\n}\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n',
     5, 27, "in a module of origin_recovery_table: unknown opcode 'bogus'"),
    ("recovery table with a comma after a module", 'HloModule m, origin_recovery_table={\n  {"a"} : {"b"}, "",\n'
     '  {"c"} : {"d"}, ""\n}\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n',
     2, 20, "Expects '{'"),
    ("recovery table entry whose ':' is in a comment", 'HloModule m, origin_recovery_table={\n  {"a"} // : {"b"},\n'
     '  ""\n}\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n',
     3, 3, "Expected format: <original_array>: <original_array>, <HloModule>"),
    ("recovery module that is empty", 'HloModule m, origin_recovery_table={\n  {"a"} : {"b"}, ""\n}\n\n'
     "ENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n",
     2, 19, "in a module of origin_recovery_table: empty input"),
    ("dynamic reshape without a size for each dimension", module(
        "  a = f32[4] parameter(0)\n  s = s32[] parameter(1)\n  ROOT r = f32[2,2] dynamic-reshape(a, s)\n"),
     12, 36, "a dynamic-reshape takes its operand and one size for each dimension of its shape, 3 operands; "
     "it has 2"),
    ("dynamic reshape changing the number of elements", module(
        "  a = f32[4] parameter(0)\n  ROOT r = f32[] dynamic-reshape(a)\n"),
     11, 18, "a dynamic-reshape keeps the number of elements: its operand has 4, its shape 1"),
    ("recv-done of an array", module("  a = f32[4] parameter(0)\n  ROOT r = f32[4] recv-done(a), channel_id=1\n"),
     11, 29, "a recv-done's operand is a recv, whose shape is a tuple; 'a' is f32[4]"),
    ("dot of one operand", module("  a = f32[2,2] parameter(0)\n  ROOT d = f32[2,2] dot(a), lhs_contracting_dims={1}, "
                                  "rhs_contracting_dims={0}\n"),
     11, 24, "expects at least 2 operands, but has 1 operands"),
    ("all-gather without a dimension", module("  p = f32[2] parameter(0)\n  ROOT r = f32[16] all-gather(p), "
                                              "dimensions={}, replica_groups={}\n"),
     11, 46, "all-gather takes its dimension from the first of dimensions={...}, and there is none"),
    ("async-start of the wrong shape", "HloModule m\n\nc {\n  a = f32[] parameter(0)\n  ROOT r = f32[] negate(a)\n}\n\n"
     "ENTRY e {\n  p = f32[] parameter(0)\n  s = (f32[], f32[], s32[]) async-start(p), calls=c\n"
     "  ROOT d = f32[] async-done(s), calls=c\n}\n", 10, 7, "AsyncStart expects the op shape to be in the form of"),
    ("async-done of a parameter", module("  p = f32[] parameter(0)\n  ROOT d = f32[] async-done(p)\n"),
     11, 28, "AsyncUpdate and AsyncDone expect a single async op as their operand"),
    ("async wrapped opcode changes", module(
        '  p = f32[] parameter(0)\n  s = ((f32[]), f32[], u32[]) custom-call-start(p), custom_call_target="x"\n'
        "  ROOT d = f32[] fusion-done(s)\n"), 12, 18, "Expect async wrapped opcode to be custom-call, but got fusion"),
    ("async-done calls another computation", "HloModule m\n\n" + ADD + "\nc {\n  a = f32[] parameter(0)\n"
     "  ROOT r = f32[] negate(a)\n}\n\nENTRY e {\n  p = f32[] parameter(0)\n"
     "  s = ((f32[]), f32[], s32[]) async-start(p), calls=c\n  ROOT d = f32[] async-done(s), calls=add\n}\n",
     17, 39, "Expect async_wrapped_computation to be c, but got add"),
    ("header attribute XLA does not know", module(ONE_PARAMETER, head="HloModule m, foo=1\n\n"),
     1, 14, 'unexpected attribute "foo" in the module header'),
    ("unknown element type in entry_computation_layout", module(
        "  ROOT p = f32[] parameter(0)\n", head="HloModule m, entry_computation_layout={(f33[])->f32[]}\n\n"),
     1, 41, "error parsing attribute entry_computation_layout"),
    ("calls= with two names", module("  p = f32[] parameter(0)\n  ROOT r = f32[] fusion(p, p), kind=kLoop, "
                                     "calls=add, add\n"), 11, 55, "expects an attribute name=value"),
    ("unknown attribute on the second line of an instruction", module(
        "  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), replica_groups={\n"
        "     {0,1}}, to_apply=add, foo=1\n"), 12, 28, 'unexpected attribute "foo" for all-reduce'),
    ("dimension that is not a size", module("  p = f32[=4] parameter(0)\n  ROOT r = f32[4] negate(p)\n"),
     10, 11, "malformed shape 'f32[=4]': expects integer"),
    ("comment that does not end in the header", module(
        "  ROOT p = f32[] parameter(0)\n", head="HloModule jit_/*_lambda, num_partitions=1\n\n"),
     1, 15, "unterminated comment"),
    ("fusion kind", module("  p = f32[] parameter(0)\n  ROOT r = f32[] fusion(p, p), kind=kFast, calls=add\n"),
     11, 37, "'kFast' is not a value of kind"),
    # shapes, as XLA's parser reads them wherever they are written
    ("empty dimension", module("  p = f32[,4] parameter(0)\n  ROOT r = f32[4] negate(p)\n"), 10, 10,
     "expected dimension sizes"),  # refused in every mode
    ("dimension beyond 64 bits", module("  ROOT p = f32[9223372036854775808] parameter(0)\n"), 10, 16,
     "a dimension size must fit in 64 bits"),
    ("layout with fewer entries than dimensions", module("  ROOT p = f32[4,2]{0} parameter(0)\n"), 10, 20,
     "Dimensions size is 2, but minor to major size is 1."),
    ("layout with a trailing comma", module("  ROOT p = f32[4]{0,} parameter(0)\n"), 10, 21, "expects integer"),
    ("empty braces after a shape", module("  ROOT p = f32[4]{} parameter(0)\n"), 10, 18,
     "unexpected '{' after the shape"),
    ("operand shape with an empty dimension", module("  p = f32[4] parameter(0)\n  ROOT r = f32[4] negate(f32[4,] p)\n"),
     11, 32, "malformed shape: expects integer"),
    ("tuple shape with a trailing comma", module("  ROOT p = (f32[],) parameter(0)\n"), 10, 19,
     "expected primitive type, saw ')'"),
    ("entry layout with an empty dimension", module(ONE_PARAMETER, head="HloModule m, entry_computation_layout={(f32[4,])->f32[]}\n\n"),
     1, 47, "error parsing attribute entry_computation_layout: expects integer"),
    # names: XLA's lexer reads keywords and element types as other tokens
    ("instruction named ROOT", module("  p = f32[] parameter(0)\n  ROOT = f32[] negate(p)\n"), 11, 3,
     "expects name ('ROOT' is a keyword"),
    ("instruction named by an element type", module("  f32 = f32[] parameter(0)\n  ROOT r = f32[] negate(f32)\n"),
     10, 3, "illegal instruction name: f32"),
    ("ENTRY without a name", "HloModule m\n\nENTRY (p: f32[]) -> f32[] {\n  ROOT p = f32[] parameter(0)\n}\n", 3, 7,
     "expects the computation's name"),
    # the next word is the name, as for XLA's lexer: then the computation's '{' stands alone
    ("module without a name", module(ONE_PARAMETER, head="HloModule\n\n"), 3, 5, "found '{'"),
    # signatures
    ("signature parameter with a blank before ':'", "HloModule m\n\nENTRY e (p : f32[]) -> f32[] {\n"
     "  ROOT p = f32[] parameter(0)\n}\n", 3, 12, "the ':' must follow the parameter name at once"),
    ("signature parameter with '%' and ':'", "HloModule m\n\nENTRY e (%p: f32[]) -> f32[] {\n"
     "  ROOT p = f32[] parameter(0)\n}\n", 3, 12, "a ':' follows only a bare name"),
    ("signature result shape not the root's", "HloModule m\n\nENTRY e (p: f32[4]) -> s32[4] {\n"
     "  p = f32[4]{0} parameter(0)\n  ROOT r = f32[4]{0} negate(p)\n}\n", 3, 24,
     "Shape of computation e, s32[4], is not compatible with that of its root instruction r, f32[4]{0}"),
    ("signature without '->'", "HloModule m\n\nENTRY e (p: f32[]) f32[] {\n  ROOT p = f32[] parameter(0)\n}\n",
     3, 20, "expects '->'"),
    ("signature parameter type that is not an element type", "HloModule m\n\nENTRY e (p: f321[]) -> f32[] {\n"
     "  ROOT p = f32[] parameter(0)\n}\n", 3, 13, "expected primitive type, saw 'f321'"),
    ("module without a header starting with a signature", "%c (a: f32[]) -> f32[] {\n  ROOT a = f32[] parameter(0)\n}"
     "\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", 1, 1,
     "a module without an 'HloModule' line starts with ENTRY"),
    # the module header's attributes
    ("header attribute with a blank before '='", module(ONE_PARAMETER, head="HloModule m, is_scheduled =true\n\n"), 1, 14,
     "expects attribute name"),
    ("header attribute without a comma", module(ONE_PARAMETER, head="HloModule m is_scheduled=true\n\n"), 1, 13,
     "expects ',' before a module attribute"),
    # metadata, read with XLA's keys and kinds
    ("metadata key with a blank before '='", module('  ROOT p = f32[] parameter(0), metadata={op_type ="a"}\n'),
     10, 42, "expects attribute name"),
    ("metadata key XLA does not know", module("  ROOT p = f32[] parameter(0), metadata={foo=1}\n"), 10, 42,
     'unexpected attribute "foo"'),
    ("metadata value of the wrong kind", module('  ROOT p = f32[] parameter(0), metadata={source_line="3"}\n'),
     10, 54, "expected an integer"),
    ("metadata key given twice", module('  ROOT p = f32[] parameter(0), metadata={op_name="a" op_name="b"}\n'),
     10, 54, "attribute op_name already exists"),
    ("float element starting with '.'", module("  ROOT c = f32[3] constant({1, .5, 2})\n"), 10, 32,
     "expects floating point value for primitive type F32, found '.5'"),
    ("NaN payload beyond the mantissa", module("  ROOT c = bf16[1] constant({nan(0x3ff)})\n"), 10, 30,
     "tries to set NaN payload 0x3ff, out of range for bf16 (0x7f)"),
    ("NaN payload on a type with one NaN", module("  ROOT c = f8e4m3fn[1] constant({nan(0x1)})\n"), 10, 34,
     "f8e4m3fn does not support payloads"),
    ("dimension level type XLA does not know", module("  ROOT p = f32[10,10]{1,0:D(X,C)} parameter(0)\n"), 10, 29,
     "expected a DimLevelType abbreviation (D, C, or S)"),
    ("result accuracy mode XLA does not know", module("  p = f32[] parameter(0)\n"
     "  ROOT r = f32[] exponential(p), result_accuracy={mode=high}\n"), 11, 56, "expects ResultAccuracy type"),
    ("result accuracy tolerance without commas", module("  p = f32[] parameter(0)\n"
     "  ROOT r = f32[] exponential(p), result_accuracy={tolerance={atol=1 rtol=2}}\n"), 11, 69,
     "expects '}' at the end of result precision"),
    ("buffer donor item without a number", module(ONE_PARAMETER, head="HloModule m, buffer_donor={ (zero, {0}) }\n\n"),
     1, 30, "expected an integer, found 'zero'"),
    ("operand layout constraints fewer than the operands", module(
        "  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n"
        '  ROOT c = f32[2] custom-call(p, q), custom_call_target="x", operand_layout_constraints={f32[2]{0}}\n'),
     12, 89, "Expected 2 operand layout constraints, 1 given"),
    ("operand layout constraint that is no shape", module(
        "  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n"
        '  ROOT c = f32[2] custom-call(p, q), custom_call_target="x", operand_layout_constraints={f32[2]{0}, g32[3]}\n'),
     12, 101, "malformed shape: expected primitive type, saw 'g32'"),
    ("operand layout constraint unlike its operand", module(
        "  p = f32[2] parameter(0)\n"
        '  ROOT c = f32[2] custom-call(p), custom_call_target="x", operand_layout_constraints={f32[5]{0}}\n'),
     11, 86, "Operand layout constraint shape f32[5]{0} for operand 0 is not compatible with operand shape f32[2]"),
    ("operand layout constraint of an operand whose shape is worked out", module(
        "  p = f32[2] parameter(0)\n  n = negate(p)\n"
        '  ROOT c = f32[2] custom-call(n), custom_call_target="x", operand_layout_constraints={s32[2]{0}}\n'),
     12, 86, "Operand layout constraint shape s32[2]{0} for operand 0 is not compatible with operand shape f32[2]"),
    ("one computation called by two async ops", "HloModule m\n\nw {\n  a = f32[] parameter(0)\n"
     "  ROOT r = f32[] negate(a)\n}\n\nENTRY e {\n  p = f32[] parameter(0)\n"
     "  t0 = ((f32[]), f32[], s32[]) async-start(p), calls=w\n  d0 = f32[] async-done(t0)\n"
     "  t1 = ((f32[]), f32[], s32[]) async-start(d0), calls=w\n  ROOT d1 = f32[] async-done(t1)\n}\n",
     12, 55, "Computation w is called by more than one async op"),
    ("string with an escape XLA does not know", module(
        r'  ROOT p = f32[] parameter(0), metadata={op_name="a\qb"}' + "\n"), 10, 52,
     r"Failed unescaping string: unknown escape sequence \q"),
    ("string with an escape XLA does not know in a frontend attribute", module(
        r'  ROOT p = f32[] parameter(0), frontend_attributes={x="\q"}' + "\n"), 10, 56,
     r"Failed unescaping string: unknown escape sequence \q"),
    ("a precision XLA knows no more", module(
        "  a = s8[2,3] parameter(0)\n  b = s8[3,2] parameter(1)\n  ROOT d = s32[2,2] dot(a, b), "
        "lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={PACKED_NIBBLE, DEFAULT}\n"),
     12, 103, "'PACKED_NIBBLE' is not a precision"),
    ("header string with a short unicode escape", module(ONE_PARAMETER, head=(
        r'HloModule m, frontend_attributes={a="\ue9"}' + "\n\n")), 1, 38, r"\u must be followed by 4 hex digits"),
    # the stack frame tables
    ("stack frame entry key not glued to its '='", module(ONE_PARAMETER, head=(
        'HloModule m\n\nFileNames\n1 "a.py"\nFunctionNames\n1 "f"\nFileLocations\n'
        "1 {file_name_id =1 function_name_id=1 line=4 end_line=4 column=1 end_column=2}\nStackFrames\n"
        "1 {file_location_id=1 parent_frame_id=0}\n\n")), 8, 4, "expects attribute name"),
    ("stack frame entry without a key", module(ONE_PARAMETER, head=(
        'HloModule m\n\nFileNames\n1 "a.py"\nFunctionNames\n1 "f"\nFileLocations\n'
        "1 {file_name_id=1 function_name_id=1 line=4 end_line=4 column=1 end_column=2}\nStackFrames\n"
        "1 {file_location_id=1}\n\n")), 10, 3, "sub-attribute parent_frame_id is expected but not seen"),
    ("stack frame table after a computation", module(ONE_PARAMETER, before=ADD + "StackFrames\n"), 8, 1,
     "the stack frame tables stand right after the HloModule line"),
    ("after-all root against a signature", "HloModule m\n\nENTRY e (p: f32[]) -> f32[] {\n  p = f32[] parameter(0)\n"
     "  ROOT t = f32[] after-all()\n}\n", 3, 23, "root instruction t, token[]"),
    # XLA's parser builds an after-all and a send-done as token[], whatever shape is written
    ("operand declared with the shape written on an after-all", module(
        "  t = f32[2] after-all()\n  ROOT n = f32[2] negate(f32[2] t)\n"), 11, 26,
     "is not compatible with the shape token[] of 't'"),
    ("operand declared with the shape written on a send-done", module(
        "  p = f32[2] parameter(0)\n  t = token[] after-all()\n"
        "  s = (f32[2], u32[], token[]) send(p, t), channel_id=1\n  d = f32[2] send-done(s), channel_id=1\n"
        "  ROOT n = f32[2] negate(f32[2] d)\n"), 14, 26, "is not compatible with the shape token[] of 'd'"),
    ("operand declared with the shape written on an outfeed", module(
        "  p = f32[2] parameter(0)\n  t = token[] after-all()\n  o = f32[2] outfeed(p, t)\n"
        "  ROOT n = f32[2] negate(f32[2] o)\n"), 13, 26, "is not compatible with the shape token[] of 'o'"),
    ("infeed root against a signature", "HloModule m\n\nENTRY e (p: token[]) -> (f32[2]) {\n"
     "  p = token[] parameter(0)\n  ROOT i = (f32[2]) infeed(p)\n}\n", 3, 25, "root instruction i, (f32[2], token[])"),
    ("dynamic-update-slice with one start index for two dimensions", module(
        "  a = f32[4,6] parameter(0)\n  u = f32[2,2] parameter(1)\n  i = s32[] parameter(2)\n"
        "  ROOT r = f32[4,6] dynamic-update-slice(a, u, i)\n"), 13, 41, "Wrong number of operands"),
    ("dynamic-slice with three start indices for two dimensions", module(
        "  a = f32[4,6] parameter(0)\n  i = s32[] parameter(1)\n"
        "  ROOT r = f32[2,2] dynamic-slice(a, i, i, i), dynamic_slice_sizes={2,2}\n"), 12, 34,
     "takes 3 operands, one start index a dimension, or 2 with the indices in one vector; it has 4"),
    ("send-done on another channel than its send", module(
        "  p = f32[2] parameter(0)\n  t = token[] after-all()\n"
        "  s = (f32[2], u32[], token[]) send(p, t), channel_id=1\n  ROOT d = token[] send-done(s), channel_id=2\n"),
     13, 45, "send-done has channel_id=2, but its operand 's' has channel_id=1"),
    ("send-done with a channel its send has not", module(
        "  p = f32[2] parameter(0)\n  t = token[] after-all()\n"
        "  s = (f32[2], u32[], token[]) send(p, t)\n  ROOT d = token[] send-done(s), channel_id=1\n"),
     13, 45, "but its operand 's' has none"),
    ("recv-done without the channel of its recv", module(
        "  t = token[] after-all()\n  r = (f32[2], u32[], token[]) recv(t), channel_id=1\n"
        "  ROOT d = (f32[2], token[]) recv-done(r)\n"), 12, 39, "recv-done has no channel_id"),
    ("send-done without the channel of the collective it finishes", module(
        "  p = f32[2,3] parameter(0)\n  c = (f32[2,3], f32[2,3], u32[], u32[]) collective-permute-start(p), "
        "source_target_pairs={{0,1},{1,0}}, channel_id=1\n  ROOT d = token[] send-done(c)\n"), 12, 29,
     "send-done has no channel_id, but its operand 'c' has channel_id=1"),
    ("recv-done on another channel than the send it finishes", module(
        "  p = f32[2] parameter(0)\n  t = token[] after-all()\n"
        "  s = (f32[2], u32[], token[]) send(p, t), channel_id=1\n  ROOT d = (f32[2], token[]) recv-done(s), "
        "channel_id=3\n"), 13, 55, "recv-done has channel_id=3, but its operand 's' has channel_id=1"),
    # aliasing, read as XLA's parser reads it
    ("input_output_alias item without its parentheses", module(ONE_PARAMETER, head="HloModule m, "
     "input_output_alias={ {}: 0 }\n\n"), 1, 39, "Expected format: <output_shape_index>: (<input_param>"),
    ("input_output_alias kind XLA does not know", module(ONE_PARAMETER, head="HloModule m, "
     "input_output_alias={ {}: (0, {}, bad-alias) }\n\n"), 1, 47, "Unexpected aliasing kind"),
    ("output_to_operand_aliasing with a kind", module(
        '  p = f32[] parameter(0)\n  ROOT r = (f32[]) custom-call(p), custom_call_target="x", '
        "output_to_operand_aliasing={{0}: (0, {}, must-alias)}\n"), 11, 99, "Expected format"),
    # a shape left out where XLA's parser cannot work it out
    ("parameter without its shape", module("  p = parameter(0)\n  ROOT r = f32[] negate(p)\n"),
     10, 7, "cannot infer shape for opcode: parameter"),
    ("all-reduce without its shape", module("  p = f32[4] parameter(0)\n  ROOT r = all-reduce(p), to_apply=add\n"),
     11, 12, "cannot infer shape for opcode: all-reduce"),
    ("tuple with more operands than its shape", module("  p = f32[] parameter(0)\n  ROOT t = (f32[], f32[]) tuple(p, p, p)\n"),
     11, 32, "expects 2 operands, but has 3 operands"),
    # instructions written as operands (XLA's nested form): each is checked as one of its own
    ("constant written as an operand without its shape", module(
        "  ROOT r = f32[2] add(f32[2] constant({1, 2}), constant({3, 4}))\n"),
     10, 48, "cannot infer shape for opcode: constant"),
    ("broadcast of an array written as an operand", module(
        "  p = f32[2] parameter(0)\n  ROOT r = f32[2,2] negate(f32[2,2] broadcast(f32[2] p))\n"),
     11, 56, "attribute dimensions is expected but not seen"),
    ("parameter number written twice, once as an operand", module(
        "  p = f32[] parameter(0)\n  ROOT r = f32[] add(f32[] parameter(0), p)\n"),
     11, 38, "Duplicate parameter number 0"),
    ("operand count of an instruction written as an operand", module(
        "  p = f32[] parameter(0)\n  ROOT r = f32[] negate(f32[] add(p))\n"),
     11, 34, "expects 2 operands, but has 1 operands"),
    ("operand count of an instruction written as an operand of a tuple", module(
        "  p = f32[] parameter(0)\n  ROOT r = tuple(p, f32[] sinh(p, p))\n"),
     11, 31, "expects 1 operands, but has 2 operands (an instruction written as an operand: XLA's parser "
     "drops such an operand"),
    # shardings, read as XLA's parser reads them
    ("sharding with a comma between its parts", sharded('{maximal device=1, metadata={op_name="a"}}'),
     10, 61, "unexpected ',' in a sharding"),
    ("sharding iota of two dimensions without its transpose", sharded("{devices=[2,2]<=[2,2]}"),
     10, 65, "expected 'T('"),
    ("sharding iota transpose shorter than its dimensions", sharded("{devices=[2,2]<=[2,2]T(0)}"),
     10, 45, "iota_transpose_perm should have the same rank as iota_reshape_dims: expected 2, saw 1"),
    ("sharding iota transpose past its dimensions", sharded("{devices=[2,2]<=[2,2]T(0,2)}"),
     10, 69, "iota transpose dimension 2 is not in [0, 2)"),
    ("sharding with last_tile_dims and last_tile_dim_replicate",
     sharded("{devices=[2,1,2]<=[4] last_tile_dims={manual} last_tile_dim_replicate}"),
     10, 45, "last_tile_dim_replicate or last_tile_dims=, not both"),
    ("sharding devices without their '='", sharded("{devices[2,1]0,1}"), 10, 45, "unexpected 'devices' in a sharding"),
    ("sharding iota without dimensions", sharded("{devices=[8,1]<=[]}"), 10, 61, "expected at least one item"),
    ("tiled sharding of one device", sharded("{devices=[2,1]0}"), 10, 45,
     "non-maximal shardings must have more than one device assigned"),
    ("sharding of one device without maximal", sharded("{device=0}"), 10, 45,
     "non-maximal shardings must have a tile assignment list"),
    ("maximal sharding without its device", sharded("{maximal}"), 10, 45,
     "maximal shardings should have exactly one device assigned"),
    ("replicated sharding with a device", sharded("{replicated device=0}"), 10, 45,
     "replicated shardings should not have any devices assigned"),
    ("tuple sharding without a comma", sharded("{{replicated} {maximal device=0}}"), 10, 58, "expected '}', found '{'"),
    ("tuple sharding with a comma after the last", sharded("{{replicated},}"), 10, 58, "expected '{', found '}'"),
    ("sharding word in another case", sharded("{Replicated}"), 10, 45, "unexpected 'Replicated' in a sharding"),
    ("sharding iota of one dimension with a transpose", sharded("{devices=[2,1]<=[2]T(0)}"),
     10, 63, "unexpected 'T' in a sharding"),
    ("last_tile_dims with a type XLA does not take", sharded("{devices=[2,2]0,1,2,3 last_tile_dims={unknown}}"),
     10, 82, "expected a sharding type"),
    ("shard_as without its group", sharded("{devices=[2,1]0,1 shard_as}"), 10, 70, "expected an integer, found '}'"),
    ("sharding metadata with a key XLA does not know", sharded('{replicated metadata={foo="x"}}'),
     10, 66, 'unexpected attribute "foo"'),
    ("sharding metadata list with a comma after the last", sharded('{replicated metadata={{op_name="x"},}}'),
     10, 80, "expected '{', found '}'"),
    ("sharding devices as an iota and as a list", sharded("{devices=[2,1]<=[2] devices=[2,1]0,1}"),
     10, 45, "an iota (<=[...]) or a list, not both"),
    ("sharding with more devices than its tile", sharded("{devices=[2]0,1,2,3}"),
     10, 45, "a tile of 2 takes 2 devices, the list names 4"),
    ("sharding with fewer devices than its tile", sharded("{devices=[2,2]0,1,2}"),
     10, 45, "a tile of 2x2 takes 4 devices, the list names 3"),
    ("last_tile_dims longer than the tile", sharded("{devices=[2]0,1 last_tile_dims={manual,replicated}}"),
     10, 45, "last_tile_dims= names 2 dimensions of a tile of 1"),
    ("maximal_mesh sharding without device_id", sharded("{maximal_mesh[device=0]}"), 10, 58,
     "expected device_id= attribute in maximal_mesh"),
    ("sharding device list with a comma after the last", sharded("{devices=[2,1]0,1,}"), 10, 62,
     "expected an integer, found '}'"),
    ("tile of a size below 0", sharded("{devices=[2,-1]0,1}"), 10, 45, "a tile of 2x-1 devices has a size below 0"),
    ("a word glued to a number after it", sharded("{devices=[2,1]0,1 shard_as -1replicated}"),
     10, 45, "replicated shardings should not have any devices assigned"),
    ("named sharding axis without its '='", sharded('{mesh["a"2], replicated}'), 10, 53, "expected '=', found '2'"),
    ("domain of a kind XLA does not read", domain('{kind="other", entry={maximal device=0}, exit={replicated}}'),
     11, 39, "unsupported domain kind: other"),
    ("domain with a sharding XLA rejects", domain('{kind="sharding", entry={maximal}, exit={replicated}}'),
     11, 64, "maximal shardings should have exactly one device assigned"),
    ("domain without its exit", domain('{kind="sharding", entry={maximal device=0}}'),
     11, 39, "sub-attribute exit is expected but not seen"),
    # a layout's sections in XLA's order only, each once (the column: where the section out of
    # its order stands, for the '}' XLA expects there)
    ("layout with element size after memory space", module("  ROOT p = f32[2]{0:S(1)E(4)} parameter(0)\n"),
     10, 25, "expects layout to end with '}'"),
    ("layout with tiles twice", module("  ROOT p = f32[2]{0:T(2)T(4)} parameter(0)\n"), 10, 25,
     "expects layout to end with '}'"),
    ("layout with the pointer type before the index type", module("  ROOT p = f32[2]{0:*(u8)#(u8)} parameter(0)\n"),
     10, 26, "expects layout to end with '}'"),
    ("layout with split configs without ':'", module("  ROOT p = f32[2]{0:SC(0)} parameter(0)\n"), 10, 25,
     "expects a list starting with ':'"),
    ("layout with a physical shape, sparse or not", module("  ROOT p = f32[2]{0:D(C)P(s32[2])} parameter(0)\n"),
     10, 25, "Layout has physical shape, but is not for a sparse array"),
    ("layout with a tile dimension XLA aborts on", module("  ROOT p = f32[2]{0:T(2,-1)} parameter(0)\n"),
     10, 25, "a tile dimension must not be negative"),
    ("layout with a list item left empty", module("  ROOT p = f32[2]{0:T(2,*,)} parameter(0)\n"), 10, 25,
     "expects integer"),
    ("window stride of another size than the window", module(
        "  p = f32[4,4] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[3,3] reduce-window(p, z), window={size=2x2 stride=1}, to_apply=add\n"),
     12, 49, "expects 'stride=' has the same size as 'size='"),
    ("window padding without a size", module(
        "  p = f32[4,4] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[4,4] reduce-window(p, z), window={pad=0_0x0_0}, to_apply=add\n"),
     12, 49, "expects 'pad=' has the same size as 'size='"),
    ("window field given twice", module(
        "  p = f32[4,4] parameter(0)\n  z = f32[] constant(0)\n"
        "  ROOT r = f32[3,3] reduce-window(p, z), window={size=2x2 stride=1x1 stride=1x1}, to_apply=add\n"),
     12, 77, "sub-attribute 'stride=' already exists"),
    ("convolution labels naming a dimension twice", module(
        "  p = f32[1,4,1] parameter(0)\n  f = f32[1,1,1] parameter(1)\n"
        "  ROOT r = f32[1,4,1] convolution(p, f), window={size=1}, dim_labels=bb0f_0io->b0f\n"),
     12, 70, "expects unique lhs dimension numbers, but sees bb0f"),
    ("convolution labels with more spatial dimensions in the output", module(
        "  p = f32[1,4,1] parameter(0)\n  f = f32[1,1,1] parameter(1)\n"
        "  ROOT r = f32[1,4,1] convolution(p, f), window={size=1}, dim_labels=b0f_0io->b01f\n"),
     12, 70, "input, kernel, and output must have same number of spatial dimensions"),
    ("convolution labels numbering a spatial dimension past their count", module(
        "  p = f32[1,4,1] parameter(0)\n  f = f32[1,1,1] parameter(1)\n"
        "  ROOT r = f32[1,4,1] convolution(p, f), window={size=1}, dim_labels=b0f_0io->2fb\n"),
     12, 70, "output dimension numbers 2fb: a spatial dimension numbered past its count (2, of 1)"),
    ("dot algorithm XLA does not know", module(
        "  p = f32[4,4] parameter(0)\n  q = f32[4,4] parameter(1)\n  ROOT r = f32[4,4] dot(p, q), "
        "lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=alg_unset\n"),
     12, 94, "expects algorithm but sees: alg_unset, error: Unknown algorithm"),
    ("random algorithm XLA does not know", module(
        "  s = u64[2] parameter(0)\n  ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_nope\n"),
     11, 61, "expects random algorithm but sees: rng_nope"),
    ("collective group mode XLA does not know", module(
        "  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(p), to_apply=add, mode=CROSS_REPLICA\n"),
     11, 53, "'CROSS_REPLICA' is not a value of mode"),
    ("module attribute given twice", module(ONE_PARAMETER, head="HloModule m, is_scheduled=true, is_scheduled=false\n\n"),
     1, 33, "attribute is_scheduled already exists"),
    ("an alias of an output the result does not have", module(
        "  p = f32[4] parameter(0)\n  ROOT t = (f32[4], f32[4]) tuple(p, p)\n",
        head="HloModule m, input_output_alias={ {0}: (0, {}), {0,1}: (0, {}) }\n\n"),
     1, 49, "Trying to set up alias at {0,1} which is an invalid index for shape (f32[4], f32[4])"),
    ("window with a negative size among several", module(
        "  p = f32[1,8,8,1] parameter(0)\n  k = f32[3,3,1,1] parameter(1)\n"
        "  ROOT c = f32[1,6,6,1] convolution(p, k), window={size=3x-1}, dim_labels=b01f_01io->b01f\n"),
     12, 57, "malformed window size '3x-1'"),
    ("get-tuple-element beyond the operands of a tuple", module(
        "  p = f32[] parameter(0)\n  t = (f32[], f32[]) tuple(p, p)\n  ROOT g = f32[] get-tuple-element(t), index=2\n"),
     12, 46, "index 2 is out of range for the tuple 't' of 2 operands"),
    ("get-tuple-element of a negative index of a tuple", module(
        "  p = f32[] parameter(0)\n  t = (f32[], f32[]) tuple(p, p)\n  ROOT g = f32[] get-tuple-element(t), index=-1\n"),
     12, 46, "index -1 is out of range"),
    ("a negative tolerance of a result accuracy", module(
        "  p = f32[] parameter(0)\n  ROOT x = f32[] exponential(p), result_accuracy={tolerance={rtol=0.5, ulps=-1}}\n"),
     11, 77, "ulps is negative, which a tolerance must not be"),
    ("metadata with a profile type XLA does not have", module(
        "  p = f32[] parameter(0)\n  ROOT x = f32[] negate(p), metadata={op_type=\"a\" profile_type={1,4}}\n"),
     11, 67, "4 is not a profile type (0 to 3)"),
    ("an alias of an output the result does not have, its index over two lines", module(
        "  p = f32[4] parameter(0)\n  ROOT t = (f32[4], f32[4]) tuple(p, p)\n",
        head="HloModule m, input_output_alias={ {0\n, 8}: (0, {}) }\n\n"),
     1, 35, "Trying to set up alias at {0,8} which is an invalid index"),
    ("an alias of a negative output index", module(
        "  p = f32[4] parameter(0)\n  ROOT t = (f32[4], f32[4]) tuple(p, p)\n",
        head="HloModule m, input_output_alias={ {-1}: (0, {}) }\n\n"),
     1, 35, "Trying to set up alias at {-1} which is an invalid index"),
    ("parameter numbers with a gap", module("  p = f32[2] parameter(0)\n  q = f32[2] parameter(2)\n"
                                            "  ROOT r = f32[2] add(p, q)\n"), 11, 24,
     "invalid parameter number: expected [0, 2), got 2"),
    ("parameter replication for another number of leaves", module(
        "  p = (f32[2], (f32[2], s32[])) parameter(0), parameter_replication={true,false}\n"
        "  ROOT r = f32[2] get-tuple-element(p), index=0\n"), 10, 69,
     "parameter has 3 leaf buffers, but parameter_replication has 2 elements."),
    ("parameter replication on another instruction", module(
        "  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p), parameter_replication={true}\n"), 11, 52,
     "parameter_replication is for parameters only"),
    ("token shape with dimensions", module("  ROOT p = token[2] parameter(0)\n"), 10, 12,
     "a token shape has no dimensions"),
    ("conditional with fewer operands than branches", module(
        "  b = pred[] parameter(0)\n  p = f32[] parameter(1)\n"
        "  ROOT r = f32[] conditional(b, p), true_computation=add, false_computation=add\n"), 12, 29,
     "a conditional of 2 branches takes 3 operands, the index and one for each branch; it has 2"),
    ("conditional with more operands than branches", module(
        "  i = s32[] parameter(0)\n  p = f32[] parameter(1)\n"
        "  ROOT r = f32[] conditional(i, p, p, p), branch_computations={add, add}\n"), 12, 29,
     "a conditional of 2 branches takes 3 operands"),
    ("global device ids without a channel", module(
        "  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), replica_groups={}, to_apply=add,\n"
        "      use_global_device_ids=true\n"), 11, 29, "Cannot have use_global_device_ids=true without channel_id"),
    ("global device ids without a channel, reduce-scatter", module(
        "  %p = f32[8] parameter(0)\n  ROOT %r = f32[4] reduce-scatter(f32[8] %p), replica_groups={{0,1}}, "
        "dimensions={0}, use_global_device_ids=true, to_apply=%add\n"), 11, 34, "without channel_id"),
    ("global device ids without a channel, all-reduce-start", module(
        "  p = f32[8] parameter(0)\n  s = f32[8] all-reduce-start(p), to_apply=add, use_global_device_ids=true\n"
        "  ROOT d = f32[8] all-reduce-done(s)\n"), 11, 30, "without channel_id"),
    ("global device ids without a channel, reduce-scatter-start", module(
        "  p = f32[8] parameter(0)\n  s = ((f32[8]), f32[4]) reduce-scatter-start(p), replica_groups={{0,1}}, "
        "dimensions={0}, to_apply=add, use_global_device_ids=true\n  ROOT d = f32[4] reduce-scatter-done(s)\n"),
     11, 46, "without channel_id"),
]


@pytest.mark.parametrize("label,text,line,column,words", REJECTED, ids=[c[0] for c in REJECTED])
def test_strict_rejects_with_a_located_message(label, text, line, column, words):
    with pytest.raises(HloParseError) as ei:
        parse_module(text, "in.hlo", strict=True)
    e = ei.value
    assert words in e.message, e.render()
    assert (e.filename, e.line, e.column) == ("in.hlo", line, column), e.render()
    rendered = e.render()
    assert rendered.startswith(f"in.hlo:{line}:{column}: error: ")
    assert rendered.splitlines()[-1].strip() == "^"


@pytest.mark.parametrize("strict", [False, True])
def test_an_unknown_computation_after_a_blank_is_refused_in_both_modes(strict):
    text = module("  p = pred[] parameter(0)\n  x = f32[] parameter(1)\n"
                  "  ROOT r = f32[] conditional(p, x, x), true_computation= %nope, false_computation=add\n")
    with pytest.raises(HloError) as ei:
        parse_module(text, "in.hlo", strict=strict)
    assert "calls computation 'nope', which is not defined" in ei.value.message
    assert (ei.value.line, ei.value.column) == (12, 59)


#: what XLA accepts, in several styles: strict mode accepts it too
ACCEPTED: list[tuple[str, str]] = [
    # JSON text to XLA's lexer is taken whole: its strings are not unescaped
    ("escapes XLA does not know in JSON text", module(
        r'  ROOT p = f32[] parameter(0), backend_config={"a":"\q\A4"}, frontend_attributes={x={"\q"}}' + "\n")),
    # a bare value for an array of one element (XLA's own tests write them): that element
    ("bare values for arrays of one element", module(
        "  a = s8[1,1,1,1] constant(0)\n  b = bf16[1,1,1] constant(1.0)\n  ROOT c = pred[1]{0} constant(true)\n")),
    ("async chain on the start's thread", module(
        "  p = f32[10] parameter(0)\n"
        '  s = ((f32[10]), f32[20], s32[]) custom-call-start(p), async_execution_thread="t1", '
        'custom_call_target="foo"\n'
        "  u = ((f32[10]), f32[20], s32[]) custom-call-update(s)\n"
        '  ROOT d = f32[20] custom-call-done(u), async_execution_thread="t1"\n')),
    ("shorthand starts: more operands than they wrap, a tuple of an array, a fusion", module(
        "  a = f32[4] parameter(0)\n  s = ((f32[4], f32[4], f32[4]), f32[4]) add-start(a, a, a)\n"
        "  d = f32[4] add-done(s)\n  t = ((), f32[4]) tuple-start()\n  u = f32[4] tuple-done(t)\n"
        "  f = ((f32[4]), f32[4]) fusion-start(d), kind=kLoop, calls=fused\n"
        "  ROOT g = f32[4] fusion-done(f)\n", before=FUSED)),
    ("scans with no carry and with every operand a carry", module(
        "  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
        "  s = (f32[4], f32[]) scan(a, z), dimensions={0}, num_carries=0, to_apply=step\n"
        "  ROOT t = (f32[4], f32[]) scan(a, z), dimensions={0}, num_carries=2, to_apply=step\n", before=SCAN_STEP)),
    ("a literal's shapes with comments and line ends in their layouts", module(
        "  ROOT c = f32[2] custom-call(), custom_call_target=\"x\", literal=( s32[2]{0 /* c */} {1, 2}, "
        "pred[1]{\n0} {1} )\n")),
    ("send-done of a collective on its channel, and of a custom-call, which has none", module(
        "  p = f32[4] parameter(0)\n  a = f32[4] all-reduce(p), replica_groups={}, to_apply=add, channel_id=2\n"
        "  d = token[] send-done(a), channel_id=2\n  c = f32[4] custom-call(p), custom_call_target=\"x\"\n"
        "  e = token[] send-done(c), channel_id=5\n  ROOT t = (f32[4]) tuple(p)\n")),
    ("an array's layout out of order in an entry computation layout and before an operand, which XLA reads",
     "HloModule m, entry_computation_layout={(f32[2,3]{1,5})->f32[2,3]{7,0}}\n\n"
     "ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT c = f32[2,3] copy(f32[2,3]{4,4} p)\n}\n"),
    ("get-tuple-element beyond its operand's tuple when that is no tuple instruction, which XLA reads", module(
        "  p = (f32[], f32[]) parameter(0)\n  ROOT g = f32[] get-tuple-element(p), index=5\n")),
    ("windows of negative and zero sizes, strides and dilations, which XLA reads with the shape written", module(
        "  p = f32[1,8,1] parameter(0)\n  k = f32[3,1,1] parameter(1)\n"
        "  a = f32[1,6,1] convolution(p, k), window={size=-1 stride=-2 lhs_dilate=-1 rhs_dilate=0 rhs_reversal=2},"
        " dim_labels=b0f_0io->b0f\n"
        "  ROOT x = f32[] exponential(f32[] parameter(2)), result_accuracy={tolerance={rtol=-0.0, atol=0, ulps=0}}\n")),
    ("an alias from a parameter index the parameter has not, which XLA's parser leaves unchecked", module(
        "  p = f32[4] parameter(0)\n  ROOT t = (f32[4], f32[4]) tuple(p, p)\n",
        head="HloModule m, input_output_alias={ {0}: (0, {5}), {1}: (3, {}) }\n\n")),
    ("infeed with a tuple shape", module("  t = token[] after-all()\n  ROOT i = (f32[2], token[]) infeed(t)\n")),
    ("send and recv-done whose shapes XLA builds anew", "HloModule m\nENTRY e () -> (f32[2], token[]) {\n"
     "  t = token[] after-all()\n  c = f32[2] constant({1, 2})\n  s = f32[] send(c, t), channel_id=1\n"
     "  sd = token[] send-done((f32[2], u32[], token[]) s), channel_id=1\n"
     "  r = (f32[2], u32[], token[]) recv(t), channel_id=2\n  ROOT d = f32[] recv-done(r), channel_id=2\n}\n"),
    ("compare whose second operand is a tuple", module(
        "  a = f32[2] parameter(0)\n  b = (f32[2]) parameter(1)\n  ROOT r = pred[2] compare(a, b), direction=EQ\n")),
    ("recovery modules with and without a header, and an entry without one",
     'HloModule m, origin_recovery_table={\n  {"a"} : {"b"},\n  "\n'
     "    ENTRY %r (p: f32[2]) -> f32[2] {\n      ROOT %p = f32[2]{0} parameter(0)\n    }\n"
     '  "\n  {"c"} : {"d"}, "HloModule x ENTRY %s (p: f32[2]) -> f32[2] { ROOT %p = f32[2]{0} parameter(0) }"\n'
     '  {"e" {0}} : {"f"}\n}\n\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n'),
    ("dynamic reshape with a size for each dimension, and recv-done of a tuple", module(
        "  a = f32[4] parameter(0)\n  s = s32[] parameter(1)\n  d = f32[2,<=2] dynamic-reshape(a, s, s)\n"
        "  t = (f32[4], u32[], token[]) parameter(2)\n  ROOT r = (f32[4], token[]) recv-done(t), channel_id=1\n")),
    # XLA's parser counts these operands only from below
    ("dot, random bits and collective permute with other operand counts", module(
        "  a = f32[2,2] parameter(0)\n  p = u64[2] parameter(1)\n"
        "  d = f32[2,2] dot(a, a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
        "  r = (u64[2], u32[4]) rng-bit-generator(p, p), algorithm=rng_default\n"
        "  ROOT c = f32[8] collective-permute(), source_target_pairs={{0,1}}, channel_id=1\n")),
    # XLA's parser takes the first dimension and reads the others
    ("all-gather and reduce-scatter with two dimensions", module(
        "  p = f32[2,2] parameter(0)\n  g = f32[16,2] all-gather(p), dimensions={0,1}, replica_groups={}\n"
        "  ROOT r = f32[2,2] reduce-scatter(g), dimensions={0,0}, replica_groups={}, to_apply=add\n")),
    # the neighbours of the shapes XLA's parser stops on: these it reads
    ("recv whose tuple shape holds only the data", module(
        "  t = token[] after-all()\n  ROOT r = (f32[4]) recv(t), channel_id=1\n")),
    ("map of a tuple, compare to a tuple", module(
        "  p = (f32[2]) parameter(0)\n  q = f32[2] parameter(1)\n  m = f32[2] map(p), dimensions={0}, to_apply=add\n"
        "  ROOT r = (pred[2]) compare(q, q), direction=EQ\n")),
    ("dynamic slices of a tuple by a vector, and by tuples one a dimension", module(
        "  a = (f32[4]) parameter(0)\n  b = f32[2,2] parameter(1)\n  v = s32[1] parameter(2)\n"
        "  i = (s32[]) parameter(3)\n  s = f32[1] dynamic-slice(a, v), dynamic_slice_sizes={1}\n"
        "  ROOT t = f32[1,1] dynamic-slice(b, i, i), dynamic_slice_sizes={1,1}\n")),
    ("dynamic slices with one start index a dimension, or all in one vector", module(
        "  a = f32[4,6] parameter(0)\n  u = f32[2,2] parameter(1)\n  i = s32[] parameter(2)\n"
        "  v = s32[2] parameter(3)\n  s = f32[2,2] dynamic-slice(a, i, i), dynamic_slice_sizes={2,2}\n"
        "  t = f32[2,2] dynamic-slice(a, v), dynamic_slice_sizes={2,2}\n"
        "  d = f32[4,6] dynamic-update-slice(a, s, i, i)\n  ROOT e = f32[4,6] dynamic-update-slice(d, t, v)\n")),
    ("send and recv with no channel at all", module(
        "  p = f32[2] parameter(0)\n  t = token[] after-all()\n  s = (f32[2], u32[], token[]) send(p, t)\n"
        "  d = token[] send-done(s)\n  r = (f32[2], u32[], token[]) recv(d)\n"
        "  ROOT e = (f32[2], token[]) recv-done(r)\n")),
    ("after-all with a shape written that no operand declares", module(
        "  t = f32[2] after-all()\n  ROOT u = token[] after-all(token[] t)\n")),
    ("tuple literal attribute", module(
        '  p = f32[1] parameter(0)\n  ROOT r = f32[1] custom-call(p), custom_call_target="foo", '
        "literal=( s32[4]{0} {4, 128, 128, 3}, pred[2]{0} {1, 0} )\n")),
    ("braced header value over lines", module(
        "  ROOT p = f32[] parameter(0)\n",
        head='HloModule m, origin_recovery_table={\n  {"c"} : {"c__ovp0"},\n  "\n    HloModule r\n\n'
             '    ENTRY e {\n      ROOT q = f32[] parameter(0)\n    }\n  "\n}\n\n')),
    ("combined collective-permute", module(
        "  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
        "  ROOT r = (f32[4], f32[4]) collective-permute(p, q), source_target_pairs={{0,1},{1,2}}\n")),
    ("plain", module("  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(p), to_apply=add\n")),
    ("windows, labels, algorithms and group modes as XLA reads them", module(
        "  p = f32[4,4] parameter(0)\n  q = f32[4,4] parameter(1)\n  z = f32[] constant(0)\n"
        "  w = f32[3,3] reduce-window(p, z), window={size=2x2 stride=1x1 pad=0_0x0_0 rhs_reversal=0}, to_apply=add\n"
        "  x = f32[4,4] reduce-window(p, z), window={}, to_apply=add\n"
        "  c = f32[1,4,1] parameter(2)\n  f = f32[1,1,1] parameter(3)\n"
        "  v = f32[1,4,1] convolution(c, f), window={size=1}, dim_labels=b?f_?io->b?f\n"
        "  d = f32[4,4] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=DOT_F32_F32_F32\n"
        "  s = u64[2] parameter(4)\n  g = (u64[2], u32[4]) rng-bit-generator(s), algorithm=RNG_PHILOX\n"
        "  a = f32[4,4] all-reduce(d), to_apply=add, mode=cross_replica_and_partition\n"
        "  i = f32[4,4] all-reduce(a), replica_groups=[2,2]<=[3], to_apply=add\n"
        "  ROOT j = f32[4,4] all-reduce(i), replica_groups=[2,2]<=[2,2]T(0,0), to_apply=add\n")),
    ("reshapes keeping the number of elements, a bounded dimension counting its bound", module(
        "  p = f32[4,4] parameter(0)\n  a = f32[2,8] reshape(p)\n  b = f32[<=16] reshape(a)\n"
        "  ROOT r = f32[16] reshape(f32[<=16] b)\n")),
    ("replica and partition ids, with a layout", module(
        "  a = u32[]{:S(1)} replica-id()\n  ROOT b = u32[] partition-id()\n")),
    ("enumerations XLA reads in any case", module(
        "  p = f32[4] parameter(0)\n  i = f32[] parameter(1)\n"
        "  a = f32[4] rng(i, i), distribution=RNG_Normal\n"
        '  b = f32[4] custom-call(p), custom_call_target="x", api_version=api_version_typed_ffi, '
        "schedule=Schedule_Latest\n"
        "  ROOT r = (f32[4], f32[4]) tuple(a, b)\n")),
    ("parameters in any order, replication for each leaf", module(
        "  q = (f32[2], (f32[2], s32[])) parameter(1), parameter_replication={true,false,true}\n"
        "  p = () parameter(0), parameter_replication={}\n  ROOT r = f32[2] get-tuple-element(q), index=0\n")),
    ("negative counts in the module header", module(ONE_PARAMETER, head="HloModule m, replica_count=-1, num_partitions=-2\n\n")),
    ("layouts whose sections XLA reads as far as they go", module(
        "  a = f32[2,3]{1,0:T(2,128)*} parameter(0)\n  b = f32[2]{0:*} parameter(1)\n  c = f32[2]{0:#} parameter(2)\n"
        "  d = f32[2]{0:E} parameter(3)\n  e = f32[2]{0:E S(1)} parameter(4)\n  f = f32[2]{0:T} parameter(5)\n"
        "  g = f32[2]{0:T(2)L} parameter(6)\n  h = f32[2]{0:SC} parameter(7)\n  i = f32[2]{0:SC(0:)} parameter(8)\n"
        "  j = f32[2]{0:D()T()} parameter(9)\n  k = f32[2]{0:D()} parameter(10)\n  l = f32[2]{0:} parameter(11)\n"
        "  m = f32[2]{0:#(u8)*(u8)} parameter(12)\n  n = f32[2]{0:#(s32)} parameter(13)\n"
        "  o = f32[2]{0:T(2,*)(1) L(2) E(4)S(1) SC(0:8,16)(1:4) M(8)} parameter(14)\n"
        "  ROOT t = (f32[2,3], f32[2]) tuple(a, b)\n")),
    ("global device ids with a channel, false without, and all-gather's without", module(
        "  p = f32[8] parameter(0)\n"
        "  a = f32[8] all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add\n"
        "  b = f32[8] all-reduce(a), use_global_device_ids=false, to_apply=add\n"
        "  c = f32[4] reduce-scatter(b), channel_id=0, use_global_device_ids=true, dimensions={0}, to_apply=add\n"
        "  ROOT g = f32[8] all-gather(c), replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true\n")),
    ("percent names and operand shapes", "HloModule m\n\n%add (a: f32[], b: f32[]) -> f32[] {\n"
     "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %c = f32[] add(f32[] %a, f32[] %b)\n}\n\n"
     "ENTRY %e (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n"
     "  ROOT %r = f32[4]{0} all-reduce(f32[4]{0} %p), replica_groups={{0,1}}, to_apply=%add\n}\n"),
    ("original values in the spellings XLA reads", module(
        '  p = ((f32[], f32[]), f32[]) parameter(0), origin={(({"a"}, {}), {"c" {1, 0}})}\n'
        '  q = ((f32[], f32[]), f32[]) parameter(1), origin={ ( ({"a"} {"b"},), /* c */ {"c"} ) }\n'
        "  r = f32[] parameter(2), origin={[synthetic_call]}\n  s = f32[] parameter(3), origin={}\n"
        "  ROOT t = (f32[], f32[]) tuple(r, s), origin={((), {})}\n")),
    ("newer attributes", module('  p = f32[] parameter(0), origin={{"v1"}}\n'
                                "  ROOT r = f32[] exponential(p), statistics={visualizing_index=1,stat-1=33}, "
                                "result_accuracy={mode=highest}\n")),
    ("unspecified api_version (by decision)", module(
        '  p = f32[8] parameter(0)\n  ROOT r = f32[8] custom-call(p), custom_call_target="x", '
        "api_version=API_VERSION_UNSPECIFIED\n")),
    ("literals", module("  a = s32[3] constant({1 2 3})\n  b = pred[2] constant({true, 0})\n"
                        "  c = f16[] constant(65504)\n  d = f32[2,3] constant({...})\n"
                        "  e = (f32[], s32[2]) constant((1, {2, 3}))\n  f = c64[2] constant({(1, 2), (3.5, -4)})\n"
                        "  g = u64[] constant(18446744073709551615)\n  h = f32[2] constant({inf, -nan})\n"
                        "  i = s8[2] constant({-128, 127})\n  ROOT t = (s32[3], pred[2]) tuple(a, b)\n")),
    ("comments between tokens", module("  p = f32[] parameter(0)\n  ROOT r = f32[] negate /* c */ (p), "
                                       'metadata={op_name="a"}\n')),
    ("iota groups", module("  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), to_apply=add, "
                           "replica_groups=[2,4]<=[4,2]T(1,0)\n")),
    ("mesh groups", module("  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), to_apply=add, "
                           "replica_groups=mesh['a'=2,'b'=4] {'b'}\n")),
    ("an instruction over two lines", module("  p = f32[8] parameter(0)\n  ROOT r = f32[8] all-reduce(p), "
                                             "replica_groups={\n     {0,1}}, to_apply=add\n")),
    ("broadcast of a scalar without dimensions", module("  p = f32[] parameter(0)\n  ROOT b = f32[4] broadcast(p)\n")),
    ("async chain", "HloModule m\n\nc {\n  a = f32[] parameter(0)\n  ROOT r = f32[] negate(a)\n}\n\n"
     "ENTRY e {\n  p = f32[] parameter(0)\n  s = ((f32[]), f32[], s32[]) async-start(p), calls=c\n"
     "  u = ((f32[]), f32[], s32[]) async-update(s)\n  ROOT d = f32[] async-done(u), calls=c\n}\n"),
    ("async wrapped spelling", module('  p = f32[] parameter(0)\n  s = ((f32[]), f32[], u32[]) '
                                      'custom-call-start(p), custom_call_target="x"\n'
                                      "  ROOT d = f32[] custom-call-done(s)\n")),
    ("conditional", module("  p = pred[] parameter(0)\n  x = f32[] parameter(1)\n"
                           "  ROOT r = f32[] conditional(p, x, x), true_computation=add, false_computation= %add\n")),
    ("header", module("  ROOT p = f32[] parameter(0)\n",
                      head="HloModule m, is_scheduled=true, entry_computation_layout={(f32[])->f32[]}, "
                           "num_partitions=2, allow_spmd_sharding_propagation_to_output={true}\n\n")),
    ("sharding and frontend attributes", module(
        '  p = f32[4] parameter(0), sharding={devices=[2]0,1}, frontend_attributes={_xla="a",b="{}"}\n'
        "  ROOT r = f32[4] copy(p), sharding={replicated}, backend_config={\"k\": [1, {\"x\": 2}]}\n")),
    ("shapes in the spellings XLA reads", module(
        "  a = f32[4,2]{0,1:T(2,1)} parameter(0)\n  b = f32 [ 4 ] /* c */ { 0 } parameter(1)\n"
        "  c = (f32[], (s32[2]{0}, pred[])) parameter(2)\n  d = f32[4]{0:} parameter(3)\n  e = f32[<=4,?] parameter(4)\n"
        "  f = f32[4,\n    2]{1,\n    0} parameter(5)\n  ROOT t = () tuple()\n")),
    ("signature names as XLA's lexer reads them", "HloModule m\n\nENTRY e (p:f32[], q f32[], true: f32[]) -> f32[] {\n"
     "  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n  ROOT t = f32[] parameter(2)\n}\n"),
    ("metadata with every key", module(
        '  ROOT p = f32[] parameter(0), metadata={,op_type="a", op_name="b"source_file=\'f\' source_line=-1 '
        "source_end_line=2\n    source_column=3 /* c */ source_end_column=4 profile_type={1,2} deduplicated_name=\"d\" "
        'scheduling_name="s" metadata_payload="x"}\n')),
    ("whole module on one line after header attributes", "HloModule m, replica_count=2 add { a = f32[] parameter(0) "
     "b = f32[] parameter(1) ROOT c = f32[] add(a, b) } ENTRY e { p = f32[4] parameter(0) ROOT r = f32[4] "
     "all-reduce(p), to_apply=add }\n"),
    ("header values after comments and line breaks", module(
        "  ROOT p = f32[] parameter(0)\n",
        head="HloModule m, num_partitions=\n  2, entry_computation_layout=/* c */{(f32[])->f32[]}\n\n")),
    ("shapes compatible but for layouts and dynamic bounds", "HloModule m\n\nENTRY e (p: f32[4]) -> f32[<=4]{0} {\n"
     "  p = f32[4]{0} parameter(0)\n  ROOT r = f32[4]{0} negate(f32[?] p)\n}\n"),
    ("float elements in the spellings XLA's lexer reads", module("  ROOT c = f32[4] constant({-.5, 5., 5.e3, 1E+3})\n")),
    ("NaN payloads within their types", module("  a = f32[2] constant({nan(0x7fffff), -nan(0x1)})\n"
                                                "  b = f8e5m2[1] constant({nan(0x3)})\n  ROOT c = bf16[1] constant({nan(0x7f)})\n")),
    ("dimension level types and sparse layouts", module("  ROOT p = f32[10,10]{1,0:D(D,C+~)} parameter(0)\n")),
    # a tolerance without its number: XLA notes it and goes on with 0
    ("result accuracy tolerances without their numbers", module(
        "  p = f32[] parameter(0)\n  ROOT r = f32[] exponential(p), result_accuracy={tolerance={atol=1, rtol=,ulps=}}\n")),
    ("result accuracy in the spellings XLA reads", module(
        "  p = f32[] parameter(0)\n  q = f32[] exponential(p), result_accuracy={ mode=HIGHEST }\n"
        "  ROOT r = f32[] exponential(q), result_accuracy={tolerance={ atol=1 , rtol=0.5,ulps=2 }}\n")),
    ("buffer donors", module("  ROOT p = (f32[], f32[]) parameter(0)\n",
                             head="HloModule m, buffer_donor={ (0, {0}), (0, {1,}), }\n\n")),
    ("operand layout constraints, one per operand", module(
        "  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n"
        '  ROOT c = f32[2] custom-call(p, q), custom_call_target="x", operand_layout_constraints={f32[2]{0}, f32[3]{0}}\n')),
    # XLA's lexer ends a number where its number patterns stop: a word may follow at once
    ("literal numbers followed at once by words", module(
        "  a = pred[2] constant({1false})\n  ROOT c = f32[2] constant({7inf,})\n")),
    # '-inf' and '-nan' are read by its number patterns, and a nan with a payload ends there: a
    # number or a word may follow at once
    ("literal numbers followed at once by numbers after -inf, -nan and payloads", module(
        "  a = f32[4] constant({-nan7, -inf-1})\n  b = f32[4] constant({-infinf, nan(0x1)7})\n"
        "  ROOT c = (f32[], f32[], f32[], f32[]) constant((-nan7 7nan))\n")),
    # XLA's parser notes a missing ',' between a custom call literal's tuple elements and goes on;
    # its tuples may hold tuples
    ("custom call literal tuple elements without commas between them", module(
        "  p = f32[1] parameter(0)\n  ROOT c = f32[2] custom-call(p), custom_call_target=\"x\", literal=( s32[4]{0}"
        " {4, 128, 128, 3} pred[4]{0} {1, 0, 0, 0} (f32[] 3 c64[] (1, 2),) () )\n")),
    # XLA's parser notes a missing ',' between a tuple literal's elements and goes on
    ("tuple literal elements without commas between them", module(
        "  ROOT c = (f32[2,1], f32[2], c64[], (s32[], pred[])) constant(( { {1}, {2} } /* c */ {2, 42}\n"
        "    (1, 2) (3 true) ))\n")),
    ("operand layout constraints with comments around and inside", module(
        "  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n"
        '  ROOT c = f32[2] custom-call(p, q), custom_call_target="x", operand_layout_constraints= /* a */\n'
        "    {f32[2]{0} /* } */, // b\n    f32[3]{0}} // }\n")),
    ("operand layout constraints of no operands, a comment inside", module(
        '  ROOT c = f32[2] custom-call(), custom_call_target="x", operand_layout_constraints={/* none */}\n')),
    ("string escapes XLA reads", module(
        r'  ROOT p = f32[] parameter(0), metadata={op_name="\x41\101\u00e9\U0001F600\?\a\\\"" '
        r'op_type="/* a */"} /* "\q" */' + "\n")),
    ("stack frame tables", module(ONE_PARAMETER, head=(
        'HloModule m\n\nFileNames\n1 "a.py"\n2 "b.py"\nFunctionNames\n1 "f"\nFileLocations\n'
        "1 {file_name_id=1, function_name_id=1, end_line=4 line=4 column=1 end_column=2}\nStackFrames\n"
        "1 {file_location_id=1 parent_frame_id=0}\n2 {parent_frame_id=1 file_location_id=1}\n\n"))),
    ("aliasing in the spellings XLA reads", module(
        '  p = f32[] parameter(0)\n  ROOT r = (f32[]) custom-call(p), custom_call_target="x", '
        "output_to_operand_aliasing={ /* c */ {0,}: (0, {}), }\n",
        head="HloModule m, input_output_alias={{}:(0,{},may-alias),}\n\n")),
    ("shapes left out where XLA works them out", module(
        "  p = f32[4] parameter(0)\n  n = negate(p)\n  t = tuple(n, p)\n  ROOT g = get-tuple-element(t), index=0\n")),
    ("instructions written as operands", module(
        "  ROOT root = add(f32[10] parameter(0), multiply(f32[10] parameter(1), f32[10] parameter(2)))\n")),
    ("a tuple written as an operand", module(
        "  ROOT r = ((f32[10], f16[10])) tuple(\n    (f32[10], f16[10]) tuple(f32[10] parameter(0), f16[10] parameter(1)))\n")),
    ("broadcast of a scalar written as an operand", module(
        "  ROOT root = f32[10,10] sqrt(f32[10,10] broadcast(f32[] parameter(0)))\n")),
    ("an instruction written as an operand of a collective", module(
        "  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(f32[4] /* in place */ negate(p)), to_apply=add\n")),
    ("shardings in the spellings XLA prints", sharded_all(
        "{replicated}", "{maximal device=0}", "{manual}", "{unknown}", "{unreduced}", "{devices=[2,1]0,1}",
        "{devices=[2,2]<=[2,2]T(1,0)}", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
        "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}", "{devices=[2,1]<=[2] shard_as 1}",
        '{replicated shard_like 0 metadata={op_name="a" source_file="b.py" source_line=3}}',
        "{{replicated}, {maximal device=0}, {devices=[2,1]<=[2]}}", "{}",
        "{maximal_mesh[device_id=0]}", '{mesh["a"=2,"b"=2], [{"a"},{}]}')),
    ("shardings in spellings XLA reads but does not print", sharded_all(
        "{ replicated /* } */ }", "{maximal device=0 device=1}", "{devices=[2,1] 0, 1}",
        "{devices=[4]<=[2,2] T (1,0)}", '{replicated metadata={{op_name="x"}, {op_name="y"}}}',
        "{devices=[2,2]<=[3]}", "{devices=[2,1]0,1 devices=[2,1]1,0}", "{maximal device=-1}",
        "{devices=[2,1,2]<=[4] last_tile_dims={}}", '{maximal_mesh[device_id=0], metadata={op_name="x"}}',
        '{mesh["a"=2,"b"=2], [{"a"},{?}]}', "{devices=[2,2]<=[3] last_tile_dims={manual}}",
        "{devices=[2,11,2]<=[4] last_tile_dim_replicate}", "{devices=[-2,-1]0,1}",
        # as XLA's partitioner tests write them, across lines
        "{devices=[2,1,2,1]0,1,4,5 }", '{replicated  metadata={op_name="a"}}', "{devices=[2,2]0,1\n      ,2,3}",
        "{\n  devices=[1,2,2]0,1,2,3 last_tile_dims={manual}}",
        "{replicated shard_as -1replicated}")),
    ("shardings of XLA's parser tests", sharded_all(
        "{devices=[2,2,2,2]0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 last_tile_dims={manual, replicated}}",
        "{devices=[2,2,2,2]<=[2,2,4]T(2,1,0) last_tile_dims={manual, replicated}}", "{manual shard_as 1}",
        "{devices=[2,2,2,2]<=[16] last_tile_dims={manual, replicated} shard_like 1}",
        "{{replicated}, {maximal device=5}, {maximal_mesh[device_id=5]}}")),
    ("named shardings as the newest XLA prints them", sharded_all(
        "{mesh[a=2,b=4,c=3,d=8], [{b:(2)2}, {d:(4)2, c, ?}]}", "{mesh[x=2,y=2], device_ids=(0,2,1,3), [{x}]}",
        "{mesh[a=2,b=4,c=4,d=2], device_ids=([4,16]T(1,0)), [{a}]}",
        '{mesh[a=2,b=4,c=3,d=8], [{a}], replicated={c}, unreduced={d:(4)2}, manual={b:(2)2}, '
        'metadata={{op_name="foo"}, {op_name="bar"}}}',
        "{{mesh[a=2,b=2], [{a}, {}]}, {devices=[2,2]<=[4] last_tile_dim_replicate}}")),
    ("a sharding domain", domain('{entry={{maximal device=0}, {replicated}} exit={replicated}, kind="sharding"}')),
]


@pytest.mark.parametrize("label,text", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_strict_accepts_what_xla_accepts(label, text):
    module_ = parse_module(text, "in.hlo", strict=True)
    assert module_.computations


def test_strict_error_is_not_an_internal_error_for_a_comment_before_the_operands():
    """A comment between an opcode and its '(' used to end in "attribute names differ"."""
    text = module("  p = f32[] parameter(0)\n  ROOT r = f32[] negate /* c */ (p), foo=1\n")
    with pytest.raises(HloError) as ei:
        parse_module(text, "in.hlo", strict=True)
    assert "internal" not in ei.value.message
    assert 'unexpected attribute "foo"' in ei.value.message


def test_a_long_literal_is_checked_in_memory_proportional_to_it():
    """A 2 MB s32 constant: checking it holds no per-element state (the regular-expression
    engine once kept backtracking state for every element, 30 times the literal's size)."""
    import random
    import tracemalloc

    from hlo_rewrite.literals import check_literal
    from hlo_rewrite.shapes import parse_shape

    rng = random.Random(0)
    n = 200_000
    text = "{" + ", ".join(str(rng.randint(-2**31, 2**31 - 1)) for _ in range(n)) + "}"
    shape = parse_shape(f"s32[{n}]")
    tracemalloc.start()
    try:
        check_literal(shape, text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * len(text) + 8_000_000, (peak, len(text))  # a copy, and a bounded piece at a time
    bad = text[:-1] + ", 2147483648}"
    with pytest.raises(ValueError, match="2147483648 is out of range"):
        check_literal(parse_shape(f"s32[{n + 1}]"), bad)


def test_iota_groups_that_give_no_groups_are_read_and_a_pass_that_needs_them_says_where():
    """``[2,2]<=[3]`` covers no devices as groups; XLA's parser reads it, and so does strict
    mode. The conversion, which needs the groups, refuses it at the value, never reading it as
    ``{}`` (all devices)."""
    text = module("  p = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(p), replica_groups=[2,2]<=[3], to_apply=add\n")
    parse_module(text, "in.hlo", strict=True)
    module_ = parse_module(text, "in.hlo")
    with pytest.raises(HloParseError) as ei:
        run_passes(module_, ["convert-collectives-to-custom-call"])
    assert (ei.value.line, ei.value.column) == (11, 47) and "do not cover the 3 devices" in ei.value.message
