"""The regular expressions of the line reader: one plain instruction line, its parts, and
the computation and module headers as XLA prints them.

Only the line reader (:mod:`.plain`) and the one-pass body check (:mod:`.block`) use these;
the token reader (:mod:`.general`) reads the same syntax token by token.
"""

from __future__ import annotations

import re
import sys
from operator import itemgetter

from ..lexicon import IDENTIFIER
from ..opcodes import ALL_CALLEE_ATTRS, OPCODE_NAMES
from ..regex import lazy_pattern

IDENT = IDENTIFIER
# the attributes that name called computations, longest first (one alternation)
_CALLEES = "|".join(sorted(ALL_CALLEE_ATTRS, key=lambda a: (-len(a), a)))
INSTR_HEAD = lazy_pattern(r"[ \t]*(ROOT[ \t]+)?(%?)(" + IDENT + r")[ \t]*=[ \t]*")
# Python 3.11 has possessive quantifiers ("*+"): with them a line that is not plain
# fails sooner, and a name spelled ROOT followed by a blank goes line by line
P = "+" if sys.version_info >= (3, 11) else ""
# an array shape: element type, dimensions (sizes, `<=N`, `?`; none empty), optional layout;
# anything stranger (a layout with a P(<shape>) item, garbage) is left to the grammar. The
# repeats are possessive where that changes nothing but the time (a fifth of the line
# expression's, measured)
DIMS_LAYOUT = (
    rf"\[(?:[0-9<=? \t]+{P}(?:,[0-9<=? \t]+{P})*{P})?{P}\]"
    # the layout's dimension numbers, with one ',' between each two (XLA's parser refuses
    # '{,1}', '{1,0,}' and '{1 0}')
    rf"(?:\{{(?:[ \t]*{P}[0-9]+{P}(?:[ \t]*{P},[ \t]*{P}[0-9]+{P})*{P}[ \t]*{P})?"
    r"(?::(?:[A-Z#*]*\([0-9A-Za-z,*+~ \t]*\)|[ \t])*)?\})?"
)
ARRAY_SHAPE = lazy_pattern(r"([a-z][a-z0-9]*)" + DIMS_LAYOUT)
OPCODE = lazy_pattern(r"([a-z][a-z0-9\-]*)\(")
SHAPE = r"(?:[a-z][a-z0-9]*" + DIMS_LAYOUT + r"|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))"
OPERAND = r"[ \t]*(?:" + SHAPE + r"[ \t]+)?%?(" + IDENT + r")[ \t]*"
OPERAND_ITER = lazy_pattern(r"(?:^|,)" + OPERAND)
# operands written as bare names (XLA's default since 2025, JAX): checked in one match
NAMES_ONLY = re.compile(r"[ \t]*%?" + IDENT + r"[ \t]*(?:,[ \t]*%?" + IDENT + r"[ \t]*)*" + P)
NAME_FIND = lazy_pattern(IDENT)
# a whole one-line instruction whose operand list holds no parentheses:
# ROOT, %, name, array shape or none, opcode, operand text, attribute text
LINE = lazy_pattern(
    r"[ \t]*(ROOT[ \t]+)?(%?)(" + IDENT + r")[ \t]*=[ \t]*"
    r"(?:([a-z][a-z0-9]*" + DIMS_LAYOUT + r")[ \t]+)?([a-z][a-z0-9\-]*)"
    r"\(([^()\n]*)\)([^\n]*+)(?<![,=])(?<![,=]\r)"  # attributes that do not go on on the next line
)
# name = [shape] opcode(   with an array shape or none: the common case in one match
COMMON_HEAD = lazy_pattern(
    r"[ \t]*(ROOT[ \t]+)?(%?)(" + IDENT + r")[ \t]*=[ \t]*"
    r"(?:([a-z][a-z0-9]*" + DIMS_LAYOUT + r")[ \t]+)?([a-z][a-z0-9\-]*)\("
)
NEWLINE = lazy_pattern("\n")
PAREN_OR_QUOTE = lazy_pattern(r'[()"]')
MATCH_END = re.Match.end
COMMENT = re.compile(r"/\*.*?\*/", re.S)
STRING = lazy_pattern(r'"(?:[^"\\\n]|\\.)*"')
COMP_START = re.compile(r"[ \t]*(ENTRY[ \t]+)?%?(" + IDENT + r")[ \t]*[({]")
# a layout in a computation's header: braces directly after a shape's dimensions
HEADER_LAYOUT = re.compile(r"\][ \t]*\{[^{}]*\}")
MODULE_NAME = re.compile(r"[ \t]*HloModule[ \t]+%?(" + IDENT + r")")
CALLEE_RE = lazy_pattern(r"(?:" + _CALLEES + r"|control-predecessors)=")
NEW_INSTRUCTION = lazy_pattern(
    r"[ \t]*(?:ROOT[ \t]+)?%?" + IDENT + r"[ \t]*=[ \t]*(?:\(|[a-z][a-z0-9]*\[|[a-z][a-z0-9\-]*\()"
)
# `, key=%name` or `, key={%a, %b}` for the attributes that name computations
# (the last group, empty, matches a value of any other form: a computation written inline, ...)
_CALLEE_VALUE = r"(" + _CALLEES + r")=(?:%?(" + IDENT + r")|\{([^{}]*)\}|())"
CALLEE_VALUES = re.compile(r",[ \t]*" + _CALLEE_VALUE)
# the same where XLA's '/*index=N*/' may stand after the ', ' (a line with a comment)
CALLEE_VALUES_AFTER_COMMENTS = lazy_pattern(r",[ \t]*(?:/\*index=[0-9]+\*/)?" + _CALLEE_VALUE)
NEXT_IS_NAME = lazy_pattern(r",[ \t]*%?" + IDENT + r"[ \t]*(?:,|$)")
#: opcodes that never call a computation in XLA: their attributes are not read
#: for callees while scanning (any other opcode, known or not, is); an attribute
#: such as ``to_apply`` on them is kept verbatim like any attribute they cannot have
NON_CALLER_OPCODES: frozenset[str] = frozenset(
    "abs acos acosh add add-dependency after-all all-gather all-gather-done all-gather-start "
    "all-reduce-done all-to-all and asin asinh atan atan2 atanh batch-norm-grad "
    "batch-norm-inference batch-norm-training bitcast bitcast-convert broadcast cbrt ceil cholesky "
    "clamp count-leading-zeros collective-broadcast collective-permute collective-permute-done "
    "collective-permute-start compare complex concatenate constant convert convolution copy "
    "copy-done copy-start cosine cosh divide domain dot dynamic-reshape dynamic-slice "
    "dynamic-update-slice erf exponential exponential-minus-one fft floor gather "
    "get-dimension-size get-tuple-element imag infeed iota is-finite log log-plus-one logistic "
    "maximum minimum mulhi multiply negate not opt-barrier or outfeed pad parameter partition-id "
    "popcnt power ragged-all-to-all ragged-dot real recv recv-done reduce-precision remainder "
    "replica-id reshape reverse rng rng-bit-generator rng-get-and-update-state round-nearest-afz "
    "round-nearest-even rsqrt scaled-dot select send send-done set-dimension-size shift-left "
    "shift-right-arithmetic shift-right-logical sign sine sinh slice sqrt stochastic-convert "
    "subtract tan tanh topk transpose triangular-solve tuple xor".split()
)
# one operand written as a bare name, perhaps after XLA's /*index=N*/ comment
BARE_OPERAND = r"[ \t]*(?:/\*index=[0-9]+\*/)?%?" + IDENT + r"[ \t]*"
# a tuple shape: parentheses nested up to three deep, no quote (what is inside is read
# when asked, as on the line-by-line path, which would read a quote as a string)
TUPLE_SHAPE = r'\((?:[^()"\n]|\((?:[^()"\n]|\([^()"\n]*\))*\))*\)'
# dimensions as XLA prints them, for the one-pass body check: no blank inside (a body written
# with them is read line by line)
PRINTED_DIMS_LAYOUT = rf"\[(?:[0-9<=?]+{P}(?:,[0-9<=?]+{P})*{P})?{P}\]" + DIMS_LAYOUT[DIMS_LAYOUT.index("](?:") + 1 :]
# one plain instruction line, for checking a whole computation body in one pass (after the
# operands nothing or attributes, which do not end with ',' or '=' to go on on the next line):
# name, element type (none for a tuple shape), opcode, then a parameter's number or a
# constant's literal, or for any other opcode text that may be bare operand names
# (checked afterwards for the whole body at once, by NAMES_ONLY or INDEXED_OPERAND_LIST)
BLOCK_LINE = re.compile(
    rf"^[ \t]*{P}(?:ROOT[ \t]+)?{P}%?{P}(?!__(?!xla_))({IDENT}{P})[ \t]*{P}=[ \t]*{P}"
    rf"(?:([a-z][a-z0-9]*{P}){PRINTED_DIMS_LAYOUT}[ \t]+{P}|{TUPLE_SHAPE}[ \t]+{P})?([a-z][a-z0-9\-]*{P})"
    r"\((?:(?:(?<=[ \t=]parameter\()|(?<=[ \t=]constant\())[^()\n]*|([ \t%A-Za-z0-9_.,\-/*=]*))\)"
    rf"(?:,.*{P}(?<![,=])(?<![,=]\r))?{P}\r?\n",
    re.M,
)
ROW_NAME, ROW_TYPE, ROW_OPCODE, ROW_OPERANDS = map(itemgetter, range(4))
#: lines of a body checked in one pass: a longer body is checked this many lines at a time
#: (holding the reading of a 137,000-line body at once was slower than line by line)
BLOCK_MAX_LINES = 1000
# the same line read for building it: ROOT, %, name, shape, opcode, operand text
BUILT_LINE = lazy_pattern(
    r"[ \t]*(ROOT[ \t]+)?(%?)(" + IDENT + r")[ \t]*=[ \t]*"
    r"(?:([a-z][a-z0-9]*" + DIMS_LAYOUT + r"|" + TUPLE_SHAPE + r")[ \t]+)?([a-z][a-z0-9\-]*)\(([^()\n]*)\)"
)
# possessive: the engine keeps no backtracking state per operand (a body's operands are
# checked as one string: a million of them would otherwise cost a hundred bytes each)
INDEXED_OPERAND_LIST = lazy_pattern(BARE_OPERAND + r"(?:," + BARE_OPERAND + r")*" + P)
# XLA's comment before an operand (in an operand list already checked)
INDEX_COMMENT = lazy_pattern(r"/\*index=[0-9]+\*/")
INDEXED_OPERAND = lazy_pattern(r"(?:^|,)" + BARE_OPERAND.replace("%?" + IDENT, "%?(" + IDENT + ")"))
# every byte but brackets and newlines, deleted to check bracket nesting line by line
NOT_BRACKETS = bytes(b for b in range(256) if b not in b"(){}[]\n")
#: longest broken item (characters) the grammar is asked to explain precisely
EXPLAIN_LIMIT = 1 << 20
PAYLOAD_OPCODES = frozenset({"parameter", "constant"})
#: one string object per opcode XLA knows (an instruction shares it); a spelling not in it is
#: not an opcode
OPCODE_SPELLINGS: dict[str, str] = {name: name for name in OPCODE_NAMES}
