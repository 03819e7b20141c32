"""`map_fn`, `foldl`, `foldr` and `scan` against numpy: nested inputs and outputs, initializers,
reverse scans, static shapes, a variable created inside `fn`, gradients and construction
errors."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

X = np.arange(6, dtype=np.float32).reshape(3, 2)


def run(*fetches: object, feed: dict | None = None) -> list:
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        return sess.run(list(fetches), feed)


def test_map_fn_applies_fn_per_element_with_static_shape() -> None:
    out = tw.map_fn(lambda e: e * 2.0 + 1.0, tw.constant(X))
    assert out.shape.as_list() == [3, 2] and out.dtype == tw.float32
    assert out.name.startswith("map/")
    np.testing.assert_array_equal(run(out)[0], X * 2 + 1)


def test_map_fn_nested_elems_and_dtype() -> None:
    lengths = tw.constant([1.0, 2.0, 3.0])
    total, count = tw.map_fn(lambda e: (tw.reduce_sum(e[0]) * e[1], tw.cast(e[1], tw.int32)),
                             (tw.constant(X), lengths), dtype=(tw.float32, tw.int32))
    assert count.dtype == tw.int32
    t, c = run(total, count)
    np.testing.assert_array_equal(t, X.sum(1) * [1, 2, 3])
    np.testing.assert_array_equal(c, [1, 2, 3])
    assert c.dtype == np.int32


def test_map_fn_with_unknown_length() -> None:
    x = tw.placeholder(tw.float32, [None, 2])
    out = tw.map_fn(lambda e: tw.reduce_max(e), x)
    assert out.shape.as_list() == [None]
    np.testing.assert_array_equal(run(out, feed={x: X})[0], X.max(1))


def test_map_fn_creates_a_variable_once_outside_the_loop() -> None:
    def fn(e: tw.Tensor) -> tw.Tensor:
        w = tw.get_variable("w", [2], initializer=tw.constant_initializer([1.0, -1.0]))
        return e * w

    out = tw.map_fn(fn, tw.constant(X))
    assert [v.name for v in tw.global_variables()] == ["w:0"]
    np.testing.assert_array_equal(run(out)[0], X * [1, -1])


def test_foldl_foldr_with_and_without_initializer() -> None:
    v = tw.constant([1.0, 2.0, 3.0])
    folds = [
        tw.foldl(lambda a, e: a * 10 + e, v),
        tw.foldr(lambda a, e: a * 10 + e, v),
        tw.foldl(lambda a, e: a - e, v, initializer=tw.constant(100.0)),
        tw.foldr(lambda a, e: (a[0] + e, a[1] * e), v, initializer=(tw.constant(0.0),
                                                                      tw.constant(1.0))),
    ]
    left, right, init, pair = run(*folds)
    assert (left, right, init) == (123.0, 321.0, 94.0)
    assert pair == (6.0, 6.0)


def test_scan_forward_reverse_and_nested() -> None:
    x = tw.constant(X)
    forward = tw.scan(lambda a, e: a + e, x)
    backward = tw.scan(lambda a, e: a + e, x, initializer=tw.zeros([2]), reverse=True)
    nested = tw.scan(lambda a, e: (a[0] + e, a[1] * 2.0), x,
                     initializer=(tw.zeros([2]), tw.constant(1.0)))
    assert forward.shape.as_list() == [3, 2]
    f, b, (n0, n1) = run(forward, backward, nested)
    np.testing.assert_array_equal(f, np.cumsum(X, 0))
    np.testing.assert_array_equal(b, np.cumsum(X[::-1], 0)[::-1])
    np.testing.assert_array_equal(n0, np.cumsum(X, 0))
    np.testing.assert_array_equal(n1, [2.0, 4.0, 8.0])


def test_gradient_through_scan_and_map_fn() -> None:
    x = tw.placeholder(tw.float32, [3, 2])
    loss = tw.reduce_sum(tw.square(tw.scan(lambda a, e: a + e, x))) + \
        tw.reduce_sum(tw.map_fn(lambda e: tw.sin(e), x))
    (g,) = tw.gradients(loss, [x])
    cum = np.cumsum(X, 0)
    expected = 2 * np.cumsum(cum[::-1], 0)[::-1] + np.cos(X)
    np.testing.assert_allclose(run(g, feed={x: X})[0], expected, rtol=1e-5)


def test_construction_errors() -> None:
    with pytest.raises(TypeError, match="fn must be callable"):
        tw.map_fn(3, tw.constant(X))
    with pytest.raises(ValueError, match="1\\+ dimensional"):
        tw.map_fn(lambda e: e, tw.constant(1.0))
    with pytest.raises(ValueError, match="same nested structure"):
        tw.map_fn(lambda e: (e, e), tw.constant(X))
    with pytest.raises(TypeError, match="fn must be callable"):
        tw.scan(None, tw.constant(X))
