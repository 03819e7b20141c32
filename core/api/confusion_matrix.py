"""``tw.confusion_matrix`` (also ``tw.math.confusion_matrix``): ``tf.compat.v1``'s confusion
matrix of class ids, with its argument order ``(labels, predictions, num_classes, dtype, name,
weights)``.

Contract: `labels` and `predictions` are 1-D class ids of the same length (a trailing dimension
of size 1 on either is squeezed, as TF's ``remove_squeezable_dimensions`` does when the ranks
are known). Entry ``[i, j]`` counts (or, with `weights`, sums the weights of) the examples with
label ``i`` and prediction ``j``, in `dtype`. Without `num_classes` the matrix is
``max(labels, predictions) + 1`` square. Negative ids, and ids not below a given `num_classes`,
fail at run time with ``InvalidArgumentError`` through ``assert_*`` ops, as in TF.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, check_ops, math_ops
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.scopes import control_dependencies, name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = ["confusion_matrix"]


def _squeezed(x: Tensor, other: Tensor) -> Tensor:
    """`x` without a trailing size-1 dimension that makes it one rank above `other`."""
    rank, other_rank = x.shape.ndims, other.shape.ndims
    if rank is not None and other_rank is not None and rank == other_rank + 1 \
            and x.shape[-1] == 1:
        return array_ops.squeeze(x, [-1])
    return x


def _checked(x: Tensor, check: Any) -> Tensor:
    with control_dependencies([check]):
        return identity(x)


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None,
                     dtype: Any = dtypes.int32, name: str | None = None,
                     weights: Any = None) -> Tensor:
    """The ``[num_classes, num_classes]`` confusion matrix of `labels` (rows) against
    `predictions` (columns); see the module docstring."""
    with name_scope(name, "confusion_matrix",
                    [predictions, labels, num_classes, weights]):
        dtype = dtypes.as_dtype(dtype)
        labels = convert_to_tensor(labels, name="labels")
        predictions = convert_to_tensor(predictions, name="predictions")
        labels, predictions = _squeezed(labels, predictions), _squeezed(predictions, labels)
        labels = math_ops.cast(labels, dtypes.int64)
        predictions = math_ops.cast(predictions, dtypes.int64)
        labels = _checked(labels, check_ops.assert_non_negative(
            labels, message="`labels` contains negative values"))
        predictions = _checked(predictions, check_ops.assert_non_negative(
            predictions, message="`predictions` contains negative values"))
        if num_classes is None:
            num_classes = math_ops.maximum(math_ops.reduce_max(predictions),
                                           math_ops.reduce_max(labels)) + 1
        else:
            num_classes = math_ops.cast(num_classes, dtypes.int64)
            labels = _checked(labels, check_ops.assert_less(
                labels, num_classes, message="`labels` out of bound"))
            predictions = _checked(predictions, check_ops.assert_less(
                predictions, num_classes, message="`predictions` out of bound"))
        if weights is None:
            values = array_ops.ones_like(predictions, dtype)
        else:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            values = math_ops.cast(weights, dtype)
        indices = array_ops.stack([labels, predictions], axis=1)
        shape = array_ops.stack([num_classes, num_classes])
        # ScatterNd sums the values of repeated (label, prediction) pairs.
        return array_ops.scatter_nd(indices, values, shape)
