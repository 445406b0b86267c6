"""convert-custom-calls-to-collectives with XLA (jaxlib) as the oracle.

Modules with iota replica groups come back with explicit groups: XLA parses both, and XLA's
canonical prints are equal once the iota groups in the print of the input are written out
explicitly (the only normalisation). The collectives the reverse pass prints are what XLA's
printer prints for them.
"""

from __future__ import annotations

import pytest
from conftest import needs_xla
from test_convert_custom_calls import (
    BASE_CFG,
    REVERSE,
    _byte_identical_expected,
    _cc,
    _explicit_groups,
    _module,
    _root,
    _run,
    corpus_round_trip_results,
)

xo = needs_xla()
pytestmark = pytest.mark.xla


@pytest.fixture(scope="module")
def corpus_round_trips():
    return corpus_round_trip_results()


@pytest.mark.xla
def test_round_trip_corpus_xla_equal_otherwise(corpus_round_trips):
    others = [(rel, src, back) for rel, src, back in corpus_round_trips if not _byte_identical_expected(rel)]
    assert others, "expected modules with iota replica groups (xla-benchmarks, handwritten/iota_replica_groups.hlo)"
    for rel, src, back in others:
        if back == src:
            continue
        assert "<=[" in src, rel  # the only reason for a difference: iota groups come back explicit
        assert _explicit_groups(xo.xla_reprint(src)) == xo.xla_reprint(back), rel



@pytest.mark.parametrize(
    ("target", "extra_cfg", "shape", "expected"),
    [
        (
            "AwsNeuronAllReduceAdd_f32",
            {"to_apply": "add"},
            "f32[8]{0}",
            "ROOT %c = f32[8]{0} all-reduce(%x), channel_id=4, replica_groups={{0,1},{2,3}}, constrain_layout=true, "
            "use_global_device_ids=true, to_apply=%add",
        ),
        (
            "AwsNeuronReduceScatterAdd_f32",
            {"to_apply": "add", "dimension": 0},
            "f32[4]{0}",
            "ROOT %c = f32[4]{0} reduce-scatter(%x), channel_id=4, replica_groups={{0,1},{2,3}}, "
            "constrain_layout=true, use_global_device_ids=true, dimensions={0}, to_apply=%add",
        ),
        (
            "AwsNeuronAllGather_f32",
            {"dimension": 0},
            "f32[16]{0}",
            "ROOT %c = f32[16]{0} all-gather(%x), channel_id=4, replica_groups={{0,1},{2,3}}, "
            "constrain_layout=true, dimensions={0}, use_global_device_ids=true",
        ),
    ],
)
def test_printed_in_xla_order(target, extra_cfg, shape, expected):
    text = _module(_cc(target, {**BASE_CFG, **extra_cfg}, shape))
    _, report, out = _run(text, [REVERSE])
    assert [(r.instruction, r.opcode) for r in report.rewritten] == [("c", "custom-call")]
    assert _root(out) == "  " + expected
    # XLA's printer prints the line the same way
    reprint = xo.xla_reprint(out, operand_shapes=False)
    assert "  " + expected in reprint.splitlines()



def test_defaults_and_carried_attributes():
    cfg = {"replica_groups": [], "channel_id": None, "use_global_device_ids": False, "constrain_layout": False,
           "to_apply": "add", "original_backend_config": 'say "hi"'}
    line = _cc("AwsNeuronAllReduceAdd_f32", cfg,
               extra=", sharding={replicated}, frontend_attributes={k=\"v\"}, metadata={op_name=\"x\"}")
    _, _, out = _run(_module(line), [REVERSE])
    expected = ('  ROOT %c = f32[8]{0} all-reduce(%x), replica_groups={}, to_apply=%add, sharding={replicated}, '
                'frontend_attributes={k="v"}, metadata={op_name="x"}, backend_config="say \\"hi\\""')
    assert _root(out) == expected
    assert expected in xo.xla_reprint(out, operand_shapes=False).splitlines()



def test_brace_original_backend_config_printed_raw():
    cfg = {**BASE_CFG, "to_apply": "add", "original_backend_config": '{"a":{"b":"}"}}'}
    _, _, out = _run(_module(_cc("AwsNeuronAllReduceAdd_f32", cfg)), [REVERSE])
    assert _root(out).endswith(', to_apply=%add, backend_config={"a":{"b":"}"}}')
    xo.xla_parse(out)

