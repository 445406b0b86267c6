"""Regenerate the JAX-lowered test inputs in ``tests/inputs/jax/``.

Run from the repository root with the test dependencies installed (jax/jaxlib, pinned in
``pyproject.toml``)::

    python tests/make_inputs.py            # rewrite every file
    python tests/make_inputs.py --check    # exit 1 if a file would change

Every module is a ``jax.shard_map`` program on a mesh of 8 CPU devices, lowered with
``jax.jit(f).lower(...).as_text(dialect="hlo")`` (JAX's text before optimization: the
collectives sit in the ``xla.sdy.manual_computation_body*`` computations, names without ``%``).
File names say what each module holds: ``<collective>_<reduction>_<dtype>[_<variant>].pre.hlo``.

Send/recv inputs are hand-written (``tests/inputs/handwritten/``, ``tests/golden/fuse-send-recv/``):
this JAX lowers ``psend``/``precv`` on GPU only.

JAX has no primitive for a product, ``and``, ``or`` or ``xor`` reduction. Those modules are
JAX's ``psum`` module with the root of the reduction computation changed to ``multiply`` /
``and`` / ``or`` / ``xor`` (its instruction name follows), which is what XLA itself would carry
for such a reduction; each is checked to parse with XLA's parser before it is written.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
OUT = HERE / "inputs" / "jax"

xo = importlib.import_module("xla_oracle")  # before jax: it gives JAX 8 CPU devices

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

DTYPES = {
    "pred": jnp.bool_, "s8": jnp.int8, "u8": jnp.uint8, "s32": jnp.int32, "u32": jnp.uint32,
    "s64": jnp.int64, "u64": jnp.uint64, "f16": jnp.float16, "bf16": jnp.bfloat16,
    "f32": jnp.float32, "f64": jnp.float64,
}


def _mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> Mesh:
    return Mesh(np.array(jax.devices()[:8]).reshape(shape), names)


MESH8 = ((8,), ("x",))
MESH24 = ((2, 4), ("a", "b"))


def lower(body: Callable, args: list[tuple[tuple[int, ...], str]], in_specs, out_specs, mesh=MESH8) -> str:
    """JAX's pre-optimization HLO text of ``shard_map(body)`` over ``args`` (shape, dtype)."""
    f = jax.shard_map(body, mesh=_mesh(*mesh), in_specs=in_specs, out_specs=out_specs, check_vma=False)
    zeros = [jnp.zeros(shape, DTYPES[dt]) for shape, dt in args]
    return jax.jit(f).lower(*zeros).as_text(dialect="hlo")


def _with_reduction(text: str, opcode: str) -> str:
    """``text`` (one all-reduce whose body ROOT is ``add``) with that root changed to ``opcode``."""
    new, n = re.subn(r"(ROOT )add(\.\d+ = \w+\[\] )add\(", rf"\g<1>{opcode}\g<2>{opcode}(", text)
    assert n == 1, n
    return new


X = P("x")
A_B = P("a", "b")


def _allreduce_modules() -> dict[str, str]:
    out: dict[str, str] = {}
    ops = {"sum": jax.lax.psum, "max": jax.lax.pmax, "min": jax.lax.pmin}
    dtypes = {
        "sum": ["f32", "bf16", "f16", "f64", "s8", "u8", "s32", "u32", "s64", "u64"],
        "max": ["pred", "s8", "u8", "s32", "u32", "s64", "u64", "f16", "bf16", "f32", "f64"],
        "min": ["pred", "s8", "u8", "s32", "u32", "s64", "u64", "f16", "bf16", "f32", "f64"],
    }
    for op, names in dtypes.items():
        for dt in names:
            out[f"all-reduce_{op}_{dt}"] = lower(lambda x, op=op: ops[op](x, "x"), [((32, 16), dt)], (X,), X)
    out["all-reduce_sum_pred_becomes_s32"] = lower(lambda x: jax.lax.psum(x, "x"), [((32, 16), "pred")], (X,), X)
    for reduction, opcode, names in (
        ("prod", "multiply", ["f32", "bf16", "f64", "s32"]),
        ("and", "and", ["pred", "s32", "u32", "s64"]),
        ("or", "or", ["pred", "s32", "u32", "s64"]),
        ("xor", "xor", ["pred", "s32", "u32", "s64"]),
    ):
        for dt in names:
            base = lower(lambda x: jax.lax.psum(x, "x"), [((32, 16), "s32" if dt == "pred" else dt)], (X,), X)
            if dt == "pred":
                base = base.replace("s32[", "pred[")
            out[f"all-reduce_{reduction}_{dt}"] = _with_reduction(base, opcode)
    for axes, name in (("a", "a"), ("b", "b"), (("a", "b"), "ab")):
        out[f"all-reduce_sum_f32_groups-2x4-over-{name}"] = lower(
            lambda x, axes=axes: jax.lax.psum(x, axes), [((32, 16), "f32")], (A_B,), A_B, MESH24)
    for op in ("sum", "max", "min"):
        for dt in ("f32", "bf16", "s32"):
            for axes, name in (("a", "a"), ("b", "b"), (("b", "a"), "ba")):
                out[f"all-reduce_{op}_{dt}_groups-2x4-over-{name}"] = lower(
                    lambda x, op=op, axes=axes: ops[op](x, axes), [((32, 16), dt)], (A_B,), A_B, MESH24)
    for op in ("sum", "max", "min"):
        for dt in ("f16", "f64", "u32", "s64"):
            out[f"all-reduce_{op}_{dt}_groups-2x4-over-a"] = lower(
                lambda x, op=op: ops[op](x, "a"), [((32, 16), dt)], (A_B,), A_B, MESH24)
        for dt in ("f32", "bf16"):
            out[f"all-reduce_{op}_{dt}_rank3"] = lower(
                lambda x, op=op: ops[op](x, "x"), [((16, 4, 6), dt)], (X,), X)
    out["all-reduce_sum_f32_rank1"] = lower(lambda x: jax.lax.psum(x, "x"), [((64,), "f32")], (X,), X)
    out["all-reduce_sum_f32_rank4"] = lower(lambda x: jax.lax.psum(x, "x"), [((16, 2, 3, 4), "f32")], (X,), X)
    out["all-reduce_sum_f32_scalar"] = lower(lambda x: jax.lax.psum(x[0, 0], "x"), [((8, 4), "f32")], (X,), P())
    out["all-reduce_pmean_f32"] = lower(lambda x: jax.lax.pmean(x, "x"), [((32, 16), "f32")], (X,), X)
    out["all-reduce_two-independent-same-input"] = lower(
        lambda x: (jax.lax.psum(x, "x"), jax.lax.pmax(x, "x")), [((32, 16), "f32")], (X,), (X, X))
    out["all-reduce_variadic-tuple_psum-of-3"] = lower(
        lambda x: jax.lax.psum((x, x * 2, x.astype(jnp.int32)), "x"), [((32, 16), "f32")], (X,), (X, X, X))
    out["all-reduce_variadic-tuple_psum-of-4-mixed-shapes"] = lower(
        lambda x, y: jax.lax.psum((x, y, x[:, :4], y.astype(jnp.int32)), "x"),
        [((32, 16), "f32"), ((16, 8), "f32")], (X, X), (X, X, X, X))
    out["all-reduce_matmul-rowparallel"] = lower(
        lambda a, w: jax.lax.psum(a @ w, "x"), [((16, 64), "f32"), ((64, 32), "f32")], (P(None, "x"), X), P())
    return out


def _reduce_scatter_modules() -> dict[str, str]:
    out: dict[str, str] = {}

    def rs(dim, tiled=True, axes="x"):
        return lambda x: jax.lax.psum_scatter(x, axes, scatter_dimension=dim, tiled=tiled)

    for dt in ("f32", "bf16", "f16", "f64", "s8", "u8", "s32", "u32", "s64", "u64"):
        out[f"reduce-scatter_dim0_{dt}"] = lower(rs(0), [((64, 16), dt)], (X,), X)
    for dt in ("f16", "f64", "s32", "u32", "s64"):
        out[f"reduce-scatter_dim1_{dt}"] = lower(rs(1), [((64, 16), dt)], (X,), P(None, "x"))
    out["reduce-scatter_dim1_f32"] = lower(rs(1), [((64, 16), "f32")], (X,), P(None, "x"))
    out["reduce-scatter_dim0_f32_rank3"] = lower(rs(0), [((64, 4, 6), "f32")], (X,), X)
    out["reduce-scatter_dim1_f32_rank3"] = lower(rs(1), [((64, 16, 6), "f32")], (X,), P(None, "x"))
    out["reduce-scatter_dim2_f32_rank3"] = lower(rs(2), [((64, 4, 16), "f32")], (X,), P(None, None, "x"))
    out["reduce-scatter_dim1_untiled_f32"] = lower(rs(1, tiled=False), [((64, 8), "f32")], (X,), X)
    for dim in (0, 1):
        for dt in ("f32", "bf16"):
            for axes, name in (("a", "a"), ("b", "b"), (("a", "b"), "ab")):
                out[f"reduce-scatter_dim{dim}_{dt}_groups-2x4-over-{name}"] = lower(
                    rs(dim, axes=axes), [((64, 64), dt)], (A_B,), A_B, MESH24)
    return out


def _all_gather_modules() -> dict[str, str]:
    out: dict[str, str] = {}

    def ag(dim, tiled=True, axes="x"):
        return lambda x: jax.lax.all_gather(x, axes, axis=dim, tiled=tiled)

    for dt in ("pred", "s8", "u8", "s32", "u32", "s64", "u64", "f16", "bf16", "f32", "f64"):
        out[f"all-gather_dim0_{dt}"] = lower(ag(0), [((64, 16), dt)], (X,), X)
    for dt in ("f16", "f64", "s32", "u32", "s64", "u8"):
        out[f"all-gather_dim1_{dt}"] = lower(ag(1), [((64, 16), dt)], (X,), X)
    out["all-gather_dim1_f32"] = lower(ag(1), [((64, 16), "f32")], (X,), X)
    out["all-gather_dim2_f32_rank3"] = lower(ag(2), [((64, 4, 6), "f32")], (X,), X)
    out["all-gather_dim0_untiled_f32"] = lower(ag(0, tiled=False), [((64, 16), "f32")], (X,), X)
    for dim in (0, 1):
        for dt in ("f32", "bf16"):
            for axes, name in (("a", "a"), ("b", "b"), (("a", "b"), "ab")):
                out[f"all-gather_dim{dim}_{dt}_groups-2x4-over-{name}"] = lower(
                    ag(dim, axes=axes), [((32, 16), dt)], (A_B,), A_B, MESH24)
    return out


def _rs_concat_modules() -> dict[str, str]:
    """Reduce-scatters feeding one concatenate: what fuse-reduce-scatter looks for."""
    out: dict[str, str] = {}

    def rs(x, axes="x", dim=0):
        return jax.lax.psum_scatter(x, axes, scatter_dimension=dim, tiled=True)

    args = [((64, 16), "f32"), ((64, 16), "f32")]
    out["concat-rs_2ops_scatter0_concat1_f32"] = lower(
        lambda a, b: jnp.concatenate([rs(a), rs(b)], axis=1), args, (X, X), X)
    out["concat-rs_3ops_scatter0_concat1_bf16"] = lower(
        lambda a, b, c: jnp.concatenate([rs(a), rs(b), rs(c)], axis=1),
        [((64, 16), "bf16")] * 3, (X, X, X), X)
    out["concat-rs_2ops_scatter0_concat0_f32"] = lower(
        lambda a, b: jnp.concatenate([rs(a), rs(b)], axis=0), args, (X, X), X)
    out["concat-rs-mean_outputs-divided_scatter0_concat1"] = lower(
        lambda a, b: jnp.concatenate([rs(a) / 8, rs(b) / 8], axis=1), args, (X, X), X)
    out["concat-rs-mean_inputs-divided_scatter0_concat1"] = lower(
        lambda a, b: jnp.concatenate([rs(a / 8), rs(b / 8)], axis=1), args, (X, X), X)
    out["concat-rs_4ops_scatter1_concat0_f32"] = lower(
        lambda a, b, c, d: jnp.concatenate([rs(a, dim=1), rs(b, dim=1), rs(c, dim=1), rs(d, dim=1)], axis=0),
        [((16, 64), "f32")] * 4, (X,) * 4, X)
    out["concat-rs_2ops_scatter0_concat1_groups-2x4-over-b"] = lower(
        lambda a, b: jnp.concatenate([rs(a, "b"), rs(b, "b")], axis=1), args, (A_B, A_B), A_B, MESH24)
    out["concat-rs-mean_outputs-divided_scatter0_concat1_bf16"] = lower(
        lambda a, b: jnp.concatenate([rs(a) / 8, rs(b) / 8], axis=1),
        [((64, 16), "bf16")] * 2, (X, X), X)
    out["concat-rs_3ops_scatter0_concat0_f32"] = lower(
        lambda a, b, c: jnp.concatenate([rs(a), rs(b), rs(c)], axis=0), [((64, 16), "f32")] * 3, (X,) * 3, X)
    out["concat-rs_2ops_scatter0_concat1_s32"] = lower(
        lambda a, b: jnp.concatenate([rs(a), rs(b)], axis=1), [((64, 16), "s32")] * 2, (X, X), X)
    out["concat-rs-mean_inputs-divided_scatter0_concat1_bf16"] = lower(
        lambda a, b: jnp.concatenate([rs(a / 8), rs(b / 8)], axis=1), [((64, 16), "bf16")] * 2, (X, X), X)
    out["negative_concat-rs-max-and-sum"] = lower(
        lambda a, b: jnp.concatenate([rs(a), jax.lax.pmax(b, "x")[:1]], axis=1), args, (X, X), X)
    out["negative_concat-rs-different-groups"] = lower(
        lambda a, b: jnp.concatenate([rs(a, "a", 1), rs(b, "b", 1)], axis=1),
        [((16, 64), "f32"), ((16, 64), "f32")], (A_B, A_B), A_B, MESH24)
    return out


GROUPS: dict[str, Callable[[], dict[str, str]]] = {
    "allreduce": _allreduce_modules,
    "reduce_scatter": _reduce_scatter_modules,
    "all_gather": _all_gather_modules,
    "rs_concat": _rs_concat_modules,
}


def generate() -> dict[Path, str]:
    files: dict[Path, str] = {}
    for group, make in GROUPS.items():
        for name, text in make().items():
            xo.xla_parse(text)  # every input is a module XLA reads
            files[OUT / group / f"{name}.pre.hlo"] = text
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report files that would change; write nothing")
    args = parser.parse_args(argv)
    files = generate()
    stale = 0
    for path, text in sorted(files.items()):
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == text:
            continue
        stale += 1
        if args.check:
            print(f"would change: {path.relative_to(HERE.parent)}")
            sys.stdout.writelines(difflib.unified_diff((old or "").splitlines(True), text.splitlines(True), n=1))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="")
    print(f"{len(files)} modules, {stale} {'stale' if args.check else 'written'}", file=sys.stderr)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
