"""Variable initializers, as ``tf.compat.v1``'s ``init_ops``.

Contract: an initializer is a callable ``init(shape, dtype=None, partition_info=None)`` that builds
the graph of an initial value of that shape (a list of ints or a `TensorShape`) and dtype (the
initializer's own when ``None``). Random initializers take an op-level `seed` and follow the
graph-level seed rule of ``tw.set_random_seed``. `get_config` returns the constructor arguments,
so ``type(init)(**init.get_config())`` rebuilds an equal initializer. `VarianceScaling` computes
fan-in/fan-out as TF does: the last two dimensions, times the product of the others (the receptive
field of a convolution kernel).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api import array_ops, random_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "constant_initializer", "glorot_normal_initializer", "glorot_uniform_initializer",
    "ones_initializer",
    "random_normal_initializer", "random_uniform_initializer", "truncated_normal_initializer",
    "variance_scaling_initializer", "zeros_initializer",
]

# stddev of a unit normal truncated to [-2, 2]: variance scaling corrects for it.
_TRUNCATED_STDDEV = 0.87962566103423978


def _dims(shape: Any) -> list[int]:
    dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
    if any(d is None for d in dims):
        raise ValueError(f"Initializer requires a fully defined shape, got {shape}")
    return [int(d) for d in dims]


def _float_dtype(dtype: Any) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype.name}.")
    return dtype


class Initializer(abc.ABC):
    """Base class of initializers."""

    @abc.abstractmethod
    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        """The graph of an initial value of `shape` and `dtype`."""

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Initializer:
        return cls(**config)


class _Filled(Initializer):
    """One value everywhere, built by `_fill` (``array_ops.zeros`` or ``array_ops.ones``)."""

    _fill: Callable[..., Tensor]

    def __init__(self, dtype: Any = dtypes.float32) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return self._fill(_dims(shape), dtype=dtypes.as_dtype(dtype or self.dtype))

    def get_config(self) -> dict[str, Any]:
        return {"dtype": self.dtype.name}


class Zeros(_Filled):
    """All zeros."""

    _fill = staticmethod(array_ops.zeros)


class Ones(_Filled):
    """All ones."""

    _fill = staticmethod(array_ops.ones)


class Constant(Initializer):
    """A constant: a scalar fills the shape; a list or array must have as many elements as the
    shape (it is reshaped), or exactly the shape when `verify_shape`."""

    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32,
                 verify_shape: bool = False) -> None:
        if not np.isscalar(value) and not isinstance(value, (list, tuple, np.ndarray)):
            raise TypeError(f"Invalid type for initial value: {type(value).__name__} (expected "
                            "Python scalar, list or tuple of values, or numpy.ndarray).")
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None,
                 verify_shape: bool | None = None) -> Tensor:
        verify = self._verify_shape if verify_shape is None else verify_shape
        return constant(self.value, dtype=dtypes.as_dtype(dtype or self.dtype),
                        shape=_dims(shape), verify_shape=verify)

    def get_config(self) -> dict[str, Any]:
        return {"value": self.value, "dtype": self.dtype.name,
                "verify_shape": self._verify_shape}


class RandomUniform(Initializer):
    """Uniform in ``[minval, maxval)``; `maxval` defaults to 1 for floats."""

    def __init__(self, minval: Any = 0, maxval: Any = None, seed: int | None = None,
                 dtype: Any = dtypes.float32) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return random_ops.random_uniform(_dims(shape), self.minval, self.maxval,
                                         dtypes.as_dtype(dtype or self.dtype), seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed,
                "dtype": self.dtype.name}


class RandomNormal(Initializer):
    """Normal with `mean` and `stddev`."""

    def __init__(self, mean: float = 0.0, stddev: float = 1.0, seed: int | None = None,
                 dtype: Any = dtypes.float32) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return random_ops.random_normal(_dims(shape), self.mean, self.stddev,
                                        _float_dtype(dtype or self.dtype), seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed,
                "dtype": self.dtype.name}


class TruncatedNormal(RandomNormal):
    """Normal with `mean` and `stddev`, redrawn beyond two standard deviations."""

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return random_ops.truncated_normal(_dims(shape), self.mean, self.stddev,
                                           _float_dtype(dtype or self.dtype), seed=self.seed)


def _fans(shape: list[int]) -> tuple[int, int]:
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return shape[-2] * receptive_field, shape[-1] * receptive_field


class VarianceScaling(Initializer):
    """Samples scaled to the variance ``scale / n``, `n` being fan-in, fan-out or their mean.

    `distribution` is ``"truncated_normal"`` (``"normal"`` is TF1's alias for it),
    ``"untruncated_normal"`` or ``"uniform"`` (within ``±sqrt(3 * scale / n)``).
    """

    MODES = ("fan_in", "fan_out", "fan_avg")
    DISTRIBUTIONS = ("normal", "uniform", "truncated_normal", "untruncated_normal")

    def __init__(self, scale: float = 1.0, mode: str = "fan_in",
                 distribution: str = "truncated_normal", seed: int | None = None,
                 dtype: Any = dtypes.float32) -> None:
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in self.MODES:
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution not in self.DISTRIBUTIONS:
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dims = _dims(shape)
        dtype = _float_dtype(dtype or self.dtype)
        fan_in, fan_out = _fans(dims)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / _TRUNCATED_STDDEV
            return random_ops.truncated_normal(dims, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(dims, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(dims, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed, "dtype": self.dtype.name}


class _Glorot(VarianceScaling):
    """`VarianceScaling` over the mean of fan-in and fan-out, drawing from `_DISTRIBUTION`."""

    _DISTRIBUTION: str

    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", self._DISTRIBUTION, seed, dtype)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotUniform(_Glorot):
    """Xavier uniform: within ``±sqrt(6 / (fan_in + fan_out))``."""

    _DISTRIBUTION = "uniform"


class GlorotNormal(_Glorot):
    """Xavier normal: truncated normal with ``stddev = sqrt(2 / (fan_in + fan_out))``."""

    _DISTRIBUTION = "truncated_normal"


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
