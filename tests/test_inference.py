"""Strict mode works out the shape of an instruction written without one as XLA's parser does,
refuses it where XLA's parser finds none, and checks the instructions after it against that shape.

Each accepted case names the shape XLA gives the instruction (XLA's own print of the module, at
the time the case was written); the test checks it end to end: the module with a copy that
declares its operand to have that shape is read, the one declaring another shape is refused.
``test_inference_xla.py`` puts every case, and a table of every elementwise opcode on every kind
of element type, to XLA itself.
"""

from __future__ import annotations

import pytest

from hlo_rewrite import HloError, parse_module
from hlo_rewrite.inference import NoShape, Program, infer
from hlo_rewrite.shapes import parse_shape

ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = add(a, b)\n}\n"
ADD_S32 = "add_s32 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT r = add(a, b)\n}\n"
LESS = ("less {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n"
        "  d = s32[] parameter(3)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n")
NEG = "neg {\n  a = f32[] parameter(0)\n  ROOT n = negate(a)\n}\n"
NEGATE2 = "neg {\n  a = f32[2] parameter(0)\n  ROOT n = negate(a)\n}\n"
COPY2 = "cp {\n  a = f32[2] parameter(0)\n  ROOT n = copy(a)\n}\n"
COND = "cond {\n  a = (s32[], f32[2]) parameter(0)\n  ROOT r = pred[] constant(true)\n}\n"
BODY = "body {\n  a = (s32[], f32[2]) parameter(0)\n  ROOT r = copy(a)\n}\n"
GE = "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
SCAN_ADD = ("step {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  s = f32[] add(a, b)\n"
            "  ROOT t = (f32[], f32[]) tuple(s, s)\n}\n")
SCAN_ROW = ("row {\n  x = f32[] parameter(0)\n  c = s32[] parameter(1)\n  y = f32[3] broadcast(x), dimensions={}\n"
            "  ROOT t = (f32[3], s32[]) tuple(y, c)\n}\n")
TWO = ("two {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n"
       "  d = s32[] parameter(3)\n  ROOT t = (f32[], s32[]) tuple(a, b)\n}\n")


def module(params: str, expr: str, before: str = "", after: str = "") -> str:
    """A module whose ENTRY takes ``params`` (``;``-separated shapes) and computes ``expr``
    (earlier lines before ``;;``) as ``result``, then ``after`` (its ROOT), or ``result`` as its
    root."""
    shapes = [p.strip() for p in params.split(";") if p.strip()]
    lines = [f"  p{i} = {s} parameter({i})\n" for i, s in enumerate(shapes)]
    *pre, last = expr.split(" ;; ")
    lines += [f"  {x}\n" for x in pre]
    lines.append(f"  {'' if after else 'ROOT '}result = {last}\n")
    if after:
        lines.append(f"  ROOT {after}\n")
    return f"HloModule m\n\n{before}\nENTRY e {{\n{''.join(lines)}}}\n"


#: (label, parameters, instructions, what the module defines before ENTRY, the shape XLA gives
#: the last instruction)
ACCEPTED = [
    ("abs of a signed integer", "s8[2]", "abs(p0)", "", "s8[2]"),
    ("abs of a complex gives its parts' type", "c64[2]", "abs(p0)", "", "f32[2]"),
    ("real of a complex", "c128[3]", "real(p0)", "", "f64[3]"),
    ("imag of a float", "bf16[3]", "imag(p0)", "", "bf16[3]"),
    ("is-finite gives pred", "f16[2,2]", "is-finite(p0)", "", "pred[2,2]"),
    ("exponential of a complex", "c64[4]", "exponential(p0)", "", "c64[4]"),
    ("not of pred", "pred[2]", "not(p0)", "", "pred[2]"),
    ("negate of an unsigned integer", "u32[2]", "negate(p0)", "", "u32[2]"),
    ("copy of a tuple", "(f32[], s32[])", "copy(p0)", "", "(f32[], s32[])"),
    ("copy of a token", "token[]", "copy(p0)", "", "token[]"),
    ("add of equal shapes", "f32[2,3]; f32[2,3]", "add(p0, p1)", "", "f32[2,3]"),
    ("add broadcasts dimensions of size one", "f32[2,1]; f32[1,3]", "add(p0, p1)", "", "f32[2,3]"),
    ("add broadcasts a scalar", "f32[]; f32[4]", "add(p0, p1)", "", "f32[4]"),
    ("add of pred", "pred[2]; pred[2]", "add(p0, p1)", "", "pred[2]"),
    ("shift-left of floats", "f32[2]; f32[2]", "shift-left(p0, p1)", "", "f32[2]"),
    ("compare gives pred", "f32[2]; f32[]", "compare(p0, p1), direction=LT", "", "pred[2]"),
    ("complex of f32 parts", "f32[2]; f32[2]", "complex(p0, p1)", "", "c64[2]"),
    ("select with a scalar predicate", "pred[]; f32[2]; f32[2]", "select(p0, p1, p2)", "", "f32[2]"),
    ("clamp of one type", "s8[]; s8[2]; s8[2]", "clamp(p0, p1, p2)", "", "s8[2]"),
    ("tuple of its operands", "f32[2]; s32[]", "tuple(p0, p1)", "", "(f32[2], s32[])"),
    ("get-tuple-element of an inferred tuple", "f32[2]; s32[]",
     "t = tuple(p0, p1) ;; get-tuple-element(t), index=1", "", "s32[]"),
    ("a chain of inferred shapes", "f32[2,3]", "t = transpose(p0), dimensions={1,0} ;; negate(t)", "", "f32[3,2]"),
    ("nested instructions without shapes", "f32[2]; f32[2]", "add(multiply(p0, p1), p1)", "", "f32[2]"),
    ("broadcast reads its dimensions as new sizes", "f32[3]", "broadcast(p0), dimensions={2,4}", "", "f32[2,4,3]"),
    ("broadcast of a scalar without dimensions", "f32[]", "broadcast(p0)", "", "f32[]"),
    ("concatenate", "f32[2,3]; f32[2,4]", "concatenate(p0, p1), dimensions={1}", "", "f32[2,7]"),
    ("transpose", "f32[2,3,4]", "transpose(p0), dimensions={2,0,1}", "", "f32[4,2,3]"),
    ("reverse without dimensions", "f32[2,3]", "reverse(p0), dimensions={}", "", "f32[2,3]"),
    ("pad with interior padding", "f32[2,3]; f32[]", "pad(p0, p1), padding=1_2x0_0_1", "", "f32[5,5]"),
    ("pad to nothing", "f32[2,3]; f32[]", "pad(p0, p1), padding=-2_0x0_0", "", "f32[0,3]"),
    ("batched dot", "f32[5,2,3]; f32[5,3,4]",
     "dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}",
     "", "f32[5,2,4]"),
    ("dot without contracting dimensions", "f32[2,3]; f32[3,4]", "dot(p0, p1)", "", "f32[2,3,3,4]"),
    ("dot of integers", "s8[2,3]; s8[3,4]", "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
     "", "s8[2,4]"),
    # scaled-dot(lhs, lhs_scale, rhs, rhs_scale): the dot of lhs and rhs, the scales not looked at
    ("scaled-dot", "f8e4m3fn[16,128]; f8e8m0fnu[16,3]; f8e4m3fn[32,128]; f8e8m0fnu[]",
     "scaled-dot(p0, p1, p2, p3), lhs_contracting_dims={1}, rhs_contracting_dims={1}", "", "f8e4m3fn[16,32]"),
    ("batched scaled-dot", "bf16[2,16,128]; bf16[2,16,4]; bf16[2,32,128]; bf16[2,32,4]",
     "scaled-dot(p0, p1, p2, p3), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
     "rhs_contracting_dims={2}", "", "bf16[2,16,32]"),
    # ragged-dot(lhs, rhs, group_sizes): a ragged dimension of each kind
    ("ragged-dot, ragged in a free dimension", "f32[11,5]; f32[3,5,7]; s32[3]",
     "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
     "rhs_group_dims={0}", "", "f32[11,7]"),
    ("ragged-dot, the group dimension among the rhs's free ones", "f32[11,5]; f32[7,5,3,2]; s32[3]",
     "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
     "rhs_group_dims={2}", "", "f32[11,7,2]"),
    ("ragged-dot, ragged in a contracting dimension", "f32[11,5]; f32[5,7]; s32[3]",
     "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}", "",
     "f32[3,11,7]"),
    ("ragged-dot, ragged in a batch dimension", "f32[2,11,5]; f32[2,5,7]; s32[3]",
     "ragged-dot(p0, p1, p2), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
     "rhs_contracting_dims={1}, lhs_ragged_dims={0}", "", "f32[2,11,7]"),
    # two floating-point types: the more precise as XLA orders them (range, then significand)
    ("add of f32 and bf16", "f32[2]; bf16[2]", "add(p0, p1)", "", "f32[2]"),
    ("maximum of f16 and bf16: bf16 has the range", "f16[2]; bf16[2]", "maximum(p0, p1)", "", "bf16[2]"),
    ("dot of f32 and bf16", "f32[2,3]; bf16[3,4]", "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
     "", "f32[2,4]"),
    ("concatenate of bf16 and f64", "bf16[2,3]; f64[2,4]", "concatenate(p0, p1), dimensions={1}", "", "f64[2,7]"),
    ("get-dimension-size", "f32[3]", "get-dimension-size(p0), dimensions={0}", "", "s32[]"),
    ("set-dimension-size makes the dimension dynamic", "f32[3]; s32[]",
     "set-dimension-size(p0, p1), dimensions={0}", "", "f32[<=3]"),
    ("replica-id", "", "replica-id()", "", "u32[]"),
    ("partition-id", "", "partition-id()", "", "u32[]"),
    ("sort of one operand", "f32[4]", "sort(p0), dimensions={0}, to_apply=lt",
     "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n",
     "f32[4]"),
    ("sort of keys and values", "f32[4]; s32[4]", "sort(p0, p1), dimensions={0}, to_apply=less", LESS,
     "(f32[4], s32[4])"),
    ("topk", "f32[3,5]", "topk(p0), k=2", "", "(f32[3,2], s32[3,2])"),
    ("cholesky of a batch", "f32[2,3,3]", "cholesky(p0)", "", "f32[2,3,3]"),
    ("reduce", "f32[2,3]; f32[]", "reduce(p0, p1), dimensions={1}, to_apply=add", ADD, "f32[2]"),
    ("batch-norm-training gives the operand and two vectors", "bf16[2,3]; f32[3]; f32[3]",
     "batch-norm-training(p0, p1, p2), epsilon=0.001, feature_index=1", "", "(bf16[2,3], bf16[3], bf16[3])"),
    ("batch-norm-inference gives the operand", "f32[2,3]; f32[3]; bf16[3]; f32[3]; f32[3]",
     "batch-norm-inference(p0, p1, p2, p3, p4), epsilon=0.001, feature_index=1", "", "f32[2,3]"),
    ("batch-norm-grad", "f32[2,3]; f32[3]; f32[3]; f32[3]; bf16[2,3]",
     "batch-norm-grad(p0, p1, p2, p3, p4), epsilon=0.001, feature_index=1", "", "(f32[2,3], f32[3], f32[3])"),
    ("fft of complex values, whatever its lengths", "c64[8]", "fft(p0), fft_type=FFT, fft_length={4}", "",
     "c64[8]"),
    ("rfft halves the last dimension", "f64[2,8]", "fft(p0), fft_type=RFFT, fft_length={8}", "", "c128[2,5]"),
    ("irfft", "c128[2,5]", "fft(p0), fft_type=IRFFT, fft_length={2,8}", "", "f64[2,8]"),
    ("triangular-solve on the right", "f32[4,4]; f32[3,4]",
     "triangular-solve(p0, p1), left_side=false, transpose_a=TRANSPOSE", "", "f32[3,4]"),
    ("triangular-solve of a batch on the left", "f32[2,4,4]; f32[2,4,3]",
     "triangular-solve(p0, p1), left_side=true, transpose_a=NO_TRANSPOSE", "", "f32[2,4,3]"),
    ("call gives its callee's result", "f32[2]", "call(p0), to_apply=neg", NEGATE2, "f32[2]"),
    ("conditional gives its branches' result", "pred[]; f32[2]; f32[2]",
     "conditional(p0, p1, p2), true_computation=neg, false_computation=cp", NEGATE2 + COPY2, "f32[2]"),
    ("while gives its init's shape", "(s32[], f32[2])", "while(p0), condition=cond, body=body", COND + BODY,
     "(s32[], f32[2])"),
    ("add-dependency has its first operand's shape", "f32[2]; token[]", "add-dependency(p0, p1)", "", "f32[2]"),
    ("domain", "f32[2]",
     'domain(p0), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}', "", "f32[2]"),
    ("gather of rows", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "f32[2,4]"),
    ("gather with its offset first and an unsigned index", "f32[3,4]; u8[2]",
     "gather(p0, p1), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "f32[4,2]"),
    ("gather whose index vector is a dimension of its indices", "f32[3,4]; s32[2,5]",
     "gather(p0, p1), offset_dims={0,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=0, "
     "slice_sizes={2,3}", "", "f32[2,5,3]"),
    ("gather of a slice of size 0, and a scalar index", "f32[3,4]; s32[]",
     "gather(p0, p1), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=0, "
     "slice_sizes={1,0}", "", "f32[0]"),
    ("gather with batching dimensions", "f32[3,4,5]; s32[3,2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, "
     "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,5}", "", "f32[3,5,2]"),
    ("gather with two batching dimensions out of order", "f32[3,4,5,6]; s32[3,6,2,1]",
     "gather(p0, p1), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0,3}, "
     "start_indices_batching_dims={1,0}, index_vector_dim=3, slice_sizes={1,1,5,1}", "", "f32[3,6,5,2]"),
    ("gather whose collapsed dimension is batched too", "f32[3,4,5]; s32[3,2]",
     "gather(p0, p1), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={1}, operand_batching_dims={0}, "
     "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,5}", "", "f32[3,2,1]"),
    ("scatter gives its operand's shape", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "f32[3,4]"),
    ("scatter of updates of another float type", "f32[3,4]; s32[2]; bf16[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "f32[3,4]"),
    ("scatter of two operands of other shapes", "f32[3,4]; s32[2]; s32[3,5]; f32[2,4]; s32[2,4]",
     "scatter(p0, p2, p1, p3, p4), update_window_dims={1}, inserted_window_dims={0}, "
     "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=two", TWO, "(f32[3,4], s32[3,5])"),
    ("scatter with batching dimensions", "f32[3,4,5]; s32[3,2]; f32[3,2,5]",
     "scatter(p0, p1, p2), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
     "input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=add", ADD,
     "f32[3,4,5]"),
    ("convolution of one spatial dimension", "f32[1,2,1]; f32[1,1,1]",
     "convolution(p0, p1), window={size=1}, dim_labels=b0f_0io->b0f", "", "f32[1,2,1]"),
    ("convolution without spatial dimensions or a window", "f32[1,2]; f32[2,2]",
     "convolution(p0, p1), dim_labels=bf_io->bf", "", "f32[1,2]"),
    ("convolution with padding, base dilation and reversal", "f32[128,7,7,512]; f32[3,3,512,512]",
     "convolution(p0, p1), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f",
     "", "f32[128,14,14,512]"),
    ("convolution with its window's fields in another order", "f32[1,2,1]; f32[1,1,1]",
     "convolution(p0, p1), dim_labels=b0f_0io->b0f, window={pad=1_1 size=1}", "", "f32[1,4,1]"),
    ("convolution with strides, window dilation and uneven padding", "f32[2,8,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3 stride=2x2 rhs_dilate=2x2 pad=0_1x2_0}, dim_labels=b01f_01io->b01f",
     "", "f32[2,3,3,16]"),
    ("convolution whose output puts its dimensions in another order", "f32[2,8,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->f01b", "", "f32[16,6,6,2]"),
    ("convolution with its batch and features last", "f32[3,1,2]; f32[2,1,4]",
     "convolution(p0, p1), window={size=2}, dim_labels=0fb_0io->0fb", "", "f32[2,4,2]"),
    ("convolution in feature groups", "f32[2,8,8,6]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2", "",
     "f32[2,6,6,16]"),
    ("convolution in batch groups", "f32[4,8,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2", "",
     "f32[2,6,6,16]"),
    ("convolution of a window larger than its input", "f32[2,2,2,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3 pad=-1_0x0_0}, dim_labels=b01f_01io->b01f", "", "f32[2,0,0,16]"),
    ("convolution of an empty dimension", "f32[2,0,2,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", "", "f32[2,0,2,16]"),
    ("convolution of integers", "s8[2,8,8,3]; s8[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f", "", "s8[2,6,6,16]"),
    ("reduce-window with strides", "f32[4,6]; f32[]",
     "reduce-window(p0, p1), window={size=2x3 stride=2x3}, to_apply=add", ADD, "f32[2,2]"),
    ("reduce-window with padding", "f32[4,6]; f32[]",
     "reduce-window(p0, p1), window={size=2x3 stride=1x1 pad=1_1x0_2}, to_apply=add", ADD, "f32[5,6]"),
    ("reduce-window with both dilations", "f32[4,6]; f32[]",
     "reduce-window(p0, p1), window={size=2x3 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=add", ADD, "f32[6,2]"),
    ("reduce-window of a scalar without a window", "f32[]; f32[]", "reduce-window(p0, p1), to_apply=add", ADD,
     "f32[]"),
    ("reduce-window whose window is larger than its input", "f32[4,6]; f32[]",
     "reduce-window(p0, p1), window={size=5x1}, to_apply=add", ADD, "f32[0,6]"),
    ("reduce-window gives its initial value's type", "f32[4,6]; bf16[]",
     "reduce-window(p0, p1), window={size=2x1}, to_apply=add", ADD, "bf16[3,6]"),
    ("select-and-scatter gives its operand's shape", "f32[4,6]; f32[2,3]; f32[]",
     "select-and-scatter(p0, p1, p2), window={size=2x2 stride=2x2}, select=ge, scatter=add", GE + ADD, "f32[4,6]"),
    ("select-and-scatter of a source of another float type", "f32[4,6]; bf16[2,3]; f32[]",
     "select-and-scatter(p0, p1, p2), window={size=2x2 stride=2x2}, select=ge, scatter=add", GE + ADD, "f32[4,6]"),
    ("map of one operand", "f32[2,3]", "map(p0), dimensions={0,1}, to_apply=neg", NEG, "f32[2,3]"),
    ("map of a scalar", "f32[]", "map(p0), dimensions={}, to_apply=neg", NEG, "f32[]"),
    ("map of two float types", "f32[2,3]; bf16[2,3]", "map(p0, p1), dimensions={0,1}, to_apply=add", ADD, "f32[2,3]"),
    ("map gives its computation's type", "f32[2,3]; s32[2,3]", "map(p0, p1), dimensions={0,1}, to_apply=v",
     "v {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT n = pred[] constant(true)\n}\n", "pred[2,3]"),
    ("scan stacks its output and keeps its carry", "f32[4]; f32[]",
     "scan(p0, p1), dimensions={0}, num_carries=1, to_apply=step", SCAN_ADD, "(f32[4], f32[])"),
    ("scan of a matrix along its first dimension, reversed", "f32[5,4]; s32[]",
     "scan(p0, p1), dimensions={0}, num_carries=1, is_reverse=true, to_apply=row", SCAN_ROW, "(f32[5,3], s32[])"),
    ("scan along the second dimension", "f32[5,4]; s32[]",
     "scan(p0, p1), dimensions={1}, num_carries=1, to_apply=row", SCAN_ROW, "(f32[3,4], s32[])"),
    ("scan without carries stacks every result", "f32[5,4]; s32[]",
     "scan(p0, p1), dimensions={0}, num_carries=0, to_apply=row", SCAN_ROW, "(f32[5,3], s32[5])"),
]

#: (label, parameters, instructions, what the module defines before ENTRY, words of the message)
REJECTED = [
    ("exponential-minus-one of an integer", "s32[2]", "exponential-minus-one(p0)", "", "exponential-minus-one"),
    ("is-finite of an integer", "s32[2]", "is-finite(p0)", "", "is-finite"),
    ("abs of an unsigned integer", "u32[2]", "abs(p0)", "", "abs"),
    ("cbrt of a complex", "c64[2]", "cbrt(p0)", "", "cbrt"),
    ("not of a float", "f32[2]", "not(p0)", "", "not"),
    ("negate of a token", "token[]", "negate(p0)", "", "Expected array"),
    ("add of two integer types", "s32[2]; u32[2]", "add(p0, p1)", "", "different element types"),
    ("add of an integer and a float", "s32[2]; f32[2]", "add(p0, p1)", "", "different element types"),
    ("add of incompatible dimensions", "f32[2,3]; f32[3,3]", "add(p0, p1)", "", "incompatible shapes"),
    ("add of different ranks", "f32[2]; f32[2,3]", "add(p0, p1)", "", "equal rank"),
    ("subtract of pred", "pred[2]; pred[2]", "subtract(p0, p1)", "", "subtract"),
    ("and of floats", "f32[2]; f32[2]", "and(p0, p1)", "", "and"),
    ("complex of bf16 parts", "bf16[2]; bf16[2]", "complex(p0, p1)", "", "complex"),
    ("compare of a float and an integer", "f32[2]; s32[2]", "compare(p0, p1), direction=LT", "", "different"),
    ("select of different shapes", "pred[2]; f32[2]; f32[1]", "select(p0, p1, p2)", "", "same shape"),
    ("select with a predicate of another shape", "pred[1]; f32[2]; f32[2]", "select(p0, p1, p2)", "", "predicate"),
    ("select with an integer predicate", "s32[2]; f32[2]; f32[2]", "select(p0, p1, p2)", "", "PRED"),
    ("select of tuples", "pred[]; (f32[2]); (f32[2])", "select(p0, p1, p2)", "", "Expected array"),
    ("clamp with bounds of another shape", "f32[1]; f32[2]; f32[]", "clamp(p0, p1, p2)", "", "incompatible"),
    ("clamp with bounds of another type", "s32[]; f32[2]; f32[]", "clamp(p0, p1, p2)", "", "element types"),
    ("concatenate of different ranks", "f32[10]; f32[]", "concatenate(p0, p1), dimensions={0}", "", "ranks"),
    ("concatenate of integers and floats", "f32[2]; s32[3]", "concatenate(p0, p1), dimensions={0}", "",
     "element types"),
    ("concatenate beyond the rank", "f32[2]; f32[3]", "concatenate(p0, p1), dimensions={1}", "", "out of bounds"),
    ("concatenate of other dimensions", "f32[2,3]; f32[3,3]", "concatenate(p0, p1), dimensions={1}", "",
     "differ in dimensions"),
    ("transpose that is not a permutation", "f32[3,4]", "transpose(p0), dimensions={10}", "", "permutation"),
    ("transpose of a tuple", "(f32[2])", "transpose(p0), dimensions={0}", "", "Expected array"),
    ("reverse of a dimension twice", "f32[2,3]", "reverse(p0), dimensions={1,1}", "", "duplicated"),
    ("reverse beyond the rank", "f32[2,3]", "reverse(p0), dimensions={2}", "", "out-of-bounds"),
    ("pad of another rank", "f32[2,3]; f32[]", "pad(p0, p1), padding=1_2", "", "rank"),
    ("pad with an array value", "f32[2,3]; f32[1]", "pad(p0, p1), padding=1_2x0_0", "", "non-scalar"),
    ("pad with a value of another type", "f32[2,3]; s32[]", "pad(p0, p1), padding=1_2x0_0", "", "element types"),
    ("pad to a negative size", "f32[2,3]; f32[]", "pad(p0, p1), padding=-3_0x0_0", "", "negative"),
    ("dot with batch dimensions on one side", "f32[2,10]; f32[10,2]",
     "dot(p0, p1), lhs_batch_dims={}, lhs_contracting_dims={1}, rhs_batch_dims={1}, rhs_contracting_dims={0}",
     "", "batch dimensions"),
    ("dot of contracting dimensions of other sizes", "f32[5,2,3]; f32[5,3,4]",
     "dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}",
     "", "Contracting dimension sizes"),
    ("scaled-dot with its operands in another order", "f8e4m3fn[16,128]; f8e4m3fn[32,128]; f8e8m0fnu[16,4]; "
     "f8e8m0fnu[32,4]", "scaled-dot(p0, p1, p2, p3), lhs_contracting_dims={1}, rhs_contracting_dims={1}", "",
     "Contracting dimension sizes"),
    ("reduce of a dynamic input from an initial value of another type", "s32[<=7]; pred[]",
     "reduce(p0, p1), dimensions={0}, to_apply=add_s32", ADD_S32, "accumulator shape at index 0 differs"),
    ("ragged-dot with two ragged dimensions", "f32[11,5]; f32[3,5,7]; s32[3]",
     "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0,1}, "
     "rhs_group_dims={0}", "", "exactly one ragged dimension"),
    ("ragged-dot without a group dimension", "f32[11,5]; f32[3,5,7]; s32[3]",
     "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}", "",
     "exactly one group dimension"),
    ("ragged-dot with its group dimension out of range", "f32[11,5]; f32[3,5,7]; s32[3]",
     "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
     "rhs_group_dims={3}", "", "out of range"),
    ("ragged-dot of more groups than the rhs has", "f32[11,5]; f32[3,5,7]; s32[4]",
     "ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
     "rhs_group_dims={0}", "", "expected to have size=4, got 3"),
    ("dot with a dimension out of range", "f32[5,2,3]; f32[5,3,4]",
     "dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={3}, rhs_contracting_dims={1}",
     "", "out of range"),
    ("dot with a dimension twice", "f32[5,2,3]; f32[5,3,4]",
     "dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={0}, rhs_contracting_dims={1}",
     "", "not unique"),
    ("dot of batch dimensions of other sizes", "f32[5,2,3]; f32[6,3,4]",
     "dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}",
     "", "Batch dimension sizes"),
    ("dot with more contracting dimensions on one side", "f32[2,3]; f32[3,4]",
     "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0,1}", "", "contracting dimensions"),
    ("broadcast to a negative size", "f32[3]", "broadcast(p0), dimensions={-1}", "", "negative"),
    ("get-dimension-size of a scalar", "f32[]", "get-dimension-size(p0), dimensions={0}", "", "out of range"),
    ("set-dimension-size to an unsigned size", "f32[3]; u32[]", "set-dimension-size(p0, p1), dimensions={0}", "",
     "s32 scalar"),
    ("sort of keys and values of other dimensions", "f32[2]; s32[3]", "sort(p0, p1), dimensions={0}, to_apply=less",
     LESS, "dimensions must match"),
    ("topk beyond the last dimension", "f32[3,5]", "topk(p0), k=7", "", "larger"),
    ("cholesky of a matrix that is not square", "f32[2,10]", "cholesky(p0)", "", "minor dimensions"),
    ("cholesky of an integer", "s32[3,3]", "cholesky(p0)", "", "floating"),
    ("reduce beyond the rank", "f32[2,3]; f32[]", "reduce(p0, p1), dimensions={2}, to_apply=add", ADD,
     "out-of-bounds"),
    ("reduce of a dimension twice", "f32[2,3]; f32[]", "reduce(p0, p1), dimensions={1,1}, to_apply=add", ADD,
     "Duplicate"),
    ("reduce whose reducer gives another type", "f32[2,3]; f32[]", "reduce(p0, p1), dimensions={1}, to_apply=f",
     "f {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = s32[] constant(0)\n}\n", "differs"),
    ("reduce of floats with an integer accumulator", "f32[2,3]; f32[2,3]; f32[]; s32[]",
     "reduce(p0, p1, p2, p3), dimensions={1}, to_apply=f",
     "f {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n  d = s32[] parameter(3)\n"
     "  ROOT r = tuple(a, b)\n}\n", "input type"),
    ("batch-norm-training of integers", "s32[2,3]; s32[3]; s32[3]",
     "batch-norm-training(p0, p1, p2), epsilon=0.001, feature_index=1", "", "floating point"),
    ("batch-norm-training beyond the rank", "f32[2,3]; f32[3]; f32[3]",
     "batch-norm-training(p0, p1, p2), epsilon=0.001, feature_index=2", "", "feature_index"),
    ("batch-norm-training of a scale of another size", "f32[2,3]; f32[2]; f32[3]",
     "batch-norm-training(p0, p1, p2), epsilon=0.001, feature_index=1", "", "feature count"),
    ("batch-norm-inference of an integer mean", "f32[2,3]; f32[3]; s32[3]; f32[3]; f32[3]",
     "batch-norm-inference(p0, p1, p2, p3, p4), epsilon=0.001, feature_index=1", "", "element type"),
    ("batch-norm-grad of a gradient of another shape", "f32[2,3]; f32[3]; f32[3]; f32[3]; f32[3,2]",
     "batch-norm-grad(p0, p1, p2, p3, p4), epsilon=0.001, feature_index=1", "", "output_grad"),
    ("fft of real values", "f32[8]", "fft(p0), fft_type=FFT, fft_length={8}", "", "complex input"),
    ("fft of four dimensions", "c64[2,2,2,2]", "fft(p0), fft_type=FFT, fft_length={2,2,2,2}", "", "ranks 1-3"),
    ("rfft of another length", "f32[8]", "fft(p0), fft_type=RFFT, fft_length={7}", "", "innermost"),
    ("irfft of another length", "c64[4]", "fft(p0), fft_type=IRFFT, fft_length={8}", "", "innermost"),
    ("triangular-solve without transpose_a", "f32[4,4]; f32[3,4]", "triangular-solve(p0, p1), left_side=false",
     "", "transpose"),
    ("triangular-solve of other sides", "f32[4,4]; f32[3,4]",
     "triangular-solve(p0, p1), left_side=true, transpose_a=NO_TRANSPOSE", "", "incompatible shapes"),
    ("triangular-solve of other types", "f32[4,4]; bf16[4,3]",
     "triangular-solve(p0, p1), left_side=true, transpose_a=NO_TRANSPOSE", "", "identical"),
    ("call with another number of arguments", "f32[2]; f32[2]", "call(p0, p1), to_apply=neg", NEGATE2, "arity"),
    ("call of an argument of another shape", "f32[3]", "call(p0), to_apply=neg", NEGATE2, "Call parameter"),
    ("conditional of branches giving other shapes", "pred[]; f32[2]; f32[2]",
     "conditional(p0, p1, p2), true_computation=neg, false_computation=g",
     NEGATE2 + "g {\n  a = f32[2] parameter(0)\n  ROOT n = f32[3] broadcast(a), dimensions={}\n}\n",
     "same shape"),
    ("conditional whose known operand does not fit, beside one not known", "pred[]; bf16[]; f32[]",
     "c = add(p1, p2) ;; conditional(p0, p1, c), true_computation=neg, false_computation=cp0",
     NEG + "cp0 {\n  a = f32[] parameter(0)\n  ROOT c = copy(a)\n}\n", "branch operand 0"),
    ("conditional of an operand of another shape", "pred[]; f32[2]; f32[3]",
     "conditional(p0, p1, p2), true_computation=neg, false_computation=cp", NEGATE2 + COPY2, "must match"),
    ("while whose condition gives no pred", "(s32[], f32[2])", "while(p0), condition=c, body=body",
     "c {\n  a = (s32[], f32[2]) parameter(0)\n  ROOT r = s32[] constant(1)\n}\n" + BODY, "boolean"),
    ("while whose body gives another shape", "(s32[], f32[2])", "while(p0), condition=cond, body=b",
     COND + "b {\n  a = (s32[], f32[2]) parameter(0)\n  g = get-tuple-element(a), index=0\n  ROOT r = tuple(g)\n}\n",
     "same shape"),
    ("opt-barrier", "(f32[], s32[])", "opt-barrier(p0)", "", "opt-barrier"),
    ("an error in a callee's inferred shape", "s32[2]", "call(p0), to_apply=f",
     "f {\n  a = s32[2] parameter(0)\n  ROOT n = exponential(a)\n}\n", "exponential"),
    ("gather of complex indices", "f32[17,9]; c64[2,3]",
     "gather(p0, p1), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, "
     "slice_sizes={1,9}", "", "integral"),
    ("gather with its index vector beyond its indices", "f32[3,4]; s32[2,1]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=3, "
     "slice_sizes={1,2}", "", "leaf dimension"),
    ("gather with offset dimensions out of order", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={1,0}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "ascending"),
    ("gather with an offset dimension twice", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={1,1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "must not repeat"),
    ("gather with an offset dimension out of bounds", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={1,3}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "out of bounds"),
    ("gather with a start index map of another size", "f32[3,4]; s32[2,2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "must be equal"),
    ("gather with a dimension twice in its start index map", "f32[3,4]; s32[2,2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "Repeated"),
    ("gather with a start index map beyond its operand", "f32[3,4]; s32[2,2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,2}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "Invalid start_index_map"),
    ("gather with collapsed dimensions out of order", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={}, collapsed_slice_dims={1,0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,1}", "", "sorted"),
    ("gather collapsing a dimension twice", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={}, collapsed_slice_dims={0,0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,1}", "", "Repeated"),
    ("gather collapsing a dimension it has not", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={2}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "Invalid collapsed"),
    ("gather collapsing a dimension of size 2", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={2,4}", "", "bound 1 or 0"),
    ("gather of a slice larger than its operand", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,5}", "", "out of range"),
    ("gather of a negative slice size", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,-1}", "", "out of range"),
    ("gather with a slice size too many", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4,1}", "", "one slice size"),
    ("gather with an operand dimension neither offset nor collapsed", "f32[3,4]; s32[2]",
     "gather(p0, p1), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "All components"),
    ("gather with batching dimensions of different counts", "f32[3,4,5]; s32[3,2]",
     "gather(p0, p1), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, "
     "slice_sizes={1,1,5}, operand_batching_dims={0}, start_indices_batching_dims={}", "", "same size"),
    ("gather with a batching dimension beyond its indices", "f32[3,4,5]; s32[3,2]",
     "gather(p0, p1), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, "
     "slice_sizes={1,1,5}, operand_batching_dims={0}, start_indices_batching_dims={5}", "", "Invalid start_indices_batching_dims"),
    ("gather batching an operand dimension of size 2", "f32[3,4,5]; s32[3,2]",
     "gather(p0, p1), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, "
     "slice_sizes={2,1,5}, operand_batching_dims={0}, start_indices_batching_dims={0}", "", "bound 1 or 0"),
    ("gather of a tuple", "(f32[3,4]); s32[2]",
     "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
     "slice_sizes={1,4}", "", "Expected array"),
    ("scatter of updates of too high a rank", "f32[2,9,8]; s32[4,2,4]; f32[4,4,8]",
     "scatter(p0, p1, p2), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0,1}, "
     "index_vector_dim=1, to_apply=add", ADD, "must be of rank"),
    ("scatter of float indices", "f32[3,4]; f32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "integral"),
    ("scatter with its index vector beyond its indices", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=2, to_apply=add", ADD, "leaf dimension"),
    ("scatter of updates wider than its operand", "f32[3,4]; s32[2]; f32[2,5]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "must not exceed"),
    ("scatter of updates for more indices than it has", "f32[3,4]; s32[2]; f32[3,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "must be same"),
    ("scatter with an update window dimension out of range", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "Invalid update_window_dims"),
    ("scatter inserting a dimension it has not", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={2}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "Invalid inserted_window_dims"),
    ("scatter with a window larger than its operand", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "window of size"),
    ("scatter with a window smaller than its operand", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "window of size"),
    ("scatter mapping more dimensions than its index vector has", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, "
     "index_vector_dim=1, to_apply=add", ADD, "must be equal"),
    ("scatter mapping to a dimension beyond its operand", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={2}, "
     "index_vector_dim=1, to_apply=add", ADD, "Invalid scatter_dims_to_operand_dims"),
    ("scatter mapping to one dimension twice", "f32[3,4]; s32[2,2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,0}, "
     "index_vector_dim=1, to_apply=add", ADD, "Repeated"),
    ("scatter with batching dimensions of different counts", "f32[3,4,5]; s32[3,2]; f32[3,2,5]",
     "scatter(p0, p1, p2), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
     "index_vector_dim=2, to_apply=add, input_batching_dims={0}, scatter_indices_batching_dims={}", ADD, "same size"),
    ("scatter batching a dimension beyond its operand", "f32[3,4,5]; s32[3,2]; f32[3,2,5]",
     "scatter(p0, p1, p2), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, "
     "index_vector_dim=2, to_apply=add, input_batching_dims={3}, scatter_indices_batching_dims={0}", ADD, "Invalid input_batching_dims"),
    ("scatter of a tuple", "(f32[3,4]); s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "Expected array"),
    ("scatter whose reducer gives another type", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=bad", "bad {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = s32[] constant(0)\n}\n", "differs"),
    ("scatter of updates its reducer does not take", "f32[3,4]; s32[2]; s32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=add", ADD, "input type"),
    ("scatter whose reducer takes three parameters", "f32[3,4]; s32[2]; f32[2,4]",
     "scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
     "index_vector_dim=1, to_apply=three", "three {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = f32[] parameter(2)\n  ROOT d = add(a, b)\n}\n", "must take 2"),
    ("convolution whose kernel has another window", "f32[8,9,3,2]; f32[3,16,3,3]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=01fb_i0o1->b01f", "", "do not match"),
    ("convolution of features the kernel does not take", "f32[2,8,8,4]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f", "", "LHS feature dimension"),
    ("convolution in feature groups of an uneven split", "f32[2,8,8,6]; f32[3,3,3,15]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2", "", "divisible by feature_group_count"),
    ("convolution in batch groups of an uneven split", "f32[3,8,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2", "", "divisible by batch_group_count"),
    ("convolution in batch groups of uneven output features", "f32[4,8,8,3]; f32[3,3,3,15]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=3", "", "batch"),
    ("convolution in both batch and feature groups", "f32[4,8,8,6]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2, feature_group_count=2", "", "cannot be greater than 1"),
    ("convolution in no feature group", "f32[4,8,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=0", "", "positive"),
    ("convolution with a window of too few dimensions", "f32[2,8,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3}, dim_labels=b01f_01io->b01f", "", "same number of dimensions"),
    ("convolution of two spatial dimensions without a window", "f32[2,8,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), dim_labels=b01f_01io->b01f", "", "same number of dimensions"),
    ("convolution of an input of another rank", "f32[2,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f", "", "LHS argument"),
    ("convolution of a kernel of another rank", "f32[2,8,8,3]; f32[3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f", "", "RHS argument"),
    ("convolution with a stride of 0", "f32[2,8,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3 stride=0x1}, dim_labels=b01f_01io->b01f", "", "non-positive stride"),
    ("convolution with a base dilation of 0", "f32[2,8,8,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3 lhs_dilate=0x1}, dim_labels=b01f_01io->b01f", "", "non-positive base"),
    ("convolution of a tuple", "(f32[2,8,8,3]); f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3}, dim_labels=b01f_01io->b01f", "", "Expected array"),
    ("reduce-window of two inputs, which XLA works out as of one", "f32[4,6]; f32[]; f32[4,6]; f32[]",
     "reduce-window(p0, p2, p1, p3), window={size=2x1}, to_apply=two", "two {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = f32[] parameter(2)\n  d = f32[] parameter(3)\n  ROOT t = (f32[], f32[]) tuple(a, b)\n}\n", "must take 2"),
    ("reduce-window with a window of too few dimensions", "f32[4,6]; f32[]",
     "reduce-window(p0, p1), window={size=2}, to_apply=add", ADD, "Window has dimension 1"),
    ("reduce-window of two dimensions without a window", "f32[4,6]; f32[]", "reduce-window(p0, p1), to_apply=add",
     ADD, "Window has dimension 0"),
    ("reduce-window with an initial value its reducer does not take", "f32[4,6]; s32[]",
     "reduce-window(p0, p1), window={size=2x1}, to_apply=add", ADD, "init_value"),
    ("select-and-scatter of a source of another shape", "f32[4,6]; f32[2,2]; f32[]",
     "select-and-scatter(p0, p1, p2), window={size=2x2 stride=2x2}, select=ge, scatter=add", GE + ADD,
     "Source shape"),
    ("select-and-scatter whose select gives no pred", "f32[4,6]; f32[2,3]; f32[]",
     "select-and-scatter(p0, p1, p2), window={size=2x2 stride=2x2}, select=add, scatter=add", GE + ADD, "PRED"),
    ("select-and-scatter whose scatter is no reducer", "f32[4,6]; f32[2,3]; f32[]",
     "select-and-scatter(p0, p1, p2), window={size=2x2 stride=2x2}, select=ge, scatter=ge", GE + ADD, "differs"),
    ("select-and-scatter of an operand its select does not take", "s32[4,6]; f32[2,3]; f32[]",
     "select-and-scatter(p0, p1, p2), window={size=2x2 stride=2x2}, select=ge, scatter=add", GE + ADD,
     "first parameter"),
    ("select-and-scatter of an initial value its scatter does not take", "f32[4,6]; f32[2,3]; s32[]",
     "select-and-scatter(p0, p1, p2), window={size=2x2 stride=2x2}, select=ge, scatter=add", GE + ADD, "init_value"),
    ("map without dimensions", "f32[2]", "map(p0), to_apply=neg", NEG, "subset of dimensions"),
    ("map of some dimensions", "f32[2,3]", "map(p0), dimensions={0}, to_apply=neg", NEG, "subset of dimensions"),
    ("map of its dimensions out of order", "f32[2,3]", "map(p0), dimensions={1,0}, to_apply=neg", NEG,
     "monotonically"),
    ("map of a dimension it has not", "f32[2,3]", "map(p0), dimensions={0,5}, to_apply=neg", NEG, "monotonically"),
    ("map of operands of other shapes", "f32[2,3]; f32[2,1]", "map(p0, p1), dimensions={0,1}, to_apply=add", ADD,
     "same shape"),
    ("map of more operands than its computation takes", "f32[2,3]; f32[2,3]",
     "map(p0, p1), dimensions={0,1}, to_apply=neg", NEG, "arity"),
    ("map of integers to a computation of floats", "s32[2,3]; s32[2,3]",
     "map(p0, p1), dimensions={0,1}, to_apply=add", ADD, "parameter type"),
    ("map to a computation of an array", "f32[2,3]", "map(p0), dimensions={0,1}, to_apply=v",
     "v {\n  a = f32[] parameter(0)\n  ROOT n = f32[2] broadcast(a), dimensions={}\n}\n", "result has to be a scalar"),
    ("map to a computation of an array parameter", "f32[2,3]", "map(p0), dimensions={0,1}, to_apply=v",
     "v {\n  a = f32[2] parameter(0)\n  ROOT n = f32[] constant(0)\n}\n", "parameter has to be a scalar"),
    ("map of nothing", "", "map(), to_apply=v", "v {\n  ROOT n = f32[] constant(0)\n}\n", "at least one argument"),
    ("scan of carries only", "f32[4]; f32[]", "scan(p0, p1), dimensions={0}, num_carries=2, to_apply=step",
     SCAN_ADD, "no inputs"),
]

#: what XLA's parser stops the process on (a failed check) rather than refuse: strict mode
#: refuses them, and they are not put to XLA
XLA_ABORTS = [
    ("get-tuple-element beyond the tuple", "f32[2]; s32[]", "t = tuple(p0, p1) ;; get-tuple-element(t), index=2",
     "", "no tuple element"),
    ("get-tuple-element of an array", "f32[2]", "get-tuple-element(p0), index=0", "", "no tuple element"),
    ("get-dimension-size of a tuple", "(f32[3])", "get-dimension-size(p0), dimensions={0}", "", "not an array"),
    ("convolution padded to a negative size", "f32[2,2,2,3]; f32[3,3,3,16]",
     "convolution(p0, p1), window={size=3x3 pad=-3_0x0_0}, dim_labels=b01f_01io->b01f", "", "negative size"),
    ("reduce-window padded to a negative size", "f32[4,6]; f32[]",
     "reduce-window(p0, p1), window={size=2x1 pad=-5_0x0_0}, to_apply=add", ADD, "negative size"),
    ("reduce-window of a tuple", "(f32[4,6]); f32[]", "reduce-window(p0, p1), window={size=2x1}, to_apply=add", ADD,
     "Expected array"),
    ("map of a tuple", "(f32[2,3])", "map(p0), dimensions={0,1}, to_apply=neg", NEG, "Expected array"),
    ("scan along a dimension its input has not", "f32[4]; f32[]",
     "scan(p0, p1), dimensions={2}, num_carries=1, to_apply=step", SCAN_ADD, "out of range"),
    ("scan along a negative dimension", "f32[4]; f32[]",
     "scan(p0, p1), dimensions={-1}, num_carries=1, to_apply=step", SCAN_ADD, "out of range"),
]


#: a computation whose root is written with a shape its opcode does not give
ROOT_OF_ANOTHER_SHAPE = """HloModule m

c (a: f32[], b: bf16[]) -> (f32[], bf16[]) {
  a = f32[] parameter(0)
  b = bf16[] parameter(1)
  ROOT t = (f32[], bf16[]) add-dependency(a, b)
}

ENTRY e {
  x = f32[] parameter(0)
  y = bf16[] parameter(1)
  ROOT r = (f32[], bf16[]) call(x, y), to_apply=c
}
"""


def other_shape(shape: str) -> str:
    """A shape incompatible with ``shape``."""
    if shape.startswith("("):
        return f"({shape})"
    return ("s8" if not shape.startswith("s8") else "f32") + shape[shape.index("[") :]


def checked(params: str, expr: str, before: str, shape: str) -> str:
    """The case's module, with a root that declares ``result`` to have ``shape``."""
    return module(params, expr, before, after=f"c = {shape} copy({shape} result)")


@pytest.mark.parametrize("label,params,expr,before,shape", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_the_shape_left_out_is_the_one_xla_works_out(label, params, expr, before, shape):
    parse_module(module(params, expr, before), "m.hlo", strict=True)
    parse_module(checked(params, expr, before, shape), "m.hlo", strict=True)
    with pytest.raises(HloError, match="is not compatible with the shape"):
        parse_module(checked(params, expr, before, other_shape(shape)), "m.hlo", strict=True)


@pytest.mark.parametrize("label,params,expr,before,words", REJECTED + XLA_ABORTS,
                         ids=[c[0] for c in REJECTED + XLA_ABORTS])
def test_an_instruction_xla_finds_no_shape_for_is_refused_where_it_stands(label, params, expr, before, words):
    text = module(params, expr, before)
    with pytest.raises(HloError) as info:
        parse_module(text, "m.hlo", strict=True)
    err = info.value
    assert "failed to infer shape for opcode" in err.message and words in err.message, err.message
    # the place: the opcode of the instruction without a shape (the callee's, for the last case)
    line = text.splitlines()[err.line - 1]
    assert line[err.column - 1 :].split("(")[0] in err.message


@pytest.mark.parametrize("label,params,expr,before,_", REJECTED + XLA_ABORTS, ids=[c[0] for c in REJECTED + XLA_ABORTS])
def test_the_default_reading_takes_what_it_does_not_check(label, params, expr, before, _):
    parse_module(module(params, expr, before), "m.hlo")


def test_an_operand_of_unknown_shape_leaves_the_shape_unknown():
    assert infer("add", [parse_shape("f32[2]"), None], {}, lambda _: None) is None


def test_dynamic_dimensions_are_not_guessed_at():
    lhs, rhs = parse_shape("s32[2,<=3]"), parse_shape("s32[2,4]")
    assert infer("add", [lhs, rhs], {}, lambda _: None) is None  # (XLA refuses: not said here)
    assert infer("add", [lhs, lhs], {}, lambda _: None) == lhs


def test_mixed_floating_point_types_give_the_more_precise_or_no_shape():
    # XLA gives the more precise type; of the 8-bit types the rules here leave it unknown
    assert infer("add", [parse_shape("f32[2]"), parse_shape("bf16[2]")], {}, lambda _: None) == parse_shape("f32[2]")
    assert infer("add", [parse_shape("f8e5m2[2]"), parse_shape("f8e4m3fn[2]")], {}, lambda _: None) is None
    with pytest.raises(NoShape):
        infer("add", [parse_shape("f32[2]"), parse_shape("bf16[3]")], {}, lambda _: None)


def test_a_call_uses_the_callee_signature_it_is_given():
    program = Program((parse_shape("f32[2]"),), parse_shape("(f32[2], s32[])"))
    assert infer("call", [parse_shape("f32[2]")], {"to_apply": "f"}, {"f": program}.get) == program.result
    assert infer("call", [parse_shape("f32[2]")], {"to_apply": "g"}, {"f": program}.get) is None


def test_a_root_written_with_a_shape_its_opcode_does_not_give_is_refused():
    # XLA's parser gives add-dependency its first operand's shape, whatever is written, and the
    # computation's signature is then checked against that
    text = ROOT_OF_ANOTHER_SHAPE
    with pytest.raises(HloError, match="is not compatible with that of its root instruction t, f32"):
        parse_module(text, "m.hlo", strict=True)
    parse_module(text, "m.hlo")
