"""`tw.TensorArray`: writes, reads, stacking and scattering against numpy, carried through
``while_loop`` and ``cond``, dynamic size, run-time range errors, construction errors, and
gradients through writes and reads against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw


def run(*fetches: object, feed: dict | None = None) -> list:
    with tw.Session() as sess:
        return sess.run(list(fetches), feed)


def test_write_read_stack_and_static_shapes() -> None:
    ta = tw.TensorArray(tw.float32, size=3)
    assert ta.dtype == tw.float32 and ta.element_shape.dims is None
    ta = ta.write(0, [1.0, 2.0]).write(2, np.array([5.0, 6.0], np.float32))
    assert ta.element_shape.as_list() == [2]
    stacked, second, size = ta.stack(), ta.read(2), ta.size()
    assert stacked.shape.as_list() == [3, 2] and second.shape.as_list() == [2]
    s, r, n = run(stacked, second, size)
    np.testing.assert_array_equal(s, [[1, 2], [0, 0], [5, 6]])
    assert s.dtype == np.float32 and n == 3 and size.dtype == tw.int32
    np.testing.assert_array_equal(r, [5, 6])


def test_unstack_gather_concat_identity_and_close() -> None:
    value = np.arange(12, dtype=np.int32).reshape(3, 2, 2)
    ta = tw.TensorArray(tw.int32, size=3, element_shape=[2, 2]).unstack(value)
    g, c, i, s = run(ta.gather([2, 0]), ta.concat(), ta.identity().stack(), ta.stack())
    np.testing.assert_array_equal(g, value[[2, 0]])
    np.testing.assert_array_equal(c, value.reshape(6, 2))
    np.testing.assert_array_equal(i, value)
    np.testing.assert_array_equal(s, value)
    assert g.dtype == np.int32
    assert ta.close().type == "NoOp"


def test_scatter_sets_the_given_rows() -> None:
    ta = tw.TensorArray(tw.float32, size=4, element_shape=[2])
    ta = ta.scatter([3, 1], [[1.0, 1.0], [2.0, 2.0]])
    (s,) = run(ta.stack())
    np.testing.assert_array_equal(s, [[0, 0], [2, 2], [0, 0], [1, 1]])


def test_carried_through_while_loop() -> None:
    x = tw.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    source = tw.TensorArray(tw.float32, size=4).unstack(x)

    def body(i: tw.Tensor, ta: tw.TensorArray) -> tuple:
        return i + 1, ta.write(i, source.read(i) * 2.0)

    _, out = tw.while_loop(lambda i, ta: i < 4, body, [0, tw.TensorArray(tw.float32, size=4)])
    assert isinstance(out, tw.TensorArray)
    stacked = out.stack()
    assert stacked.shape.as_list() == [4, 2]  # the element shape inferred inside the loop
    (s,) = run(stacked)
    np.testing.assert_array_equal(s, np.arange(8).reshape(4, 2) * 2)


def test_dynamic_size_grows_in_a_loop() -> None:
    ta = tw.TensorArray(tw.float32, size=0, dynamic_size=True)

    def body(i: tw.Tensor, ta: tw.TensorArray) -> tuple:
        return i + 1, ta.write(i, tw.fill([3], tw.cast(i, tw.float32)))

    _, out = tw.while_loop(lambda i, ta: i < 5, body, [0, ta])
    s, n = run(out.stack(), out.size())
    np.testing.assert_array_equal(s, np.repeat(np.arange(5, dtype=np.float32)[:, None], 3, 1))
    assert n == 5


def test_in_cond_branches() -> None:
    p = tw.placeholder(tw.bool, [])
    ta = tw.TensorArray(tw.float32, size=2, element_shape=[])
    out = tw.cond(p, lambda: ta.write(0, 1.0), lambda: ta.write(1, 2.0))
    assert isinstance(out, tw.TensorArray)
    stacked = out.stack()
    np.testing.assert_array_equal(run(stacked, feed={p: True})[0], [1, 0])
    np.testing.assert_array_equal(run(stacked, feed={p: False})[0], [0, 2])


@pytest.mark.parametrize("index", [3, -1])
def test_out_of_range_read_and_write_fail_at_run_time(index: int) -> None:
    i = tw.placeholder(tw.int32, [])
    ta = tw.TensorArray(tw.float32, size=3, element_shape=[2])
    with pytest.raises(tw.errors.InvalidArgumentError):
        run(ta.read(i), feed={i: index})
    with pytest.raises(tw.errors.InvalidArgumentError):
        run(ta.write(i, [1.0, 2.0]).stack(), feed={i: index})


def test_reading_an_array_never_written_fails_at_run_time() -> None:
    ta = tw.TensorArray(tw.float32, size=2)
    with pytest.raises(tw.errors.InvalidArgumentError):
        run(ta.read(0))


def test_construction_errors() -> None:
    with pytest.raises(ValueError, match="Size must be provided"):
        tw.TensorArray(tw.float32)
    ta = tw.TensorArray(tw.float32, size=2, element_shape=[3])
    with pytest.raises(tw.errors.InvalidArgumentError, match="TensorArray dtype is float32"):
        ta.write(0, tw.constant([1, 2, 3]))
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        ta.write(0, [1.0, 2.0])


def test_gradients_through_write_read_stack_unstack() -> None:
    rng = np.random.RandomState(0)
    x0 = rng.randn(3, 2).astype(np.float64)
    w0 = rng.randn(2).astype(np.float64)
    x = tw.placeholder(tw.float64, [3, 2])
    w = tw.placeholder(tw.float64, [2])
    source = tw.TensorArray(tw.float64, size=3).unstack(x)

    def body(i: tw.Tensor, ta: tw.TensorArray) -> tuple:
        return i + 1, ta.write(i, tw.tanh(source.read(i) * w) + ta.read(tw.maximum(i - 1, 0)))

    start = tw.TensorArray(tw.float64, size=3).write(0, tw.zeros([2], tw.float64))
    _, out = tw.while_loop(lambda i, ta: i < 3, body, [0, start])
    loss = tw.reduce_sum(tw.square(out.stack()))
    gx, gw = tw.gradients(loss, [x, w])

    def f(xv: np.ndarray, wv: np.ndarray) -> float:
        rows, prev = [], np.zeros(2)
        for i in range(3):
            prev = np.tanh(xv[i] * wv) + prev
            rows.append(prev)
        return float(np.sum(np.square(rows)))

    eps = 1e-6
    num_x = np.zeros_like(x0)
    for idx in np.ndindex(x0.shape):
        d = np.zeros_like(x0)
        d[idx] = eps
        num_x[idx] = (f(x0 + d, w0) - f(x0 - d, w0)) / (2 * eps)
    num_w = np.array([(f(x0, w0 + d) - f(x0, w0 - d)) / (2 * eps) for d in np.eye(2) * eps])
    got_x, got_w, value = run(gx, gw, loss, feed={x: x0, w: w0})
    assert value == pytest.approx(f(x0, w0))
    np.testing.assert_allclose(got_x, num_x, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got_w, num_w, rtol=1e-5, atol=1e-7)
