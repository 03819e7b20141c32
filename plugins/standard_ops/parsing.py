"""OpDefs of ``tf.train.Example`` parsing, as TF's ``parsing_ops.cc``: ``ParseExample`` (a
batch) and ``ParseSingleExample`` (one).

Contract: ``ParseExample(serialized, names, sparse_keys, dense_keys, dense_defaults)`` takes a
vector of serialized Examples, a vector of their names (or an empty one), ``Nsparse`` and
``Ndense`` scalar string keys and one default per dense key (typed ``Tdense``: empty for a
required feature, else shaped ``dense_shapes[i]``). ``ParseSingleExample(serialized,
dense_defaults)`` takes one scalar Example and its keys as the attrs ``sparse_keys`` /
``dense_keys``. Both give, in order, the sparse features' indices (int64), values (typed
``sparse_types``) and dense shapes (int64), then the dense features (typed ``Tdense``, shaped
``[batch] + dense_shapes[i]`` or ``dense_shapes[i]``). Dense dtypes are float32, int64 or
string. Bad ranks and defaults of another shape raise `ValueError` here; what the Examples
hold is the kernel's business (``plugins/kernels/parsing.py``).
"""

from __future__ import annotations

from typing import Any

from tensorweave import dtypes
from tensorweave.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.plugins.standard_ops.shape_fns import with_rank
from tensorweave.tensor_shape import TensorShape

FEATURE_TYPES = frozenset({dtypes.float32, dtypes.int64, dtypes.string})


def _feature_types(ctx: InferContext, attr: str) -> list[dtypes.DType]:
    types = list(ctx.attr(attr))
    for t in types:
        if t not in FEATURE_TYPES:
            raise ctx.type_error(f"attr {attr} holds {t.name}; Example features are float32, "
                                 "int64 or string")
    return types


def _dense(ctx: InferContext, first: int, batch: list[int | None]) -> list[TensorSpec]:
    """The dense outputs, checking the defaults from input `first` on."""
    tdense = _feature_types(ctx, "Tdense")
    shapes = [TensorShape(s) for s in ctx.attr("dense_shapes")]
    if len(shapes) != len(tdense):
        raise ctx.type_error(f"{len(tdense)} Tdense and {len(shapes)} dense_shapes")
    given = [s.dtype for s in ctx.inputs[first:]]
    if given != tdense:
        raise ctx.type_error(f"attr Tdense is {[t.name for t in tdense]} but the defaults are "
                             f"{[t.name for t in given]}")
    out = []
    for i, (dtype, shape) in enumerate(zip(tdense, shapes)):
        if not shape.is_fully_defined():
            raise ctx.shape_error(f"dense_shapes[{i}] {shape} is not fully defined")
        default = ctx.shape(first + i)
        empty = default.is_fully_defined() and default.num_elements() == 0
        if not empty and not default.is_compatible_with(shape):
            raise ctx.shape_error(f"dense_defaults[{i}] has shape {default}, but "
                                  f"dense_shapes[{i}] is {shape}")
        out.append(TensorSpec(dtype, TensorShape([*batch, *shape.dims])))
    return out


def _sparse(ctx: InferContext, count: int, rank: int) -> list[TensorSpec]:
    types = _feature_types(ctx, "sparse_types")
    if len(types) != count:
        raise ctx.type_error(f"{count} sparse keys but {len(types)} sparse_types")
    return ([TensorSpec(dtypes.int64, TensorShape([None, rank]))] * count
            + [TensorSpec(t, TensorShape([None])) for t in types]
            + [TensorSpec(dtypes.int64, TensorShape([rank]))] * count)


def _parse_example(ctx: InferContext) -> list[TensorSpec]:
    nsparse, ndense = ctx.attr("Nsparse"), ctx.attr("Ndense")
    if len(ctx.inputs) != 2 + nsparse + 2 * ndense:
        raise ctx.type_error(f"{len(ctx.inputs)} inputs for Nsparse={nsparse} and "
                             f"Ndense={ndense}")
    batch = with_rank(ctx, 0, 1)[0]
    with_rank(ctx, 1, 1)
    for i in range(2, 2 + nsparse + ndense):
        with_rank(ctx, i, 0)
    if len(ctx.attr("Tdense")) != ndense:
        raise ctx.type_error(f"Ndense={ndense} but {len(ctx.attr('Tdense'))} Tdense")
    return _sparse(ctx, nsparse, 2) + _dense(ctx, 2 + nsparse + ndense, [batch])


def _parse_single_example(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    sparse_keys, dense_keys = list(ctx.attr("sparse_keys")), list(ctx.attr("dense_keys"))
    if ctx.attr("num_sparse") != len(sparse_keys):
        raise ctx.type_error(f"num_sparse={ctx.attr('num_sparse')} but {len(sparse_keys)} "
                             "sparse_keys")
    if len(dense_keys) != len(ctx.attr("Tdense")):
        raise ctx.type_error(f"{len(dense_keys)} dense_keys but {len(ctx.attr('Tdense'))} "
                             "Tdense")
    return _sparse(ctx, len(sparse_keys), 1) + _dense(ctx, 1, [])


def register(registry: Any) -> None:
    common = {"sparse_types": REQUIRED, "Tdense": REQUIRED, "dense_shapes": REQUIRED}
    registry.op("ParseExample", ["serialized:string", "names:string", "sparse_keys:*string",
                                 "dense_keys:*string", "dense_defaults:*"],
                _parse_example, list_output=True,
                attrs={"Nsparse": REQUIRED, "Ndense": REQUIRED, **common})
    registry.op("ParseSingleExample", ["serialized:string", "dense_defaults:*"],
                _parse_single_example, list_output=True,
                attrs={"num_sparse": REQUIRED, "sparse_keys": REQUIRED, "dense_keys": REQUIRED,
                       **common})
