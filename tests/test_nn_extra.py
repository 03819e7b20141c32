"""``tw.nn``'s max pooling with argmax, morphology and TF's Python compositions
(`tensorweave.api.nn_extra`) against loop-based numpy references, with their errors and
numerical gradient checks."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tests.numeric import gradient_error, run, window_geometry

RNG = np.random.default_rng(5)
grad_error = functools.partial(gradient_error, RNG)


def randn(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def windows(shape, window, strides, rates, padding):
    """Yield (i, j, [(di, dj, y, x)] of the window's positions inside the image)."""
    (oh, top), (ow, left) = (window_geometry(shape[1], window[0], strides[0], rates[0], padding),
                             window_geometry(shape[2], window[1], strides[1], rates[1], padding))
    for i, j in itertools.product(range(oh), range(ow)):
        inside = []
        for di, dj in itertools.product(range(window[0]), range(window[1])):
            y, x = i * strides[0] + di * rates[0] - top, j * strides[1] + dj * rates[1] - left
            if 0 <= y < shape[1] and 0 <= x < shape[2]:
                inside.append((di, dj, y, x))
        yield i, j, inside


def out_hw(shape, window, strides, rates, padding):
    return tuple(window_geometry(shape[1 + d], window[d], strides[d], rates[d], padding)[0]
                 for d in (0, 1))


# -- max_pool_with_argmax --------------------------------------------------------------------------


def np_max_pool_with_argmax(x, window, strides, padding, include_batch):
    n, h, w, c = x.shape
    oh, ow = out_hw(x.shape, window, strides, (1, 1), padding)
    out, arg = np.zeros((n, oh, ow, c), x.dtype), np.zeros((n, oh, ow, c), np.int64)
    for i, j, inside in windows(x.shape, window, strides, (1, 1), padding):
        for b, ch in itertools.product(range(n), range(c)):
            best = max(inside, key=lambda p: x[b, p[2], p[3], ch])  # first max on ties
            _, _, y, xx = best
            out[b, i, j, ch] = x[b, y, xx, ch]
            arg[b, i, j, ch] = ((b * h + y) * w + xx) * c + ch if include_batch \
                else (y * w + xx) * c + ch
    return out, arg


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("include_batch", [False, True])
@pytest.mark.parametrize("window,strides", [((2, 2), (2, 2)), ((3, 2), (1, 2))])
def test_max_pool_with_argmax_matches_reference(padding, include_batch, window, strides):
    x = randn(2, 5, 6, 3, dtype=np.float32)
    out, arg = tw.nn.max_pool_with_argmax(x, [1, *window, 1], [1, *strides, 1], padding,
                                          include_batch_in_index=include_batch)
    want_out, want_arg = np_max_pool_with_argmax(x, window, strides, padding, include_batch)
    assert out.shape.as_list() == list(want_out.shape) == arg.shape.as_list()
    got_out, got_arg = run([out, arg])
    assert got_out.dtype == np.float32 and got_arg.dtype == np.int64
    np.testing.assert_array_equal(got_out, want_out)
    np.testing.assert_array_equal(got_arg, want_arg)


def test_max_pool_with_argmax_int_and_targmax():
    x = RNG.integers(-50, 50, (1, 4, 4, 2)).astype(np.int32)
    result = tw.nn.max_pool_with_argmax(x, 2, 2, "VALID", output_dtype=tw.int32)
    got_out, got_arg = run([result.output, result.argmax])
    want_out, want_arg = np_max_pool_with_argmax(x, (2, 2), (2, 2), "VALID", False)
    assert got_out.dtype == np.int32 and got_arg.dtype == np.int32
    np.testing.assert_array_equal(got_out, want_out)
    np.testing.assert_array_equal(got_arg, want_arg)


@pytest.mark.parametrize("include_batch", [False, True])
def test_max_pool_with_argmax_gradients(include_batch):
    def pooled(x):
        return tw.nn.max_pool_with_argmax(x, [1, 2, 3, 1], [1, 2, 2, 1], "SAME",
                                          include_batch_in_index=include_batch).output

    assert grad_error(pooled, [(2, 4, 5, 2)]) < 1e-6
    x = tw.constant(randn(2, 4, 5, 2))
    y = pooled(x)
    # The gradient op's own gradient with respect to the incoming gradient.
    assert grad_error(lambda g: tw.gradients(y, x, grad_ys=g)[0],
                      [tuple(y.shape.as_list())]) < 1e-6


def test_max_pool_with_argmax_errors():
    x = tw.placeholder(tw.float32, [1, 4, 4, 2])
    with pytest.raises(ValueError, match="NHWC"):
        tw.nn.max_pool_with_argmax(x, 2, 2, "VALID", data_format="NCHW")
    with pytest.raises(ValueError, match="depth dimension"):
        tw.nn.max_pool_with_argmax(x, [1, 2, 2, 2], [1, 2, 2, 1], "VALID")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tw.nn.max_pool_with_argmax(x, 5, 1, "VALID")
    image = np.zeros((1, 2, 2, 1), np.float32)
    grad = tw.raw_ops.MaxPoolGradWithArgmax(
        input=image, grad=np.ones((1, 1, 1, 1), np.float32),
        argmax=np.array([[[[7]]]], np.int64), ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1],
        padding="VALID")
    with pytest.raises(errors.InvalidArgumentError, match="Invalid argmax index"):
        run(grad)


# -- dilation2d and erosion2d ----------------------------------------------------------------------


def np_dilation(x, k, strides, rates, padding):
    n, _, _, c = x.shape
    oh, ow = out_hw(x.shape, k.shape[:2], strides, rates, padding)
    out = np.zeros((n, oh, ow, c), x.dtype)
    for i, j, inside in windows(x.shape, k.shape[:2], strides, rates, padding):
        values = np.stack([x[:, y, xx, :] + k[di, dj] for di, dj, y, xx in inside])
        out[:, i, j, :] = values.max(axis=0)
    return out


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides,rates", [((1, 1), (1, 1)), ((2, 1), (1, 1)),
                                           ((1, 1), (2, 2))])
def test_dilation2d_matches_reference(padding, strides, rates):
    x, k = randn(2, 6, 5, 3), randn(2, 3, 3)
    y = tw.nn.dilation2d(x, k, [1, *strides, 1], [1, *rates, 1], padding)
    want = np_dilation(x, k, strides, rates, padding)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_allclose(run(y), want, rtol=1e-12)


def test_dilation2d_integers_and_aliases():
    x = RNG.integers(-9, 9, (1, 4, 4, 2)).astype(np.int32)
    k = RNG.integers(-3, 3, (2, 2, 2)).astype(np.int32)
    got = run(tw.nn.dilation2d(x, filters=k, strides=[1, 1, 1, 1], dilations=[1, 1, 1, 1],
                               padding="SAME"))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np_dilation(x, k, (1, 1), (1, 1), "SAME"))


def test_erosion2d_matches_reference():
    x, k = randn(1, 5, 5, 2), randn(3, 2, 2)
    got = run(tw.nn.erosion2d(x, k, [1, 1, 1, 1], [1, 1, 2, 1], "SAME"))
    want = -np_dilation(-x, k[::-1, ::-1], (1, 1), (1, 2), "SAME")
    np.testing.assert_allclose(got, want, rtol=1e-12)
    err = grad_error(lambda v, w: tw.nn.erosion2d(v, w, [1, 2, 1, 1], [1, 1, 1, 1], "VALID"),
                     [(1, 5, 4, 2), (2, 2, 2)])
    assert err < 1e-6


@pytest.mark.parametrize("padding,strides,rates", [("SAME", (2, 1), (1, 1)),
                                                   ("VALID", (1, 1), (1, 2))])
def test_dilation2d_gradients(padding, strides, rates):
    err = grad_error(lambda x, k: tw.nn.dilation2d(x, k, [1, *strides, 1], [1, *rates, 1],
                                                   padding),
                     [(1, 5, 5, 2), (2, 2, 2)])
    assert err < 1e-6


def test_dilation2d_errors():
    x = tw.placeholder(tw.float32, [1, 4, 4, 2])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.nn.dilation2d(x, np.zeros((2, 2, 3), np.float32), [1] * 4, [1] * 4, "SAME")
    with pytest.raises(ValueError, match="rank 3"):
        tw.nn.dilation2d(x, np.zeros((2, 2, 2, 1), np.float32), [1] * 4, [1] * 4, "SAME")
    with pytest.raises(ValueError, match="Negative dimension size"):
        tw.nn.dilation2d(x, np.zeros((3, 3, 2), np.float32), [1] * 4, [1, 2, 2, 1], "VALID")
    with pytest.raises(ValueError, match="spatial dimensions"):
        tw.nn.dilation2d(x, np.zeros((2, 2, 2), np.float32), [2, 1, 1, 1], [1] * 4, "SAME")


# -- activations -----------------------------------------------------------------------------------


def test_swish_crelu_relu_layer():
    x = randn(3, 4)
    w, b = randn(4, 5), randn(5)
    sw, cr, rl = run([tw.nn.swish(x), tw.nn.crelu(x), tw.nn.relu_layer(x, w, b)])
    np.testing.assert_allclose(sw, x / (1 + np.exp(-x)), rtol=1e-12)
    np.testing.assert_allclose(cr, np.maximum(np.concatenate([x, -x], -1), 0))
    np.testing.assert_allclose(rl, np.maximum(x @ w + b, 0), rtol=1e-12)
    assert tw.nn.crelu(tw.placeholder(tw.float32, [2, 3, 4]), axis=1).shape.as_list() == [2, 6, 4]
    assert grad_error(tw.nn.swish, [(3, 4)]) < 1e-7


# -- moments ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("shift", [None, np.float64(0.5)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sufficient_statistics_and_normalize_moments(shift, keepdims):
    x = randn(3, 4, 5)
    counts, m_ss, v_ss, got_shift = tw.nn.sufficient_statistics(x, [0, 2], shift=shift,
                                                                keepdims=keepdims)
    mean, variance = tw.nn.normalize_moments(counts, m_ss, v_ss, got_shift)
    got = run([counts, m_ss, mean, variance])
    offset = 0.0 if shift is None else shift
    assert got[0] == 15
    np.testing.assert_allclose(got[1], np.sum(x - offset, (0, 2), keepdims=keepdims),
                               rtol=1e-12)
    np.testing.assert_allclose(got[2], x.mean((0, 2), keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(got[3], x.var((0, 2), keepdims=keepdims), rtol=1e-10)


def test_sufficient_statistics_unknown_shape_counts_at_run_time():
    x = tw.placeholder(tw.float32, [None, 3])
    counts, m_ss, v_ss, _ = tw.nn.sufficient_statistics(x, [0])
    value = randn(4, 3, dtype=np.float32)
    got_counts, got_v = run([counts, v_ss], {x: value})
    assert got_counts == 4 and got_counts.dtype == np.float32
    np.testing.assert_allclose(got_v, (value ** 2).sum(0), rtol=1e-5)


@pytest.mark.parametrize("keepdims", [False, True])
def test_weighted_moments(keepdims):
    x, weights = randn(4, 3), RNG.uniform(0.5, 2, (4, 1))
    mean, variance = tw.nn.weighted_moments(x, [0], weights, keepdims=keepdims)
    got_mean, got_var = run([mean, variance])
    full = np.broadcast_to(weights, x.shape)
    want_mean = np.average(x, 0, full)
    want_var = np.average((x - want_mean) ** 2, 0, full)
    if keepdims:
        want_mean, want_var = want_mean[None], want_var[None]
    np.testing.assert_allclose(got_mean, want_mean, rtol=1e-12)
    np.testing.assert_allclose(got_var, want_var, rtol=1e-12)


def test_weighted_moments_half_is_computed_in_float():
    x = randn(5, 2).astype(np.float16)
    mean, variance = tw.nn.weighted_moments(x, 0, np.ones((5, 2), np.float32))
    got_mean, got_var = run([mean, variance])
    assert got_mean.dtype == np.float16 and got_var.dtype == np.float16
    np.testing.assert_allclose(got_mean, x.astype(np.float32).mean(0), rtol=1e-2, atol=1e-3)


# -- losses ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("full", [False, True])
def test_log_poisson_loss(full):
    targets = np.array([0.0, 0.5, 1.0, 2.0, 7.0])
    log_input = randn(5)
    got = run(tw.nn.log_poisson_loss(targets, log_input, compute_full_loss=full))
    want = np.exp(log_input) - log_input * targets
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = targets * np.log(targets) - targets \
                + 0.5 * np.log(2 * math.pi * targets)
        want = want + np.where((targets >= 0) & (targets <= 1), 0, stirling)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="same shape"):
        tw.nn.log_poisson_loss(randn(3), randn(4))


def test_compute_average_loss():
    losses = np.array([1.0, 2.0, 3.0, 6.0], np.float32)
    weights = np.array([1.0, 0.5, 0.0, 2.0], np.float32)
    got = run([tw.nn.compute_average_loss(losses),
               tw.nn.compute_average_loss(losses, sample_weight=weights),
               tw.nn.compute_average_loss(losses, global_batch_size=8)])
    np.testing.assert_allclose(got, [3.0, 14.0 / 4, 12.0 / 8], rtol=1e-6)
    assert got[0].dtype == np.float32
    with pytest.raises(ValueError, match="at least rank 1"):
        tw.nn.compute_average_loss(1.0)


# -- safe_embedding_lookup_sparse ------------------------------------------------------------------


PARAMS = np.arange(15, dtype=np.float64).reshape(5, 3) / 7


def sparse(indices, values, shape, dtype=np.int64):
    return tw.SparseTensor(np.array(indices, np.int64), np.array(values, dtype),
                           np.array(shape, np.int64))


def np_safe_lookup(rows, combiner, default_id):
    """`rows`: per row, [(id, weight)]; applies TF's pruning, then the combiner."""
    out = []
    for row in rows:
        kept = [(i, w) for i, w in row if i >= 0 and (combiner == "sum" or w > 0)]
        if not kept:
            out.append(PARAMS[default_id] if default_id is not None else np.zeros(3))
            continue
        total = sum(w * PARAMS[i] for i, w in kept)
        ws = np.array([w for _, w in kept])
        norm = {"sum": 1.0, "mean": ws.sum(), "sqrtn": np.sqrt((ws ** 2).sum())}[combiner]
        out.append(total / norm)
    return np.array(out)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("default_id", [None, 4])
def test_safe_embedding_lookup_sparse_weighted(combiner, default_id):
    # row 0: a valid id, a negative id; row 1: only a zero-weight id; row 2: empty;
    # row 3: two valid ids, one with negative weight.
    ids = sparse([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], [1, -1, 2, 3, 0], [4, 2])
    weights = sparse([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], [2.0, 1.0, 0.0, 1.5, -1.0],
                     [4, 2], np.float64)
    y = tw.nn.safe_embedding_lookup_sparse(PARAMS, ids, weights, combiner=combiner,
                                           default_id=default_id)
    rows = [[(1, 2.0), (-1, 1.0)], [(2, 0.0)], [], [(3, 1.5), (0, -1.0)]]
    np.testing.assert_allclose(run(y), np_safe_lookup(rows, combiner, default_id), rtol=1e-12)


def test_safe_embedding_lookup_sparse_unweighted_rank3_ids_and_shards():
    ids = sparse([[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 0, 0]], [4, 0, 3, -2], [2, 2, 2])
    shards = [PARAMS[:3], PARAMS[3:]]  # "div" sharding: consecutive rows
    y = tw.nn.safe_embedding_lookup_sparse(shards, ids)
    assert y.shape.as_list() == [2, 2, 3]
    got = run(y)
    rows = [[(4, 1.0)], [(0, 1.0), (3, 1.0)], [(-2, 1.0)], []]
    np.testing.assert_allclose(got, np_safe_lookup(rows, "mean", None).reshape(2, 2, 3),
                               rtol=1e-12)


def test_safe_embedding_lookup_sparse_errors():
    ids = sparse([[0, 0]], [1], [1, 1])
    with pytest.raises(ValueError, match="Missing embedding_weights"):
        tw.nn.safe_embedding_lookup_sparse(None, ids)
    with pytest.raises(ValueError, match="Missing embedding_weights"):
        tw.nn.safe_embedding_lookup_sparse([], ids)
    with pytest.raises(ValueError, match="combiner"):
        tw.nn.safe_embedding_lookup_sparse(PARAMS, ids, combiner="max")
