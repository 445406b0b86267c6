"""XLA's own parser works out the shapes ``test_inference.py`` names, refuses what it refuses,
and agrees with strict mode on every elementwise opcode over every kind of element type.

Without jax/jaxlib the module is skipped with one reason.
"""

from __future__ import annotations

import re

import pytest
from conftest import needs_xla
from test_inference import ACCEPTED, REJECTED, ROOT_OF_ANOTHER_SHAPE, module

from hlo_rewrite import HloError, parse_module

xla_oracle = needs_xla()
pytestmark = pytest.mark.xla

#: the instruction ``result`` as XLA prints it: its shape
_RESULT = re.compile(r"^\s*(?:ROOT )?%result = (.*?) [a-z][a-z0-9-]*\(", re.M)
#: a printed layout (XLA prints a layout on every array it infers)
_LAYOUT = re.compile(r"\{[0-9,]*\}")

UNARY = """abs acos acosh asin asinh atanh cbrt ceil copy cosh cosine count-leading-zeros erf exponential
           exponential-minus-one floor imag is-finite log log-plus-one logistic negate not popcnt real
           round-nearest-afz round-nearest-even rsqrt sign sine sinh sqrt tan tanh""".split()
BINARY = """add subtract multiply divide atan2 complex maximum minimum power remainder and or xor shift-left
            shift-right-arithmetic shift-right-logical compare""".split()
#: an operand of each kind: pred, signed and unsigned integers, floats narrow and wide, complex,
#: and what is not an array
KINDS = ["pred[2]", "s8[2]", "s32[2]", "u32[2]", "f16[2]", "bf16[2]", "f32[2]", "f64[2]", "f8e4m3fn[2]",
         "c64[2]", "c128[2]", "token[]", "(f32[2])"]


def _table() -> list[tuple[str, str, str]]:
    cases = [(f"{op} of {k}", k, f"{op}(p0)") for op in UNARY for k in KINDS]
    for op in BINARY:
        extra = ", direction=LT" if op == "compare" else ""
        cases += [(f"{op} of {k}", f"{k}; {k}", f"{op}(p0, p1){extra}") for k in KINDS]
    return cases


TABLE = _table()


def _xla_shape(text: str) -> str | None:
    """The shape XLA gives ``result``, without layouts; None when XLA refuses the text."""
    try:
        printed = xla_oracle.xla_reprint(text)
    except xla_oracle.XlaRejected:
        return None
    m = _RESULT.search(printed)
    assert m is not None, printed
    return _LAYOUT.sub("", m.group(1))


def _strict_accepts(text: str) -> bool:
    try:
        parse_module(text, "m.hlo", strict=True)
    except HloError:
        return False
    return True


@pytest.mark.parametrize("label,params,expr,before,shape", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_xla_works_out_the_shape_named(label, params, expr, before, shape):
    assert _xla_shape(module(params, expr, before)) == shape


@pytest.mark.parametrize("label,params,expr,before,_", REJECTED, ids=[c[0] for c in REJECTED])
def test_xla_refuses_what_strict_mode_refuses(label, params, expr, before, _):
    with pytest.raises(xla_oracle.XlaRejected, match="failed to infer shape for opcode"):
        xla_oracle.xla_parse(module(params, expr, before))


def test_strict_mode_and_xla_agree_on_every_elementwise_opcode_and_kind_of_element_type():
    disagree = []
    for label, params, expr in TABLE:
        text = module(params, expr)
        if (_xla_shape(text) is not None) != _strict_accepts(text):
            disagree.append(label)
    assert not disagree


def test_xla_refuses_a_root_of_another_shape_than_its_opcode_gives():
    with pytest.raises(xla_oracle.XlaRejected, match="not compatible with that of its root"):
        xla_oracle.xla_parse(ROOT_OF_ANOTHER_SHAPE)
