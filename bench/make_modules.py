"""Generate the benchmark HLO modules with JAX (8 CPU devices) into a cache outside git.

Cache directory: ``$HLO_BENCH_CACHE`` or ``<repo>/.bench-cache/`` (git-ignored). Files that
already exist are skipped (``--force`` regenerates). Written files:

- ``post_opt_10mb.hlo``: a real post-optimization module, ``jax.jit(f).lower(...).compile()
  .as_text()`` of the training step (loss, gradients, SGD update) of a tensor-parallel
  transformer stack written with ``jax.shard_map`` over 8 CPU devices: attention (heads
  sharded) all-gathers the sequence-sharded activations and all-reduces its partial output
  (Megatron style), the MLP (d_ff sharded) all-gathers and reduce-scatters (sequence
  parallel); the backward pass has the transposes, and the replicated layer-norm parameters'
  gradients are all-reduced. ``%`` names, signatures, fusions, stack-frame tables. (The text
  grows slightly faster than linearly with the number of layers.)
- ``pre_opt_50mb.hlo``: the pre-optimization text (``.lower(...).as_text(dialect="hlo")``) of a
  bigger stack, printed once through XLA's own parser and printer
  (``hlo_module_from_text(text).to_string()``), so it has ``%`` names, signatures and
  operand shapes.
- ``tiny.hlo``: the post-optimization module of a one-layer stack with small dimensions.

Usage: ``python bench/make_modules.py [--cache DIR] [--post-layers N] [--pre-layers N]
[--force]``. Prints size, instruction count and generation time of every file.
"""

from __future__ import annotations

import os

if "jax" not in __import__("sys").modules:
    _flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_force_host_platform_device_count" not in _flags:
        os.environ["XLA_FLAGS"] = (_flags + " --xla_force_host_platform_device_count=8").strip()

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
AXIS = "x"
N_DEV = 8

# Layer counts tuned on jax/jaxlib 0.10.2 (see the module docstring for the targets).
POST_LAYERS = 27
PRE_LAYERS = 735


@dataclass(frozen=True)
class Config:
    layers: int
    batch: int = 2
    seq: int = 128  # sharded over the 8 devices between layers (sequence parallel)
    d_model: int = 256
    heads: int = 8  # one head per device
    d_ff: int = 1024


def cache_dir(arg: str | None = None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("HLO_BENCH_CACHE")
    return Path(env) if env else REPO / ".bench-cache"


def _layer_norm(x: jax.Array, gain: jax.Array, bias: jax.Array) -> jax.Array:
    # Over d_model, local to the shard. gain/bias are replicated parameters: their gradients
    # are partial per device, so the backward pass all-reduces them (one psum each).
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * gain + bias


def _block(cfg: Config, x: jax.Array, w: dict[str, jax.Array]) -> jax.Array:
    """One transformer block on the local shard. x: [B, S/8, D] (sequence-sharded)."""
    local_heads = cfg.heads // N_DEV
    hd = cfg.d_model // cfg.heads
    # attention, heads sharded
    h = jax.lax.all_gather(_layer_norm(x, w["g1"], w["b1"]), AXIS, axis=1, tiled=True)  # [B, S, D]
    q = (h @ w["wq"]).reshape(cfg.batch, cfg.seq, local_heads, hd)
    k = (h @ w["wk"]).reshape(cfg.batch, cfg.seq, local_heads, hd)
    v = (h @ w["wv"]).reshape(cfg.batch, cfg.seq, local_heads, hd)
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(jnp.float32(hd))
    mask = jnp.tril(jnp.ones((cfg.seq, cfg.seq), dtype=bool))
    s = jnp.where(mask, s, jnp.float32(-1e9))
    p = jax.nn.softmax(s, axis=-1)
    o = jnp.einsum("bhqk,bkhd->bqhd", p, v).reshape(cfg.batch, cfg.seq, local_heads * hd)
    o = jax.lax.psum(o @ w["wo"], AXIS)  # all-reduce of the partial sums, [B, S, D]
    chunk = cfg.seq // N_DEV
    x = x + jax.lax.dynamic_slice_in_dim(o, jax.lax.axis_index(AXIS) * chunk, chunk, axis=1)
    # MLP, d_ff sharded, sequence parallel (all-gather in, reduce-scatter out)
    h = jax.lax.all_gather(_layer_norm(x, w["g2"], w["b2"]), AXIS, axis=1, tiled=True)
    u = jax.nn.gelu(h @ w["w1"])
    o = u @ w["w2"]
    return x + jax.lax.psum_scatter(o, AXIS, scatter_dimension=1, tiled=True)


def _param_specs(cfg: Config) -> list[dict[str, P]]:
    col, row, rep = P(None, AXIS), P(AXIS, None), P()
    specs = {"wq": col, "wk": col, "wv": col, "wo": row, "w1": col, "w2": row}
    specs.update({"g1": rep, "b1": rep, "g2": rep, "b2": rep})
    return [dict(specs) for _ in range(cfg.layers)]


def _params(cfg: Config) -> list[dict[str, jax.ShapeDtypeStruct]]:
    d, f = cfg.d_model, cfg.d_ff
    shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d), "w1": (d, f), "w2": (f, d)}
    shapes.update({"g1": (d,), "b1": (d,), "g2": (d,), "b2": (d,)})
    return [{k: jax.ShapeDtypeStruct(s, jnp.float32) for k, s in shapes.items()} for _ in range(cfg.layers)]


def _train_step(cfg: Config, mesh: Mesh):
    specs = _param_specs(cfg)

    def local_loss(params, x):
        for w in params:
            x = _block(cfg, x, w)
        return jax.lax.psum(jnp.mean(x * x), AXIS) / N_DEV

    sharded_loss = jax.shard_map(
        local_loss,
        mesh=mesh,
        in_specs=(specs, P(None, AXIS, None)),
        out_specs=P(),
    )

    def step(params, x):
        loss, grads = jax.value_and_grad(sharded_loss)(params, x)
        new = jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)
        return loss, new

    return step, specs


def _lowered(cfg: Config):
    mesh = Mesh(jax.devices()[:N_DEV], (AXIS,))
    step, specs = _train_step(cfg, mesh)
    params = _params(cfg)
    x = jax.ShapeDtypeStruct((cfg.batch, cfg.seq, cfg.d_model), jnp.float32)
    shard = partial(NamedSharding, mesh)
    in_shardings = (jax.tree.map(shard, specs), shard(P(None, AXIS, None)))
    return jax.jit(step, in_shardings=in_shardings).lower(params, x)


def post_opt_text(cfg: Config) -> str:
    return _lowered(cfg).compile().as_text()


def pre_opt_text_reprinted(cfg: Config) -> str:
    text = _lowered(cfg).as_text(dialect="hlo")
    return xc.hlo.hlo_module_from_text(text).to_string()


def instruction_count(text: str) -> tuple[int, int]:
    """(instructions, computations) as XLA's parser reads the text."""
    module = xc.hlo.hlo_module_from_text(text)
    comps = module.computations()
    return sum(len(c.instructions()) for c in comps), len(comps)


def collective_counts(text: str) -> dict[str, int]:
    ops = ("all-reduce(", "all-gather(", "reduce-scatter(", "all-reduce-start(", "all-gather-start(")
    return {op[:-1]: text.count(f" {op}") for op in ops if text.count(f" {op}")}


def _report(path: Path, seconds: float | None) -> None:
    text = path.read_text()
    n_instr, n_comp = instruction_count(text)
    took = f", generated in {seconds:.1f} s" if seconds is not None else " (cached)"
    print(
        f"{path}: {len(text.encode()) / 1e6:.2f} MB, {n_instr} instructions in "
        f"{n_comp} computations, collectives {collective_counts(text)}{took}",
        flush=True,
    )


def _make(path: Path, build, force: bool) -> None:
    if path.exists() and not force:
        _report(path, None)
        return
    t0 = time.perf_counter()
    text = build()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    _report(path, time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--cache", help="output directory (default $HLO_BENCH_CACHE or .bench-cache)")
    ap.add_argument("--post-layers", type=int, default=POST_LAYERS)
    ap.add_argument("--pre-layers", type=int, default=PRE_LAYERS)
    ap.add_argument("--force", action="store_true", help="regenerate existing files")
    ap.add_argument("--only", choices=("tiny", "post", "pre"), action="append")
    args = ap.parse_args(argv)
    if len(jax.devices()) < N_DEV:
        print(f"need {N_DEV} CPU devices; set XLA_FLAGS before importing jax", file=sys.stderr)
        return 2
    out = cache_dir(args.cache)
    out.mkdir(parents=True, exist_ok=True)
    only = set(args.only or ("tiny", "post", "pre"))
    tiny = Config(layers=1, batch=1, seq=16, d_model=64, heads=8, d_ff=128)
    jobs = [
        ("tiny", "tiny.hlo", lambda: post_opt_text(tiny)),
        ("post", "post_opt_10mb.hlo", lambda: post_opt_text(Config(args.post_layers))),
        ("pre", "pre_opt_50mb.hlo", lambda: pre_opt_text_reprinted(Config(args.pre_layers))),
    ]
    for key, name, build in jobs:
        if key in only:
            _make(out / name, build, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
