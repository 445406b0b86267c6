"""XLA's parser reads every golden input and output (the oracle half of tests/test_golden.py)."""

from __future__ import annotations

import golden_cases as gc
import pytest
from conftest import needs_xla

xo = needs_xla()
pytestmark = pytest.mark.xla


@pytest.mark.parametrize("case", gc.cases(), ids=lambda c: c.id)
def test_xla_parses_the_input_and_the_output(case: gc.GoldenCase) -> None:
    xo.xla_parse(xo.replace_unspecified_api(case.source()))
    xo.xla_parse(xo.replace_unspecified_api(case.expected()))
