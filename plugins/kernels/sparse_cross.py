"""Host kernel of ``SparseCross``, bit for bit TF 1.15's ``sparse_cross_op.cc``.

Contract: each batch row's crosses are the cartesian product of that row's features, one from
each column in input order (the sparse columns, then the dense ones), enumerated with the last
column varying fastest; output ``[b, j]`` is row b's j-th cross and the dense shape is
``[batch, most crosses in a row]``. A row with no feature in some column has no cross. A sparse
column's row b holds the run of its entries, from where row b-1's run ended, whose row index is
b (TF walks the indices this way, so they must be ordered by row). String output joins the
features with ``"_X_"`` (int64 features as decimal strings). Int64 output folds, starting from
``hash_key``, ``FingerprintCat64`` of each feature's fingerprint: farmhash ``Fingerprint64``
for a string, the raw bits for an int64; then takes it modulo ``num_buckets``, or modulo
``2**63 - 1`` when ``num_buckets`` is 0. The batch size is the first sparse shape's first
dimension, else the first dense input's. Inconsistent inputs raise `InvalidArgumentError` with
TF's messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.array import _fmt
from tensorweave.plugins.kernels.string_hash import fingerprint64

SEPARATOR = b"_X_"
_MUL = np.uint64(0xC6A4A7935BD1E995)
_SHIFT = np.uint64(47)
_INT64_MAX = np.uint64(2**63 - 1)


@attrs.frozen
class _Column:
    """One feature column over the batch: row b's features are
    ``values[starts[b]:starts[b] + counts[b]]``."""

    values: np.ndarray
    counts: np.ndarray
    starts: np.ndarray


def _shift_mix(x: np.ndarray) -> np.ndarray:
    return x ^ (x >> _SHIFT)


def fingerprint_cat64(fp1: np.ndarray, fp2: np.ndarray) -> np.ndarray:
    """TF's ``FingerprintCat64`` elementwise over uint64 arrays (numpy wraps the products
    modulo 2**64, as C++ does)."""
    result = fp1 ^ _MUL
    result ^= _shift_mix(fp2 * _MUL) * _MUL
    result *= _MUL
    result = _shift_mix(result) * _MUL
    return _shift_mix(result)


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _check_internal_type(ctx: KernelContext, string_internal: bool, array: np.ndarray,
                         what: str) -> None:
    # A cross of internal type string reads every feature as a string (TF's kernel check).
    if string_internal and array.dtype != object:
        raise _fail(ctx, f"{what} should be of internal type string but received int64")


def _validate(ctx: KernelContext, indices: Sequence[np.ndarray], values: Sequence[np.ndarray],
              shapes: Sequence[np.ndarray], dense: Sequence[np.ndarray]) -> int:
    """TF's ``ValidateInput``; returns the batch size."""
    string_internal = ctx.attrs["internal_type"] == dtypes.string
    for i, index in enumerate(indices):
        if index.ndim != 2:
            raise _fail(ctx, "Input indices should be a matrix but received shape "
                             f"{_fmt(index.shape)} at position {i}")
        if index.shape[1] != 2:
            raise _fail(ctx, f"Expected D2 of index to be 2 got {index.shape[1]} at position {i}")
    for i, value in enumerate(values):
        _check_internal_type(ctx, string_internal, value, "Input values")
        if value.ndim != 1:
            raise _fail(ctx, "Input values should be a vector but received shape "
                             f"{_fmt(value.shape)} at position {i}")
        if indices[i].shape[0] != value.shape[0]:
            raise _fail(ctx, f"Expected size of values to be {indices[i].shape[0]} got "
                             f"{value.shape[0]} at position {i}")
    for i, shape in enumerate(shapes):
        if shape.ndim != 1:
            raise _fail(ctx, "Input shapes should be a vector but received shape "
                             f"{_fmt(shape.shape)} at position {i}")
        if shape.shape[0] != 2:
            raise _fail(ctx, f"shape should imply a 2D tensor, but got {_fmt(shape.shape)} at "
                             f"position {i}")
    for i, tensor in enumerate(dense):
        _check_internal_type(ctx, string_internal, tensor, "Dense inputs")
        if tensor.ndim != 2:
            raise _fail(ctx, "Dense inputs should be a matrix but received shape "
                             f"{_fmt(tensor.shape)} at position {i}")
    batch = int(shapes[0][0]) if shapes else (dense[0].shape[0] if dense else 0)
    for i, shape in enumerate(shapes):
        if int(shape[0]) != batch:
            raise _fail(ctx, f"Expected batch size {batch} got {int(shape[0])} at position {i}")
    for i, tensor in enumerate(dense):
        if tensor.shape[0] != batch:
            raise _fail(ctx, f"Expected batch size {batch} got {tensor.shape[0]} at dense "
                             f"tensor {i}")
    return batch


def _sparse_column(index: np.ndarray, values: np.ndarray, batch: int) -> _Column:
    """Row b's features: the run of equal row indices where row b-1's run stopped, if that run
    is row b's (TF's ``ExtractFeatureData``)."""
    rows = np.asarray(index[:, 0], np.int64)
    boundaries = np.flatnonzero(np.diff(rows)) + 1
    run_starts = np.concatenate(([0], boundaries)) if rows.size else np.zeros(0, np.int64)
    run_ends = np.append(boundaries, rows.size) if rows.size else np.zeros(0, np.int64)
    counts = np.zeros(batch, np.int64)
    starts = np.zeros(batch, np.int64)
    run = 0
    for b in range(batch):
        starts[b] = run_starts[run] if run < run_starts.size else rows.size
        if run < run_starts.size and rows[run_starts[run]] == b:
            counts[b] = run_ends[run] - run_starts[run]
            run += 1
    return _Column(values, counts, starts)


def _dense_column(tensor: np.ndarray, batch: int) -> _Column:
    width = tensor.shape[1]
    return _Column(tensor.reshape(-1), np.full(batch, width, np.int64),
                   np.arange(batch, dtype=np.int64) * width)


def _hashes(values: np.ndarray) -> np.ndarray:
    """Each feature as a uint64: the fingerprint of a string, the bits of an int64."""
    if values.dtype != object:
        return np.asarray(values, np.int64).view(np.uint64)
    unique, inverse = np.unique(values, return_inverse=True)
    return np.array([fingerprint64(v) for v in unique], np.uint64)[inverse.reshape(-1)]


def _strings(values: np.ndarray) -> np.ndarray:
    if values.dtype == object:
        return values
    return np.array([str(int(v)).encode() for v in values], object)


def sparse_cross(ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
    n = ctx.attrs["N"]
    indices, values, shapes = inputs[:n], inputs[n:2 * n], inputs[2 * n:3 * n]
    dense = inputs[3 * n:]
    batch = _validate(ctx, indices, values, shapes, dense)
    columns = [_sparse_column(i, v, batch) for i, v in zip(indices, values)]
    columns += [_dense_column(d, batch) for d in dense]

    crosses = np.ones(batch, np.int64) if columns else np.zeros(batch, np.int64)
    for column in columns:
        crosses *= column.counts
    row = np.repeat(np.arange(batch, dtype=np.int64), crosses)
    position = np.arange(row.size, dtype=np.int64) - np.repeat(np.cumsum(crosses) - crosses,
                                                               crosses)
    # mixed radix over the row's feature counts, the last column the fastest digit
    picks: list[np.ndarray] = []
    rest = position
    for column in reversed(columns):
        count = column.counts[row]
        picks.append(column.starts[row] + rest % count)
        rest = rest // count
    picks.reverse()

    if ctx.output_dtypes[1] == dtypes.string:
        out: np.ndarray = np.full(row.size, b"", object)
        for i, (column, pick) in enumerate(zip(columns, picks)):
            features = _strings(column.values)[pick]
            out = features if i == 0 else out + SEPARATOR + features
    else:
        hashed = np.full(row.size, np.uint64(ctx.attrs["hash_key"] & (2**64 - 1)), np.uint64)
        for column, pick in zip(columns, picks):
            hashed = fingerprint_cat64(hashed, _hashes(column.values)[pick])
        buckets = ctx.attrs["num_buckets"]
        out = (hashed % (np.uint64(buckets) if buckets > 0 else _INT64_MAX)).astype(np.int64)
    out_indices = np.stack([row, position], axis=1).reshape(-1, 2)
    shape = np.array([batch, crosses.max() if batch else 0], np.int64)
    return out_indices, out, shape


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("SparseCross", device_type, sparse_cross)
