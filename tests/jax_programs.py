"""JAX shard_map programs with collectives, lowered to HLO text, and a per-device form of
JAX's pre-optimization text that XLA:CPU can execute.

Import this module after (or instead of) ``xla_oracle``: it imports ``xla_oracle`` first so
that JAX sees 8 CPU devices.

- ``PROGRAMS``: ``{name: Program}`` — psum / pmax / pmin / psum_scatter / all_gather on f32,
  bf16 and s32, over the full axis of a 1-D mesh of 8 and over the sub-axes ``a``, ``b`` and
  ``(a, b)`` of a 2x4 mesh.
- ``lower_pre(program)``: ``jax.jit(...).lower(...).as_text(dialect="hlo")`` — JAX's text
  before optimization; the collectives sit in ``xla.sdy.manual_computation_body*``
  computations called from ENTRY between ``xla.sdy.GlobalToLocalShape`` and
  ``LocalToGlobalShape`` custom-calls, which XLA:CPU cannot execute.
- ``per_device(text)``: the same module with a new ENTRY that takes the per-device (local)
  operands of each shard_map body as parameters and calls the bodies directly. Every other
  computation is kept byte for byte, so the collectives XLA executes are exactly the ones in
  ``text``. The result runs with ``xla_oracle.run_spmd`` (8 partitions).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass

importlib.import_module("xla_oracle")  # before jax: it gives JAX 8 CPU devices

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from hlo_rewrite import parse_module  # noqa: E402

BODY_PREFIX = "xla.sdy.manual_computation_body"

DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16, "s32": jnp.int32}

#: grouping -> (mesh shape, mesh axis names, the axis (or axes) the collectives run over)
GROUPINGS: dict[str, tuple[tuple[int, ...], tuple[str, ...], str | tuple[str, ...]]] = {
    "full8": ((8,), ("x",), "x"),
    "2x4_a": ((2, 4), ("a", "b"), "a"),
    "2x4_b": ((2, 4), ("a", "b"), "b"),
    "2x4_ba": ((2, 4), ("a", "b"), ("b", "a")),
}


@dataclass(frozen=True)
class Program:
    name: str
    dtype: str
    grouping: str


def _body(axis):
    def body(x, y):
        return (
            jax.lax.psum(x, axis),
            jax.lax.pmax(x, axis),
            jax.lax.pmin(y, axis),
            jax.lax.psum_scatter(y, axis, scatter_dimension=0, tiled=True),
            jax.lax.psum_scatter(x, axis, scatter_dimension=1, tiled=True),
            jax.lax.all_gather(x, axis, axis=0, tiled=True),
            jax.lax.all_gather(y, axis, axis=1, tiled=True),
        )

    return body


PROGRAMS: dict[str, Program] = {
    f"{g}_{d}": Program(f"{g}_{d}", d, g) for g in GROUPINGS for d in DTYPES
}


@functools.cache
def lower_pre(program: Program) -> str:
    """JAX's pre-optimization HLO text of ``program``."""
    mesh_shape, names, axis = GROUPINGS[program.grouping]
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(mesh_shape), names)
    # every device holds the whole (replicated) x and y: per-device shapes are the global ones,
    # 8 rows / 16 columns so every group size (2, 4, 8) divides the scattered dimensions
    spec = P()
    f = jax.shard_map(_body(axis), mesh=mesh, in_specs=(spec, spec), out_specs=(P(),) * 7, check_vma=False)
    dtype = DTYPES[program.dtype]
    return jax.jit(f).lower(jnp.zeros((8, 16), dtype), jnp.zeros((8, 16), dtype)).as_text(dialect="hlo")


def per_device(text: str) -> str:
    """``text`` with its ENTRY replaced by one that calls each shard_map body on per-device
    parameters (see the module docstring). Raises ValueError when there is no body call."""
    module = parse_module(text, "<jax>")
    entry = module.entry
    calls = [i for i in entry.instructions if i.opcode == "call" and (i.to_apply or "").startswith(BODY_PREFIX)]
    if not calls:
        raise ValueError("no shard_map body call in ENTRY")
    lines = ["ENTRY per_device {"]
    results: list[tuple[str, str]] = []
    n = 0
    for k, call in enumerate(calls):
        args = []
        for op in call.operands:
            shape = entry.get(op).shape
            lines.append(f"  pd.p{n} = {shape} parameter({n})")
            args.append(f"pd.p{n}")
            n += 1
        lines.append(f"  pd.call{k} = {call.shape} call({', '.join(args)}), to_apply={call.to_apply}")
        shape_obj = call.shape_obj
        if shape_obj.element_type == "tuple":
            for j, sub in enumerate(shape_obj.tuple_shapes):
                name = f"pd.call{k}.{j}"
                lines.append(f"  {name} = {sub.text()} get-tuple-element(pd.call{k}), index={j}")
                results.append((name, sub.text()))
        else:
            results.append((f"pd.call{k}", call.shape))
    if len(results) == 1:
        last = lines.pop()
        lines.append("  ROOT " + last.lstrip())
    else:
        shapes = ", ".join(s for _, s in results)
        lines.append(f"  ROOT pd.out = ({shapes}) tuple({', '.join(n for n, _ in results)})")
    lines.append("}")
    # everything before ENTRY, byte for byte; the module header without its entry layout
    head_end = text.index("\n")
    header = text[:head_end].split(", entry_computation_layout=")[0]
    entry_start = text.index("\nENTRY ") + 1
    return header + text[head_end:entry_start] + "\n".join(lines) + "\n"
