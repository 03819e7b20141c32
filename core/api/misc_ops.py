"""Small TF1 top-level ops and helpers: counters, clocks, tensor (de)serialization, file
matching, decompression, ``accumulate_n``, ``clip_by_average_norm``, ``init_scope``, the
deprecated scope aliases and the eager-execution switches of a graph-only runtime.

Contract: each function builds the op TF's does (``CountUpTo``, ``Timestamp``,
``SerializeTensor``, ``ParseTensor``, ``MatchingFiles``, ``DecodeCompressed``,
``GuaranteeConst``) or TF's composite, with TF's argument checks. tensorweave runs graphs only:
`executing_eagerly` is always False, `enable_eager_execution` raises `ValueError` (a TF1 program
that needs eager semantics cannot run here, and failing at the switch says so where it matters),
and `disable_eager_execution` does nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from tensorweave.api import math_ops
from tensorweave.api.scopes import name_scope
from tensorweave.api.variable_scope import variable_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.func_graph import outermost_graph, outermost_name_scope
from tensorweave.engine.graph.graph import Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import apply
from tensorweave.engine.graph.tensor_proto import TensorProto, make_ndarray, make_tensor_proto

__all__ = [
    "TensorProto", "accumulate_n", "clip_by_average_norm", "count_up_to", "decode_compressed",
    "disable_eager_execution", "disable_v2_behavior", "enable_eager_execution",
    "enable_v2_behavior", "executing_eagerly", "guarantee_const",
    "init_scope", "make_ndarray", "make_tensor_proto", "matching_files", "op_scope",
    "parse_tensor", "serialize_tensor", "timestamp", "variable_op_scope",
]


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Tensor:
    """Increment the int32/int64 variable `ref` until `limit`; returns the value before the
    increment, and `OutOfRangeError` once the variable has reached `limit`."""
    target = ref._ref() if hasattr(ref, "_ref") else ref
    return apply("CountUpTo", [target], {"limit": int(limit)}, name=name)


def timestamp(name: str | None = None) -> Tensor:
    """Seconds since the epoch when the op runs, as a float64 scalar."""
    return apply("Timestamp", [], name=name)


def guarantee_const(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """`input`, promised constant to the runtime."""
    return apply("GuaranteeConst", [input], name=name)


def serialize_tensor(tensor: Any, name: str | None = None) -> Tensor:
    """A scalar string holding `tensor` as ``TensorProto`` bytes."""
    return apply("SerializeTensor", [tensor], name=name)


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Tensor:
    """The tensor a serialized ``TensorProto`` holds; it must be of `out_type`."""
    return apply("ParseTensor", [serialized], {"out_type": dtypes.as_dtype(out_type)}, name=name)


def matching_files(pattern: Any, name: str | None = None) -> Tensor:
    """The sorted paths matching the glob `pattern` (a string or a vector of them)."""
    return apply("MatchingFiles", [convert_to_tensor(pattern, dtypes.string)], name=name)


def decode_compressed(bytes: Any, compression_type: str = "",  # noqa: A002 - TF's name
                      name: str | None = None) -> Tensor:
    """Each string of `bytes` inflated: `compression_type` is ``"ZLIB"``, ``"GZIP"`` or ``""``."""
    if compression_type not in ("", "ZLIB", "GZIP"):
        raise ValueError(f"Unsupported compression_type: {compression_type}")
    return apply("DecodeCompressed", [convert_to_tensor(bytes, dtypes.string)],
                 {"compression_type": compression_type}, name=name)


def accumulate_n(inputs: Sequence[Any], shape: Any = None, tensor_dtype: Any = None,
                 name: str | None = None) -> Tensor:
    """The element-wise sum of `inputs`, all of one shape and dtype (TF1 checks them against
    `shape` and `tensor_dtype` when given)."""
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the "
                         "same dtype and shape")
    tensors = [convert_to_tensor(x) for x in inputs]
    if not all(t.dtype == tensors[0].dtype for t in tensors):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and "
                         "shape")
    merged = tensors[0].shape
    for t in tensors[1:]:
        merged = merged.merge_with(t.shape)
    if shape is not None:
        merged.merge_with(shape)
    if tensor_dtype is not None and dtypes.as_dtype(tensor_dtype) != tensors[0].dtype:
        raise TypeError(f"tensor_dtype is {dtypes.as_dtype(tensor_dtype).name}, but input is of "
                        f"type {tensors[0].dtype.name}")
    if len(tensors) == 1 and name is None:
        return tensors[0]
    return math_ops.add_n(tensors, name=name)


def clip_by_average_norm(t: Any, clip_norm: Any, name: str | None = None) -> Tensor:
    """`t` scaled so that its L2 norm divided by its number of elements is at most
    `clip_norm`: ``t * clip_norm * min(size / l2norm(t), 1 / clip_norm)``."""
    with name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t, name="t")
        count = math_ops.cast(apply("Size", [t], {"out_type": dtypes.int32}), t.dtype)
        inverse_norm = apply("Rsqrt", [math_ops.reduce_sum(t * t, None)])
        clip = convert_to_tensor(clip_norm, t.dtype)
        factor = apply("Minimum", [inverse_norm * count, 1.0 / clip])
        return apply("Identity", [t * clip * factor], name=scope)


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Build in the outermost graph (out of any control-flow function), without control
    dependencies, under the current name scope: where TF1 puts variable initializers."""
    current = get_default_graph()
    scope = outermost_name_scope(current)
    graph = outermost_graph(current)
    with graph.as_default(), graph.name_scope(f"{scope}/" if scope else None), \
            graph.control_dependencies(None):
        yield


def op_scope(values: Any, name: str, default_name: str | None = None) -> Any:
    """Deprecated TF alias of ``name_scope(name, default_name, values)``."""
    return name_scope(name, default_name, values)


def variable_op_scope(values: Any, name_or_scope: Any, default_name: str | None = None,
                      **kwargs: Any) -> Any:
    """Deprecated TF alias of ``variable_scope(name_or_scope, default_name, values, ...)``."""
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)


def executing_eagerly() -> bool:
    """Always False: tensorweave builds graphs and runs them in sessions."""
    return False


def enable_eager_execution(config: Any = None, device_policy: Any = None,
                           execution_mode: Any = None) -> None:
    """Not available: tensorweave runs graphs only; see the module docstring."""
    raise ValueError("tensorweave runs graphs in sessions only: eager execution cannot be "
                     "enabled")


def disable_eager_execution() -> None:
    """Graph mode is the only mode, so there is nothing to disable."""


def disable_v2_behavior() -> None:
    """TF1's behavior (graphs, sessions, ref variables, TF1 shapes) is tensorweave's only
    one, so there is nothing to switch off."""


def enable_v2_behavior() -> None:
    """Not available: TF2 behavior means eager execution, which tensorweave lacks."""
    raise ValueError("tensorweave runs TF1 graphs in sessions only: TF2 behavior (eager "
                     "execution) cannot be enabled")
