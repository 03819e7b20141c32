"""Random ops of the friendly API, and TF's graph-level/op-level seed rule.

Contract: `get_seed` is TF's ``random_seed.get_seed``: with a graph seed (`set_random_seed`) an op
gets ``(graph seed, op seed)``, its op seed defaulting to the graph's last op id, so rebuilding
the same graph reproduces the same numbers; with only an op seed the graph seed is
`DEFAULT_GRAPH_SEED`; with neither, ``(0, 0)`` reaches the op and it seeds at random.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import apply

__all__ = [
    "get_seed", "random_normal", "random_shuffle", "random_uniform", "set_random_seed",
    "truncated_normal",
]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_UNIFORM_DTYPES = frozenset({dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32,
                             dtypes.int64})


def set_random_seed(seed: int | None) -> None:
    """Set the default graph's seed, which every random op created afterwards derives from."""
    get_default_graph().seed = seed


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """The ``(seed, seed2)`` pair a random op created now gets (TF's rule)."""
    graph = get_default_graph()
    if graph.seed is not None:
        if op_seed is None:
            op_seed = graph._last_id
        seeds = (graph.seed % _MAXINT32, op_seed % _MAXINT32)
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, op_seed % _MAXINT32)
    else:
        return None, None
    # (0, 0) asks the kernel for a random seed, which a deterministic request must not mean.
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def _seed_attrs(seed: int | None) -> dict[str, int]:
    seed1, seed2 = get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def _shape_tensor(shape: Any) -> Tensor:
    """TF's ``shape_tensor``: a shape as an int32 (int64 if it needs it) vector tensor."""
    if is_tensor_like(shape) or (isinstance(shape, (list, tuple))
                                 and any(is_tensor_like(d) for d in shape)):
        return convert_to_tensor(shape, name="shape")
    dims = [int(getattr(d, "value", d)) for d in (shape.as_list() if hasattr(shape, "as_list")
                                                  else shape)]
    return convert_to_tensor(dims, dtype=None if dims else dtypes.int32, name="shape")


def _scaled(rnd: Tensor, scale: Tensor, shift: Tensor, name: str) -> Tensor:
    return apply("AddV2", [apply("Mul", [rnd, scale], name="mul"), shift], name=name)


def _normal(op: str, default_name: str, shape: Any, mean: Any, stddev: Any, dtype: Any,
            seed: int | None, name: str | None) -> Tensor:
    """``op * stddev + mean``, `op` drawing standard normal values of `shape`."""
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t = _shape_tensor(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = apply(op, [shape_t], {"dtype": dtype, **_seed_attrs(seed)})
        return _scaled(rnd, stddev_t, mean_t, scope)


def random_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                  seed: int | None = None, name: str | None = None) -> Tensor:
    """Values from a normal distribution: ``RandomStandardNormal * stddev + mean``."""
    return _normal("RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed,
                   name)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0,
                     dtype: Any = dtypes.float32, seed: int | None = None,
                     name: str | None = None) -> Tensor:
    """A normal distribution whose values beyond two standard deviations are re-drawn."""
    return _normal("TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name)


def random_uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = dtypes.float32,
                   seed: int | None = None, name: str | None = None) -> Tensor:
    """Values uniform in ``[minval, maxval)``; integer dtypes need `maxval`."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_DTYPES:
        raise ValueError(f"Invalid dtype {dtype!r}")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t = _shape_tensor(shape)
        min_t = convert_to_tensor(minval, dtype=dtype, name="min")
        max_t = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return apply("RandomUniformInt", [shape_t, min_t, max_t], _seed_attrs(seed),
                         name=scope)
        rnd = apply("RandomUniform", [shape_t], {"dtype": dtype, **_seed_attrs(seed)})
        return _scaled(rnd, apply("Sub", [max_t, min_t], name="sub"), min_t, scope)


def random_shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """`value` with its first dimension randomly permuted."""
    return apply("RandomShuffle", [value], _seed_attrs(seed), name=name or "RandomShuffle")
