"""Alias of ``tensorflow.python.framework.tensor_shape``: re-exports
`tensorweave.engine.tensor_shape`."""

from tensorweave.engine.tensor_shape import (
    Dimension,
    TensorShape,
    as_shape,
    dimension_at_index,
    dimension_value,
    scalar,
    unknown_shape,
)
