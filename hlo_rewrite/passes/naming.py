"""The AwsNeuron collective naming contract (docs/contract.md), in one place.

A converted collective's ``custom_call_target`` is ``base + infix + suffix``:

* ``base`` from the opcode (:data:`BASES`);
* ``infix`` from the ROOT opcode of the reduction computation, for all-reduce and
  reduce-scatter only (:data:`INFIXES`, anything else is :data:`UNKNOWN_OP`);
  all-gather never has one;
* ``suffix`` from the element type of the instruction's *result* shape
  (:data:`DTYPE_SUFFIXES`, anything else, tuples included, is :data:`UNKNOWN_DTYPE`).

These are Neuron's strings byte for byte, quirks included: they are what the
downstream lowering dispatches on.
"""

from __future__ import annotations

from ..escapes import c_escape, c_unescape
from ..ir import Computation
from ..lexicon import DOUBLE_QUOTED_RE
from ..regex import lazy_pattern

#: opcode -> base of the target name
BASES: dict[str, str] = {
    "all-reduce": "AwsNeuronAllReduce",
    "reduce-scatter": "AwsNeuronReduceScatter",
    "all-gather": "AwsNeuronAllGather",
}

#: opcodes that carry a reduction computation (and so a reduce-op infix)
REDUCING: frozenset[str] = frozenset({"all-reduce", "reduce-scatter"})

#: ROOT opcode of the reduction computation -> infix
INFIXES: dict[str, str] = {"add": "Add", "maximum": "Max", "minimum": "Min"}
UNKNOWN_OP = "UNKNOWNOP"

#: element type of the result shape -> suffix
DTYPE_SUFFIXES: dict[str, str] = {
    "f32": "_f32",
    "bf16": "_bf16",
    "f16": "_f16",
    "u32": "_u32",
    "s64": "_s64",
    "s32": "_s32",
}
UNKNOWN_DTYPE = "_UNKNOWNDTYPE"

#: every target name the contract can produce, read back into its parts
TARGET_RE = lazy_pattern(
    r"^(?P<base>AwsNeuronAllReduce|AwsNeuronReduceScatter)(?P<infix>Add|Max|Min|UNKNOWNOP)"
    r"(?P<suffix>_f32|_bf16|_f16|_u32|_s64|_s32|_UNKNOWNDTYPE)$"
    r"|^(?P<ag>AwsNeuronAllGather)(?P<agsuffix>_f32|_bf16|_f16|_u32|_s64|_s32|_UNKNOWNDTYPE)$"
)

#: base -> opcode
OPCODES: dict[str, str] = {base: op for op, base in BASES.items()}


def reduce_op_infix(body: Computation) -> str:
    """The infix for a reduction computation: from its ROOT opcode, and only
    when both ROOT operands are parameters of ``body`` (else ``UNKNOWNOP``)."""
    root = body.root
    infix = INFIXES.get(root.opcode)
    if infix is None or len(root.operands) != 2:
        return UNKNOWN_OP
    for name in root.operands:
        operand = body.get(name)
        if operand is None or operand.opcode != "parameter":
            return UNKNOWN_OP
    return infix


def dtype_suffix(element_type: str | None) -> str:
    """The suffix for a result element type (``"tuple"`` and the rest: UNKNOWNDTYPE)."""
    return DTYPE_SUFFIXES.get(element_type or "", UNKNOWN_DTYPE)


def target_name(opcode: str, element_type: str | None, body: Computation | None = None) -> str:
    """The full custom_call_target for a collective (``body``: its reduction computation)."""
    base = BASES[opcode]
    infix = ""
    if opcode in REDUCING:
        infix = UNKNOWN_OP if body is None else reduce_op_infix(body)
    return base + infix + dtype_suffix(element_type)


def parse_target(target: str) -> tuple[str, str | None, str] | None:
    """``"AwsNeuronReduceScatterAdd_bf16"`` -> ``("reduce-scatter", "Add", "_bf16")``;
    ``"AwsNeuronAllGather_f16"`` -> ``("all-gather", None, "_f16")``; None if not ours."""
    m = TARGET_RE.match(target)
    if m is None:
        return None
    if m.group("ag"):
        return "all-gather", None, m.group("agsuffix")
    return OPCODES[m.group("base")], m.group("infix"), m.group("suffix")


# ------------------------------------------------------------- backend_config
#: keys of the backend_config a converted collective carries (docs/contract.md)
COMMON_KEYS: frozenset[str] = frozenset({"replica_groups", "channel_id", "use_global_device_ids", "constrain_layout"})
OPTIONAL_KEYS: frozenset[str] = frozenset({"original_backend_config"})


def required_keys(opcode: str) -> frozenset[str]:
    """The keys a converted ``opcode`` must carry in its backend_config."""
    keys = set(COMMON_KEYS)
    if opcode in ("reduce-scatter", "all-gather"):
        keys.add("dimension")
    if opcode in REDUCING:
        keys.add("to_apply")
    return frozenset(keys)


#: attributes carried between a collective and its custom-call, in the order
#: XLA's printer puts them after the opcode-specific ones (custom_call_target
#: on a custom-call, to_apply on a collective)
CARRIED_ATTRS: tuple[str, ...] = (
    "sharding",
    "frontend_attributes",
    "control-predecessors",
    "statistics",
    "origin",
    "metadata",
)


# everything but braces
_NOT_BRACES = lazy_pattern(r"[^{}]++")


def lexes_as_json_dict(text: str) -> bool:
    """True when ``text`` is one brace-balanced ``{...}`` group (braces inside
    double-quoted strings do not count): XLA's printer then prints it raw."""
    if not (text.startswith("{") and text.endswith("}")):
        return False
    if '"' in text:
        text = DOUBLE_QUOTED_RE.sub("", text)  # (a backslash takes the next character along)
        if '"' in text:
            return False  # a string left open
    depth = 0
    braces = _NOT_BRACES.sub("", text)
    for brace in braces[:-1]:  # the first opens the group, which only the last may close
        depth += 1 if brace == "{" else -1
        if depth == 0:
            return False
    return depth == 1


def backend_config_value(written: str) -> str:
    """The backend_config string XLA holds for the value text as written:
    ``{...}`` stays as it is, ``"..."`` is unquoted and unescaped."""
    if written.startswith('"') and written.endswith('"') and len(written) >= 2:
        return c_unescape(written[1:-1])
    return written


def backend_config_text(value: str) -> str:
    """How XLA's printer writes a backend_config string: raw when it lexes as a
    brace-balanced dict, else quoted and C-escaped."""
    return value if lexes_as_json_dict(value) else '"' + c_escape(value) + '"'
