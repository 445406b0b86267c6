"""fuse-reduce-scatter: N reduce-scatters feeding one concatenate become one.

Two rewrites are tried on every ``concatenate`` of the computations in scope
(``docs/contract.md``; ``docs/passes/fuse-reduce-scatter.md`` has the derivations):

1. ``concatenate(RS(x1), ..., RS(xn))`` -> ``RS(concatenate(x1, ..., xn))``.
   The reduce-scatters may reach the concatenate directly or through
   ``tuple`` -> ``opt-barrier`` -> ``get-tuple-element`` plumbing. When the
   concatenate dimension is the scatter dimension the inputs are interleaved per
   device (reshape ``[.., G*k, ..]`` to ``[.., G, k, ..]``, concatenate on the
   block axis, reshape back) so that every device still receives its own blocks.
2. The mean idiom: every concatenate operand is ``divide(RS(xi), broadcast(c))``,
   or every reduce-scatter input is ``divide(xi, broadcast(c))`` with an ``add``
   reduction, for one uniform constant ``c``. It becomes one reduce-scatter over
   the concatenated undivided inputs followed by one ``divide`` by ``c``.

Every concatenate with a reduce-scatter among its operands is reported: as
rewritten, or as left alone with the first condition that failed.

The pass works in two phases per computation: every concatenate is matched
against the unchanged computation (a fusion never adds a dependency between
existing instructions, so each decision stays valid while the others are
applied), then all fusions are spliced in with one walk over the instruction
list. Both phases are linear in the size of the computation plus the size of the
matched groups.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import HloError
from ..ir import Computation, Instruction, Module
from ..lexicon import read_bool
from ..opcodes import Kind
from ..regex import lazy_pattern
from ..shapes import Shape
from ..values import ValueReadError, read
from .base import Pass, PassReport, attach_location

_RS = "reduce-scatter"


class _Left(Exception):
    """A matched concatenate that cannot be fused; the message is the reason."""


class _Operand(NamedTuple):
    """One concatenate operand traced back to its reduce-scatter."""

    top: Instruction  # the concatenate's operand itself
    rs: Instruction  # the reduce-scatter
    chain: list[Instruction]  # divide / plumbing between the concat and rs
    out_divide: Instruction | None  # divide(RS, broadcast(c)) form
    in_divide: Instruction | None  # RS(divide(x, broadcast(c))) form


class _Divisor(NamedTuple):
    constant: Instruction
    broadcast: Instruction
    element_type: str
    value: float


class _Fusion(NamedTuple):
    """What one rewrite puts in place of a concatenate."""

    concat: Instruction
    before: list[Instruction]  # new instructions, inserted right before the concatenate
    result: Instruction  # takes the concatenate's place and name
    rs: Instruction  # the fused reduce-scatter (the result itself, or the divide's numerator)
    candidates: list[Instruction]  # matched instructions to remove once nothing uses them


class _Graph:
    """Read-only facts about one computation, computed once per pass run."""

    def __init__(self, module: Module, comp: Computation) -> None:
        self.module = module
        self.comp = comp
        self.users = comp.users_map()
        self.pos = {instr.name: k for k, instr in enumerate(comp.instructions)}
        self.has_preds: set[str] = set()  # instructions with control predecessors
        self.control_named: set[str] = set()  # instructions some instruction lists as a control predecessor
        for instr in comp.instructions:
            if instr.text is not None and "control-predecessors" not in instr.text:
                continue
            preds = instr.control_predecessors
            if preds:
                self.has_preds.add(instr.name)
                self.control_named.update(preds)
        self._bodies: dict[tuple[str, str], bool] = {}

    def get(self, name: str) -> Instruction | None:
        return self.comp.get(name)

    def users_of(self, instr: Instruction) -> list[Instruction]:
        return self.users.get(instr.name, [])

    def has_control(self, instr: Instruction) -> bool:
        return instr.name in self.has_preds or instr.name in self.control_named

    def depends_on(self, instr: Instruction, targets: list[Instruction]) -> Instruction | None:
        """The first of ``targets`` that ``instr`` transitively uses (data or control).

        Text order is a definition-before-use order, so nothing defined before the
        earliest target can reach one: the search stops there.
        """
        names = {t.name for t in targets}
        if not names:
            return None
        low = min(self.pos.get(n, 0) for n in names)
        seen: set[str] = set()
        stack = [instr.name]
        while stack:
            name = stack.pop()
            if name in names:
                return self.comp.get(name)
            if name in seen or self.pos.get(name, low) < low:
                continue
            seen.add(name)
            node = self.comp.get(name)
            if node is None:
                continue
            stack.extend(node.operands)
            if name in self.has_preds:
                stack.extend(node.control_predecessors)
        return None

    def bodies_equivalent(self, a: str | None, b: str | None) -> bool:
        if a is None or b is None or a == b:
            return a == b
        key = (a, b)
        if key not in self._bodies:
            self._bodies[key] = _bodies_equivalent(self.module, a, b)
        return self._bodies[key]


class FuseReduceScatter(Pass):
    name = "fuse-reduce-scatter"
    description = "N reduce-scatters feeding one concatenate become one wider reduce-scatter"
    anchors = frozenset({"concatenate"})
    # a concatenate is a candidate only when reduce-scatters feed it, which takes
    # building its computation to know: concatenates outside the scope are not reported
    outside_scope_opcodes = frozenset()

    def rewrite(self, module: Module, comp: Computation, anchored: list[Instruction], report: PassReport) -> None:
        graph = _Graph(module, comp)
        fusions: list[_Fusion] = []
        for concat in anchored:
            operands = [_trace(graph, op) for op in concat.operands]
            if all(o is None for o in operands):
                continue  # not a concatenate of reduce-scatters
            try:
                fusion = _match(graph, concat, operands)
            except _Left as why:
                report.add_left(comp, concat, str(why))
                continue
            fusions.append(fusion)
            report.add_rewritten(comp, concat, _describe(fusion))
        if fusions:
            _apply(module, comp, graph, fusions)


def _describe(f: _Fusion) -> str:
    text = f"{_RS} '{f.rs.name}' over '{f.rs.operands[0]}'"
    if f.result.opcode == "divide":
        text += f", divided by '{f.before[-1].operands[0]}'"
    return text


# ----------------------------------------------------------------------- tracing


def _int_attr(instr: Instruction, name: str) -> int | None:
    text = instr.attr_text(name)
    try:
        return read(Kind.INT, text) if text is not None else None  # type: ignore[return-value]
    except ValueReadError:
        return None


def _dims(instr: Instruction) -> list[int] | None:
    """``dimensions={a,b}`` read without the grammar (None when absent or unusual)."""
    text = instr.attr_text("dimensions")
    try:
        return read(Kind.INT_LIST, text) if text is not None else None  # type: ignore[return-value]
    except ValueReadError:
        return None


def _flag(instr: Instruction, name: str) -> bool:
    text = instr.attr_text(name)
    return read_bool(text) is True  # XLA spells booleans in lower case only


def _callee(instr: Instruction) -> str | None:
    text = instr.attr_text("to_apply")
    return text.strip().lstrip("%") if text is not None else None


def _through_plumbing(graph: _Graph, instr: Instruction) -> tuple[Instruction, list[Instruction]] | None:
    """Follow ``get-tuple-element(opt-barrier(tuple(...)))`` back to the element;
    returns ``(element, [gte, opt-barrier, tuple, ...])``."""
    chain: list[Instruction] = []
    while instr.opcode == "get-tuple-element":
        barrier = graph.get(instr.operands[0]) if instr.operands else None
        if barrier is None or barrier.opcode != "opt-barrier" or len(barrier.operands) != 1:
            return None
        tup = graph.get(barrier.operands[0])
        index = _int_attr(instr, "index")
        if tup is None or tup.opcode != "tuple" or index is None or not 0 <= index < len(tup.operands):
            return None
        element = graph.get(tup.operands[index])
        if element is None:
            return None
        chain += [instr, barrier, tup]
        instr = element
    return instr, chain


def _trace(graph: _Graph, name: str) -> _Operand | None:
    """The reduce-scatter behind one concatenate operand, or None."""
    top = graph.get(name)
    if top is None:
        return None
    out_divide = None
    start = top
    if top.opcode == "divide" and len(top.operands) == 2:
        num = graph.get(top.operands[0])
        if num is not None:
            found = _through_plumbing(graph, num)
            if found is not None and found[0].opcode == _RS:
                out_divide = top
                start = num
    found = _through_plumbing(graph, start)
    if found is None or found[0].opcode != _RS:
        return None
    rs, chain = found
    if out_divide is not None:
        chain = [out_divide, *chain]
    in_divide = None
    if len(rs.operands) == 1:
        producer = graph.get(rs.operands[0])
        if producer is not None and producer.opcode == "divide" and len(producer.operands) == 2:
            in_divide = producer
    return _Operand(top, rs, chain, out_divide, in_divide)


def _shape(instr: Instruction, what: str) -> Shape:
    """The array shape of ``instr`` (a malformed shape is a located HloParseError)."""
    if instr.shape is None:
        raise _Left(f"the shape of {what} '{instr.name}' is not written")
    shape = instr.shape_obj
    try:
        shape.minor_to_major()
    except HloError as exc:
        raise attach_location(exc, instr) from None
    if shape.is_tuple:
        raise _Left(f"{what} '{instr.name}' has a tuple shape")
    if any(shape.dynamic):
        raise _Left(f"{what} '{instr.name}' has a dynamic shape")
    return shape


# ------------------------------------------------------------- body equivalence

#: attributes that only name things (compared through what they name, or not at all)
_NAME_KEYS = frozenset(
    {"to_apply", "calls", "condition", "body", "select", "scatter", "true_computation",
     "false_computation", "branch_computations", "called_computations", "metadata",
     "control-predecessors"}
)


def _bodies_equivalent(module: Module, a: str | None, b: str | None, depth: int = 0) -> bool:
    """Same computation, or two computations of identical structure (opcodes,
    shapes, operand structure, parameter numbers, attributes other than names)."""
    if a is None or b is None or a == b:
        return a == b
    ca, cb = module.computation(a), module.computation(b)
    if ca is None or cb is None or depth > 32 or len(ca.parameters()) != len(cb.parameters()):
        return False
    mapping: dict[str, str] = {}
    stack = [(ca.root, cb.root)]
    while stack:
        x, y = stack.pop()
        if x.name in mapping:
            if mapping[x.name] != y.name:
                return False
            continue
        if x.opcode != y.opcode or len(x.operands) != len(y.operands) or x.payload != y.payload:
            return False
        if x.shape is None or y.shape is None or x.shape_obj != y.shape_obj:
            return False
        if [kv for kv in x.attrs if kv[0] not in _NAME_KEYS] != [kv for kv in y.attrs if kv[0] not in _NAME_KEYS]:
            return False
        xc, yc = x.called_computations(), y.called_computations()
        if len(xc) != len(yc) or not all(
            _bodies_equivalent(module, p, q, depth + 1) for p, q in zip(xc, yc, strict=True)
        ):
            return False
        mapping[x.name] = y.name
        for p, q in zip(x.operands, y.operands, strict=True):
            px, qy = ca.get(p), cb.get(q)
            if px is None or qy is None:
                return False
            stack.append((px, qy))
    return True


def _reduction_kind(module: Module, rs: Instruction) -> str:
    body = module.computation(_callee(rs) or "")
    return body.root.opcode if body is not None and body.instructions else "?"


# --------------------------------------------------------------------- divisors

_NUMBER = lazy_pattern(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|-?nan(?:\(0x[0-9a-fA-F]+\))?|true|false")


def _literal_values(payload: str | None) -> list[str] | None:
    """The element texts of a constant's literal, or None when not readable."""
    if payload is None or "..." in payload:
        return None
    text = re.sub(r"/\*.*?\*/", "", payload)
    values = _NUMBER.findall(text)
    if re.sub(r"[{}\s,]", "", _NUMBER.sub("", text)):
        return None
    return values or None


def _divisor(graph: _Graph, divide: Instruction, expected: Shape) -> _Divisor:
    """``divide``'s right operand as a broadcast of a uniform constant."""
    bcast = graph.get(divide.operands[1])
    const = graph.get(bcast.operands[0]) if bcast is not None and bcast.opcode == "broadcast" \
        and len(bcast.operands) == 1 else None
    if bcast is None or const is None or const.opcode != "constant":
        raise _Left(f"the divisor of '{divide.name}' is not a broadcast of a constant")
    values = _literal_values(const.payload)
    if values is None:
        raise _Left(f"the divisor constant '{const.name}' of '{divide.name}' cannot be read")
    try:
        numbers = {float(v) for v in values}
    except ValueError:
        raise _Left(f"the divisor constant '{const.name}' of '{divide.name}' is not numeric") from None
    if len(numbers) != 1 or any(n != n for n in numbers):
        raise _Left(f"the divisor constant '{const.name}' of '{divide.name}' is not uniform")
    dshape = _shape(divide, "divide")
    bshape = _shape(bcast, "broadcast")
    if const.shape is None:
        raise _Left(f"the shape of the divisor constant '{const.name}' is not written")
    etype = const.shape_obj.element_type
    if dshape.dims != expected.dims or bshape.dims != expected.dims:
        raise _Left(f"'{divide.name}' does not divide element by element")
    if not (etype == dshape.element_type == bshape.element_type == expected.element_type):
        raise _Left(f"the divisor of '{divide.name}' has another element type")
    return _Divisor(const, bcast, etype, numbers.pop())


def _same_divisor(divisors: list[_Divisor], divides: list[Instruction]) -> None:
    d0 = divisors[0]
    for d, div in zip(divisors[1:], divides[1:], strict=True):
        if (d.element_type, d.value) != (d0.element_type, d0.value):
            raise _Left(
                f"divisors differ: '{divides[0].name}' divides by '{d0.constant.name}' ({d0.value:g}), "
                f"'{div.name}' by '{d.constant.name}' ({d.value:g})"
            )


# ------------------------------------------------------------------------ checks


def _single_user(graph: _Graph, instr: Instruction, user: Instruction) -> str | None:
    """None when ``user`` is the only use of ``instr``; otherwise what else uses it."""
    if instr.is_root:
        return f"'{instr.name}' is the ROOT of '{graph.comp.name}'"
    for u in graph.users_of(instr):
        if u is not user:
            return f"'{instr.name}' has another user, '{u.name}'"
    if user.opcode != "concatenate" and user.operands.count(instr.name) > 1:
        return f"'{instr.name}' is used twice by '{user.name}'"
    return None


def _check_group(graph: _Graph, concat: Instruction, ops: list[_Operand]) -> None:
    """Raise _Left with the first failed condition of rewrite 1."""
    module = graph.module
    first = ops[0].rs
    for o in ops:
        if len(o.rs.operands) != 1:
            raise _Left(f"'{o.rs.name}' has {len(o.rs.operands)} operands (a variadic reduce-scatter)")
        _shape(o.rs, "reduce-scatter")
    groups_text = first.attr_text("replica_groups")
    for o in ops[1:]:
        rs = o.rs
        text = rs.attr_text("replica_groups")
        if text != groups_text and rs.replica_groups != first.replica_groups:
            raise _Left(f"replica groups differ: '{first.name}' has {groups_text}, '{rs.name}' has {text}")
        if not graph.bodies_equivalent(_callee(first), _callee(rs)):
            raise _Left(
                f"reduction bodies differ: '{first.name}' uses {_callee(first)} "
                f"({_reduction_kind(module, first)}), '{rs.name}' uses {_callee(rs)} "
                f"({_reduction_kind(module, rs)})"
            )
        if _dims(rs) != _dims(first):
            raise _Left(
                f"scatter dimensions differ: '{first.name}' scatters {first.attr_text('dimensions')}, "
                f"'{rs.name}' scatters {rs.attr_text('dimensions')}"
            )
        if rs.element_type != first.element_type:
            raise _Left(
                f"element types differ: '{first.name}' is {first.element_type}, '{rs.name}' is {rs.element_type}"
            )
        if _flag(rs, "use_global_device_ids") != _flag(first, "use_global_device_ids"):
            raise _Left(f"use_global_device_ids differs between '{first.name}' and '{rs.name}'")
        if _flag(rs, "constrain_layout") != _flag(first, "constrain_layout"):
            raise _Left(f"constrain_layout differs between '{first.name}' and '{rs.name}'")
        if rs.has_attr("channel_id") != first.has_attr("channel_id"):
            with_id, without = (first, rs) if first.has_attr("channel_id") else (rs, first)
            raise _Left(f"channel_id is present on '{with_id.name}' but not on '{without.name}'")
    # each reduce-scatter (and its plumbing) is used only on the way to the concatenate
    for o in ops:
        path = [o.rs, *reversed(o.chain)]  # from the reduce-scatter up to the concat operand
        for below, above in zip(path, path[1:], strict=False):
            if below.opcode == "opt-barrier":
                # an opt-barrier may carry other values: only its element must go to the concat
                index = _int_attr(above, "index")
                if below.is_root:
                    raise _Left(f"'{below.name}' is the ROOT of '{graph.comp.name}'")
                for u in graph.users_of(below):
                    if u.opcode != "get-tuple-element":
                        raise _Left(f"'{below.name}' is used whole by '{u.name}'")
                    if u is not above and _int_attr(u, "index") == index:
                        raise _Left(f"element {index} of '{below.name}' is also used by '{u.name}'")
                continue
            problem = _single_user(graph, below, above)
            if problem is not None:
                raise _Left(problem)
        problem = _single_user(graph, o.top, concat)
        if problem is not None:
            raise _Left(problem)
        for x in [o.rs, *o.chain]:
            if graph.has_control(x):
                raise _Left(f"'{x.name}' has control dependencies")
    rss = [o.rs for o in ops]
    for o in ops:
        source = graph.get(o.rs.operands[0])
        other = graph.depends_on(source, [r for r in rss if r is not o.rs]) if source is not None else None
        if other is not None:
            raise _Left(f"the input of '{o.rs.name}' depends on '{other.name}', another reduce-scatter of the group")


# ------------------------------------------------------------------------ fusion


def _match(graph: _Graph, concat: Instruction, traced: list[_Operand | None]) -> _Fusion:
    module = graph.module
    for k, o in enumerate(traced):
        if o is None:
            raise _Left(f"operand {k} ('{concat.operands[k]}') is not a reduce-scatter")
    ops: list[_Operand] = [o for o in traced if o is not None]
    if len(ops) < 2:
        raise _Left("only one operand: nothing to fuse")
    out_div = [o.out_divide is not None for o in ops]
    if any(out_div) and not all(out_div):
        k = out_div.index(not out_div[0])
        raise _Left(
            f"operands mix divided and undivided reduce-scatters ('{ops[0].top.name}' and '{ops[k].top.name}')"
        )
    _check_group(graph, concat, ops)
    concat_shape = _shape(concat, "concatenate")
    cdims = _dims(concat)
    if cdims is None or len(cdims) != 1:
        raise _Left(f"'{concat.name}' has no single concatenate dimension")
    scatter = _dims(ops[0].rs)
    if scatter is None or len(scatter) != 1:
        raise _Left(f"'{ops[0].rs.name}' has no single scatter dimension")

    divisor: _Divisor | None = None
    use_in_divides = False
    if all(out_div):
        out_divides = [o.out_divide for o in ops if o.out_divide is not None]
        divisors = [_divisor(graph, d, _shape(o.rs, "reduce-scatter")) for d, o in zip(out_divides, ops, strict=True)]
        _same_divisor(divisors, out_divides)
        divisor = divisors[0]
    elif all(o.in_divide is not None for o in ops) and _reduction_kind(module, ops[0].rs) == "add":
        # the mean of the inputs; when the divisors do not qualify, rewrite 1 (exact) still applies
        in_divides = [o.in_divide for o in ops if o.in_divide is not None]
        try:
            divisors = [_divisor(graph, d, _shape(d, "divide")) for d in in_divides]
            _same_divisor(divisors, in_divides)
        except _Left:
            pass
        else:
            divisor = divisors[0]
            use_in_divides = True

    inputs = [graph.get(o.in_divide.operands[0] if use_in_divides and o.in_divide else o.rs.operands[0])
              for o in ops]
    xs: list[Instruction] = [x for x in inputs if x is not None]
    if len(xs) != len(ops):
        raise _Left("an input of the reduce-scatters is not defined in this computation")
    shapes = [_shape(x, "reduce-scatter input") for x in xs]
    cdim, sdim = cdims[0], scatter[0]
    rs_shape = _shape(ops[0].rs, "reduce-scatter")
    if not 0 <= sdim < rs_shape.rank or rs_shape.dims[sdim] == 0:
        raise _Left(f"'{ops[0].rs.name}' scatters an empty or missing dimension")
    if not 0 <= cdim < rs_shape.rank:
        raise _Left(f"'{concat.name}' concatenates a missing dimension")
    if shapes[0].rank != rs_shape.rank:
        raise _Left(f"'{ops[0].rs.name}' and its input '{xs[0].name}' differ in rank")
    group = shapes[0].dims[sdim] // rs_shape.dims[sdim]
    for x, s, o in zip(xs, shapes, ops, strict=True):
        out = _shape(o.rs, "reduce-scatter")
        if s.rank != out.rank or s.dims[sdim] != group * out.dims[sdim]:
            raise _Left(f"'{o.rs.name}' does not scatter '{x.name}' into {group} blocks like '{ops[0].rs.name}'")

    before: list[Instruction] = []
    new_input = _build_input(module, concat, xs, shapes, cdim, sdim, group, before)
    first = ops[0].rs
    rs_attrs = [
        (k, v)
        for k in ("channel_id", "replica_groups", "constrain_layout", "use_global_device_ids", "dimensions",
                  "to_apply")
        if (v := first.attr_text(k)) is not None
    ]
    if divisor is None:
        result = fused = Instruction(concat.name, _RS, concat.shape, [new_input.name],
                                     rs_attrs + _output_attrs(concat) + _meta(first))
    else:
        fused = Instruction(module.fresh_name(f"{concat.name}.reduce-scatter"), _RS, concat.shape,
                            [new_input.name], rs_attrs + _meta(first))
        before.append(fused)
        const_name = _scalar_constant(module, concat, divisor, before)
        bcast = Instruction(module.fresh_name(f"{concat.name}.divisor"), "broadcast", concat_shape.text(),
                            [const_name], [("dimensions", "{}")])
        before.append(bcast)
        divide = ops[0].out_divide if ops[0].out_divide is not None else ops[0].in_divide
        result = Instruction(concat.name, "divide", concat.shape, [fused.name, bcast.name],
                             _output_attrs(concat) + _meta(divide))
    return _Fusion(concat, before, result, fused, _candidates(graph, ops))


def _meta(instr: Instruction | None) -> list[tuple[str, str]]:
    text = instr.attr_text("metadata") if instr is not None else None
    return [("metadata", text)] if text is not None else []


def _output_attrs(concat: Instruction) -> list[tuple[str, str]]:
    """What the concatenate says about its value that the replacement keeps."""
    return [(k, v) for k in ("sharding", "control-predecessors") if (v := concat.attr_text(k)) is not None]


def _scalar_constant(module: Module, concat: Instruction, divisor: _Divisor, before: list[Instruction]) -> str:
    """A scalar constant holding the divisor: the divisor itself, or a new one."""
    const = divisor.constant
    if const.shape_obj.rank == 0:
        return const.name
    values = _literal_values(const.payload) or ["1"]
    scalar = Instruction(module.fresh_name(f"{concat.name}.divisor_value"), "constant",
                         f"{divisor.element_type}[]", [], payload=values[0])
    before.append(scalar)
    return scalar.name


def _layout_split(shape: Shape, dim: int) -> str | None:
    """The layout of ``shape`` with dimension ``dim`` split in two, same memory order."""
    m2m = shape.minor_to_major()
    if m2m is None:
        return None
    out: list[int] = []
    for d in m2m:
        if d < dim:
            out.append(d)
        elif d == dim:
            out += [dim + 1, dim]
        else:
            out.append(d + 1)
    return "{" + ",".join(str(d) for d in out) + "}"


def _build_input(module: Module, concat: Instruction, xs: list[Instruction], shapes: list[Shape],
                 cdim: int, sdim: int, group: int, before: list[Instruction]) -> Instruction:
    """The concatenation of the reduce-scatter inputs (appended to ``before``).

    Concatenating on the scatter dimension interleaves the inputs per device:
    ``[.., G*k_i, ..]`` -> ``[.., G, k_i, ..]``, concatenate on the ``k`` axis,
    reshape back to ``[.., G*sum(k_i), ..]``.
    """
    base = shapes[0]
    total = sum(s.dims[cdim] for s in shapes)
    dims = list(base.dims)
    dims[cdim] = total
    joined_shape = Shape(base.element_type, tuple(dims), (False,) * len(dims), base.layout)
    if cdim != sdim:
        joined = Instruction(module.fresh_name(f"{concat.name}.inputs"), "concatenate", joined_shape.text(),
                             [x.name for x in xs], [("dimensions", f"{{{cdim}}}")])
        before.append(joined)
        return joined
    blocks: list[str] = []
    for x, s in zip(xs, shapes, strict=True):
        bdims = (*s.dims[:sdim], group, s.dims[sdim] // group, *s.dims[sdim + 1:])
        bshape = Shape(s.element_type, bdims, (False,) * len(bdims), _layout_split(s, sdim))
        b = Instruction(module.fresh_name(f"{x.name}.blocks"), "reshape", bshape.text(), [x.name])
        before.append(b)
        blocks.append(b.name)
    idims = (*base.dims[:sdim], group, total // group, *base.dims[sdim + 1:])
    ishape = Shape(base.element_type, idims, (False,) * len(idims), _layout_split(base, sdim))
    inter = Instruction(module.fresh_name(f"{concat.name}.interleaved"), "concatenate", ishape.text(), blocks,
                        [("dimensions", f"{{{sdim + 1}}}")])
    before.append(inter)
    joined = Instruction(module.fresh_name(f"{concat.name}.inputs"), "reshape", joined_shape.text(), [inter.name])
    before.append(joined)
    return joined


def _candidates(graph: _Graph, ops: list[_Operand]) -> list[Instruction]:
    """The matched instructions that go away once nothing uses them."""
    out: list[Instruction] = []
    for o in ops:
        divides = [d for d in (o.out_divide, o.in_divide) if d is not None]
        for x in [*o.chain, o.rs, *divides]:
            if x not in out:
                out.append(x)
        for d in divides:
            b = graph.get(d.operands[1])
            if b is not None and b.opcode == "broadcast" and b not in out:
                out.append(b)
                c = graph.get(b.operands[0]) if b.operands else None
                if c is not None and c.opcode == "constant" and c not in out:
                    out.append(c)
    return out


# ------------------------------------------------------------------------ splice


def _apply(module: Module, comp: Computation, graph: _Graph, fusions: list[_Fusion]) -> None:
    """Put every fusion in place with one walk over the instruction list."""
    by_concat = {id(f.concat): f for f in fusions}
    # uses after the rewrite: replaced concatenates no longer use their operands
    uses: dict[str, int] = {}
    replaced = set(by_concat)
    for instr in comp.instructions:
        if id(instr) in replaced:
            continue
        for op in set(instr.operands):
            uses[op] = uses.get(op, 0) + 1
    for f in fusions:
        for instr in [*f.before, f.result]:
            for op in set(instr.operands):
                uses[op] = uses.get(op, 0) + 1
    # remove dead candidates, users first (a worklist over the matched instructions only)
    candidates = {c.name: c for f in fusions for c in f.candidates}
    dead: set[str] = set()
    work = list(candidates.values())
    while work:
        c = work.pop()
        if (c.name in dead or uses.get(c.name, 0) or c.is_root or graph.has_control(c)):
            continue
        dead.add(c.name)
        for op in set(c.operands):
            uses[op] -= 1
            if op in candidates and not uses[op]:
                work.append(candidates[op])

    out: list[Instruction] = []
    carried = ""  # blank and comment lines of removed instructions move to the next one
    for instr in comp.instructions:
        fusion = by_concat.get(id(instr))
        if instr.name in dead:
            carried += instr.prefix
            continue
        if fusion is None:
            if carried:
                instr.prefix, carried = carried + instr.prefix, ""
            out.append(instr)
            continue
        out.extend(fusion.before)
        result = fusion.result
        result.is_root, result.line, result.column = instr.is_root, instr.line, instr.column
        # the concatenate's blank and comment lines stand before the first new line
        (fusion.before or [result])[0].prefix, carried = carried + instr.prefix, ""
        out.append(result)
    if carried:
        comp.tail = carried + comp.tail
    comp.set_instructions(out)


__all__ = ["FuseReduceScatter"]
