"""OpDefs of the checkpoint ops a `tf.train.Saver` graph holds: ``SaveV2``, ``RestoreV2``,
``MergeV2Checkpoints``, ``ShardedFilename`` and ``ShardedFilespec``.

Contract: names, inputs, attrs and defaults follow TF 1.15's ``io_ops.cc``. ``prefix`` and
``destination_prefix`` are string scalars, ``tensor_names`` and ``shape_and_slices`` string
vectors of one length (each checked here where static, `ValueError`). ``RestoreV2`` gives one
tensor per name, of the dtypes in its ``dtypes`` attr; their shapes are unknown at graph time
(the checkpoint decides), except a sliced one whose ``shape_and_slices`` entry is a constant.
``SaveV2`` and ``MergeV2Checkpoints`` are stateful and have no outputs. What the files hold is
the kernels' business (``plugins/kernels/checkpoint_ops.py``).
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.formats import slice_spec
from tensorweave.plugins.standard_ops.shape_fns import with_rank


def _names_and_slices(ctx: InferContext, names: int, count: int | None) -> None:
    """Inputs `names` and `names + 1` are vectors of one length (`count` if known)."""
    with_rank(ctx, 0, 0)
    lengths = {with_rank(ctx, i, 1)[0] for i in (names, names + 1)} - {None}
    if count is not None:
        lengths.add(count)
    if len(lengths) > 1:
        raise ctx.shape_error(f"tensor_names, shape_and_slices and the tensors disagree on "
                              f"their number: {sorted(lengths)}")


def _save(ctx: InferContext) -> list[TensorSpec]:
    _names_and_slices(ctx, 1, len(ctx.inputs) - 3)
    return []


def _restore(ctx: InferContext) -> list[TensorSpec]:
    types = list(ctx.attr("dtypes"))
    _names_and_slices(ctx, 1, len(types))
    specs = ctx.constant_value(2)
    shapes = [TensorShape(None)] * len(types)
    if specs is not None:
        shapes = [_slice_shape(s) for s in specs.reshape(-1)]
    return [TensorSpec(t, s) for t, s in zip(types, shapes)]


def _slice_shape(spec: Any) -> TensorShape:
    """The shape a ``shape_and_slices`` entry restores (unknown for a whole tensor)."""
    text = spec.decode() if isinstance(spec, bytes) else str(spec)
    return TensorShape([e.length for e in slice_spec.parse(text)[1]] if text else None)


def _merge(ctx: InferContext) -> list[TensorSpec]:
    with_rank(ctx, 0, 1)
    with_rank(ctx, 1, 0)
    return []


def _sharded_filename(ctx: InferContext) -> list[TensorSpec]:
    for i in range(len(ctx.inputs)):
        with_rank(ctx, i, 0)
    return [TensorSpec(dtypes.string, TensorShape([]))]


def register(registry: Any) -> None:
    """Declare this module's OpDefs."""
    registry.op("SaveV2", ["prefix:string", "tensor_names:string", "shape_and_slices:string",
                           "tensors:*dtypes"], _save, attrs={"dtypes": []}, stateful=True)
    registry.op("RestoreV2", ["prefix:string", "tensor_names:string",
                              "shape_and_slices:string"], _restore,
                attrs={"dtypes": REQUIRED}, stateful=True, list_output=True)
    registry.op("MergeV2Checkpoints", ["checkpoint_prefixes:string",
                                       "destination_prefix:string"], _merge,
                attrs={"delete_old_dirs": True}, stateful=True)
    registry.op("ShardedFilename", ["basename:string", "shard:int32", "num_shards:int32"],
                _sharded_filename)
    registry.op("ShardedFilespec", ["basename:string", "num_shards:int32"], _sharded_filename)
