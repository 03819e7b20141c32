"""OpDefs of the discrete Fourier transforms over a tensor's innermost 1, 2 or 3 dimensions:
``FFT``, ``IFFT``, ``FFT2D``, ``IFFT2D``, ``FFT3D``, ``IFFT3D`` and the real-input ``RFFT*`` /
real-output ``IRFFT*`` families.

Contract: names and inputs follow TF's ``spectral_ops.cc``. The complex transforms take and give
``Tcomplex`` (complex64 or complex128) of the same shape. The real ones carry TF's ``Treal``
(float32/float64) and ``Tcomplex`` attrs, whose precisions must agree (`TypeError`), and an int32
``fft_length`` vector of the transform's rank: ``RFFT*`` crops or zero-pads the input's inner
dims to ``fft_length`` and keeps ``fft_length[-1] // 2 + 1`` frequencies of the last one;
``IRFFT*`` returns ``fft_length``-sized inner dims. An input of lower rank than the transform, or
an ``fft_length`` of the wrong size, raises `ValueError` at construction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.standard_ops.shape_fns import with_rank, with_rank_at_least

REALS = frozenset({dtypes.float32, dtypes.float64})
RANKS = {"": 1, "2D": 2, "3D": 3}


def _complex_transform(rank: int) -> Callable[[InferContext], list[TensorSpec]]:
    def infer(ctx: InferContext) -> list[TensorSpec]:
        with_rank_at_least(ctx, 0, rank)
        return [ctx.inputs[0]]

    return infer


def _real_transform(rank: int, inverse: bool) -> Callable[[InferContext], list[TensorSpec]]:
    def infer(ctx: InferContext) -> list[TensorSpec]:
        real, complex_ = ctx.attr("Treal"), ctx.attr("Tcomplex")
        if complex_.real_dtype != real:
            raise TypeError(f"Treal {real.name} and Tcomplex {complex_.name} differ in "
                            f"precision")
        shape = with_rank_at_least(ctx, 0, rank)
        length = with_rank(ctx, 1, 1)
        if length.dims[0] is not None and length.dims[0] != rank:
            raise ctx.shape_error(f"Dimension must be {rank} but is {length.dims[0]}")
        out = real if inverse else complex_
        if shape.ndims is None:
            return [TensorSpec(out, TensorShape(None))]
        value = ctx.constant_value(1)
        if value is None:
            inner: list[int | None] = [None] * rank
        else:
            inner = [int(n) for n in np.asarray(value).reshape(-1)]
            if not inverse:
                inner[-1] = inner[-1] // 2 + 1 if inner[-1] else 0
        return [TensorSpec(out, [*shape.dims[:-rank], *inner])]

    return infer


def register(registry: Any) -> None:
    for suffix, rank in RANKS.items():
        for name in (f"FFT{suffix}", f"IFFT{suffix}"):
            registry.op(name, ["input:Tcomplex"], _complex_transform(rank),
                        attrs={"Tcomplex": REQUIRED},
                        type_constraints={"Tcomplex": dtypes.COMPLEX})
        registry.op(f"RFFT{suffix}", ["input:Treal", "fft_length:int32"],
                    _real_transform(rank, inverse=False),
                    attrs={"Treal": REQUIRED, "Tcomplex": dtypes.complex64},
                    type_constraints={"Treal": REALS, "Tcomplex": dtypes.COMPLEX})
        registry.op(f"IRFFT{suffix}", ["input:Tcomplex", "fft_length:int32"],
                    _real_transform(rank, inverse=True),
                    attrs={"Treal": dtypes.float32, "Tcomplex": REQUIRED},
                    type_constraints={"Treal": REALS, "Tcomplex": dtypes.COMPLEX})
