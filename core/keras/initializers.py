"""``tw.keras.initializers``: Keras's initializers (its defaults: ``RandomNormal`` and
``RandomUniform`` at scale 0.05) over ``tw``'s, plus `Orthogonal` and `Identity`, and `get`,
which resolves an initializer given by name (``"glorot_uniform"``), by `serialize`'s
``{"class_name", "config"}`` dict, by object or by callable."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import init_ops
from tensorweave.api.init_ops import (
    Constant,
    GlorotNormal,
    GlorotUniform,
    Initializer,
    Ones,
    VarianceScaling,
    Zeros,
)
from tensorweave.api.random_ops import get_seed
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant as constant_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = [
    "Constant", "GlorotNormal", "GlorotUniform", "Identity", "Initializer", "Ones",
    "Orthogonal", "RandomNormal", "RandomUniform", "TruncatedNormal", "VarianceScaling", "Zeros",
    "constant", "deserialize", "get", "glorot_normal", "glorot_uniform", "he_normal",
    "he_uniform", "identity", "lecun_normal", "lecun_uniform", "normal", "one", "ones",
    "orthogonal", "random_normal", "random_uniform", "serialize", "truncated_normal", "uniform",
    "zero", "zeros",
]


class RandomNormal(init_ops.RandomNormal):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None,
                 dtype: Any = dtypes.float32) -> None:
        super().__init__(mean, stddev, seed, dtype)


class RandomUniform(init_ops.RandomUniform):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: int | None = None,
                 dtype: Any = dtypes.float32) -> None:
        super().__init__(minval, maxval, seed, dtype)


class TruncatedNormal(init_ops.TruncatedNormal):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None,
                 dtype: Any = dtypes.float32) -> None:
        super().__init__(mean, stddev, seed, dtype)


def _numpy_rng(seed: int | None) -> np.random.Generator:
    """A generator seeded as TF seeds a random op created now (graph and op seed), so a seeded
    graph gets the same matrix every time it is built; unseeded, a fresh random one."""
    graph_seed, op_seed = get_seed(seed)
    if graph_seed is None:
        return np.random.default_rng()
    return np.random.default_rng([graph_seed, op_seed])


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`, from the QR decomposition of a normal matrix of
    the shape flattened to 2-D, as Keras. tensorweave has no QR op, so the matrix is computed
    with numpy when the initializer is called and enters the graph as a constant."""

    def __init__(self, gain: float = 1.0, seed: int | None = None,
                 dtype: Any = dtypes.float32) -> None:
        self.gain, self.seed, self.dtype = gain, seed, dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dims = list(shape.as_list() if hasattr(shape, "as_list") else shape)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows = int(np.prod(dims[:-1]))
        cols = dims[-1]
        a = _numpy_rng(self.seed).normal(size=(max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q *= np.sign(np.diag(r))  # makes the decomposition unique, hence uniformly distributed
        if rows < cols:
            q = q.T
        dtype = dtypes.as_dtype(dtype or self.dtype)
        return constant_tensor((self.gain * q).reshape(dims).astype(dtype.np_type), dtype=dtype)

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain: float = 1.0, dtype: Any = dtypes.float32) -> None:
        self.gain, self.dtype = gain, dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dims = list(shape.as_list() if hasattr(shape, "as_list") else shape)
        if len(dims) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dtype = dtypes.as_dtype(dtype or self.dtype)
        return constant_tensor(self.gain * np.eye(*dims), dtype=dtype)

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "dtype": self.dtype.name}


def lecun_normal(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


def he_normal(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed: int | None = None) -> VarianceScaling:
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


_BY_NAME: dict[str, Any] = {
    "zeros": Zeros, "ones": Ones, "constant": Constant, "random_normal": RandomNormal,
    "normal": RandomNormal, "random_uniform": RandomUniform, "uniform": RandomUniform,
    "truncated_normal": TruncatedNormal, "orthogonal": Orthogonal, "identity": Identity,
    "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
    "variance_scaling": VarianceScaling, "he_normal": he_normal, "he_uniform": he_uniform,
    "lecun_normal": lecun_normal, "lecun_uniform": lecun_uniform,
}
_BY_NAME.update({cls.__name__: cls for cls in (Zeros, Ones, Constant, RandomNormal,
                                               RandomUniform, TruncatedNormal, Orthogonal,
                                               Identity, GlorotUniform, GlorotNormal,
                                               VarianceScaling)})

# Keras's lower-case names for the classes.
zero = zeros = Zeros
one = ones = Ones
constant = Constant
uniform = random_uniform = RandomUniform
normal = random_normal = RandomNormal
truncated_normal = TruncatedNormal
identity = Identity
orthogonal = Orthogonal
glorot_normal = GlorotNormal
glorot_uniform = GlorotUniform


def serialize(initializer: Initializer) -> dict[str, Any]:
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


def deserialize(config: dict[str, Any]) -> Initializer:
    """The initializer of a ``{"class_name", "config"}`` dict."""
    name = config.get("class_name")
    if name not in _BY_NAME:
        raise ValueError(f"Unknown initializer: {name}")
    return _BY_NAME[name](**config.get("config", {}))


def get(identifier: Any) -> Any:
    """The initializer `identifier` names (a new one with Keras's defaults), describes (a
    `serialize` dict) or is; None stays None."""
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier]()
        except KeyError:
            raise ValueError(f"Unknown initializer: {identifier}") from None
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")
