"""Gradients of the discrete Fourier transforms, in TF's complex-gradient convention
(``dL/dRe z + i dL/dIm z``; the maths of TF's ``spectral_grad.py``, derived as adjoints).

Contract: a transform is linear, so its gradient is its adjoint applied to ``grad``:
- ``FFT*`` (unnormalized): ``N * IFFT*(grad)``; ``IFFT*`` (1/N): ``FFT*(grad) / N``, with N the
  number of elements the transform spans.
- ``RFFT*`` maps reals to the first ``n // 2 + 1`` frequencies of the last axis: its adjoint
  zero-extends ``grad`` to the full spectrum, takes ``N * IFFT*`` and keeps the real part.
- ``IRFFT*`` reads the kept frequencies once (DC and, for even n, Nyquist) or twice (the rest,
  through their Hermitian mirror): its gradient is ``RFFT*(grad) * c / N`` with c 1 or 2.
Both real transforms crop or zero-pad their input to ``fft_length`` first; the adjoint of that
resizes the gradient back to the input's inner dims. ``fft_length`` gets no gradient.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, complex_ops, math_ops, spectral_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor

Grads = list[Tensor | None]
RANKS = {"": 1, "2D": 2, "3D": 3}


def _span(t: Tensor, rank: int, dtype: dtypes.DType) -> Tensor:
    """The number of elements in `t`'s inner `rank` dims, as a `dtype` scalar."""
    dims = t.shape.dims[-rank:] if t.shape.ndims is not None else [None]
    if t.shape.ndims is not None and None not in dims:
        count: Any = 1
        for d in dims:
            count *= d
    else:
        count = math_ops.reduce_prod(array_ops.shape(t)[-rank:])
    return math_ops.cast(count, dtype)


def _complex_grad(suffix: str, rank: int, inverse: bool) -> Any:
    adjoint = getattr(spectral_ops, ("fft" if inverse else "ifft") + suffix.lower())

    def grad_fn(op: Operation, grad: Tensor) -> Grads:
        size = _span(grad, rank, grad.dtype)
        return [adjoint(grad) / size if inverse else adjoint(grad) * size]

    return grad_fn


def _fit(grad: Tensor, like: Tensor, rank: int) -> Tensor:
    """`grad` with its inner `rank` dims cropped or zero-padded to `like`'s."""
    if grad.shape.is_fully_defined() and like.shape.is_fully_defined() \
            and grad.shape.as_list() == like.shape.as_list():
        return grad
    have, want = array_ops.shape(grad), array_ops.shape(like)
    outer = array_ops.shape(have)[0] - rank
    kept = math_ops.minimum(have[-rank:], want[-rank:])
    begin = array_ops.zeros_like(have)
    size = array_ops.concat([array_ops.fill([outer], -1), kept], 0)
    cropped = array_ops.slice(grad, begin, size)
    after = array_ops.concat([array_ops.zeros([outer], dtypes.int32), want[-rank:] - kept], 0)
    return array_ops.pad(cropped, array_ops.stack([begin, after], axis=1))


def _last_length(fft_length: Tensor) -> Tensor:
    return array_ops.reshape(fft_length[-1:], [])


def _rfft_grad(suffix: str, rank: int) -> Any:
    def grad_fn(op: Operation, grad: Tensor) -> Grads:
        x, fft_length = op.inputs
        n = _last_length(fft_length)
        rank_of_grad = array_ops.rank(grad)
        # zero-extend the kept n // 2 + 1 frequencies of the last axis to all n of them
        missing = array_ops.reshape(n - (n // 2 + 1), [1])
        after = array_ops.concat([array_ops.zeros([rank_of_grad - 1], dtypes.int32), missing], 0)
        spectrum = array_ops.pad(grad, array_ops.stack(
            [array_ops.zeros_like(after), after], axis=1))
        full = getattr(spectral_ops, "ifft" + suffix.lower())(spectrum)
        scaled = complex_ops.real(full * _span(full, rank, full.dtype))
        return [_fit(scaled, x, rank), None]

    return grad_fn


def _irfft_grad(suffix: str, rank: int) -> Any:
    def grad_fn(op: Operation, grad: Tensor) -> Grads:
        spectrum, fft_length = op.inputs
        n = _last_length(fft_length)
        k = array_ops.range(n // 2 + 1)
        once = math_ops.logical_or(math_ops.equal(k, 0), math_ops.equal(2 * k, n))
        real = grad.dtype
        weight = array_ops.where(once, array_ops.ones_like(k), 2 * array_ops.ones_like(k))
        weight = math_ops.cast(weight, real) / math_ops.cast(math_ops.reduce_prod(fft_length),
                                                              real)
        forward = getattr(spectral_ops, "rfft" + suffix.lower())(grad, fft_length)
        scaled = forward * math_ops.cast(weight, forward.dtype)
        return [_fit(scaled, spectrum, rank), None]

    return grad_fn


def register_gradients(registry: Any) -> None:
    for suffix, rank in RANKS.items():
        registry.add(f"FFT{suffix}", _complex_grad(suffix, rank, inverse=False))
        registry.add(f"IFFT{suffix}", _complex_grad(suffix, rank, inverse=True))
        registry.add(f"RFFT{suffix}", _rfft_grad(suffix, rank))
        registry.add(f"IRFFT{suffix}", _irfft_grad(suffix, rank))
