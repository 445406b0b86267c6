"""XLA's own parser agrees with strict mode: it rejects the texts strict mode rejects and
accepts those it accepts, but for the cases listed in docs/decisions.md.

Without jax/jaxlib the module is skipped with one reason.
"""

from __future__ import annotations

import pytest
from conftest import needs_xla
from test_strict import ACCEPTED, REJECTED

xla_oracle = needs_xla()
pytestmark = pytest.mark.xla

#: what XLA accepts only through a flaw of its own, and strict mode rejects (docs/decisions.md)
XLA_ACCEPTS_BUT_WE_REJECT = {
    "u64 constant negative",          # read as its 64-bit pattern, 18446744073709551615
    "s64 constant beyond int64",      # read as its 64-bit pattern, -9223372036854775808
    "scalar literal for an array",    # the parser's nesting error is dropped: one element is set
    "sharding with fewer devices than its tile",  # the tile's other entries are left unset
    # XLA notes the problem of an instruction written as an operand, then drops that operand
    "operand count of an instruction written as an operand of a tuple",
    "tuple literal of no elements for a tuple of two",  # the constant's shape becomes ((), ())
    "original value with a tuple left open",  # read as the shape has its tuples, the ')' noted missing
    "original value with a tuple closed but not opened",  # likewise, the '(' noted missing
}
#: what XLA cannot be asked about: its parser aborts the process
XLA_ABORTS = {"token constant", "sharding with last_tile_dims and last_tile_dim_replicate",
              "sharding devices as an iota and as a list", "layout with a tile dimension XLA aborts on",
              "parameter numbers with a gap", "parameter replication on another instruction",
              "token shape with dimensions",
              "sharding with more devices than its tile",  # written past the tile: the heap breaks
              "reshape changing the number of elements", "partition-id of another shape",
              "tuple with an array shape", "recv with an array shape", "recv with an empty tuple shape",
              "reshape to a tuple shape", "reshape of a token", "map to a tuple shape", "compare of tuples",
              "dynamic slice with a tuple as its one index", "dynamic update slice of a tuple",
              "dynamic reshape without a size for each dimension", "dynamic reshape changing the number of elements",
              "recv-done of an array", "dot of one operand", "original value of two trees",
              "shorthand start with fewer operands than it wraps", "shorthand start of a partition-id of another shape",
              "constant with a layout that is not an order of its dimensions",
              "get-tuple-element beyond the operands of a tuple", "get-tuple-element of a negative index of a tuple",
              "a negative tolerance of a result accuracy",
              # XLA's parser writes past the spatial dimensions it counted: it may stop or read on
              "convolution labels numbering a spatial dimension past their count"}
#: what strict mode accepts by decision although XLA rejects it (docs/decisions.md)
WE_ACCEPT_BUT_XLA_REJECTS = {"unspecified api_version (by decision)",
                             # a mesh's axes as names: jaxlib's XLA is older and reads them as strings
                             "named shardings as the newest XLA prints them"}


def _xla_accepts(text: str) -> bool:
    try:
        xla_oracle.xla_parse(text)
    except xla_oracle.XlaRejected:
        return False
    return True


@pytest.mark.parametrize("label,text", [(c[0], c[1]) for c in REJECTED if c[0] not in XLA_ABORTS],
                         ids=[c[0] for c in REJECTED if c[0] not in XLA_ABORTS])
def test_xla_rejects_what_strict_mode_rejects(label, text):
    assert _xla_accepts(text) is (label in XLA_ACCEPTS_BUT_WE_REJECT)


@pytest.mark.parametrize("label,text", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_xla_accepts_what_strict_mode_accepts(label, text):
    assert _xla_accepts(text) is (label not in WE_ACCEPT_BUT_XLA_REJECTS)
