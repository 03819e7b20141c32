"""Feature crosses: ``tf.sparse.cross`` and ``tf.sparse.cross_hashed`` of TF 1.15 (exposed as
``tw.sparse.cross`` / ``tw.sparse.cross_hashed``).

Contract: `inputs` is a list of 2-D `SparseTensor`s and dense ``[batch, k]`` tensors; the sparse
ones are crossed first, then the dense ones, each in list order. Non-string features are cast
to int64. `sparse_cross` gives a string `SparseTensor` of ``"a_X_b"`` crosses;
`sparse_cross_hashed` gives int64 fingerprints of the crosses (modulo `num_buckets` when it is
positive), keyed by `hash_key` (`DEFAULT_HASH_KEY` when it is None or 0). A non-list `inputs`
or an element that is neither sparse nor a tensor raises `TypeError`, as TF.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import math_ops
from tensorweave.api.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import make_op

__all__: list[str] = []

DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's sparse_ops._DEFAULT_HASH_KEY


def sparse_cross(inputs: list[Any], name: str | None = None) -> SparseTensor:
    """The string crosses of `inputs`' features, joined by ``"_X_"``, per batch row."""
    return _sparse_cross(inputs, hashed_output=False, num_buckets=0, hash_key=None, name=name)


def sparse_cross_hashed(inputs: list[Any], num_buckets: int = 0, hash_key: int | None = None,
                        name: str | None = None) -> SparseTensor:
    """The crosses of `inputs`' features as ``FingerprintCat64`` hashes, per batch row; in
    ``[0, num_buckets)`` when `num_buckets` > 0."""
    return _sparse_cross(inputs, hashed_output=True, num_buckets=num_buckets,
                         hash_key=hash_key, name=name)


def _feature(value: Any) -> Any:
    return value if value.dtype == dtypes.string else math_ops.cast(value, dtypes.int64)


def _sparse_cross(inputs: list[Any], hashed_output: bool, num_buckets: int,
                  hash_key: int | None, name: str | None) -> SparseTensor:
    if not isinstance(inputs, list):
        raise TypeError("Inputs must be a list")
    inputs = [SparseTensor.from_value(i) if isinstance(i, SparseTensorValue) else i
              for i in inputs]
    if not all(isinstance(i, (SparseTensor, Tensor)) for i in inputs):
        raise TypeError("All inputs must be SparseTensors")
    sparse = [i for i in inputs if isinstance(i, SparseTensor)]
    dense = [_feature(i) for i in inputs if not isinstance(i, SparseTensor)]
    values = [_feature(sp.values) for sp in sparse]
    internal_type = (dtypes.string if all(t.dtype == dtypes.string for t in values + dense)
                     else dtypes.int64)
    op = make_op("SparseCross",
                 [[sp.indices for sp in sparse], values, [sp.dense_shape for sp in sparse],
                  dense],
                 attrs={"hashed_output": hashed_output, "num_buckets": num_buckets,
                        "hash_key": hash_key or DEFAULT_HASH_KEY,
                        "out_type": dtypes.int64 if hashed_output else dtypes.string,
                        "internal_type": internal_type},
                 name=name or "SparseCross")
    return SparseTensor(*op.outputs)
