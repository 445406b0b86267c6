"""Passes as declared units: the base walk, declared options, the registry's data."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.errors import HloInternalError, PassError
from hlo_rewrite.ir import Computation, Instruction, Module
from hlo_rewrite.passes import (
    BUILTIN_PASSES,
    DEFAULT_PIPELINE,
    REGISTRY,
    OptionInfo,
    Pass,
    PassOptions,
    PassReport,
    Scope,
    all_options,
    anchor_opcodes,
    get_pass,
    located_error,
    option,
    option_infos,
    options_table,
    pass_info,
    pass_infos,
    pass_names,
)
from hlo_rewrite.passes.base import make_options
from hlo_rewrite.pipeline import parse_pass_list, run_passes

MODULE = """HloModule m

fused {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}

body {
  b = f32[4] parameter(0)
  ROOT n.1 = f32[4] negate(b), metadata={op_name="x"}
}

ENTRY main {
  p = f32[4] parameter(0)
  f = f32[4] fusion(p), kind=kLoop, calls=fused
  c = f32[4] call(f), to_apply=body
  ROOT n.2 = f32[4] negate(c)
}
"""


@dataclass(frozen=True)
class NegOptions:
    opcode: str = option("abs", "The opcode a negate becomes.", metavar="OPCODE")
    limit: int = option(-1, "Rewrite at most this many (-1: no limit).")


class NegateToAbs(Pass):
    """A tiny pass for these tests: negate becomes another elementwise opcode."""

    name = "negate-to-abs"
    description = "negate becomes abs"
    anchors = frozenset({"negate"})
    Options = NegOptions
    options: NegOptions

    def rewrite(self, module: Module, comp: Computation, anchored: list[Instruction], report: PassReport) -> None:
        for instr in anchored:
            if self.options.limit >= 0 and len(report.rewritten) >= self.options.limit:
                report.add_left(comp, instr, "limit reached")
                continue
            instr.opcode = self.options.opcode
            instr.mark_changed()
            report.add_rewritten(comp, instr, self.options.opcode)


def test_the_base_hands_anchored_instructions_in_scope_and_reports_the_rest_once() -> None:
    module = parse_module(MODULE, "m.hlo")
    [report] = run_passes(module, [NegateToAbs])
    assert [(r.computation, r.instruction, r.action) for r in report.records] == [
        ("fused", "n", "left"), ("body", "n.1", "left"), ("main", "n.2", "rewritten")
    ]
    assert report.records[0].reason == "outside scope: computation 'fused' is a fusion computation"
    assert report.records[1].reason == ("outside scope: computation 'body' is not the ENTRY computation; "
                                        "all_computations extends the scope")
    assert "ROOT n.2 = f32[4] abs(c)" in print_module(module)


def test_all_computations_widens_the_scope_but_not_into_fusions() -> None:
    module = parse_module(MODULE)
    [report] = run_passes(module, [NegateToAbs], PassOptions(all_computations=True))
    assert [(r.instruction, r.action) for r in report.records] == [
        ("n", "left"), ("n.1", "rewritten"), ("n.2", "rewritten")
    ]


def test_module_scope_sees_fusion_bodies() -> None:
    class Everywhere(NegateToAbs):
        name = "negate-everywhere"
        scope = Scope.MODULE

    module = parse_module(MODULE)
    [report] = run_passes(module, [Everywhere()])
    assert [r.action for r in report.records] == ["rewritten"] * 3


def test_options_are_typed_fields_with_help() -> None:
    infos = option_infos(NegateToAbs)
    assert infos == (
        OptionInfo("negate-to-abs", "opcode", str, "abs", "The opcode a negate becomes.", "OPCODE", "--opcode"),
        OptionInfo("negate-to-abs", "limit", int, -1, "Rewrite at most this many (-1: no limit).", None, "--limit"),
    )
    assert option_infos(NegateToAbs, prefixed=True)[0].flag == "--negate-to-abs-opcode"
    module = parse_module(MODULE)
    options = PassOptions(all_computations=True, per_pass={"negate-to-abs": {"opcode": "sign", "limit": 1}})
    [report] = run_passes(module, [NegateToAbs], options)
    assert [(r.instruction, r.action, r.target or r.reason) for r in report.records] == [
        ("n", "left", "outside scope: computation 'fused' is a fusion computation"),
        ("n.1", "rewritten", "sign"),
        ("n.2", "left", "limit reached"),
    ]


def test_wrong_options_are_value_errors() -> None:
    with pytest.raises(ValueError, match="has no option 'opcodes' \\(its options: opcode, limit\\)"):
        make_options(NegateToAbs, {"opcodes": "x"})
    with pytest.raises(ValueError, match="option 'limit' of pass 'negate-to-abs' must be int, not str"):
        make_options(NegateToAbs, {"limit": "3"})
    with pytest.raises(ValueError, match="must be int, not bool"):
        make_options(NegateToAbs, {"limit": True})


def test_undeclared_option_types_are_refused() -> None:
    @dataclass(frozen=True)
    class Bad:
        things: list = option(None, "no")  # type: ignore[type-arg]

    class BadPass(NegateToAbs):
        name = "bad"
        Options = Bad

    with pytest.raises(TypeError, match="option 'things' must be bool, int, float or str"):
        option_infos(BadPass)


def test_located_error_points_at_the_instruction() -> None:
    module = parse_module(MODULE, "m.hlo")
    instr = module.entry.get("c")
    assert instr is not None
    err = located_error(instr, "no")
    assert isinstance(err, PassError)
    assert (err.filename, err.line, err.column) == ("m.hlo", 16, 3)
    assert err.source_line == "  c = f32[4] call(f), to_apply=body"
    assert err.render().startswith("m.hlo:16:3: error: no\n")


# ------------------------------------------------------------------ the registry
def test_every_builtin_pass_is_declared() -> None:
    assert list(REGISTRY) == list(BUILTIN_PASSES)
    for name in BUILTIN_PASSES:
        cls = get_pass(name)
        assert cls.name == name
        assert cls.description and "\n" not in cls.description
        info = pass_info(name)
        assert info.usable and info.builtin and info.origin == "built-in"
        assert info.default == (name in DEFAULT_PIPELINE)
    assert "strip-debug-info" not in DEFAULT_PIPELINE
    assert pass_names()[: len(BUILTIN_PASSES)] == list(BUILTIN_PASSES)
    assert [i.name for i in pass_infos()] == pass_names()


def test_anchor_opcodes_is_the_union_of_the_declared_anchors() -> None:
    union = anchor_opcodes()
    for name in BUILTIN_PASSES:
        assert get_pass(name).anchors <= union
    assert {"send-done", "recv-done", "concatenate", "all-reduce", "custom-call"} <= union
    assert anchor_opcodes(["fuse-reduce-scatter"]) == frozenset({"concatenate"})


def test_the_options_the_command_line_had_are_declared_by_their_pass() -> None:
    flags = {o.flag: o for o in all_options()}
    assert flags["--send-recv-target"].pass_name == "fuse-send-recv"
    assert flags["--send-recv-target"].default == "AwsNeuronSendRecv"
    assert flags["--strict-tokens"].type is bool
    assert pass_info("convert-collectives-to-custom-call").toggle == "convert-collectives"
    assert pass_info("fuse-send-recv").toggle == "fuse-send-recv"


def test_options_table_has_a_row_per_option() -> None:
    table = options_table()
    rows = table.splitlines()
    assert rows[0] == "| option | pass | type | default | what it does |"
    assert len(rows) == 2 + len(all_options(list(BUILTIN_PASSES)))
    assert ("| `--send-recv-target NAME` | `fuse-send-recv` | text | `AwsNeuronSendRecv` | Use NAME as the "
            "custom_call_target of a fused send/recv pair. |") in rows
    assert any(r.startswith("| `--strict-tokens` | `fuse-send-recv` | flag | off |") for r in rows)


def test_pass_options_shorthands_reach_fuse_send_recv() -> None:
    cls = get_pass("fuse-send-recv")
    opts = PassOptions(send_recv_target="X", strict_tokens=True).for_pass(cls)
    assert (opts.send_recv_target, opts.strict_tokens) == ("X", True)
    opts = PassOptions(send_recv_target="X", per_pass={"fuse-send-recv": {"send_recv_target": "Y"}}).for_pass(cls)
    assert opts.send_recv_target == "Y"
    assert cls(PassOptions(all_computations=True)).all_computations


def test_unknown_pass_names_are_usage_errors() -> None:
    with pytest.raises(ValueError, match="unknown pass 'nope'; valid passes: fuse-reduce-scatter, "):
        parse_pass_list("fuse-send-recv,nope")
    assert parse_pass_list("strip-debug-info, fuse-send-recv") == ["strip-debug-info", "fuse-send-recv"]
    assert parse_pass_list("none") == []
    with pytest.raises(KeyError):
        get_pass("nope")


def test_docs_tables_are_the_generated_ones() -> None:
    from pathlib import Path

    from hlo_rewrite.passes import passes_table

    doc = (Path(__file__).resolve().parents[1] / "docs" / "passes" / "README.md").read_text(encoding="utf-8")
    for name, render in (("passes_table", passes_table), ("options_table", options_table)):
        start = doc.index(f"<!-- generated: {name} -->\n") + len(f"<!-- generated: {name} -->\n")
        end = doc.index("<!-- end generated -->", start)
        assert doc[start:end] == render(), f"docs/passes/README.md: regenerate the {name} block"


def test_options_are_checked_before_any_pass_runs() -> None:
    module = parse_module(MODULE)
    options = PassOptions(per_pass={"negate-to-abs": {"limit": "two"}})
    with pytest.raises(ValueError, match="must be int, not str"):
        run_passes(module, ["strip-debug-info", NegateToAbs], options)  # the first would change it
    assert not module.changed


def test_the_reader_notes_exactly_the_anchor_opcodes_the_passes_declare() -> None:
    from hlo_rewrite.passes import anchor_opcodes
    from hlo_rewrite.reader import NOTED_OPCODES

    assert NOTED_OPCODES == anchor_opcodes()


class _Edit(Pass):
    """A pass for the checks after each pass: ``edit(module)`` is all it does."""

    name = "edit"
    description = "an edit given by the test"
    anchors = frozenset()
    scope = Scope.MODULE

    def __init__(self, edit, name: str = "edit") -> None:
        super().__init__()
        self.edit = edit
        self.name = name

    def run_on(self, module: Module, report: PassReport) -> None:
        self.edit(module)


def _point_at(comp_name: str, instr_name: str, operand: str):
    def edit(module: Module) -> None:
        instr = module.computation(comp_name).by_name[instr_name]
        instr.operands = [operand]
        instr.mark_changed()
    return edit


def test_a_pass_that_breaks_a_computation_it_edited_is_caught_after_it() -> None:
    module = parse_module(MODULE)
    with pytest.raises(HloInternalError, match="pass 'breaks' left an invalid module: operand 'ghost' of 'n.1'"):
        run_passes(module, [_Edit(_point_at("body", "n.1", "ghost"), "breaks")])


def test_each_pass_is_checked_for_what_it_edited_even_where_an_earlier_pass_edited() -> None:
    module = parse_module(MODULE)
    fine, breaks = _Edit(_point_at("body", "n.1", "b"), "fine"), _Edit(_point_at("body", "n.1", "n.1"), "breaks")
    with pytest.raises(HloInternalError, match="pass 'breaks' left an invalid module: operand 'n.1'"):
        run_passes(module, [fine, breaks])
    module = parse_module(MODULE)
    run_passes(module, [fine, _Edit(_point_at("main", "n.2", "f"), "fine too")])
    assert "ROOT n.2 = f32[4] negate(f)" in print_module(module)


def test_a_computation_a_pass_added_is_checked_after_it() -> None:
    def add(module: Module) -> None:
        comp = Computation("extra")
        comp.add_instruction(Instruction("r", "negate", "f32[4]", ["ghost"], is_root=True))
        module.add_computation(comp)  # built before it joined the module: never touched in it
        module.touch()

    module = parse_module(MODULE)
    with pytest.raises(HloInternalError, match="pass 'adds' left an invalid module: operand 'ghost' of 'r'"):
        run_passes(module, [_Edit(add, "adds")])
