"""XLA (through jaxlib, CPU only) as an oracle for tests.

Plain functions, no pytest fixtures. Import this module *before* anything imports jax: it
sets ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` and enables ``jax_enable_x64``.
If jax was already imported without that flag, the module falls back to the
``jax_num_cpu_devices`` option while JAX's backends are not yet initialized, and raises a
clear ``RuntimeError`` otherwise.

API
---
- ``xla_parse(text)``: XLA's ``HloModule``; raises ``XlaRejected(message)`` when XLA's parser
  rejects the text (the parser only; the full shape verifier runs when compiling).
- ``xla_reprint(text, *, operand_shapes=None, percent=True, metadata=True)``: XLA's print.
- ``xla_skeleton(text)``: ``{computation: [(name, opcode, [operand names])]}`` as XLA read it.
- ``replace_unspecified_api(text)``: drops ``api_version=API_VERSION_UNSPECIFIED``.
- ``run_spmd(text, inputs)`` / ``run_replicated(text, inputs)``: execute on 8 CPU devices,
  ``inputs[param][device]`` in, ``outputs[output][device]`` out (numpy arrays).
- ``compare_modules(text_a, text_b, inputs, *, rtol=0, atol=0)``: AssertionError on mismatch.
- ``random_inputs(text, seed)``: per-device random inputs for the ENTRY parameters.

Compiled executables are cached by a hash of the module text and the execution mode, so
running the same module twice compiles once per process.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

NUM_DEVICES = 8
_FLAG = f"--xla_force_host_platform_device_count={NUM_DEVICES}"


def _configure_jax() -> None:
    flags = os.environ.get("XLA_FLAGS", "")
    has_flag = "--xla_force_host_platform_device_count" in flags
    if "jax" not in sys.modules:
        if not has_flag:
            os.environ["XLA_FLAGS"] = f"{flags} {_FLAG}".strip()
        return
    if has_flag:
        return
    from jax._src import xla_bridge

    if not xla_bridge.backends_are_initialized():
        import jax

        jax.config.update("jax_num_cpu_devices", NUM_DEVICES)
        return
    import jax

    if len(jax.devices("cpu")) < NUM_DEVICES:
        raise RuntimeError(
            "tests/xla_oracle.py needs 8 CPU devices, but jax was imported and initialised "
            f"without XLA_FLAGS={_FLAG}. Import xla_oracle before jax (or set XLA_FLAGS in "
            "the environment)."
        )


_configure_jax()

import jax  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402

jax.config.update("jax_enable_x64", True)


class XlaRejected(Exception):
    """XLA's HLO parser rejected the text; ``message`` is XLA's own error message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------- parse / print


def xla_parse(text: str) -> Any:
    """Parse ``text`` with XLA's HLO parser; return jaxlib's ``HloModule``.

    Raises ``XlaRejected`` with XLA's message if the parser rejects the text. Note the parser
    does not run the full HLO verifier (shape checks happen when compiling).
    """
    try:
        return xc.hlo.hlo_module_from_text(text)
    except Exception as exc:  # jax.errors.JaxRuntimeError (INVALID_ARGUMENT)
        raise XlaRejected(str(exc)) from exc


def xla_reprint(
    text: str,
    *,
    operand_shapes: bool | None = None,
    percent: bool = True,
    metadata: bool = True,
) -> str:
    """Parse ``text`` with XLA and print it back with XLA's printer.

    ``operand_shapes=None`` keeps XLA's default (``HloModule.to_string()``, which prints operand
    shapes); True/False force ``print_operand_shape``. ``percent`` and ``metadata`` set
    ``print_percent`` / ``print_metadata``. With all defaults this equals ``to_string()``.
    XLA's printer adds ``entry_computation_layout``, signatures, sorts frontend attributes,
    drops default-valued attributes, reorders unscheduled instructions and renames duplicate
    instruction names module-wide with ``.N`` suffixes.
    """
    module = xla_parse(text)
    opts = xc.hlo.HloPrintOptions()
    if operand_shapes is not None:
        opts.print_operand_shape = operand_shapes
    opts.print_percent = percent
    opts.print_metadata = metadata
    return module.to_string(opts)


_OPCODE_NAMES: dict[Any, str] = {}
# In XLA's print of one instruction, "%name = <shape> opcode(...": the opcode is the first
# lower-case word directly followed by "(" after " = ". Shape text never has that form
# (element types are followed by "[", layout tags such as T( S( are upper case).
# the opcode: the first word before '(' after ' = ' that is not a buffer shape's b(
_OPCODE_RE = re.compile(r" = .*? (?!b\()([a-z][a-z0-9-]*)\(")


def _opcode_name(instr: Any) -> str:
    key = instr.opcode
    name = _OPCODE_NAMES.get(key)
    if name is None:
        match = _OPCODE_RE.search(instr.to_string())
        if match is None:  # pragma: no cover - would mean XLA changed its print format
            raise RuntimeError(f"cannot find the opcode in {instr.to_string()!r}")
        name = match.group(1)
        # one spelling per opcode, but for the async ones: XLA prints an async-start that wraps
        # a collective-broadcast as collective-broadcast-start, another as all-to-all-start, ...
        if "async" not in str(key).lower():
            _OPCODE_NAMES[key] = name
    return name


def xla_skeleton(text: str) -> dict[str, list[tuple[str, str, list[str]]]]:
    """Structure of the module as XLA's parser read it, taken from jaxlib's object model.

    Returns ``{computation name: [(instruction name, opcode, [operand names]), ...]}`` with
    instructions in the order the text defined them (XLA's instruction list order, not the
    post-order XLA's printer uses) and operands in order. Nothing is re-parsed from printed
    text: names, operands and computation lists come from ``HloModule.computations()``,
    ``HloComputation.instructions()`` and ``HloInstruction.operands()``. Only the opcode's
    text spelling (``all-reduce`` rather than the enum ``kAllReduce``) is read from XLA's print
    of one instruction per opcode, with a minimal regex (``_OPCODE_RE``).

    What a comparison with hlo-rewrite's own view must expect:
    - names have no ``%``;
    - XLA makes instruction names unique *module-wide*: a name that repeats one already used
      (in any earlier computation, including parameters, e.g. ``a`` in a reducer and ``a`` in
      ENTRY) gets a ``.N`` suffix (``a.1``), choosing N so that it does not collide; operand
      lists use the renamed names. Computation names are not renamed.
    - all computations are listed, including fusion and reduction computations, in XLA's
      module order (callees before callers, roughly the text order).
    """
    module = xla_parse(text)
    skeleton: dict[str, list[tuple[str, str, list[str]]]] = {}
    for comp in module.computations():
        skeleton[comp.name] = [
            (instr.name, _opcode_name(instr), [op.name for op in instr.operands()]) for instr in comp.instructions()
        ]
    return skeleton


_UNSPECIFIED_RE = re.compile(r",\s*api_version=API_VERSION_UNSPECIFIED")


def replace_unspecified_api(text: str) -> str:
    """Remove ``api_version=API_VERSION_UNSPECIFIED`` (torch-neuronx prints it; XLA rejects it).

    Dropping the attribute makes XLA use its default, ``API_VERSION_ORIGINAL``. Apply it to both
    sides of a comparison.
    """
    return _UNSPECIFIED_RE.sub("", text)


# --------------------------------------------------------------------------- execution

_EXE_CACHE: dict[str, Any] = {}


def _devices(num_devices: int) -> list[Any]:
    devs = jax.devices("cpu")
    if len(devs) < num_devices:
        raise RuntimeError(f"need {num_devices} CPU devices, jax has {len(devs)}")
    return list(devs[:num_devices])


def _to_stablehlo_bytecode(text: str, num_replicas: int, num_partitions: int, manual: bool) -> bytes:
    hm = xla_parse(text)
    bytecode = xc._xla.mlir.hlo_to_stablehlo(hm.as_serialized_hlo_module_proto())
    ctx = jax_mlir.make_ir_context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(bytecode)
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, num_partitions)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, num_replicas)
        if manual:
            main = None
            for op in module.body.operations:
                if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == "main":
                    main = op
            if main is None:
                raise RuntimeError("no @main function after HLO -> StableHLO")
            manual_attr = ir.StringAttr.get("{manual}")
            for key in ("arg_attrs", "res_attrs"):
                ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
                count = len(ftype.inputs if key == "arg_attrs" else ftype.results)
                old = list(ir.ArrayAttr(main.attributes[key])) if key in main.attributes else []
                new = []
                for i in range(count):
                    entries = {}
                    if i < len(old):
                        d = ir.DictAttr(old[i])
                        entries = {d[j].name: d[j].attr for j in range(len(d))}
                    entries["mhlo.sharding"] = manual_attr
                    new.append(ir.DictAttr.get(entries))
                main.attributes[key] = ir.ArrayAttr.get(new)
        return jax_mlir.module_to_bytecode(module)


def _compile(text: str, mode: str, num_devices: int) -> Any:
    key = hashlib.sha256(f"{mode}:{num_devices}:".encode() + text.encode()).hexdigest()
    exe = _EXE_CACHE.get(key)
    if exe is not None:
        return exe
    devs = _devices(num_devices)
    opts = xc.CompileOptions()
    if mode == "spmd":
        code = _to_stablehlo_bytecode(text, 1, num_devices, manual=True)
        opts.num_replicas = 1
        opts.num_partitions = num_devices
        opts.executable_build_options.use_spmd_partitioning = True
        # The module is already per-device: no partitioning, and no (deprecated, warning)
        # GSPMD sharding propagation whose result nothing would use.
        opts.executable_build_options.debug_options.xla_disable_hlo_passes = "spmd-partitioning,sharding-propagation"
        opts.device_assignment = xc.DeviceAssignment.create(np.arange(num_devices).reshape(1, num_devices))
    elif mode == "replicated":
        code = _to_stablehlo_bytecode(text, num_devices, 1, manual=False)
        opts.num_replicas = num_devices
        opts.num_partitions = 1
        opts.device_assignment = xc.DeviceAssignment.create(np.arange(num_devices).reshape(num_devices, 1))
    else:
        raise ValueError(f"unknown mode {mode!r}")
    exe = devs[0].client.compile_and_load(code, xc.DeviceList(tuple(devs)), opts)
    _EXE_CACHE[key] = exe
    return exe


def _execute(
    text: str,
    inputs_per_device: Sequence[Sequence[np.ndarray]],
    num_devices: int,
    mode: str,
) -> list[list[np.ndarray]]:
    exe = _compile(text, mode, num_devices)
    devs = _devices(num_devices)
    mesh = jax.sharding.Mesh(np.array(devs), ("d",))
    # Every device gets its own buffer; the replicated sharding only tells JAX where the
    # buffers live (XLA sees per-device buffers, so values may differ between devices).
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    args = []
    for p, per_device in enumerate(inputs_per_device):
        if len(per_device) != num_devices:
            raise ValueError(f"parameter {p}: {len(per_device)} arrays for {num_devices} devices")
        arrays = [np.asarray(x) for x in per_device]
        shape = arrays[0].shape
        args.append(
            jax.make_array_from_single_device_arrays(
                shape, sharding, [jax.device_put(x, d) for x, d in zip(arrays, devs, strict=True)]
            )
        )
    results = exe.execute_sharded(args)
    outs = results.disassemble_into_single_device_arrays()
    return [[np.asarray(x) for x in out] for out in outs]


def run_spmd(
    text: str,
    inputs_per_device: Sequence[Sequence[np.ndarray]],
    num_devices: int = NUM_DEVICES,
) -> list[list[np.ndarray]]:
    """Execute a per-device SPMD module (``num_partitions=num_devices``, one replica).

    ``inputs_per_device[param][device]``; returns ``outputs[output][device]``. A tuple-shaped
    ENTRY root gives one output per tuple element. Collectives see partition ids
    ``0..num_devices-1``.
    """
    return _execute(text, inputs_per_device, num_devices, "spmd")


def run_replicated(
    text: str,
    inputs_per_device: Sequence[Sequence[np.ndarray]],
    num_devices: int = NUM_DEVICES,
) -> list[list[np.ndarray]]:
    """Execute a ``replica_count=num_devices`` module (one partition, replica ids 0..N-1)."""
    return _execute(text, inputs_per_device, num_devices, "replicated")


def _mode_of(text: str) -> str:
    header = text.lstrip().split("\n", 1)[0]
    match = re.search(r"\breplica_count=(\d+)", header)
    return "replicated" if match and int(match.group(1)) > 1 else "spmd"


def compare_modules(
    text_a: str,
    text_b: str,
    inputs: Sequence[Sequence[np.ndarray]],
    *,
    rtol: float = 0,
    atol: float = 0,
    num_devices: int = NUM_DEVICES,
) -> None:
    """Run both modules on the same inputs; raise AssertionError if any output differs.

    The mode (replicated vs SPMD) is chosen per module from its header: ``replica_count=N``
    with N > 1 runs replicated, anything else runs as a per-device SPMD module.
    Comparison is exact by default (``rtol=atol=0``; NaNs compare equal to NaNs).
    """
    out_a = _execute(text_a, inputs, num_devices, _mode_of(text_a))
    out_b = _execute(text_b, inputs, num_devices, _mode_of(text_b))
    if len(out_a) != len(out_b):
        raise AssertionError(f"module A has {len(out_a)} outputs, module B has {len(out_b)}")
    problems = []
    for i, (per_dev_a, per_dev_b) in enumerate(zip(out_a, out_b, strict=True)):
        for d, (a, b) in enumerate(zip(per_dev_a, per_dev_b, strict=True)):
            if a.shape != b.shape or a.dtype != b.dtype:
                problems.append(f"output {i} device {d}: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}")
                continue
            af = a.astype(np.float64) if a.dtype.kind not in "biuc" else a
            bf = b.astype(np.float64) if b.dtype.kind not in "biuc" else b
            close = np.isclose(af, bf, rtol=rtol, atol=atol, equal_nan=True)
            if not close.all():
                bad = np.argwhere(~close)
                first = tuple(int(v) for v in bad[0])
                problems.append(
                    f"output {i} device {d}: {len(bad)}/{a.size} elements differ, first at "
                    f"{first}: A={a[first]!r} B={b[first]!r}"
                )
    if problems:
        shown = "\n  ".join(problems[:16])
        more = f"\n  ... and {len(problems) - 16} more" if len(problems) > 16 else ""
        raise AssertionError(f"modules compute different results:\n  {shown}{more}")


# --------------------------------------------------------------------------- inputs


def _entry_parameter_shapes(text: str) -> list[Any]:
    module = xla_parse(text)
    comp = xc.XlaComputation(module.as_serialized_hlo_module_proto())
    return list(comp.program_shape().parameter_shapes())


def random_inputs(text: str, seed: int, num_devices: int = NUM_DEVICES) -> list[list[np.ndarray]]:
    """Random per-device inputs ``[param][device]`` for the ENTRY parameters of ``text``.

    Floats: standard normal (cast to the parameter's dtype, bf16 via ml_dtypes); signed ints in
    [-8, 8); unsigned ints in [0, 16); pred: random booleans. Small integers keep sums exact and
    free of overflow. Tuple-shaped parameters are not supported.
    """
    rng = np.random.default_rng(seed)
    result = []
    for shape in _entry_parameter_shapes(text):
        if shape.is_tuple():
            raise NotImplementedError("tuple-shaped ENTRY parameters")
        dtype = np.dtype(shape.numpy_dtype())
        dims = tuple(shape.dimensions())
        per_device = []
        for _ in range(num_devices):
            if dtype == np.bool_:
                x = rng.integers(0, 2, size=dims).astype(np.bool_)
            elif dtype.kind == "i":
                x = rng.integers(-8, 8, size=dims).astype(dtype)
            elif dtype.kind == "u":
                x = rng.integers(0, 16, size=dims).astype(dtype)
            elif dtype.kind == "c":
                x = (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(dtype)
            else:
                x = rng.standard_normal(dims).astype(dtype)
            per_device.append(np.asarray(x, dtype=dtype))
        result.append(per_device)
    return result
