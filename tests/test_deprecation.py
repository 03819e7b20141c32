"""TF1's renamed arguments: `deprecated_argument_lookup` and the API functions that use it."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api.deprecation import deprecated_argument_lookup


@pytest.mark.parametrize(("new", "old", "expected"),
                         [(1, None, 1), (None, 2, 2), (None, None, None), (0, None, 0),
                          (None, 0, 0)])
def test_lookup_returns_the_value_given(new, old, expected) -> None:
    assert deprecated_argument_lookup("axis", new, "dim", old) == expected


def test_lookup_rejects_both_names() -> None:
    with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'dim'"):
        deprecated_argument_lookup("axis", 0, "dim", 1)


def test_api_accepts_either_spelling() -> None:
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    by_new = tf.reduce_sum(x, axis=1, keepdims=True)
    by_old = tf.reduce_sum(x, reduction_indices=1, keep_dims=True)
    with tf.Session() as sess:
        new_value, old_value = sess.run([by_new, by_old])
    np.testing.assert_array_equal(new_value, [[3.0], [12.0]])
    np.testing.assert_array_equal(old_value, new_value)
    assert new_value.dtype == old_value.dtype == np.float32
    with pytest.raises(ValueError, match="Cannot specify both 'keepdims' and 'keep_dims'"):
        tf.reduce_sum(x, keepdims=True, keep_dims=True)
