"""The rules of the operations that slide a window: ``convolution``, ``reduce-window``
and ``select-and-scatter``, through one window output (padding, dilations, strides)."""

from __future__ import annotations

from collections.abc import Mapping

from ..opcodes import Kind
from ..shapes import Shape, is_array
from ..values import read
from .common import (
    NoShape,
    Programs,
    Rule,
    array,
    check_reducer,
    expect_array,
    joint_type,
    known,
    same_kind,
    signature,
    static,
)

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final


def _window_output(base: Shape, window: Mapping[str, list], element_type: str) -> Shape | None:
    """The shape of ``window`` slid over ``base`` (XLA's ``InferWindowOutputShape``): each
    dimension padded and dilated, then the window's positions counted at its stride."""
    sizes = window["size"]
    if len(sizes) != base.rank:
        raise NoShape(f"Window has dimension {len(sizes)} but base shape has dimension {base.rank}.")
    dims = []
    for k, size in enumerate(sizes):
        stride, (low, high) = window["stride"][k], window["pad"][k]
        base_dilation, window_dilation = window["lhs_dilate"][k], window["rhs_dilate"][k]
        for value, what in ((size, "dimension"), (stride, "stride"), (base_dilation, "base area dilation factor"),
                            (window_dilation, "window dilation factor")):
            if value < 1:
                raise NoShape(f"Window has a non-positive {what} in dimension {k}.")
        n = base.dims[k]
        padded = low + ((n - 1) * base_dilation + 1 if n else 0) + high
        span = (size - 1) * window_dilation + 1
        if padded < 0:  # (XLA's parser stops the process on it: a failed check)
            raise NoShape(f"Window of dimension {k} pads {base.text()} to a negative size, {padded}.")
        dims.append(0 if not padded or span > padded else (padded - span) // stride + 1)
    return array(element_type, dims)


def _window(attrs: Mapping[str, object]) -> Mapping[str, list] | None:
    window = attrs.get("window", _NO_WINDOW)
    return window if isinstance(window, dict) else None


#: the window of an instruction written without one: the window of no dimension
_NO_WINDOW: Final = read(Kind.WINDOW, "{}")


def _conv_dims(labels: object) -> tuple[list[int], list[int], list[int]] | None:
    """``dim_labels`` (``b01f_01io->b01f``) as three lists of dimension numbers, in the order
    batch (or input feature), feature (or output feature), then the spatial dimensions; None
    when a part leaves a dimension unnamed (``?``)."""
    if not isinstance(labels, str) or "?" in labels:
        return None
    lhs, _, rest = labels.partition("_")
    rhs, _, out = rest.partition("->")
    parts = []
    for part, letters in ((lhs, "bf"), (rhs, "io"), (out, "bf")):
        spatial = sorted((c for c in part if c.isdigit()), key=int)
        if any(c not in part for c in letters) or len(part) != len(spatial) + 2:
            return None
        parts.append([part.index(letters[0]), part.index(letters[1])] + [part.index(c) for c in spatial])
    return parts[0], parts[1], parts[2]


def _convolution(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    lhs, rhs = ops
    expect_array(lhs, "lhs of convolution")
    expect_array(rhs, "rhs of convolution")
    features, batches = attrs.get("feature_group_count", 1), attrs.get("batch_group_count", 1)
    if not isinstance(features, int) or not isinstance(batches, int):
        return None
    if features <= 0:
        raise NoShape(f"feature_group_count must be a positive number, got {features}")
    if batches <= 0:
        raise NoShape(f"batch_group_count must be a positive number, got {batches}")
    if batches > 1 and features > 1:
        raise NoShape(f"both batch_group_count {batches} and feature_group_count {features} cannot be greater "
                      f"than 1")
    dims, window = _conv_dims(attrs.get("dim_labels")), _window(attrs)
    if dims is None or window is None:
        return None
    (in_batch, in_feature, *in_spatial), (k_in, k_out, *k_spatial), (out_batch, out_feature, *out_spatial) = dims
    rank = len(in_spatial) + 2
    if len(window["size"]) != len(in_spatial):
        raise NoShape("Window must have same number of dimensions as dimension numbers.")
    for side, shape in (("LHS", lhs), ("RHS", rhs)):
        if shape.rank != rank:
            raise NoShape(f"The {side} argument to a convolution should have rank {rank}; "
                          f"{side.lower()}: {shape.text()}.")
    if not static(lhs, rhs):
        return None
    conv = f"got <conv>({lhs.text()}, {rhs.text()})"
    batch, feature, kernel_in, kernel_out = lhs.dims[in_batch], lhs.dims[in_feature], rhs.dims[k_in], rhs.dims[k_out]
    if kernel_out % batches:
        raise NoShape(f"Expected output feature dimension size (value {kernel_out}) to be a multiple of batch group "
                      f"count {batches}; {conv}")
    if feature % features or feature // features != kernel_in:
        raise NoShape(f"Expected LHS feature dimension (value {feature}) to be a multiple of feature_group_count "
                      f"(value {features}), and LHS feature dimension / feature_group_count = RHS feature dimension "
                      f"(value {kernel_in}); {conv}")
    if kernel_out % features:
        raise NoShape(f"Expected output feature dimension (value {kernel_out}) to be divisible by "
                      f"feature_group_count (value {features}); {conv}")
    if batch % batches:
        raise NoShape(f"Expected input batch dimension (value {batch}) to be divisible by batch_group_count "
                      f"(value {batches}); {conv}")
    if [rhs.dims[d] for d in k_spatial] != list(window["size"]):
        raise NoShape(f"Window dimensions do not match RHS shape: RHS shape: {rhs.text()}")
    base = array(lhs.element_type, [lhs.dims[d] for d in in_spatial])
    spatial = _window_output(base, window, lhs.element_type)  # type: ignore[arg-type]
    out = [0] * rank
    out[out_batch], out[out_feature] = batch // batches, kernel_out
    for d, n in zip(out_spatial, spatial.dims, strict=True):  # type: ignore[union-attr]
        out[d] = n
    return array(joint_type(lhs.element_type, rhs.element_type), out)


def _reduce_window(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    """XLA's parser works out a reduce-window's shape from its first two operands alone, as
    the input and the initial value of a reduce-window of one input; one of several inputs
    written without a shape is so refused (its reducer takes more than two parameters)."""
    window = _window(attrs)
    if len(ops) < 2 or window is None:
        return None
    operand, init = ops[0], ops[1]
    program = signature(attrs, "to_apply", programs)
    if program is None or known(program) is None:
        return None
    expect_array(operand, "operand of reduce-window")  # (XLA's parser stops the process on a tuple)
    check_reducer(program, [init], [operand.element_type])
    return _window_output(operand, window, init.element_type) if static(operand) else None


def _select_and_scatter(_opcode: str, ops: list[Shape], attrs: Mapping[str, object],
                        programs: Programs) -> Shape | None:
    operand, source, init = ops
    expect_array(operand, "operand of select-and-scatter")
    window = _window(attrs)
    select, reducer = signature(attrs, "select", programs), signature(attrs, "scatter", programs)
    if window is None or select is None or reducer is None or not static(operand):
        return None
    if len(select.parameters) != 2:
        raise NoShape(f"Select function must take 2 parameters, but takes {len(select.parameters)} parameter(s).")
    chosen = known(select)
    if chosen is None:
        return None
    if chosen.is_tuple or chosen.element_type != "pred" or chosen.rank:
        raise NoShape("Select function must have rank-0 PRED result.")
    params: tuple[Shape, ...] = select.parameters  # type: ignore[assignment]  # (known: see above)
    for which, p in zip(("first", "second"), params, strict=True):
        if not (is_array(p) and not p.rank and same_kind(p.element_type, operand.element_type)):
            raise NoShape(f"Select function's {which} parameter shape currently must match the operand element "
                          f"shape, but got {p.text()} vs {operand.element_type}[].")
    if known(reducer) is None or not is_array(source):
        return None
    check_reducer(reducer, [init], [source.element_type])
    reduced = _window_output(operand, window, operand.element_type)
    if reduced is not None and static(source) and (
            source.dims != reduced.dims or not same_kind(source.element_type, reduced.element_type)):
        raise NoShape(f"Source shape does not match the shape of window-reduced operand: source({source.text()}), "
                      f"window-reduced operand({reduced.text()}).")
    return operand


#: the rules of this module's opcodes
RULES: Final[dict[str, Rule]] = {
    "convolution": _convolution,
    "reduce-window": _reduce_window,
    "select-and-scatter": _select_and_scatter,
}
