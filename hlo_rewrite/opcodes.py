"""The opcodes XLA's HLO parser knows, and what each one takes.

Facts from XLA's ``xla/hlo/ir/hlo_opcode.h`` (names, arity) and ``xla/hlo/parser/hlo_parser.cc``
(the attributes each opcode's case registers, required or optional, and the kind of value each
one parses). Public names:

- ``OPCODE_NAMES``: every opcode name; :func:`closest_opcode` for "did you mean".
- ``OPCODES``: name -> :class:`OpcodeSpec` (``arity``: a fixed operand count or None for
  variadic; ``attrs``: name -> :class:`AttrSpec`, the common attributes included).
- :class:`Kind`: the kinds of attribute value (``Kind.INT``, ``Kind.COMPUTATION``, ...).
- ``COMMON_ATTRS``: the attributes every instruction may carry.
- ``CALLEE_ATTRS`` / ``CALLEE_LIST_ATTRS``: attributes whose value names one computation / a
  braced list of computations; ``ALL_CALLEE_ATTRS`` both.
- ``ATTRIBUTE_KINDS``: every attribute name the parser knows -> its kind (one kind per name,
  but ``algorithm``: a dot's or a random number generator's, by opcode; here the first).
- ``MODULE_ATTRS``: the attributes of the ``HloModule`` header line.
- ``ENUM_VALUES``: the words an enumerated attribute accepts (``ANY_CASE_ENUM_NAMES``: in any
  case); ``ANY_CASE_ENUMS``: those of the enumerations XLA reads in any case.
- ``SHAPE_INFERRED``: the opcodes whose result shape may be left out (worked out by
  :mod:`hlo_rewrite.inference`); ``BUILT_SHAPES``, ``BUILT_AFTER_DATA``, ``BUILT_FROM_OPERAND``
  and ``BUILT_AS_OPERAND``: those whose shape XLA's parser builds itself, whatever shape is
  written.
- :func:`spec_of` and :func:`split_async_opcode` (``custom-call-start`` is ``async-start``
  wrapping ``custom-call``, as XLA's parser reads it).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Mapping
from types import MappingProxyType

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "BUILT_AFTER_DATA",
    "BUILT_AS_OPERAND",
    "BUILT_FROM_OPERAND",
    "BUILT_SHAPES",
    "ALL_CALLEE_ATTRS",
    "ATTRIBUTE_KINDS",
    "AttrSpec",
    "CALLEE_ATTRS",
    "CALLEE_LIST_ATTRS",
    "COMMON_ATTRS",
    "ANY_CASE_ENUMS",
    "ANY_CASE_ENUM_NAMES",
    "ENUM_VALUES",
    "Kind",
    "MODULE_ATTRS",
    "OPCODES",
    "OPCODE_NAMES",
    "OpcodeSpec",
    "SHAPE_INFERRED",
    "closest_opcode",
    "spec_of",
    "split_async_opcode",
]


class Kind:
    """The kinds of attribute value (XLA's ``AttrTy``); each has one reader in
    :mod:`hlo_rewrite.values`."""

    INT = "int"                          # 3, -1
    INT32 = "int32"                      # an int that fits 32 bits
    FLOAT = "float"                      # 0.001
    BOOL = "bool"                        # true / false
    BOOL_LIST = "bool list"              # true, or {true,false}
    BRACED_BOOL_LIST = "braced bool list"  # {true,false}
    INT_LIST = "int list"                # {0,1}
    INT_LIST_LIST = "int list list"      # {{0,1},{1,0}}
    REPLICA_GROUPS = "replica groups"    # {{0,1}} or [2,4]<=[8]
    COMPUTATION = "computation"          # %name or name
    COMPUTATION_LIST = "computation list"  # {%a, %b}
    INSTRUCTION_LIST = "instruction list"  # {%a, %b}
    STRING = "string"                    # "..."
    STRING_OR_DICT = "string or dict"    # "..." or {...}
    ENUM = "enum"                        # a word from ENUM_VALUES
    WORD = "word"                        # an identifier whose values are not checked
    DOT_ALGORITHM = "algorithm"          # dot_bf16_bf16_f32, in any case (ANY_CASE_ENUMS)
    RNG_ALGORITHM = "random algorithm"   # rng_philox, in any case (ANY_CASE_ENUMS)
    SHAPE = "shape"                      # f32[2]{0}
    SHAPE_LIST = "shape list"            # {f32[2]{0}, s32[]}
    WINDOW = "window"                    # {size=3x3 stride=2x2 pad=1_1x1_1}
    DIM_LABELS = "dim labels"            # b01f_01io->b01f
    SLICE = "slice"                      # {[0:2], [1:5:2]}
    PADDING = "padding"                  # 0_0x1_1
    PRECISION_LIST = "precision list"    # {default,highest}
    FRONTEND_ATTRIBUTES = "frontend attributes"  # {k="v"}
    STATISTICS = "statistics"            # {visualizing_index=1,stat-1=33}
    METADATA = "metadata"                # {op_type="..." op_name="..." source_line=1}
    BRACED = "brace text"                # {...}, checked for balance only
    SHARDING = "sharding"                # {devices=[2,1]0,1}, {replicated}, {{maximal device=0}, {manual}}
    DOMAIN = "domain"                    # {kind="sharding", entry={maximal device=0}, exit={replicated}}
    LITERAL = "literal"                  # shape then literal
    ALIASING = "aliasing"                # {{0}: (0, {})}
    BUFFER_DONOR = "buffer donor"        # {(0, {}), (1, {0})}
    RESULT_ACCURACY = "result accuracy"  # {mode=highest} or {tolerance={atol=0.5,rtol=0.1,ulps=2}}
    ORIGINAL_VALUE = "original value"    # {{"name" {0}}}, {({"a"}, {})} or {[synthetic_call]}
    RECOVERY_TABLE = "recovery table"    # {{"a"} : {"b"}, "HloModule ..."}


# a record as typing.NamedTuple makes one, without importing typing (docs/decisions.md):
# the fields named for collections.namedtuple, typed below in the same order
class AttrSpec(namedtuple("AttrSpec", ["name", "kind", "required"], defaults=[False])):
    """One attribute an opcode takes."""

    __slots__ = ()
    name: str
    kind: str
    required: bool


class OpcodeSpec(namedtuple("OpcodeSpec", ["name", "arity", "attrs"])):
    """What XLA's parser accepts for one opcode: ``arity`` is the operand count it demands
    (None: any number), ``attrs`` every attribute it takes (common ones included)."""

    __slots__ = ()
    name: str
    arity: int | None
    attrs: Mapping[str, AttrSpec]

    def required(self) -> list[str]:
        """Names of the attributes that must be present."""
        return [a.name for a in self.attrs.values() if a.required]


#: the words enumerated attributes accept, as XLA's parser reads them
ENUM_VALUES: Final = MappingProxyType({
    "direction": frozenset({"EQ", "NE", "GE", "GT", "LE", "LT"}),
    "type": frozenset({"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}),
    "kind": frozenset({"kLoop", "kInput", "kOutput", "kCustom"}),
    "fft_type": frozenset({"FFT", "IFFT", "RFFT", "IRFFT"}),
    "distribution": frozenset({"rng_uniform", "rng_normal"}),
    "api_version": frozenset({
        "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
        "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI",
    }),
    "schedule": frozenset({"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"}),
    "padding_type": frozenset({"PADDING_INVALID", "PADDING_VALID", "PADDING_SAME"}),
    "transpose_a": frozenset({"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}),
    "mode": frozenset({"cross_replica", "cross_partition", "cross_replica_and_partition", "flattened_id"}),
})

#: the enumerated attributes of :data:`ENUM_VALUES` whose words XLA's parser reads in any case
#: (``api_version=api_version_typed_ffi``, ``distribution=RNG_NORMAL``); the others in the case
#: given there only
ANY_CASE_ENUM_NAMES: Final = frozenset({"api_version", "distribution", "schedule"})

#: the enumerations XLA's parser reads in any case (``DOT_F32_F32_F32`` too), by kind: their
#: words in lower case (a dot's algorithm: any but ``alg_unset``, which XLA refuses)
ANY_CASE_ENUMS: Final = MappingProxyType({
    Kind.DOT_ALGORITHM: frozenset({
        "dot_any_f8_any_f8_f32", "dot_any_f8_any_f8_f32_fast_accum", "dot_f16_f16_f16", "dot_f16_f16_f32",
        "dot_bf16_bf16_bf16", "dot_bf16_bf16_f32", "dot_bf16_bf16_f32_x3", "dot_bf16_bf16_f32_x6",
        "dot_bf16_bf16_f32_x9", "dot_tf32_tf32_f32", "dot_tf32_tf32_f32_x3", "dot_f32_f32_f32", "dot_f64_f64_f64",
    }),
    Kind.RNG_ALGORITHM: frozenset({"rng_default", "rng_three_fry", "rng_philox"}),
})

# ------------------------------------------------------------------ common attributes

_COMMON: Final = {
    "sharding": Kind.SHARDING,
    "frontend_attributes": Kind.FRONTEND_ATTRIBUTES,
    "statistics": Kind.STATISTICS,
    "parameter_replication": Kind.BRACED_BOOL_LIST,
    "control-predecessors": Kind.INSTRUCTION_LIST,
    "origin": Kind.ORIGINAL_VALUE,
    "metadata": Kind.METADATA,
    "backend_config": Kind.STRING_OR_DICT,
}
#: the attributes XLA's parser accepts on every instruction
COMMON_ATTRS: Final = frozenset(_COMMON)

# the attribute sets shared by several opcodes: (name, kind, required)
_COLLECTIVE = [("replica_groups", Kind.REPLICA_GROUPS, False), ("channel_id", Kind.INT, False)]
_FLAGS = [("constrain_layout", Kind.BOOL, False), ("use_global_device_ids", Kind.BOOL, False)]
_CHANNEL = [("channel_id", Kind.INT, False), ("is_host_transfer", Kind.BOOL, False)]
_DOT = [
    ("lhs_contracting_dims", Kind.INT_LIST, False), ("rhs_contracting_dims", Kind.INT_LIST, False),
    ("lhs_batch_dims", Kind.INT_LIST, False), ("rhs_batch_dims", Kind.INT_LIST, False),
    ("operand_precision", Kind.PRECISION_LIST, False),
]
_BATCH_NORM = [("epsilon", Kind.FLOAT, True), ("feature_index", Kind.INT, True)]
_ACCURACY = [("result_accuracy", Kind.RESULT_ACCURACY, False)]

_UNARY_WITH_ACCURACY = (
    "acos acosh asin asinh atanh exponential-minus-one log log-plus-one logistic sqrt cbrt rsqrt "
    "tanh erf sine sinh cosine cosh tan exponential"
).split()
_UNARY = (
    "abs all-gather-done all-reduce-done round-nearest-afz round-nearest-even bitcast ceil "
    "count-leading-zeros collective-permute-done copy copy-done opt-barrier imag is-finite floor "
    "not negate popcnt real sign convert bitcast-convert atan shuffle"
).split()
_BINARY = (
    "add divide multiply subtract atan2 complex maximum minimum power remainder and or xor "
    "shift-left shift-right-arithmetic shift-right-logical stochastic-convert mulhi"
).split()

_Attrs = list[tuple[str, str, bool]]
_TABLE: dict[str, tuple[int | None, _Attrs]] = {
    "parameter": (0, []),
    "constant": (0, []),
    "iota": (0, [("iota_dimension", Kind.INT, True)]),
    "topk": (1, [("k", Kind.INT, True), ("largest", Kind.BOOL, False)]),
    "clamp": (3, []),
    "select": (3, []),
    "all-gather": (None, _COLLECTIVE + [("dimensions", Kind.INT_LIST, True)] + _FLAGS),
    "all-gather-start": (None, _COLLECTIVE + [("dimensions", Kind.INT_LIST, True)] + _FLAGS),
    "all-reduce": (None, [("to_apply", Kind.COMPUTATION, True)] + _COLLECTIVE + _FLAGS
                   + [("mode", Kind.ENUM, False)]),
    "all-reduce-start": (None, [("to_apply", Kind.COMPUTATION, True)] + _COLLECTIVE + _FLAGS
                         + [("mode", Kind.ENUM, False)]),
    "reduce-scatter": (None, [("to_apply", Kind.COMPUTATION, True)] + _COLLECTIVE + _FLAGS
                       + [("mode", Kind.ENUM, False), ("dimensions", Kind.INT_LIST, True)]),
    "all-to-all": (None, _COLLECTIVE + [("dimensions", Kind.INT_LIST, False),
                                        ("constrain_layout", Kind.BOOL, False)]),
    "ragged-all-to-all": (None, _COLLECTIVE + [("dimensions", Kind.INT_LIST, False)]),
    "collective-broadcast": (None, _COLLECTIVE),
    "collective-permute": (None, [("source_target_pairs", Kind.INT_LIST_LIST, True),
                                  ("channel_id", Kind.INT, False),
                                  ("slice_sizes", Kind.INT_LIST_LIST, False)]),
    "collective-permute-start": (None, [("source_target_pairs", Kind.INT_LIST_LIST, True),
                                        ("channel_id", Kind.INT, False),
                                        ("slice_sizes", Kind.INT_LIST_LIST, False)]),
    "async-start": (None, [("async_execution_thread", Kind.STRING, False),
                           ("output_to_operand_aliasing", Kind.ALIASING, False),
                           ("calls", Kind.COMPUTATION, True)]),
    "async-update": (1, [("async_execution_thread", Kind.STRING, False),
                         ("calls", Kind.COMPUTATION, False)]),
    "async-done": (1, [("async_execution_thread", Kind.STRING, False),
                       ("calls", Kind.COMPUTATION, False)]),
    "copy-start": (1, [("cross_program_prefetch_index", Kind.INT32, False)]),
    "replica-id": (0, []),
    "partition-id": (0, []),
    "dynamic-reshape": (None, []),
    "reshape": (1, [("inferred_dimension", Kind.INT, False)]),
    "after-all": (None, []),
    "add-dependency": (2, []),
    "sort": (None, [("dimensions", Kind.INT_LIST, True), ("is_stable", Kind.BOOL, False),
                    ("to_apply", Kind.COMPUTATION, True)]),
    "tuple": (None, []),
    "while": (1, [("condition", Kind.COMPUTATION, True), ("body", Kind.COMPUTATION, True)]),
    "recv": (1, _CHANNEL),
    "recv-done": (1, _CHANNEL),
    "send": (2, _CHANNEL),
    "send-done": (1, _CHANNEL),
    "get-tuple-element": (1, [("index", Kind.INT, True)]),
    "call": (None, [("to_apply", Kind.COMPUTATION, True), ("is_composite", Kind.BOOL, False)]),
    "reduce-window": (None, [("window", Kind.WINDOW, False), ("to_apply", Kind.COMPUTATION, True)]),
    "convolution": (2, [("window", Kind.WINDOW, False), ("dim_labels", Kind.DIM_LABELS, True),
                        ("feature_group_count", Kind.INT, False),
                        ("batch_group_count", Kind.INT, False), ("conv_kind", Kind.WORD, False),
                        ("operand_precision", Kind.PRECISION_LIST, False)]),
    "fft": (1, [("fft_type", Kind.ENUM, True), ("fft_length", Kind.INT_LIST, True)]),
    "triangular-solve": (2, [("left_side", Kind.BOOL, False), ("lower", Kind.BOOL, False),
                             ("unit_diagonal", Kind.BOOL, False), ("transpose_a", Kind.ENUM, False)]),
    "compare": (2, [("direction", Kind.ENUM, True), ("type", Kind.ENUM, False)]),
    "cholesky": (1, [("lower", Kind.BOOL, False)]),
    "broadcast": (1, [("dimensions", Kind.INT_LIST, False)]),  # required unless the operand is a scalar
    "concatenate": (None, [("dimensions", Kind.INT_LIST, True)]),
    "map": (None, [("to_apply", Kind.COMPUTATION, True), ("dimensions", Kind.INT_LIST, False)]),
    "scan": (None, [("to_apply", Kind.COMPUTATION, True), ("dimensions", Kind.INT_LIST, True),
                    ("num_carries", Kind.INT, True), ("is_reverse", Kind.BOOL, False),
                    ("is_associative", Kind.BOOL, False)]),
    "reduce": (None, [("to_apply", Kind.COMPUTATION, True), ("dimensions", Kind.INT_LIST, True)]),
    "reverse": (1, [("dimensions", Kind.INT_LIST, True)]),
    "select-and-scatter": (3, [("select", Kind.COMPUTATION, True), ("scatter", Kind.COMPUTATION, True),
                               ("window", Kind.WINDOW, False)]),
    "slice": (1, [("slice", Kind.SLICE, True)]),
    "dynamic-slice": (None, [("dynamic_slice_sizes", Kind.INT_LIST, True)]),
    "dynamic-update-slice": (None, []),
    "transpose": (1, [("dimensions", Kind.INT_LIST, True)]),
    "batch-norm-training": (3, _BATCH_NORM),
    "batch-norm-inference": (5, _BATCH_NORM),
    "batch-norm-grad": (5, _BATCH_NORM),
    "pad": (2, [("padding", Kind.PADDING, True)]),
    "fusion": (None, [("calls", Kind.COMPUTATION, True), ("kind", Kind.ENUM, True),
                      ("output_to_operand_aliasing", Kind.ALIASING, False)]),
    "infeed": (1, [("infeed_config", Kind.STRING, False)]),
    "outfeed": (2, [("outfeed_config", Kind.STRING, False), ("outfeed_shape", Kind.SHAPE, False)]),
    "rng": (None, [("distribution", Kind.ENUM, True)]),
    "rng-get-and-update-state": (0, [("delta", Kind.INT, True)]),
    "rng-bit-generator": (None, [("algorithm", Kind.RNG_ALGORITHM, True)]),  # one at least
    "reduce-precision": (1, [("exponent_bits", Kind.INT, True), ("mantissa_bits", Kind.INT, True)]),
    "conditional": (None, [("true_computation", Kind.COMPUTATION, False),
                           ("false_computation", Kind.COMPUTATION, False),
                           ("branch_computations", Kind.COMPUTATION_LIST, False)]),
    "custom-call": (None, [
        ("custom_call_target", Kind.STRING, True), ("window", Kind.WINDOW, False),
        ("dim_labels", Kind.DIM_LABELS, False), ("feature_group_count", Kind.INT, False),
        ("batch_group_count", Kind.INT, False), ("operand_layout_constraints", Kind.SHAPE_LIST, False),
        ("custom_call_has_side_effect", Kind.BOOL, False), ("to_apply", Kind.COMPUTATION, False),
        ("called_computations", Kind.COMPUTATION_LIST, False),
        ("output_to_operand_aliasing", Kind.ALIASING, False), ("padding_type", Kind.ENUM, False),
        ("literal", Kind.LITERAL, False), ("operand_precision", Kind.PRECISION_LIST, False),
        ("schedule", Kind.ENUM, False), ("api_version", Kind.ENUM, False),
    ]),
    "dot": (None, _DOT + [("algorithm", Kind.DOT_ALGORITHM, False)]),  # two at least
    "ragged-dot": (3, _DOT + [("lhs_ragged_dims", Kind.INT_LIST, False),
                              ("rhs_group_dims", Kind.INT_LIST, False)]),
    "scaled-dot": (4, _DOT + [("algorithm", Kind.DOT_ALGORITHM, False)]),
    "gather": (2, [("offset_dims", Kind.INT_LIST, True), ("collapsed_slice_dims", Kind.INT_LIST, True),
                   ("start_index_map", Kind.INT_LIST, True), ("index_vector_dim", Kind.INT, True),
                   ("slice_sizes", Kind.INT_LIST, True), ("indices_are_sorted", Kind.BOOL, False),
                   ("operand_batching_dims", Kind.INT_LIST, False),
                   ("start_indices_batching_dims", Kind.INT_LIST, False)]),
    "scatter": (None, [("update_window_dims", Kind.INT_LIST, True),
                       ("inserted_window_dims", Kind.INT_LIST, True),
                       ("scatter_dims_to_operand_dims", Kind.INT_LIST, True),
                       ("index_vector_dim", Kind.INT, True), ("to_apply", Kind.COMPUTATION, True),
                       ("indices_are_sorted", Kind.BOOL, False), ("unique_indices", Kind.BOOL, False),
                       ("input_batching_dims", Kind.INT_LIST, False),
                       ("scatter_indices_batching_dims", Kind.INT_LIST, False)]),
    "domain": (1, [("domain", Kind.DOMAIN, True)]),
    "get-dimension-size": (1, [("dimensions", Kind.INT_LIST, True)]),
    "set-dimension-size": (2, [("dimensions", Kind.INT_LIST, True)]),
    # named by XLA's opcode list; read here like any variadic instruction
    "collective-reduce": (None, [("to_apply", Kind.COMPUTATION, True)] + _COLLECTIVE + _FLAGS),
}
for _op in _UNARY_WITH_ACCURACY:
    _TABLE[_op] = (1, list(_ACCURACY))
for _op in _UNARY:
    _TABLE.setdefault(_op, (1, []))
for _op in _BINARY:
    _TABLE[_op] = (2, [])


def _build() -> dict[str, OpcodeSpec]:
    out: dict[str, OpcodeSpec] = {}
    made: dict[tuple[str, str, bool], AttrSpec] = {}  # one object per spec: they are immutable
    common = {k: AttrSpec(k, kind) for k, kind in _COMMON.items()}
    for name, (arity, attrs) in sorted(_TABLE.items()):
        specs = dict(common)
        for spec in attrs:
            found = made.get(spec)
            if found is None:
                found = made[spec] = AttrSpec(*spec)
            specs[spec[0]] = found
        out[name] = OpcodeSpec(name, arity, MappingProxyType(specs))
    return out


#: opcode name -> what XLA's parser accepts for it
OPCODES: Final[Mapping[str, OpcodeSpec]] = MappingProxyType(_build())

#: every opcode name XLA's parser accepts
OPCODE_NAMES: Final[frozenset[str]] = frozenset(OPCODES)

#: the opcodes whose shape XLA's parser builds itself (``CreateAfterAll``, ``CreateSendDone``,
#: ``CreateOutfeed``), whatever shape is written on them
BUILT_SHAPES: Final[Mapping[str, str]] = MappingProxyType(
    {"after-all": "token[]", "send-done": "token[]", "outfeed": "token[]"})
#: the opcodes whose shape XLA's parser builds from the first element of the written tuple shape,
#: followed by these (``CreateInfeed``, ``CreateRecv``): the rest of what is written is not read
BUILT_AFTER_DATA: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {"infeed": ("token[]",), "recv": ("u32[]", "token[]")})
#: the opcodes whose shape XLA's parser builds from their first operand's, followed by these
#: (``CreateSend``: the data sent; ``CreateRecvDone``: the first element of the recv's shape)
BUILT_FROM_OPERAND: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {"send": ("u32[]", "token[]"), "recv-done": ("token[]",)})
#: the opcodes whose shape XLA's parser takes from their first operand, whatever shape is written
#: (``CreateAddDependency``)
BUILT_AS_OPERAND: Final = frozenset({"add-dependency"})
#: the opcodes whose result shape XLA's parser works out when the text leaves it out
#: (``CanInferShape`` in ``hlo_parser.cc``); any other instruction must write its shape
SHAPE_INFERRED: Final[frozenset[str]] = frozenset("""
    abs acos acosh add add-dependency after-all and asin asinh atan atan2 atanh batch-norm-grad
    batch-norm-inference batch-norm-training broadcast call cbrt ceil cholesky clamp compare complex
    concatenate conditional convolution copy cosh cosine count-leading-zeros divide domain dot erf
    exponential exponential-minus-one fft floor gather get-dimension-size get-tuple-element imag
    is-finite log log-plus-one logistic map maximum minimum mulhi multiply negate not opt-barrier or
    pad partition-id popcnt power ragged-dot real reduce reduce-window remainder replica-id reverse
    round-nearest-afz round-nearest-even rsqrt scaled-dot scan scatter select select-and-scatter
    set-dimension-size shift-left shift-right-arithmetic shift-right-logical sign sine sinh sort sqrt
    subtract tan tanh topk transpose triangular-solve tuple while xor
""".split())

#: attributes whose value names one called computation
CALLEE_ATTRS: Final = frozenset(
    a.name for s in OPCODES.values() for a in s.attrs.values() if a.kind == Kind.COMPUTATION
)
#: attributes whose value is a braced list of called computations
CALLEE_LIST_ATTRS: Final = frozenset(
    a.name for s in OPCODES.values() for a in s.attrs.values() if a.kind == Kind.COMPUTATION_LIST
)
ALL_CALLEE_ATTRS: Final = CALLEE_ATTRS | CALLEE_LIST_ATTRS

#: the attributes of the ``HloModule`` header line
MODULE_ATTRS: Final = MappingProxyType({
    "is_scheduled": AttrSpec("is_scheduled", Kind.BOOL),
    "alias_passthrough_params": AttrSpec("alias_passthrough_params", Kind.BOOL),
    "entry_computation_layout": AttrSpec("entry_computation_layout", Kind.BRACED),
    "frontend_attributes": AttrSpec("frontend_attributes", Kind.FRONTEND_ATTRIBUTES),
    "allow_spmd_sharding_propagation_to_parameters":
        AttrSpec("allow_spmd_sharding_propagation_to_parameters", Kind.BOOL_LIST),
    "allow_spmd_sharding_propagation_to_output":
        AttrSpec("allow_spmd_sharding_propagation_to_output", Kind.BOOL_LIST),
    "replica_count": AttrSpec("replica_count", Kind.INT),
    "num_partitions": AttrSpec("num_partitions", Kind.INT),
    "input_output_alias": AttrSpec("input_output_alias", Kind.ALIASING),
    "buffer_donor": AttrSpec("buffer_donor", Kind.BUFFER_DONOR),
    "origin_recovery_table": AttrSpec("origin_recovery_table", Kind.RECOVERY_TABLE),
})


def _kinds() -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in OPCODES.values():
        for a in spec.attrs.values():
            out.setdefault(a.name, a.kind)
    for a in MODULE_ATTRS.values():
        out.setdefault(a.name, a.kind)
    out["execution_thread"] = Kind.STRING  # after a computation's closing brace
    return out


#: every attribute name XLA's parser knows -> the kind of its value
ATTRIBUTE_KINDS: Final = MappingProxyType(_kinds())

_ASYNC_SUFFIXES: Final = (("-start", "async-start"), ("-update", "async-update"), ("-done", "async-done"))


def split_async_opcode(name: str) -> tuple[str, str] | None:
    """``(async opcode, wrapped opcode)`` for an async spelling such as ``custom-call-start``
    that is not itself an opcode; None otherwise."""
    if name in OPCODES:
        return None
    for suffix, async_op in _ASYNC_SUFFIXES:
        if name.endswith(suffix) and name[: -len(suffix)] in OPCODES:
            return async_op, name[: -len(suffix)]
    return None


def spec_of(name: str) -> OpcodeSpec | None:
    """The spec of an opcode as written (an async spelling gives its async opcode), or None
    when XLA's parser does not know it."""
    spec = OPCODES.get(name)
    if spec is not None:
        return spec
    split = split_async_opcode(name)
    return OPCODES[split[0]] if split is not None else None


def closest_opcode(name: str) -> str | None:
    """The known opcode closest to a misspelled ``name`` (for "did you mean"), or None."""
    import difflib  # only for a message

    matches = difflib.get_close_matches(name, sorted(OPCODE_NAMES), n=1, cutoff=0.6)
    return matches[0] if matches else None
