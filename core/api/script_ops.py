"""``py_func`` and ``numpy_function``, as ``tf.compat.v1``.

Contract: ``py_func(func, inp, Tout)`` creates a ``PyFunc`` op (``PyFuncStateless`` when
``stateful=False``) that calls `func` with numpy values of `inp` whenever it runs, and returns
one `Tensor` when `Tout` is one dtype, a list when it is a list (the `Operation` for an empty
list), each of unknown shape. What `func` receives and must return, and the errors, are the
kernel's contract (``tensorweave/plugins/kernels/script_ops.py``): results are not cast, their
dtypes must equal `Tout`. `func` stays in this process (`tensorweave.engine.graph.py_func_registry`:
the op carries only a token, and the graph keeps `func` alive), so the op runs only on a device
of this process; elsewhere it fails with `InvalidArgumentError`. The ops have no gradient
(`gradients` gives ``None`` through them) and are never constant-folded.
``numpy_function`` is ``py_func`` with ``stateful=True``.

``py_function(func, inp, Tout)`` (TF 1.15's graph-mode ``tf.py_function``) is a stateful
``py_func`` whose `func` receives each input as an `EagerValue` (``.numpy()``, ``.shape``,
``.dtype``, numpy conversion and arithmetic, as an eager tensor) and may return those, numpy
values or Python values: each result is converted to its ``Tout`` dtype as TF's
``convert_to_tensor`` does (a float for an integer or bool dtype is `TypeError`, an
`EagerValue` of another dtype `ValueError`, so the step fails with `InvalidArgumentError`).
TF's op type is ``EagerPyFunc``; here it is ``PyFunc``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.graph import py_func_registry
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import make_op
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["numpy_function", "py_func", "py_function"]


def py_func(func: Callable[..., Any], inp: Sequence[Any], Tout: Any,  # noqa: N803 - TF's name
            stateful: bool = True, name: str | None = None,
            ) -> Tensor | list[Tensor] | Operation:
    """Wrap `func` (numpy in, numpy out) as an op; see the module docstring."""
    if not callable(func):
        raise ValueError(f"Expected func to be callable, got func of type {type(func)}")
    if not isinstance(inp, (list, tuple)):
        raise TypeError(f"Expected list for 'input' argument to 'PyFunc' Op, not {inp!r}.")
    is_list = isinstance(Tout, (list, tuple))
    tout = [dtypes.as_dtype(t) for t in (Tout if is_list else [Tout])]
    inputs = [convert_to_tensor(x) for x in inp]
    op_type = "PyFunc" if stateful else "PyFuncStateless"

    def build(token: str) -> Operation:
        attrs = {"token": token, "Tin": [t.dtype for t in inputs], "Tout": tout}
        return make_op(op_type, [inputs], attrs, name=name)

    op = py_func_registry.register(func, build)
    if not is_list:
        return op.outputs[0]
    return list(op.outputs) if tout else op


def numpy_function(func: Callable[..., Any], inp: Sequence[Any], Tout: Any,  # noqa: N803
                   name: str | None = None) -> Tensor | list[Tensor] | Operation:
    """``py_func(func, inp, Tout, stateful=True, name=name)``, as TF 1.15."""
    return py_func(func, inp, Tout, stateful=True, name=name)


class EagerValue:
    """An input of a `py_function` callable, as TF hands it an eager tensor."""

    __array_priority__ = 100  # ndarray <op> EagerValue defers to the reflected operator

    def __init__(self, value: Any, dtype: dtypes.DType) -> None:
        self._value = value
        self._dtype = dtype

    def numpy(self) -> Any:
        """The value: an array, or a scalar string as `bytes`."""
        return self._value

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape(np.shape(self._value))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.asarray(self._value, dtype=dtype)

    def __len__(self) -> int:
        return len(self._value)

    def __iter__(self) -> Iterator[Any]:
        return (_eager(v) for v in np.asarray(self._value))

    def __getitem__(self, key: Any) -> EagerValue:
        return _eager(np.asarray(self._value)[key])

    def __bool__(self) -> bool:
        return bool(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __index__(self) -> int:
        return operator.index(np.asarray(self._value).item())

    def __repr__(self) -> str:
        return (f"<tf.Tensor: shape={tuple(np.shape(self._value))}, dtype={self._dtype.name}, "
                f"numpy={self._value!r}>")


def _eager(value: Any) -> EagerValue:
    array = np.asarray(value)
    dtype = dtypes.string if array.dtype.kind in "OSU" else dtypes.as_dtype(array.dtype)
    return EagerValue(value, dtype)


def _binary(fn: Callable[[Any, Any], Any], reflected: bool) -> Callable[..., EagerValue]:
    def method(self: EagerValue, other: Any) -> EagerValue:
        other = np.asarray(other) if isinstance(other, EagerValue) else other
        mine = np.asarray(self._value)
        return _eager(fn(other, mine) if reflected else fn(mine, other))
    return method


def _unary(fn: Callable[[Any], Any]) -> Callable[[EagerValue], EagerValue]:
    return lambda self: _eager(fn(np.asarray(self._value)))


_ARITHMETIC = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
               "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
               "pow": operator.pow, "matmul": operator.matmul, "and": operator.and_,
               "or": operator.or_, "xor": operator.xor}
for _name, _fn in _ARITHMETIC.items():
    setattr(EagerValue, f"__{_name}__", _binary(_fn, reflected=False))
    setattr(EagerValue, f"__r{_name}__", _binary(_fn, reflected=True))
for _name, _fn in {"lt": operator.lt, "le": operator.le, "gt": operator.gt,
                   "ge": operator.ge}.items():
    setattr(EagerValue, f"__{_name}__", _binary(_fn, reflected=False))
for _name, _fn in {"neg": operator.neg, "pos": operator.pos, "abs": operator.abs,
                   "invert": operator.invert}.items():
    setattr(EagerValue, f"__{_name}__", _unary(_fn))


def _converted(value: Any, dtype: dtypes.DType) -> Any:
    """A `py_function` result as a value of `dtype` (TF's ``convert_to_tensor``)."""
    if isinstance(value, EagerValue):
        if value.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with "
                             f"dtype {value.dtype.name}: {value!r}")
        return value.numpy()
    if dtype.is_string:
        return value
    array = np.asarray(value)
    if array.dtype.kind in "fc" and (dtype.is_integer or dtype.is_bool):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    return array.astype(dtype.np_type)


def py_function(func: Callable[..., Any], inp: Sequence[Any], Tout: Any,  # noqa: N803
                name: str | None = None) -> Tensor | list[Tensor] | Operation:
    """Wrap `func` (eager-like tensors in, tensors or numpy/Python values out) as a stateful
    op; see the module docstring."""
    if not callable(func):
        raise ValueError(f"Expected func to be callable, got func of type {type(func)}")
    tout = [dtypes.as_dtype(t) for t in (Tout if isinstance(Tout, (list, tuple)) else [Tout])]
    tin = [convert_to_tensor(x).dtype for x in inp] if isinstance(inp, (list, tuple)) else []

    def call(*args: Any) -> Any:
        result = func(*[EagerValue(a, t) for a, t in zip(args, tin)])
        if result is None or not tout:
            return result
        if not isinstance(result, (list, tuple)):
            return _converted(result, tout[0])
        # extra results pass unconverted, for the kernel's count check
        return ([_converted(v, t) for v, t in zip(result, tout)] + list(result[len(tout):]))

    return py_func(call, inp, Tout, stateful=True, name=name)
