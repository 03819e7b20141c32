"""Higher-order functions over the first dimension of tensors: ``map_fn``, ``foldl``,
``foldr`` and ``scan``, as in ``tf.compat.v1``.

Contract: each is one `while_loop` whose body reads element ``i`` of every (possibly nested)
input from a `TensorArray` and, for ``map_fn`` and ``scan``, writes its result to output
TensorArrays that are stacked after the loop, so `fn` runs once per element and gradients flow
through it. `fn` is called once at graph construction (inside the loop's body function), so
variables it creates are created once. Signatures, defaults, name scopes and construction
errors follow TF1; ``parallel_iterations`` and ``swap_memory`` are accepted for compatibility.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops
from tensorweave.api.control_flow_ops import _flatten, _pack_as, _same_structure, while_loop
from tensorweave.api.scopes import name_scope
from tensorweave.api.tensor_array import TensorArray
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = ["foldl", "foldr", "map_fn", "scan"]


def _elements(elems: Any) -> tuple[list[Tensor], Tensor]:
    """The flat inputs as tensors and their common length (an int32 scalar, constant when the
    length is statically known, so stacked results keep a static shape)."""
    flat = [convert_to_tensor(e, name="elem") for e in _flatten(elems)]
    if not flat:
        raise ValueError("elems must hold at least one tensor")
    for e in flat:
        if e.shape.ndims == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    static = flat[0].shape[0] if flat[0].shape.ndims else None
    n = static if static is not None else array_ops.shape(flat[0])[0]
    return flat, convert_to_tensor(n, dtype=dtypes.int32)


def _arrays(flat: list[Tensor], n: Tensor) -> list[TensorArray]:
    return [TensorArray(e.dtype, size=n, element_shape=e.shape[1:] if e.shape.ndims else None,
                        infer_shape=True).unstack(e) for e in flat]


def _check_callable(fn: Any) -> None:
    if not callable(fn):
        raise TypeError("fn must be callable.")


def map_fn(fn: Callable[[Any], Any], elems: Any, dtype: Any = None,
           parallel_iterations: int | None = None, back_prop: bool = True,
           swap_memory: bool = False, infer_shape: bool = True, name: str | None = None) -> Any:
    """``[fn(elems[i]) for i in range(n)]`` stacked, where `elems` may be a nested structure of
    tensors sliced together; `dtype` gives the structure and dtypes of `fn`'s result when it
    differs from `elems`'."""
    _check_callable(fn)
    if parallel_iterations is None:
        parallel_iterations = 10
    with name_scope(name, "map", _flatten(elems)):
        flat, n = _elements(elems)
        out_structure = elems if dtype is None else dtype
        out_dtypes = ([e.dtype for e in flat] if dtype is None
                      else [dtypes.as_dtype(d) for d in _flatten(dtype)])
        inputs = _arrays(flat, n)
        outputs = [TensorArray(d, size=n, infer_shape=infer_shape) for d in out_dtypes]

        def body(i: Tensor, tas: list[TensorArray]) -> Any:
            result = fn(_pack_as(elems, [ta.read(i) for ta in inputs]))
            if not _same_structure(out_structure, result):
                raise ValueError("The two structures don't have the same nested structure: "
                                 f"{out_structure!r} and {result!r}")
            values = [convert_to_tensor(v) for v in _flatten(result)]
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, values)]

        _, tas = while_loop(lambda i, _: i < n, body, [0, outputs],
                            parallel_iterations=parallel_iterations, back_prop=back_prop,
                            swap_memory=swap_memory)
        return _pack_as(out_structure, [ta.stack() for ta in tas])


def _fold(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any,
          parallel_iterations: int, back_prop: bool, swap_memory: bool, reverse: bool,
          ) -> Any:
    flat, n = _elements(elems)
    inputs = _arrays(flat, n)

    def element(i: Any) -> Any:
        return _pack_as(elems, [ta.read(i) for ta in inputs])

    if initializer is None:
        start = element(n - 1 if reverse else 0)
        first = n - 2 if reverse else 1
    else:
        start, first = initializer, (n - 1 if reverse else 0)
    acc = [convert_to_tensor(a) for a in _flatten(start)]

    def body(i: Tensor, a: list[Tensor]) -> Any:
        result = fn(_pack_as(start, a), element(i))
        return (i - 1 if reverse else i + 1), _flatten(result)

    _, a = while_loop(lambda i, _: i >= 0 if reverse else i < n, body, [first, acc],
                      parallel_iterations=parallel_iterations, back_prop=back_prop,
                      swap_memory=swap_memory, return_same_structure=True)
    return _pack_as(start, a)


def foldl(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])``; without
    `initializer` the first element starts the accumulation."""
    _check_callable(fn)
    with name_scope(name, "foldl", _flatten(elems)):
        return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory,
                     reverse=False)


def foldr(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
          parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
          name: str | None = None) -> Any:
    """`foldl` from the last element to the first."""
    _check_callable(fn)
    with name_scope(name, "foldr", _flatten(elems)):
        return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory,
                     reverse=True)


def scan(fn: Callable[[Any, Any], Any], elems: Any, initializer: Any = None,
         parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
         infer_shape: bool = True, reverse: bool = False, name: str | None = None) -> Any:
    """Every intermediate accumulator of `foldl` (`foldr` with `reverse`), stacked: result
    ``i`` is ``fn(result[i-1], elems[i])``; without `initializer` result 0 is ``elems[0]``."""
    _check_callable(fn)
    with name_scope(name, "scan", _flatten(elems)):
        flat, n = _elements(elems)
        inputs = _arrays(flat, n)

        def element(i: Any) -> Any:
            return _pack_as(elems, [ta.read(i) for ta in inputs])

        edge = n - 1 if reverse else 0
        if initializer is None:
            start = element(edge)
            first = n - 2 if reverse else 1
        else:
            start, first = initializer, edge
        acc = [convert_to_tensor(a) for a in _flatten(start)]
        outputs = [TensorArray(a.dtype, size=n, element_shape=a.shape, infer_shape=infer_shape)
                   for a in acc]
        if initializer is None:
            outputs = [ta.write(edge, a) for ta, a in zip(outputs, acc)]

        def body(i: Tensor, a: list[Tensor], tas: list[TensorArray]) -> Any:
            result = fn(_pack_as(start, a), element(i))
            if not _same_structure(start, result):
                raise ValueError("The two structures don't have the same nested structure: "
                                 f"{start!r} and {result!r}")
            values = [convert_to_tensor(v) for v in _flatten(result)]
            return ((i - 1 if reverse else i + 1), values,
                    [ta.write(i, v) for ta, v in zip(tas, values)])

        _, _, tas = while_loop(lambda i, a, t: i >= 0 if reverse else i < n, body,
                               [first, acc, outputs], parallel_iterations=parallel_iterations,
                               back_prop=back_prop, swap_memory=swap_memory)
        return _pack_as(start, [ta.stack() for ta in tas])
