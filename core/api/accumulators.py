"""TF1's conditional accumulators: ``tf.ConditionalAccumulator``,
``tf.SparseConditionalAccumulator`` and their base ``tf.ConditionalAccumulatorBase``.

Contract: an accumulator object wraps the string handle its ``ConditionalAccumulator`` op gives
(`accumulator_ref`); every method builds one op on that handle, which the placer keeps on the
accumulator's device (accumulators are host-only, as in TF). ``apply_grad(grad, local_step)``
converts `grad` to the accumulator's dtype (`TypeError`/`ValueError` as `convert_to_tensor`) and
raises `ValueError` here when its static shape contradicts the accumulator's; `local_step` and
``set_global_step``'s step are cast to int64. ``take_grad(num_required)`` gives the mean (or sum)
of at least `num_required` gradients, with the accumulator's static shape. A
`SparseConditionalAccumulator` takes sparse gradients: ``apply_grad(grad_indices, grad_values,
grad_shape=None, local_step=0)`` (indices cast to int64, values converted to the dtype, rows
checked against the static shape here) or ``apply_indexed_slices_grad(grad, local_step)``;
``take_grad`` gives (indices, values, shape), ``take_indexed_slices_grad`` the same as a
`tw.IndexedSlices`, its mean taken row by row. The run-time
semantics (stale gradients dropped, takes that wait, the global step) are described in
`tensorweave.plugins.kernels.accumulators`.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.indexed_slices import IndexedSlices
from tensorweave.api.math_ops import cast
from tensorweave.engine import dtypes as _dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import make_op
from tensorweave.engine.tensor_shape import TensorShape, as_shape

__all__ = ["ConditionalAccumulator", "ConditionalAccumulatorBase", "SparseConditionalAccumulator"]

REDUCTION_TYPES = ("MEAN", "SUM")


def _int64(value: Any) -> Tensor:
    tensor = convert_to_tensor(value)
    return tensor if tensor.dtype == _dtypes.int64 else cast(tensor, _dtypes.int64)


class ConditionalAccumulatorBase:
    """An accumulator reached through its handle `accumulator_ref`."""

    def __init__(self, dtype: Any, shape: Any, accumulator_ref: Tensor) -> None:
        self._dtype = _dtypes.as_dtype(dtype)
        self._shape = as_shape(shape) if shape is not None else TensorShape(None)
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self) -> Tensor:
        return self._accumulator_ref

    @property
    def name(self) -> str:
        return self._accumulator_ref.op.name

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    def num_accumulated(self, name: str | None = None) -> Tensor:
        """The number of gradients summed since the last take (int32)."""
        return make_op("AccumulatorNumAccumulated", [self._accumulator_ref],
                       name=name or f"{self._name}_NumAccumulated").outputs[0]

    def set_global_step(self, new_global_step: Any, name: str | None = None) -> Operation:
        """An op that sets the step below which applied gradients count as stale."""
        return make_op("AccumulatorSetGlobalStep",
                       [self._accumulator_ref, _int64(new_global_step)], name=name)


def _accumulator_ref(op_type: str, dtype: _dtypes.DType, shape: TensorShape,
                     shared_name: str | None, name: str, reduction_type: str) -> Tensor:
    if reduction_type not in REDUCTION_TYPES:
        raise ValueError(f"reduction_type must be one of {list(REDUCTION_TYPES)}, got "
                         f"{reduction_type!r}")
    with get_default_graph().control_dependencies(None):  # state depends on nothing
        return make_op(op_type, [],
                       {"dtype": dtype, "shape": shape, "shared_name": shared_name or "",
                        "reduction_type": reduction_type}, name=name).outputs[0]


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Sums the gradients that are not stale, until a take gives their mean (or sum)."""

    def __init__(self, dtype: Any, shape: Any = None, shared_name: str | None = None,
                 name: str = "conditional_accumulator", reduction_type: str = "MEAN") -> None:
        dtype = _dtypes.as_dtype(dtype)
        static = as_shape(shape) if shape is not None else TensorShape(None)
        super().__init__(dtype, static, _accumulator_ref(
            "ConditionalAccumulator", dtype, static, shared_name, name, reduction_type))

    def apply_grad(self, grad: Any, local_step: Any = 0, name: str | None = None) -> Operation:
        """An op that adds `grad`, unless `local_step` is below the accumulator's global
        step."""
        grad = convert_to_tensor(grad, dtype=self._dtype, name="grad")
        grad.shape.assert_is_compatible_with(self._shape)
        return make_op("AccumulatorApplyGradient",
                       [self._accumulator_ref, _int64(local_step), grad], name=name)

    def take_grad(self, num_required: Any, name: str | None = None) -> Tensor:
        """The mean (or sum) of the gradients, once at least `num_required` are summed; the
        take empties the accumulator and increments its global step."""
        num_required = convert_to_tensor(num_required, dtype=_dtypes.int32,
                                         name="num_required")
        out = make_op("AccumulatorTakeGradient", [self._accumulator_ref, num_required],
                      {"dtype": self._dtype}, name=name).outputs[0]
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Sums sparse gradients row by row, until a take gives each touched row's mean (over the
    gradients that touched it) or sum."""

    def __init__(self, dtype: Any, shape: Any = None, shared_name: str | None = None,
                 name: str = "sparse_conditional_accumulator",
                 reduction_type: str = "MEAN") -> None:
        dtype = _dtypes.as_dtype(dtype)
        static = as_shape(shape) if shape is not None else TensorShape(None)
        super().__init__(dtype, static, _accumulator_ref(
            "SparseConditionalAccumulator", dtype, static, shared_name, name, reduction_type))

    def _has_rows(self) -> bool:
        """Whether the static shape says what a row is (TF's own sparse accumulators in
        ``SyncReplicasOptimizer`` have shape ``()``, which says nothing)."""
        return bool(self._shape.ndims)

    def apply_indexed_slices_grad(self, grad: IndexedSlices, local_step: Any = 0,
                                  name: str | None = None) -> Operation:
        """`apply_grad` of an `IndexedSlices` (its dense shape, when it has one)."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape,
                               local_step=local_step, name=name)

    def apply_grad(self, grad_indices: Any, grad_values: Any, grad_shape: Any = None,
                   local_step: Any = 0, name: str | None = None) -> Operation:
        """An op that adds the rows `grad_values` at `grad_indices`, unless `local_step` is
        below the accumulator's global step; `grad_shape`, when given, is the dense shape."""
        values = convert_to_tensor(grad_values, dtype=self._dtype, name="grad_values")
        if self._has_rows() and values.shape.ndims is not None:
            values.shape[1:].assert_is_compatible_with(self._shape[1:])
        shape = convert_to_tensor([], dtype=_dtypes.int64) if grad_shape is None \
            else _int64(grad_shape)
        return make_op("SparseAccumulatorApplyGradient",
                       [self._accumulator_ref, _int64(local_step), _int64(grad_indices), values,
                        shape], {"has_known_shape": grad_shape is not None}, name=name)

    def take_grad(self, num_required: Any, name: str | None = None) -> tuple[Tensor, ...]:
        """(indices, values, shape) of the mean (or sum), once at least `num_required`
        gradients are summed; the take empties the accumulator and increments its global
        step."""
        num_required = convert_to_tensor(num_required, dtype=_dtypes.int32,
                                         name="num_required")
        op = make_op("SparseAccumulatorTakeGradient", [self._accumulator_ref, num_required],
                     {"dtype": self._dtype}, name=name)
        if self._has_rows():
            op.outputs[1].set_shape(TensorShape([None]).concatenate(self._shape[1:]))
            op.outputs[2].set_shape([self._shape.ndims])
        return tuple(op.outputs)

    def take_indexed_slices_grad(self, num_required: Any,
                                 name: str | None = None) -> IndexedSlices:
        """`take_grad` as an `IndexedSlices`."""
        indices, values, shape = self.take_grad(num_required, name=name)
        return IndexedSlices(values, indices, shape)
