"""The printer against XLA: every instruction of every input printed anew from the IR, and XLA's
print of that equals XLA's print of the input (XLA's reading of both is the same module)."""

from __future__ import annotations

import pytest
from conftest import needs_xla, read_exact
from rebuild import rebuilt
from test_printer_rebuild import SMALL, input_id

xo = needs_xla()
pytestmark = pytest.mark.xla


@pytest.mark.parametrize("path", SMALL, ids=input_id)
def test_xla_reads_the_rebuilt_module_as_the_input(path):
    text = xo.replace_unspecified_api(read_exact(path))
    out = rebuilt(text, str(path))
    assert xo.xla_reprint(out) == xo.xla_reprint(text)


def test_the_comparison_can_fail():
    text = "HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(p)\n}\n"
    assert xo.xla_reprint(text.replace("negate", "abs")) != xo.xla_reprint(text)
