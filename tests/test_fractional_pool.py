"""FractionalMaxPool / FractionalAvgPool and their gradients (tf.nn.fractional_*_pool):
pooling sequences, a numpy reference over the returned sequences, seeding, gradient checks,
TF's documented overlapping example and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.plugins.kernels.fractional_pool import pooling_sequence


def _reference(x, rows, cols, overlapping, reduce):
    out = np.empty((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]), x.dtype)
    extra = 1 if overlapping else 0
    for i in range(len(rows) - 1):
        for j in range(len(cols) - 1):
            window = x[:, rows[i]:rows[i + 1] + extra, cols[j]:cols[j + 1] + extra]
            out[:, i, j] = reduce(window, axis=(1, 2))
    return out


@pytest.mark.parametrize("size, out", [(10, 7), (9, 3), (17, 5), (5, 2), (6, 6)])
@pytest.mark.parametrize("pseudo", [False, True])
def test_pooling_sequences_cover_the_input_in_steps_of_k_or_k_plus_1(size, out, pseudo):
    gen = np.random.default_rng(3)
    for _ in range(20):
        seq = pooling_sequence(size, out, pseudo, gen)
        steps = np.diff(seq)
        assert seq[0] == 0 and seq[-1] == size and len(seq) == out + 1
        assert set(steps.tolist()) <= {size // out, size // out + 1}


@pytest.mark.parametrize("pool, reduce", [(tw.nn.fractional_max_pool, np.max),
                                          (tw.nn.fractional_avg_pool, np.mean)])
@pytest.mark.parametrize("pseudo, overlapping", [(False, False), (True, True), (False, True)])
def test_pool_matches_the_reference_over_its_sequences(pool, reduce, pseudo, overlapping):
    x = np.random.default_rng(4).normal(size=(2, 11, 9, 3)).astype(np.float32)
    with tw.Graph().as_default():
        out, rows, cols = pool(x, [1.0, 1.44, 1.73, 1.0], pseudo_random=pseudo,
                               overlapping=overlapping, seed=1, seed2=2)
        assert out.shape.as_list() == [2, 7, 5, 3] and out.dtype == tw.float32
        assert rows.dtype == cols.dtype == tw.int64
        assert rows.shape.as_list() == [8] and cols.shape.as_list() == [6]
        with tw.Session() as sess:
            got, r, c = sess.run([out, rows, cols])
    np.testing.assert_allclose(got, _reference(x, r, c, overlapping, reduce), rtol=1e-6)


def test_integer_average_truncates_like_tf():
    x = np.arange(2 * 4 * 4).reshape(1, 4, 4, 2).astype(np.int32)
    with tw.Graph().as_default(), tw.Session() as sess:
        out, rows, cols = sess.run(tw.nn.fractional_avg_pool(x, [1, 2, 2, 1]))
    assert rows.tolist() == [0, 2, 4] and out.dtype == np.int32
    np.testing.assert_array_equal(out, _reference(x, rows, cols, False, np.mean).astype(np.int32))


def test_seeds_and_deterministic():
    x = np.random.default_rng(5).normal(size=(1, 50, 50, 1)).astype(np.float32)
    ratio = [1, 1.37, 1.21, 1]
    with tw.Graph().as_default():
        a = tw.nn.fractional_max_pool(x, ratio, seed=7, seed2=3)[1]
        b = tw.nn.fractional_max_pool(x, ratio, seed=7, seed2=3)[1]
        fixed = tw.nn.fractional_max_pool(x, ratio, deterministic=True, seed=9)[1]
        with tw.Session() as sess:
            first_a, first_b = sess.run([a, b])
            runs = [sess.run(a).tolist() for _ in range(5)]
            fixed_runs = [sess.run(fixed).tolist() for _ in range(3)]
    assert first_a.tolist() == first_b.tolist()  # same seeds, same stream
    assert len({tuple(r) for r in runs}) > 1  # a new draw each run
    assert fixed_runs[0] == fixed_runs[1] == fixed_runs[2]


@pytest.mark.parametrize("pool", [tw.nn.fractional_max_pool, tw.nn.fractional_avg_pool])
@pytest.mark.parametrize("overlapping", [False, True])
def test_gradients(pool, overlapping):
    x_value = np.random.default_rng(6).permutation(2 * 7 * 6 * 2).reshape(2, 7, 6, 2) / 10.0
    with tw.Graph().as_default():
        x = tw.constant(x_value)
        y = pool(x, [1, 1.5, 1.4, 1], overlapping=overlapping, deterministic=True, seed=4)[0]
        with tw.Session():
            err = tw.test.compute_gradient_error(x, [2, 7, 6, 2], y, y.shape.as_list(),
                                                 x_init_value=x_value)
    assert err < 1e-6


def test_max_grad_follows_tf_overlapping_example():
    # TF's docstring: values [20, 5, 16, 3, 7] with sequence [0, 2, 4], overlapping, pool to
    # [20, 16]; 16 (index 2) is in both windows but only the second one's maximum.
    value = np.array([20, 5, 16, 3, 7], np.float32).reshape(1, 1, 5, 1)
    with tw.Graph().as_default(), tw.Session() as sess:
        grad = tw.raw_ops.FractionalMaxPoolGrad(
            orig_input=value, orig_output=np.array([[[[20], [16]]]], np.float32),
            out_backprop=np.array([[[[1], [10]]]], np.float32),
            row_pooling_sequence=np.array([0, 1], np.int64),
            col_pooling_sequence=np.array([0, 2, 4], np.int64), overlapping=True)
        avg = tw.raw_ops.FractionalAvgPoolGrad(
            orig_input_tensor_shape=np.array([1, 1, 5, 1], np.int64),
            out_backprop=np.array([[[[3], [6]]]], np.float32),
            row_pooling_sequence=np.array([0, 1], np.int64),
            col_pooling_sequence=np.array([0, 2, 4], np.int64), overlapping=True)
        got, got_avg = sess.run([grad, avg])
    assert got.ravel().tolist() == [1, 0, 10, 0, 0]
    np.testing.assert_allclose(got_avg.ravel(), [1, 1, 3, 2, 2])


def test_errors():
    with tw.Graph().as_default():
        x = np.zeros((1, 4, 4, 1), np.float32)
        with pytest.raises(ValueError, match="Only pooling on height and width"):
            tw.nn.fractional_max_pool(x, [2, 2, 2, 1])
        with pytest.raises(ValueError, match="cannot be smaller than 1"):
            tw.nn.fractional_avg_pool(x, [1, 0.5, 2, 1])
        with pytest.raises(ValueError):
            tw.nn.fractional_max_pool(np.zeros((4, 4), np.float32), [1, 2, 2, 1])
        with pytest.raises(TypeError):
            tw.nn.fractional_max_pool(np.zeros((1, 4, 4, 1), np.uint8), [1, 2, 2, 1])
        p = tw.placeholder(tw.float32, [1, None, 4, 1])
        out = tw.nn.fractional_max_pool(p, [1, 2, 2, 1])[0]
        with tw.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                                 match="output_size must be larger than 0"):
            sess.run(out, {p: np.zeros((1, 1, 4, 1))})
