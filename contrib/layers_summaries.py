"""``tf.contrib.layers``' summary helpers: summaries chosen by a tensor's rank or role.

Contract (TF 1.x ``contrib/layers/summaries``): `summarize_tensor` adds a scalar summary for a
rank-0 tensor and a histogram for any other (unknown rank included); string and bool tensors
get none (None). The default tag is ``<op name>_summary``. `summarize_activation` adds the
histogram ``<op name>/activation``, and for a ``Relu``/``Relu6``/``Softplus`` output also the
fraction of negative pre-activations as the scalar ``<op name>/zeros`` (and, for ``Relu6``,
the fraction above 6 as ``<op name>/sixes``). The ``summarize_<collection>`` helpers summarize
the tensors of a graph collection whose op name matches `name_filter` (``re.match``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from tensorweave.api import math_ops, summary_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import GraphKeys, Tensor, get_default_graph

__all__ = [
    "summarize_activation", "summarize_activations", "summarize_biases", "summarize_collection",
    "summarize_tensor", "summarize_tensors", "summarize_variables", "summarize_weights",
]


def _scalar(tensor: Tensor, tag: str | None) -> Tensor:
    tensor.get_shape().assert_has_rank(0)
    return summary_ops.scalar(tag or f"{tensor.op.name}_summary", tensor)


def _histogram(tensor: Any, tag: str | None) -> Tensor:
    return summary_ops.histogram(tag or f"{tensor.op.name}_summary", tensor)


def _fraction(flags: Tensor) -> Tensor:
    return math_ops.reduce_mean(math_ops.cast(flags, dtypes.float32))


def summarize_activation(op: Tensor) -> Tensor:
    """The histogram summary of the activation `op` (plus its zeros/sixes scalars)."""
    kind, name = op.op.type, op.op.name
    if kind in ("Relu", "Softplus", "Relu6"):
        # compare the pre-activation: the output's exact zeros would need a float equality
        pre = op.op.inputs[0]
        _scalar(_fraction(math_ops.less(pre, math_ops.cast(0.0, pre.dtype))), f"{name}/zeros")
    if kind == "Relu6":
        pre = op.op.inputs[0]
        _scalar(_fraction(math_ops.greater(pre, math_ops.cast(6.0, pre.dtype))), f"{name}/sixes")
    return _histogram(op, f"{name}/activation")


def summarize_tensor(tensor: Any, tag: str | None = None) -> Tensor | None:
    """A scalar summary for a scalar `tensor`, a histogram otherwise; None for string/bool."""
    if tensor.dtype.base_dtype in (dtypes.string, dtypes.bool_):
        return None
    if tensor.get_shape().ndims == 0:
        return _scalar(tensor, tag)
    return _histogram(tensor, tag)


def summarize_tensors(tensors: Any,
                      summarizer: Callable[[Any], Any] = summarize_tensor) -> list[Any]:
    return [summarizer(tensor) for tensor in tensors]


def summarize_collection(collection: str, name_filter: str | None = None,
                         summarizer: Callable[[Any], Any] = summarize_tensor) -> list[Any]:
    """`summarizer` applied to each tensor of `collection` whose op name matches."""
    tensors = [t for t in get_default_graph().get_collection(collection)
               if name_filter is None or re.match(name_filter, t.op.name)]
    return summarize_tensors(tensors, summarizer)


summarize_variables = functools.partial(summarize_collection, GraphKeys.GLOBAL_VARIABLES)
summarize_weights = functools.partial(summarize_collection, GraphKeys.WEIGHTS)
summarize_biases = functools.partial(summarize_collection, GraphKeys.BIASES)


def summarize_activations(name_filter: str | None = None,
                          summarizer: Callable[[Any], Any] = summarize_activation) -> list[Any]:
    return summarize_collection(GraphKeys.ACTIVATIONS, name_filter, summarizer)
