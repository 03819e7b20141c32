"""Discrete Fourier transforms: ``tf.signal.fft``/``ifft``/``rfft``/``irfft`` and their 2-D and
3-D forms (also ``tf.spectral.*``; the complex ones also top-level ``tf.fft``, ...).

Contract: each transforms the innermost 1, 2 or 3 dims, as TF. The complex transforms take a
complex64/complex128 tensor (`TypeError` for a real one, as TF's op). `rfft*` takes a real tensor
(float32 -> complex64, float64 -> complex128; Python values become float32) and
`irfft*` a complex one (complex64 -> float32, complex128 -> float64). A missing ``fft_length``
is the input's inner dims (for `irfft*`, the last one is ``2 * (n - 1)``), read statically when
known and from the runtime shape otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = ["fft", "fft2d", "fft3d", "ifft", "ifft2d", "ifft3d"]

_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def _complex_transform(op: str) -> Callable[..., Tensor]:
    def fn(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
        return apply(op, [convert_to_tensor(input, name="input")], name=name or op)

    fn.__name__ = fn.__qualname__ = op.lower()
    fn.__doc__ = f"``{op}`` over the innermost dims of a complex `input`."
    return fn


fft = _complex_transform("FFT")
ifft = _complex_transform("IFFT")
fft2d = _complex_transform("FFT2D")
ifft2d = _complex_transform("IFFT2D")
fft3d = _complex_transform("FFT3D")
ifft3d = _complex_transform("IFFT3D")


def _inferred_length(x: Tensor, rank: int, inverse: bool) -> Tensor:
    """The inner dims of `x` as an int32 vector (the last one as ``2 * (n - 1)`` if inverse)."""
    dims = x.shape.dims[-rank:] if x.shape.ndims is not None else [None]
    if x.shape.ndims is not None and None not in dims:
        lengths = list(dims)
        if inverse:
            lengths[-1] = max(0, 2 * (lengths[-1] - 1))
        return constant(lengths, dtypes.int32)
    inner = array_ops.shape(x)[-rank:]
    if not inverse:
        return inner
    last = math_ops.maximum(2 * (inner[-1:] - 1), 0)
    return array_ops.concat([inner[:-1], last], 0)


def _real_transform(op: str, rank: int, inverse: bool) -> Callable[..., Tensor]:
    def fn(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
        with name_scope(name, op.lower(), [input_tensor]) as scope:
            x = convert_to_tensor(input_tensor, name="input_tensor",
                                  preferred_dtype=None if inverse else dtypes.float32)
            length = (_inferred_length(x, rank, inverse) if fft_length is None
                      else convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length"))
            real = x.dtype.real_dtype if inverse else x.dtype
            attrs = {"Treal": real, "Tcomplex": _COMPLEX_OF.get(real, dtypes.complex64)}
            return apply(op, [x, length], attrs, name=scope)

    fn.__name__ = fn.__qualname__ = op.lower()
    fn.__doc__ = (f"``{op}`` over the innermost dims of a "
                  f"{'Hermitian complex' if inverse else 'real'} `input_tensor`.")
    return fn


rfft = _real_transform("RFFT", 1, inverse=False)
irfft = _real_transform("IRFFT", 1, inverse=True)
rfft2d = _real_transform("RFFT2D", 2, inverse=False)
irfft2d = _real_transform("IRFFT2D", 2, inverse=True)
rfft3d = _real_transform("RFFT3D", 3, inverse=False)
irfft3d = _real_transform("IRFFT3D", 3, inverse=True)
