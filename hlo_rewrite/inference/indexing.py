"""The rules of ``gather`` and ``scatter``: XLA's checks of their dimension numbers
(batching dimensions included) and bounds, and gather's result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..shapes import Shape
from .common import (
    INTEGRAL,
    NoShape,
    Programs,
    Rule,
    array,
    check_reducer,
    expect_array,
    ints,
    known,
    listed,
    signature,
    static,
)

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final


def _check_dim_set(dims: Sequence[int], name: str, rank: int) -> None:
    """A sorted set of operand dimensions (``collapsed_slice_dims`` and the like), as XLA checks
    it; ``name`` is how its messages call it (``collapsed_slice_dims in gather op``)."""
    attr, _, op = name.partition(" in ")
    if list(dims) != sorted(dims):
        raise NoShape(f"{name} must be sorted; got: {listed(dims)}")
    for d in dims:
        if not 0 <= d < rank:
            raise NoShape(f"Invalid {attr} set in {op}; valid range is [0, {rank}), got: {d}.")
    if len(set(dims)) != len(dims):
        raise NoShape(f"Repeated dimensions not allowed in {name}; got: {listed(dims)}.")


def _check_dim_map(dims: Sequence[int], name: str, rank: int, *, mapping: str = "", are: str = "are ") -> None:
    """A map from positions to dimensions (``start_index_map`` and the like): in range, and no
    dimension twice (``mapping`` and ``are``: the words XLA's messages have, or not)."""
    for k, d in enumerate(dims):
        if not 0 <= d < rank:
            raise NoShape(f"Invalid {name}{mapping}; domain is [0, {rank}), got: {k}->{d}.")
    if len(set(dims)) != len(dims):
        raise NoShape(f"Repeated dimensions {are}not allowed in {name}; got: {listed(dims)}.")


def _index_dims(indices: Shape, index_vector_dim: object, what: str) -> list[int] | None:
    """The dimensions of gather's or scatter's indices with the index vector's made explicit (a
    trailing 1 when ``index_vector_dim`` is their rank); None when not known here."""
    if indices.element_type not in INTEGRAL:
        raise NoShape(f"{what.capitalize()} indices parameter must be an integral tensor; got {indices.text()}.")
    if not isinstance(index_vector_dim, int):
        return None
    if not 0 <= index_vector_dim <= indices.rank:
        name = "start_indices" if what == "gather" else "scatter_indices"
        raise NoShape(f"{what.capitalize()} index leaf dimension must be within [0, rank({name}) + 1). "
                      f"rank({name}) is {indices.rank} and {what} index leaf dimension is {index_vector_dim}.")
    dims = list(indices.dims)
    return dims + [1] if index_vector_dim == indices.rank else dims


def _dim_lists(attrs: Mapping[str, object], names: str) -> list[list[int]] | None:
    got = [ints(attrs.get(name, [])) for name in names.split()]
    return None if any(g is None for g in got) else got  # type: ignore[return-value]


def _gather(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], _p: Programs) -> Shape | None:
    operand, indices = ops
    expect_array(operand, "input tensor operand of gather op")
    expect_array(indices, "gather indices operand of gather op")
    ivd = attrs.get("index_vector_dim")
    expanded = _index_dims(indices, ivd, "gather")
    lists = _dim_lists(attrs, "offset_dims collapsed_slice_dims start_index_map slice_sizes "
                              "operand_batching_dims start_indices_batching_dims")
    if expanded is None or lists is None or not static(operand, indices):
        return None
    assert isinstance(ivd, int)
    offset, collapsed, start_map, sizes, batching, index_batching = lists
    if offset != sorted(offset):
        raise NoShape(f"Output window dimensions in gather op must be ascending; got: {listed(offset)}.")
    if len(set(offset)) != len(offset):
        raise NoShape(f"Output window dimensions in gather op must not repeat; got: {listed(offset)}.")
    rank = len(offset) + len(expanded) - 1
    for k, d in enumerate(offset):
        if not 0 <= d < rank:
            raise NoShape(f"Offset dimension {k} in gather op is out of bounds; got {d}, but should have been in "
                          f"[0,{rank}).")
    if len(start_map) != expanded[ivd]:
        raise NoShape(f"Gather op has {len(start_map)} elements in start_index_map and the bound of dimension "
                      f"index_vector_dim={ivd} of start_indices is {expanded[ivd]}. These two numbers must be equal.")
    _check_dim_map(start_map, "start_index_map", operand.rank)
    _check_dim_set(collapsed, "collapsed_slice_dims in gather op", operand.rank)
    _check_dim_set(batching, "operand_batching_dims in gather op", operand.rank)
    _check_dim_map(index_batching, "start_indices_batching_dims", len(expanded))
    if len(batching) != len(index_batching):
        raise NoShape(f"operand_batching_dims and start_indices_batching_dims in gather op must be of the same "
                      f"size; got: {len(batching)} and {len(index_batching)}.")
    if len(sizes) != operand.rank:
        raise NoShape(f"Gather op must have one slice size for every input dimension; got: "
                      f"len(slice_sizes)={len(sizes)}, input_shape.rank={operand.rank}.")
    if len(sizes) != len(offset) + len(collapsed) + len(batching):
        raise NoShape(f"All components of the offset index in a gather op must either be a offset dimension or "
                      f"explicitly collapsed or explicitly batched; got len(slice_sizes)={len(sizes)}, "
                      f"output_slice_sizes={listed(offset)}, collapsed_slice_dims={listed(collapsed)}, "
                      f"operand_batching_dims={listed(batching)}.")
    for k, (size, bound) in enumerate(zip(sizes, operand.dims, strict=True)):
        if not 0 <= size <= bound:
            raise NoShape(f"Slice size at index {k} in gather op is out of range, must be within [0, {bound + 1}), "
                          f"got {size}.")
    for dims, what in ((collapsed, "collapse slice dims"), (batching, "have operand_batching_dims")):
        for k, d in enumerate(dims):
            if sizes[d] > 1:
                raise NoShape(f"Gather op can only {what} with bound 1 or 0, but bound is {sizes[d]} for index {d} "
                              f"at position {k}.")
    # the result: the offset dimensions take the slice's sizes that are neither collapsed nor
    # batched, the others the indices' dimensions but the index vector's, each in order
    slice_dims = iter(s for k, s in enumerate(sizes) if k not in collapsed and k not in batching)
    batch_dims = iter(n for k, n in enumerate(expanded) if k != ivd)
    placed = set(offset)
    return array(operand.element_type, [next(slice_dims) if k in placed else next(batch_dims) for k in range(rank)])


def _scatter(_opcode: str, ops: list[Shape], attrs: Mapping[str, object], programs: Programs) -> Shape | None:
    n = len(ops) // 2
    if len(ops) != 2 * n + 1:
        return None  # (refused where the operands are counted)
    operands, indices, updates = ops[:n], ops[n], ops[n + 1:]
    expect_array(indices, "scatter indices of scatter op")
    ivd = attrs.get("index_vector_dim")
    expanded = _index_dims(indices, ivd, "scatter")
    lists = _dim_lists(attrs, "update_window_dims inserted_window_dims scatter_dims_to_operand_dims "
                              "input_batching_dims scatter_indices_batching_dims")
    if expanded is None or lists is None:
        return None
    assert isinstance(ivd, int)
    window, inserted, to_operand, batching, index_batching = lists
    for k, (operand, update) in enumerate(zip(operands, updates, strict=True)):
        expect_array(operand, f"operand {k} of scatter op")
        expect_array(update, f"updates {k} of scatter op")
        if not static(operand, update, indices):
            return None
        _check_scatter_dims(operand, update, expanded, ivd, window, inserted, to_operand, batching, index_batching)
    program = signature(attrs, "to_apply", programs)
    if program is not None and known(program) is not None:
        check_reducer(program, [Shape(s.element_type) for s in operands], [s.element_type for s in updates])
    return operands[0] if n == 1 else Shape("tuple", tuple_shapes=tuple(operands))


def _check_scatter_dims(operand: Shape, update: Shape, expanded: list[int], ivd: int, window: list[int],
                        inserted: list[int], to_operand: list[int], batching: list[int],
                        index_batching: list[int]) -> None:
    """One operand of a scatter and its updates against the indices and the dimension numbers
    (XLA's ``ValidateScatterDimensionNumbers`` and the bounds after it)."""
    rank = len(expanded) - 1 + len(window)
    if update.rank != rank:
        raise NoShape(f"Updates tensor must be of rank {rank}; got {update.rank}.")
    if window != sorted(window):
        raise NoShape(f"update_window_dims in scatter op must be sorted; got: {listed(window)}.")
    if len(set(window)) != len(window):
        raise NoShape(f"update_window_dims in scatter op must not repeat; got: {listed(window)}.")
    for d in window:
        if not 0 <= d < update.rank:
            raise NoShape(f"Invalid update_window_dims set in scatter op; valid range is [0, {update.rank}). "
                          f"got: {d}.")
    _check_dim_set(inserted, "inserted_window_dims in scatter op", operand.rank)
    _check_dim_set(batching, "input_batching_dims in scatter op", operand.rank)
    for d in index_batching:
        if not 0 <= d < len(expanded):
            raise NoShape(f"Invalid scatter_indices_batching_dims set in scatter op; valid range is "
                          f"[0, {len(expanded)}), got: {d}.")
    if len(set(index_batching)) != len(index_batching):
        raise NoShape(f"Repeated dimensions not allowed in scatter_indices_batching_dims in scatter op; got: "
                      f"{listed(index_batching)}.")
    if len(batching) != len(index_batching):
        raise NoShape(f"input_batching_dims and scatter_indices_batching_dims in scatter op must be of the same "
                      f"size; got: {len(batching)} and {len(index_batching)}.")
    size = len(window) + len(inserted) + len(batching)
    if size != operand.rank:
        raise NoShape(f"Scatter op has window of size {size}; doesn't match operand of rank {operand.rank}.")
    if len(to_operand) != expanded[ivd]:
        raise NoShape(f"Scatter op has {len(to_operand)} elements in scatter_dims_to_operand_dims and the bound of "
                      f"dimension index_vector_dim={ivd} of scatter_indices is {expanded[ivd]}. These two numbers "
                      f"must be equal.")
    _check_dim_map(to_operand, "scatter_dims_to_operand_dims", operand.rank, mapping=" mapping", are="")
    bounds = [n for k, n in enumerate(operand.dims) if k not in inserted and k not in batching]
    for d, bound in zip(window, bounds, strict=False):
        if update.dims[d] > bound:
            raise NoShape(f"Bounds of the window dimensions of updates must not exceed the bounds of the "
                          f"corresponding dimensions of operand. For dimension {d}, updates bound is "
                          f"{update.dims[d]}, operand bound is {bound}.")
    scattered = iter(n for k, n in enumerate(expanded) if k != ivd)
    for k, got in enumerate(update.dims):
        if k in window:
            continue
        want = next(scattered)
        if got != want:
            raise NoShape(f"Bounds of the scatter dimensions of updates must be same as the bounds of the "
                          f"corresponding dimensions of scatter indices. For scatter dimension {k}, updates bound "
                          f"is {got}, scatter_indices bound is {want}.")


#: the rules of this module's opcodes
RULES: Final[dict[str, Rule]] = {
    "gather": _gather,
    "scatter": _scatter,
}
