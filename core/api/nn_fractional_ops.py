"""``tw.nn.fractional_max_pool``, ``fractional_avg_pool`` and ``with_space_to_batch``, with
``tf.compat.v1.nn``'s signatures.

Contract: the fractional pools build ``FractionalMaxPool``/``FractionalAvgPool`` and return
``(output, row_pooling_sequence, col_pooling_sequence)``; see
`tensorweave.plugins.kernels.fractional_pool` for the windows. `with_space_to_batch` runs
``op(converted, num_spatial_dims, "VALID")`` on the input rearranged by ``SpaceToBatchND``
(block ``dilation_rate``, padded for "SAME" as a filter of ``filter_shape`` dilated by the rate
needs, and up to a multiple of the rate) and undoes it with ``BatchToSpaceND``, as TF does; a
rate of all ones calls ``op(input, num_spatial_dims, padding)`` directly. The rate must be
known when the graph is built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorweave.api.array_ops import shape as dynamic_shape
from tensorweave.api.array_ops import stack
from tensorweave.api.array_ops_extra import (
    batch_to_space_nd,
    required_space_to_batch_paddings,
    space_to_batch_nd,
)
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.graph.op_builder import make_op

__all__ = ["fractional_avg_pool", "fractional_max_pool", "with_space_to_batch"]


def _fractional_pool(op_type: str, value: Any, pooling_ratio: Sequence[float],
                     pseudo_random: bool, overlapping: bool, deterministic: bool, seed: int,
                     seed2: int, name: str | None) -> tuple[Tensor, Tensor, Tensor]:
    op = make_op(op_type, [value],
                 {"pooling_ratio": [float(r) for r in pooling_ratio],
                  "pseudo_random": bool(pseudo_random), "overlapping": bool(overlapping),
                  "deterministic": bool(deterministic), "seed": int(seed), "seed2": int(seed2)},
                 name=name or op_type)
    return op.outputs[0], op.outputs[1], op.outputs[2]


def fractional_max_pool(value: Any, pooling_ratio: Sequence[float], pseudo_random: bool = False,
                        overlapping: bool = False, deterministic: bool = False, seed: int = 0,
                        seed2: int = 0, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Max pooling over random windows shrinking height and width by `pooling_ratio`."""
    return _fractional_pool("FractionalMaxPool", value, pooling_ratio, pseudo_random,
                            overlapping, deterministic, seed, seed2, name)


def fractional_avg_pool(value: Any, pooling_ratio: Sequence[float], pseudo_random: bool = False,
                        overlapping: bool = False, deterministic: bool = False, seed: int = 0,
                        seed2: int = 0, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Average pooling over random windows shrinking height and width by `pooling_ratio`."""
    return _fractional_pool("FractionalAvgPool", value, pooling_ratio, pseudo_random,
                            overlapping, deterministic, seed, seed2, name)


def _spread(values: np.ndarray, spatial_dims: list[int], fill: int) -> np.ndarray:
    """`values` (one row per spatial dim) placed at dims ``1 .. max(spatial_dims)``, `fill`
    at the dims in between, as ``SpaceToBatchND`` counts from dim 1."""
    out = np.full((spatial_dims[-1], *values.shape[1:]), fill, values.dtype)
    out[np.asarray(spatial_dims) - 1] = values
    return out


def with_space_to_batch(input: Any, dilation_rate: Any, padding: str,  # noqa: A002
                        op: Callable[[Tensor, int, str], Tensor], filter_shape: Any = None,
                        spatial_dims: Sequence[int] | None = None,
                        data_format: str | None = None) -> Tensor:
    """``op`` applied with dilation `dilation_rate` by way of space-to-batch (TF's helper)."""
    input = convert_to_tensor(input, name="input")  # noqa: A001
    rate = constant_value(convert_to_tensor(dilation_rate, dtypes.int32, name="dilation_rate"))
    if rate is None:
        raise ValueError("dilation_rate must be known when the graph is built")
    rate = np.asarray(rate, np.int32)
    if rate.ndim != 1:
        raise ValueError(f"rate must be rank 1, got shape {list(rate.shape)}")
    if rate.size == 0:
        raise ValueError("rate must have at least one element")
    if (rate < 1).any():
        raise ValueError(f"rate must be positive, got {rate.tolist()}")
    num_spatial = rate.size
    if spatial_dims is None:
        start = 2 if data_format is not None and data_format.startswith("NC") else 1
        spatial_dims = list(range(start, start + num_spatial))
    spatial_dims = [int(d) for d in spatial_dims]
    if spatial_dims != sorted(set(spatial_dims)) or spatial_dims[0] < 1:
        raise ValueError("spatial_dims must be a monotonically increasing sequence of "
                         "positive integers")
    if len(spatial_dims) != num_spatial:
        raise ValueError(f"len(spatial_dims) = {len(spatial_dims)} must equal the number of "
                         f"rates, {num_spatial}")
    if input.shape.ndims is not None and input.shape.ndims <= spatial_dims[-1]:
        raise ValueError(f"input tensor must have rank {spatial_dims[-1] + 1} at least")
    if (rate == 1).all():
        return op(input, num_spatial, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("filter_shape must be specified for SAME padding")
        filters = np.asarray(filter_shape, np.int64).reshape(-1)
        if filters.size != num_spatial:
            raise ValueError(f"filter_shape must have {num_spatial} elements")
        extra = rate * (filters - 1)
        base = np.stack([extra // 2, extra - extra // 2], axis=1).astype(np.int32)
    elif padding == "VALID":
        base = np.zeros((num_spatial, 2), np.int32)
    else:
        raise ValueError(f"Invalid padding method {padding!r}")
    with name_scope(None, "with_space_to_batch", [input]):
        dims = [input.shape.dims[d] if input.shape.ndims is not None else None
                for d in spatial_dims]
        if None in dims:
            full = dynamic_shape(input)
            spatial = stack([full[d] for d in spatial_dims])
        else:
            spatial = np.asarray(dims, np.int32)
        paddings, crops = required_space_to_batch_paddings(spatial, rate, base)
        paddings_value, crops_value = constant_value(paddings), constant_value(crops)
        block = _spread(rate, spatial_dims, 1)
        if paddings_value is not None and crops_value is not None:
            paddings = _spread(np.asarray(paddings_value, np.int32), spatial_dims, 0)
            crops = _spread(np.asarray(crops_value, np.int32), spatial_dims, 0)
        elif spatial_dims != list(range(1, num_spatial + 1)):
            raise ValueError("spatial_dims with gaps need static spatial sizes")
        converted = space_to_batch_nd(input, block, paddings)
        result = op(converted, num_spatial, "VALID")
        return batch_to_space_nd(result, block, crops)
