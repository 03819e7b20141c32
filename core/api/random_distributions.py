"""``tf.random_gamma`` and ``tf.random_poisson`` (TF1 signatures).

Contract: `random_gamma(shape, alpha, beta)` draws ``shape`` samples per element of ``alpha``
broadcast against ``beta`` (rate, default 1), shaped ``shape + broadcast(alpha, beta).shape``
and typed `dtype`; as TF's, samples are ``RandomGamma / beta`` clipped below at the dtype's
smallest normal number so they are never 0. `random_poisson(lam, shape)` draws ``shape``
samples per element of `lam` (converted as its own dtype), typed `dtype`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api.array_ops import zeros_like
from tensorweave.api.random_ops import _seed_attrs
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = ["random_gamma", "random_poisson"]


def random_gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32,
                 seed: int | None = None, name: str | None = None) -> Tensor:
    """Gamma(alpha, beta) samples; see the module docstring."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape_t = convert_to_tensor(shape, dtype=dtypes.int32, name="shape")
        alpha_t = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta_t = convert_to_tensor(1 if beta is None else beta, dtype=dtype, name="beta")
        alpha_broadcast = apply("AddV2", [alpha_t, zeros_like(beta_t)], name="add")
        samples = apply("RandomGamma", [shape_t, alpha_broadcast], _seed_attrs(seed))
        scaled = apply("RealDiv", [samples, beta_t], name="truediv")
        tiny = convert_to_tensor(np.finfo(dtype.np_type).tiny, dtype=dtype)
        return apply("Maximum", [tiny, scaled], name="Maximum")


def random_poisson(lam: Any, shape: Any, dtype: Any = dtypes.float32, seed: int | None = None,
                   name: str | None = None) -> Tensor:
    """Poisson(lam) samples; see the module docstring."""
    with name_scope(name, "random_poisson", [lam, shape]):
        shape_t = convert_to_tensor(shape, dtype=dtypes.int32, name="shape")
        lam_t = convert_to_tensor(lam, name="lam")
        return apply("RandomPoissonV2", [shape_t, lam_t],
                     {"dtype": dtypes.as_dtype(dtype), **_seed_attrs(seed)})
