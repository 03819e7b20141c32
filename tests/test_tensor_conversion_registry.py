"""tf.register_tensor_conversion_function: TF's priority order, as_ref, NotImplemented and
the errors of a bad registration or a bad conversion result."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.graph import tensor_conversion_registry as registry


@pytest.fixture(autouse=True)
def _clean_registry():
    saved = list(registry._registry)
    yield
    registry._registry[:] = saved


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


def _point_to_tensor(value, dtype=None, name=None, as_ref=False):
    return tf.constant([value.x, value.y], dtype=dtype, name=name or "Point")


def test_registered_type_converts_in_ops_and_convert_to_tensor():
    tf.register_tensor_conversion_function(Point, _point_to_tensor)
    with tf.Graph().as_default():
        t = tf.convert_to_tensor(Point(1.0, 2.0))
        assert t.dtype == tf.float32 and t.shape.as_list() == [2]
        s = tf.add(tf.constant([10.0, 20.0]), Point(1.0, 2.0))
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(s), [11.0, 22.0])
            assert sess.run(tf.convert_to_tensor(Point(3, 4), dtype=tf.int64)).dtype == np.int64


def test_smaller_priority_runs_first_then_registration_order():
    calls = []

    def make(tag, result=True):
        def fn(value, dtype=None, name=None, as_ref=False):
            calls.append(tag)
            return tf.constant(float(tag), dtype=dtype) if result else NotImplemented
        return fn

    tf.register_tensor_conversion_function(Point, make(3), priority=100)
    tf.register_tensor_conversion_function(Point, make(1, result=False), priority=10)
    tf.register_tensor_conversion_function(Point, make(2, result=False), priority=10)
    with tf.Graph().as_default(), tf.Session() as sess:
        assert sess.run(tf.convert_to_tensor(Point(0, 0))) == 3.0
    assert calls == [1, 2, 3]


def test_builtin_conversion_wins_at_its_own_priority():
    class Boxed(list):
        pass

    tf.register_tensor_conversion_function(Boxed, lambda v, **kw: tf.constant(-1.0), 150)
    with tf.Graph().as_default(), tf.Session() as sess:
        np.testing.assert_allclose(sess.run(tf.convert_to_tensor(Boxed([1.0, 2.0]))), [1, 2])
    tf.register_tensor_conversion_function(Boxed, lambda v, **kw: tf.constant(-1.0), 50)
    with tf.Graph().as_default(), tf.Session() as sess:
        assert sess.run(tf.convert_to_tensor(Boxed([1.0, 2.0]))) == -1.0


def test_as_ref_and_name_and_preferred_dtype_reach_the_function():
    seen = {}

    def fn(value, dtype=None, name=None, as_ref=False):
        seen.setdefault("calls", []).append((dtype, name, as_ref))
        if dtype is not None and dtype != tf.float32:
            raise TypeError("only float32")
        return tf.constant([value.x, value.y], dtype=tf.float32)

    tf.register_tensor_conversion_function(Point, fn)
    with tf.Graph().as_default():
        t = tf.convert_to_tensor(Point(1, 2), name="p", preferred_dtype=tf.int32, as_ref=True)
    assert t.dtype == tf.float32
    assert seen["calls"] == [(tf.int32, "p", True), (None, "p", True)]


def test_preferred_dtype_result_must_match():
    tf.register_tensor_conversion_function(
        Point, lambda v, dtype=None, name=None, as_ref=False: tf.constant(1.0))
    with tf.Graph().as_default(), pytest.raises(TypeError, match="preferred dtype"):
        tf.convert_to_tensor(Point(1, 2), preferred_dtype=tf.int32)


def test_bad_results_raise_runtime_error():
    tf.register_tensor_conversion_function(Point, lambda v, **kw: [1.0])
    with tf.Graph().as_default(), pytest.raises(RuntimeError, match="returned non-Tensor"):
        tf.convert_to_tensor(Point(1, 2))
    registry._registry.clear()
    tf.register_tensor_conversion_function(Point, lambda v, **kw: tf.constant(1))
    with tf.Graph().as_default(), pytest.raises(RuntimeError, match="incompatible dtype"):
        tf.convert_to_tensor(Point(1, 2), dtype=tf.float32)


@pytest.mark.parametrize("base_type, func, match", [
    (int, _point_to_tensor, "Python numeric types"),
    (np.ndarray, _point_to_tensor, "Python numeric types"),
    ((Point, np.float32), _point_to_tensor, "Python numeric types"),
    ("Point", _point_to_tensor, "base_type must be a type"),
    (Point, 3, "conversion_func must be callable"),
])
def test_bad_registration_raises_type_error(base_type, func, match):
    with pytest.raises(TypeError, match=match):
        tf.register_tensor_conversion_function(base_type, func)


def test_numbers_and_arrays_never_consult_the_registry():
    tf.register_tensor_conversion_function(object, lambda v, **kw: tf.constant("no"), 0)
    with tf.Graph().as_default():
        assert tf.convert_to_tensor(3).dtype == tf.int32
        assert tf.convert_to_tensor(np.zeros(2, np.float64)).dtype == tf.float64
