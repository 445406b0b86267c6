"""strip-debug-info with XLA (jaxlib) as the oracle: the output parses, and XLA's print of it
equals XLA's print of the input with metadata off."""

from __future__ import annotations

import pytest
from conftest import needs_xla, read_exact
from test_strip_debug_info import GOLDEN_JAX, SMALL, strip

xla_oracle = needs_xla()
pytestmark = pytest.mark.xla


def test_output_parses_with_xla_and_equals_xla_without_metadata() -> None:
    oracle = xla_oracle
    for text in (SMALL, read_exact(GOLDEN_JAX)):
        out, _ = strip(text)
        assert oracle.xla_reprint(out) == oracle.xla_reprint(text, metadata=False)
