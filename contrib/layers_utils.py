"""``tf.contrib.layers``' utilities, also ``tf.contrib.slim.utils``: named outputs (end points)
and small argument checks.

Contract: `collect_named_outputs` gives a tensor an alias (its layer's scope name, without a
trailing ``/``) in the tensor's ``aliases`` list and adds it to `collections`;
`convert_collection_to_dict` maps each alias of each tensor of a collection to the tensor, in
collection order, a tensor without aliases being named after its op (``:0`` outputs) or itself.
`last_dimension` is a shape's static last dimension, `two_element_tuple` and
`n_positive_integers` normalize the ``kernel_size``/``stride`` style arguments.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from tensorweave.api.static_value import smart_cond, smart_constant_value
from tensorweave.engine.graph.graph import get_default_graph
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "append_tensor_alias", "collect_named_outputs", "constant_value",
    "convert_collection_to_dict", "gather_tensors_aliases", "get_tensor_aliases",
    "get_variable_collections", "last_dimension", "n_positive_integers", "smart_cond",
    "static_cond", "two_element_tuple",
]

constant_value = smart_constant_value


def static_cond(pred: bool, fn1: Any, fn2: Any) -> Any:
    """``fn1()`` if the Python bool `pred`, else ``fn2()``."""
    if not callable(fn1):
        raise TypeError("fn1 must be callable.")
    if not callable(fn2):
        raise TypeError("fn2 must be callable.")
    return fn1() if pred else fn2()


def append_tensor_alias(tensor: Any, alias: str) -> Any:
    """`tensor`, with `alias` (less a trailing ``/``) added to its ``aliases``."""
    alias = alias[:-1] if alias.endswith("/") else alias
    if hasattr(tensor, "aliases"):
        tensor.aliases.append(alias)
    else:
        tensor.aliases = [alias]
    return tensor


def collect_named_outputs(collections: Any, alias: str, outputs: Any) -> Any:
    """`outputs` aliased `alias` and added to `collections` (a name or a list; none: no-op)."""
    if collections:
        append_tensor_alias(outputs, alias)
        get_default_graph().add_to_collections(
            [collections] if isinstance(collections, str) else collections, outputs)
    return outputs


def get_tensor_aliases(tensor: Any) -> list[str]:
    """`tensor`'s aliases, or its op's name (first output) or its own name."""
    if hasattr(tensor, "aliases"):
        return list(tensor.aliases)
    return [tensor.op.name if tensor.name.endswith(":0") else tensor.name]


def gather_tensors_aliases(tensors: list[Any]) -> list[str]:
    """Every alias of every tensor of `tensors`, in order."""
    return [alias for tensor in tensors for alias in get_tensor_aliases(tensor)]


def convert_collection_to_dict(collection: str, clear_collection: bool = False
                               ) -> OrderedDict[str, Any]:
    """Alias -> tensor over the members of `collection` (emptied if `clear_collection`)."""
    graph = get_default_graph()
    output: OrderedDict[str, Any] = OrderedDict(
        (alias, tensor) for tensor in graph.get_collection(collection)
        for alias in get_tensor_aliases(tensor))
    if clear_collection:
        graph.clear_collection(collection)
    return output


def get_variable_collections(variables_collections: Any, name: str) -> Any:
    """The collections for the variable kind `name`: ``variables_collections[name]`` for a
    dict, else `variables_collections` itself."""
    if isinstance(variables_collections, dict):
        return variables_collections.get(name)
    return variables_collections


def last_dimension(shape: Any, min_rank: int = 1) -> int:
    """The static last dimension of `shape`, which must have rank at least `min_rank`."""
    shape = TensorShape(shape)
    if shape.ndims is None:
        raise ValueError("dims of shape must be known but is None")
    if shape.ndims < min_rank:
        raise ValueError(f"rank of shape must be at least {min_rank} not: {shape.ndims}")
    value = shape.dims[-1].value
    if value is None:
        raise ValueError("last dimension shape must be known but is None")
    return value


def two_element_tuple(int_or_tuple: Any) -> tuple[int, int]:
    """An int as ``(n, n)``, or a 2-element list/tuple/shape as a tuple of ints."""
    if isinstance(int_or_tuple, (list, tuple)):
        if len(int_or_tuple) != 2:
            raise ValueError(f"Must be a list with 2 elements: {int_or_tuple}")
        return int(int_or_tuple[0]), int(int_or_tuple[1])
    if isinstance(int_or_tuple, int):
        return int(int_or_tuple), int(int_or_tuple)
    if isinstance(int_or_tuple, TensorShape):
        if len(int_or_tuple) == 2:
            return int_or_tuple.dims[0].value, int_or_tuple.dims[1].value
    raise ValueError("Must be an int, a list with 2 elements or a TensorShape of length 2")


def n_positive_integers(n: int, value: Any) -> tuple[int, ...]:
    """`value` (an int, or `n` ints) as a tuple of `n` positive ints."""
    if isinstance(value, int):
        if value > 0:
            return (value,) * n
    elif isinstance(value, (list, tuple, TensorShape)):
        values = list(value.as_list() if isinstance(value, TensorShape) else value)
        if len(values) == n and all(isinstance(v, int) and v > 0 for v in values):
            return tuple(values)
    raise ValueError(f"Expected value to be an integer or a sequence of {n} positive "
                     f"integers, got: {value!r}")
