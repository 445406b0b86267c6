"""Inputs in every format a dump comes in, made by JAX/jaxlib (for tests/test_formats.py and test_dirs.py).

Import after (or instead of) ``xla_oracle``: it gives JAX 8 CPU devices.

- ``jax_hlo()``: JAX's pre-optimization HLO text of a shard_map program with all-reduce,
  reduce-scatter and all-gather (the passes rewrite them with ``all_computations``);
- ``jax_stablehlo()``: the same program as JAX's StableHLO MLIR text;
- ``to_proto(text)``: XLA's binary HloModuleProto of an HLO text;
- ``xla_text(proto)``: XLA's print of a binary HloModuleProto;
- ``torch_xla_dump(graphs)``: a dump framed the way torch_xla's ``XLA_SAVE_TENSORS_FILE`` is
  (``[name]``, ``TensorsGraphInfo:`` with Python frames and hashes, ``## BEGIN_GRAPH`` ...
  ``## END_GRAPH``), one frame per graph text.
"""

from __future__ import annotations

import functools
import importlib

jp = importlib.import_module("jax_programs")  # imports xla_oracle first (8 CPU devices)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

PROGRAM = jp.PROGRAMS["full8_f32"]


def jax_hlo() -> str:
    return str(jp.lower_pre(PROGRAM))


@functools.cache
def jax_stablehlo() -> str:
    mesh = Mesh(np.array(jax.devices()[:8]), ("x",))
    f = jax.shard_map(jp._body("x"), mesh=mesh, in_specs=(P(), P()), out_specs=(P(),) * 7, check_vma=False)
    x = jnp.zeros((8, 16), jnp.float32)
    return str(jax.jit(f).lower(x, x).as_text())


def to_proto(text: str) -> bytes:
    return bytes(xc.hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto())


def xla_text(proto: bytes) -> str:
    return str(xc.hlo.HloModule.from_serialized_hlo_module_proto(proto).to_string())


def torch_xla_dump(graphs: list[str], names: list[str] | None = None) -> str:
    out = []
    for i, graph in enumerate(graphs):
        name = names[i] if names else f"SyncTensorsGraph.{i}"
        out.append(
            f"[{name}]\nTensorsGraphInfo:\n  mark_step (/usr/lib/python3/torch_xla/core/xla_model.py:1056)\n"
            f"  train_loop (train.py:{40 + i})\n\nHashes: (7f3a{i}c0de)\n"
            f"\n## BEGIN_GRAPH\n{graph}\n## END_GRAPH\n\n\n"
        )
    return "".join(out)


#: a program run under ``--xla_dump_to`` by :func:`xla_dump_tree`
_DUMP_PROGRAM = """
import os, sys
os.environ["XLA_FLAGS"] = ("--xla_force_host_platform_device_count=8 --xla_dump_to=" + sys.argv[1]
                           + " --xla_dump_hlo_as_text --xla_dump_hlo_as_proto --xla_dump_compress_protos")
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()[:8]), ("x",))
def body(x):
    return jax.lax.psum(x, "x"), jax.lax.all_gather(x, "x", tiled=True)
f = jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=(P(), P()), check_vma=False)
jax.jit(f).lower(jnp.ones((16, 4))).compile()
"""


@functools.cache
def xla_dump() -> str:
    """One :func:`xla_dump_tree` per test process (removed at exit); read it, do not change it."""
    import atexit
    import shutil
    import tempfile

    directory = tempfile.mkdtemp(prefix="xla_dump.")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    xla_dump_tree(directory)
    return directory


def xla_dump_tree(directory: str) -> None:
    """What JAX's ``--xla_dump_to`` writes for one shard_map program (in a fresh process, as the
    flags are read when XLA starts): HLO text, gzipped ``HloProto`` (``*.hlo.pb.gz``), one folder per
    module with ``module.mlir``, ``topology.pb`` and ``compile_options.pb`` (the same names in every
    folder), LLVM IR, object files and reports that are not HLO."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", _DUMP_PROGRAM, directory], check=True, capture_output=True, timeout=300)


def xla_text_of_mlir(mlir: str) -> str:
    """XLA's HLO print of a StableHLO module (its MLIR-to-HLO translation)."""
    computation = xc._xla.mlir.mlir_module_to_xla_computation(mlir, use_tuple_args=False, return_tuple=False)
    return str(computation.get_hlo_module().to_string())
