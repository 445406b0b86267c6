"""Writes jax_post_shard_map.hlo: a small post-optimization module printed by XLA.

Run from the repository root: ``.venv/bin/python tests/golden/convert-collectives-to-custom-call/make_jax_post.py``,
then ``pytest tests/test_golden.py --update-golden`` and review the diff.
psum / pmax (f32), pmin (s32), psum_scatter (bf16, which XLA:CPU promotes to f32) and
all_gather (s32) under shard_map over 8 CPU devices, compiled by XLA and printed after its passes.
"""

import os
from pathlib import Path

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402


def body(a, b, c):
    total = jax.lax.psum(a, "x") + jax.lax.pmax(a, "x")
    low = jax.lax.pmin(c, "x")
    scattered = jax.lax.psum_scatter(b, "x", scatter_dimension=0, tiled=True)
    gathered = jax.lax.all_gather(c, "x", axis=0, tiled=True)
    return total, low, scattered, gathered


def main() -> None:
    mesh = Mesh(np.array(jax.devices()[:8]), ("x",))
    spec = P("x")
    f = jax.shard_map(body, mesh=mesh, in_specs=(spec, spec, spec), out_specs=(spec, spec, spec, spec),
                      check_vma=False)
    args = (jnp.zeros((64,), jnp.float32), jnp.zeros((64, 4), jnp.bfloat16), jnp.zeros((16, 2), jnp.int32))
    text = jax.jit(f).lower(*args).compile().as_text()
    out = Path(__file__).with_name("jax_post_shard_map.hlo")
    out.write_text("// RUN: --passes=convert-collectives-to-custom-call\n" + text)  # the golden case's header
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
