"""OpDefs of ``tf.train.Example`` / ``SequenceExample`` parsing, as TF's ``parsing_ops.cc``:
``ParseExample`` (a batch), ``ParseSingleExample`` (one), ``ParseSequenceExample`` (a batch)
and ``ParseSingleSequenceExample`` (one).

Contract: ``ParseExample(serialized, names, sparse_keys, dense_keys, dense_defaults)`` takes a
vector of serialized Examples, a vector of their names (or an empty one), ``Nsparse`` and
``Ndense`` scalar string keys and one default per dense key (typed ``Tdense``: empty for a
required feature, else shaped ``dense_shapes[i]``; for a ``dense_shapes[i]`` whose first
dimension is unknown, a variable-length feature, its one padding element).
``ParseSingleExample(serialized, dense_defaults)`` takes one scalar Example and its keys as
the attrs ``sparse_keys`` / ``dense_keys``. Both give, in order, the sparse features' indices
(int64), values (typed ``sparse_types``) and dense shapes (int64), then the dense features
(typed ``Tdense``, shaped ``[batch] + dense_shapes[i]`` or ``dense_shapes[i]``).
``ParseSingleSequenceExample(serialized, feature_list_dense_missing_assumed_empty,
context_sparse_keys, context_dense_keys, feature_list_sparse_keys, feature_list_dense_keys,
context_dense_defaults, debug_name)`` and ``ParseSequenceExample(serialized, debug_name,
context_dense_defaults)`` (keys and the missing-allowed lists as attrs) give the context's
sparse and dense outputs, then the feature lists' sparse (indices of rank 2 / 3) and dense
(``[None] + shape`` / ``[batch, None] + shape``) outputs, and for the batch op the dense
lists' lengths (int64 ``[batch]``). Feature dtypes are float32, int64 or string. Bad ranks,
shapes with unknown inner dimensions and defaults of another shape raise `ValueError` here;
what the protos hold is the kernel's business (``plugins/kernels/parsing.py``).
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.parsing_ops import FEATURE_TYPES
from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank


def feature_types(ctx: InferContext, attr: str) -> list[dtypes.DType]:
    types = list(ctx.attr(attr))
    for t in types:
        if t not in FEATURE_TYPES:
            raise ctx.type_error(f"attr {attr} holds {t.name}; Example features are float32, "
                                 "int64 or string")
    return types


def dense_specs(ctx: InferContext, first: int, batch: list[int | None], types_attr: str,
                shapes_attr: str, variable: bool = True) -> list[TensorSpec]:
    """The dense outputs, checking the defaults from input `first` on. A shape whose first
    dimension is unknown (where `variable` allows one) is a variable-length feature, whose
    default is its padding element."""
    types = feature_types(ctx, types_attr)
    shapes = [TensorShape(s) for s in ctx.attr(shapes_attr)]
    if len(shapes) != len(types):
        raise ctx.type_error(f"{len(types)} {types_attr} and {len(shapes)} {shapes_attr}")
    given = [s.dtype for s in ctx.inputs[first:first + len(types)]]
    if given != types:
        raise ctx.type_error(f"attr {types_attr} is {[t.name for t in types]} but the defaults "
                             f"are {[t.name for t in given]}")
    out = []
    for i, (dtype, shape) in enumerate(zip(types, shapes)):
        inner = shape[1:] if variable and shape.ndims else shape
        if not inner.is_fully_defined():
            raise ctx.shape_error(f"{shapes_attr}[{i}] has unknown rank or unknown inner "
                                  f"dimensions: {shape}")
        default = ctx.shape(first + i)
        if inner is not shape and shape.dims[0] is None:
            if default.num_elements() not in (None, 1):
                raise ctx.shape_error(f"{shapes_attr}[{i}] {shape} is variable-length, so "
                                      f"its default must be one padding element, not {default}")
        elif not (default.is_fully_defined() and default.num_elements() == 0) \
                and not default.is_compatible_with(shape):
            raise ctx.shape_error(f"dense_defaults[{i}] has shape {default}, but "
                                  f"{shapes_attr}[{i}] is {shape}")
        out.append(TensorSpec(dtype, TensorShape([*batch, *shape.dims])))
    return out


def sparse_specs(ctx: InferContext, count: int, rank: int, types_attr: str = "sparse_types"
                 ) -> list[TensorSpec]:
    """Indices ``[n, rank]``, values and dense shapes ``[rank]`` of `count` sparse features."""
    types = feature_types(ctx, types_attr)
    if len(types) != count:
        raise ctx.type_error(f"{count} sparse keys but {len(types)} {types_attr}")
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
    return (sparse_specs(ctx, nsparse, 2)
            + dense_specs(ctx, 2 + nsparse + ndense, [batch], "Tdense", "dense_shapes"))


def _parse_single_example(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 0)
    sparse_keys, dense_keys = list(ctx.attr("sparse_keys")), list(ctx.attr("dense_keys"))
    if ctx.attr("num_sparse") != len(sparse_keys):
        raise ctx.type_error(f"num_sparse={ctx.attr('num_sparse')} but {len(sparse_keys)} "
                             "sparse_keys")
    if len(dense_keys) != len(ctx.attr("Tdense")):
        raise ctx.type_error(f"{len(dense_keys)} dense_keys but {len(ctx.attr('Tdense'))} "
                             "Tdense")
    return (sparse_specs(ctx, len(sparse_keys), 1)
            + dense_specs(ctx, 1, [], "Tdense", "dense_shapes"))


def _sequence_specs(ctx: InferContext, counts: tuple[int, int, int, int], defaults: int,
                    batch: list[int | None]) -> list[TensorSpec]:
    """Outputs of the SequenceExample ops: context sparse and dense (``batch + shape``), then
    feature-list sparse and dense (``batch + [None] + shape``)."""
    context_sparse, context_dense, list_sparse, list_dense = counts
    if len(ctx.attr("Tcontext_dense")) != context_dense:
        raise ctx.type_error(f"Ncontext_dense={context_dense} but "
                             f"{len(ctx.attr('Tcontext_dense'))} Tcontext_dense")
    for attr, n in (("feature_list_dense_types", list_dense),
                    ("feature_list_dense_shapes", list_dense)):
        if len(ctx.attr(attr)) != n:
            raise ctx.type_error(f"Nfeature_list_dense={n} but {len(ctx.attr(attr))} {attr}")
    lists = []
    for i, (dtype, shape) in enumerate(zip(feature_types(ctx, "feature_list_dense_types"),
                                           ctx.attr("feature_list_dense_shapes"))):
        shape = TensorShape(shape)
        if not shape.is_fully_defined():
            raise ctx.shape_error(f"feature_list_dense_shapes[{i}] {shape} is not fully "
                                  "defined")
        lists.append(TensorSpec(dtype, TensorShape([*batch, None, *shape.dims])))
    return (sparse_specs(ctx, context_sparse, len(batch) + 1, "context_sparse_types")
            + dense_specs(ctx, defaults, batch, "Tcontext_dense", "context_dense_shapes",
                          variable=False)
            + sparse_specs(ctx, list_sparse, len(batch) + 2, "feature_list_sparse_types")
            + lists)


def _parse_single_sequence_example(ctx: InferContext) -> list[TensorSpec]:
    counts = tuple(ctx.attr(a) for a in ("Ncontext_sparse", "Ncontext_dense",
                                         "Nfeature_list_sparse", "Nfeature_list_dense"))
    if len(ctx.inputs) != 3 + 2 * counts[1] + counts[0] + counts[2] + counts[3]:
        raise ctx.type_error(f"{len(ctx.inputs)} inputs for the counts {counts}")
    with_rank(ctx, 0, 0)
    with_rank(ctx, 1, 1)
    defaults = 2 + sum(counts)
    for i in range(2, defaults):
        with_rank(ctx, i, 0)
    with_rank(ctx, len(ctx.inputs) - 1, 0)
    return _sequence_specs(ctx, counts, defaults, [])  # type: ignore[arg-type]


def _parse_sequence_example(ctx: InferContext) -> list[TensorSpec]:
    counts = tuple(ctx.attr(a) for a in ("Ncontext_sparse", "Ncontext_dense",
                                         "Nfeature_list_sparse", "Nfeature_list_dense"))
    for attr, n in (("context_sparse_keys", counts[0]), ("context_dense_keys", counts[1]),
                    ("feature_list_sparse_keys", counts[2]),
                    ("feature_list_dense_keys", counts[3])):
        if len(ctx.attr(attr)) != n:
            raise ctx.type_error(f"{len(ctx.attr(attr))} {attr} but a count of {n}")
    batch = with_rank(ctx, 0, 1)[0]
    with_rank(ctx, 1, 1)
    specs = _sequence_specs(ctx, counts, 2, [batch])  # type: ignore[arg-type]
    return specs + [TensorSpec(dtypes.int64, TensorShape([batch]))] * counts[3]


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
    sequence = {"Ncontext_sparse": 0, "Ncontext_dense": 0, "Nfeature_list_sparse": 0,
                "Nfeature_list_dense": 0, "context_sparse_types": [], "Tcontext_dense": [],
                "feature_list_dense_types": [], "context_dense_shapes": [],
                "feature_list_sparse_types": [], "feature_list_dense_shapes": []}
    registry.op("ParseSingleSequenceExample",
                ["serialized:string", "feature_list_dense_missing_assumed_empty:string",
                 "context_sparse_keys:*string", "context_dense_keys:*string",
                 "feature_list_sparse_keys:*string", "feature_list_dense_keys:*string",
                 "context_dense_defaults:*", "debug_name:string"],
                _parse_single_sequence_example, list_output=True, attrs=sequence)
    registry.op("ParseSequenceExample",
                ["serialized:string", "debug_name:string", "context_dense_defaults:*"],
                _parse_sequence_example, list_output=True,
                attrs={**sequence, "feature_list_dense_missing_assumed_empty": [],
                       "context_sparse_keys": [], "context_dense_keys": [],
                       "feature_list_sparse_keys": [], "feature_list_dense_keys": []})
