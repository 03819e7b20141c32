"""tf.io.SparseFeature in parse_example / parse_single_example: TF's documented example,
sorting, shared keys, helper keys dropped, and TF's construction errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.train import Example, Feature, Features, FloatList, Int64List


def _example(**lists) -> bytes:
    feature = {k: Feature(int64_list=Int64List(value=v)) if isinstance(v[0], int)
               else Feature(float_list=FloatList(value=v)) for k, v in lists.items()}
    return Example(features=Features(feature=feature)).SerializeToString()


def _run(t):
    with tw.Session() as sess:
        return sess.run(t)


def test_tf_documented_two_index_example():
    serialized = [_example(val=[0.5, -1.0], ix0=[3, 20], ix1=[2, 0])]
    with tw.Graph().as_default():
        parsed = tw.io.parse_example(serialized, {"x": tw.io.SparseFeature(
            index_key=["ix0", "ix1"], value_key="val", dtype=tw.float32, size=[100, 3])})
        assert set(parsed) == {"x"}
        sp = _run(parsed["x"])
    assert sp.indices.tolist() == [[0, 3, 2], [0, 20, 0]]
    np.testing.assert_allclose(sp.values, [0.5, -1.0])
    assert sp.dense_shape.tolist() == [1, 100, 3] and sp.values.dtype == np.float32


def test_single_index_is_sorted_and_batched():
    serialized = [_example(idx=[5, 1], v=[1.5, 2.5]), _example(idx=[0], v=[7.0])]
    with tw.Graph().as_default():
        features = {"s": tw.io.SparseFeature("idx", "v", tw.float32, 6),
                    "idx": tw.io.VarLenFeature(tw.int64)}
        parsed = tw.parse_example(serialized, features)
        assert set(parsed) == {"s", "idx"}  # a helper key asked for itself stays
        sp, idx = _run([parsed["s"], parsed["idx"]])
    assert sp.indices.tolist() == [[0, 1], [0, 5], [1, 0]]
    np.testing.assert_allclose(sp.values, [2.5, 1.5, 7.0])
    assert sp.dense_shape.tolist() == [2, 6]
    assert idx.values.tolist() == [5, 1, 0]


def test_parse_single_example():
    with tw.Graph().as_default():
        parsed = tw.parse_single_example(
            _example(idx=[4, 2], v=[1, 2]),
            {"s": tw.io.SparseFeature("idx", "v", tw.int64, 5, already_sorted=False)})
        sp = _run(parsed["s"])
    assert sp.indices.tolist() == [[2], [4]] and sp.values.tolist() == [2, 1]
    assert sp.dense_shape.tolist() == [5] and sp.values.dtype == np.int64


def test_conflicts_and_missing_fields_raise_value_error():
    serialized = [_example(idx=[1], v=[1.0])]
    with tw.Graph().as_default():
        with pytest.raises(ValueError, match="Conflicting type"):
            tw.parse_example(serialized, {"s": tw.io.SparseFeature("idx", "v", tw.float32, 3),
                                          "v": tw.io.VarLenFeature(tw.int64)})
        with pytest.raises(ValueError, match="Conflicting type"):
            tw.parse_example(serialized, {"s": tw.io.SparseFeature("idx", "v", tw.float32, 3),
                                          "t": tw.io.SparseFeature("v", "idx", tw.int64, 3)})
        with pytest.raises(ValueError, match="must not intersect"):
            tw.parse_example(serialized, {
                "s": tw.io.SparseFeature("idx", "v", tw.float32, 3),
                "idx": tw.io.FixedLenFeature([1], tw.int64)})
        with pytest.raises(ValueError, match="Missing index_key"):
            tw.parse_example(serialized, {"s": tw.io.SparseFeature("", "v", tw.float32, 3)})
        with pytest.raises(ValueError, match="Missing value_key"):
            tw.parse_example(serialized, {"s": tw.io.SparseFeature("idx", "", tw.float32, 3)})
