"""``tw.gradients``: the reverse sweep, its edge cases, and gradients shipped by plugins."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import plugin_manager
from tests.plugin_dist import install_plugin


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_gradient_of_polynomial() -> None:
    x = tf.placeholder(tf.float32, [3])
    grad = tf.gradients(x * x * x + 2.0 * x, x)[0]
    value = run(grad, {x: [1.0, 2.0, -1.0]})
    np.testing.assert_allclose(value, [5.0, 14.0, 5.0])
    assert value.dtype == np.float32


def test_paths_are_summed_with_add_n() -> None:
    x = tf.constant(3.0)
    grad = tf.gradients(x * x + x + tf.identity(x), x)[0]
    assert run(grad) == 8.0
    assert any(op.type == "AddN" for op in tf.get_default_graph().get_operations())


def test_unconnected_inputs_get_none() -> None:
    x, y = tf.constant(1.0), tf.constant(2.0)
    gx, gy = tf.gradients(x * 2.0, [x, y])
    assert gy is None and run(gx) == 2.0
    assert tf.gradients(x * 2.0, y) == [None]


def test_several_ys_are_summed_and_grad_ys_weight_them() -> None:
    x = tf.constant([1.0, 2.0])
    grads = tf.gradients([x * 3.0, x * x], x, grad_ys=[tf.constant([1.0, 0.0]),
                                                       tf.constant([2.0, 2.0])])
    np.testing.assert_allclose(run(grads[0]), [3.0 + 4.0, 0.0 + 8.0])
    with pytest.raises(ValueError, match="grad_ys"):
        tf.gradients([x, x], x, grad_ys=[x])


def test_gradient_of_x_with_respect_to_itself_is_ones() -> None:
    x = tf.placeholder(tf.float32, [2, 2])
    np.testing.assert_array_equal(run(tf.gradients(x, x)[0], {x: np.zeros((2, 2))}),
                                  np.ones((2, 2)))


def test_gradient_with_respect_to_an_intermediate_tensor() -> None:
    x = tf.placeholder(tf.float32, [])
    h = tf.exp(x)
    grad = tf.gradients(h * h, h)[0]
    assert run(grad, {x: 0.0}) == 2.0


def test_gradient_with_respect_to_variable_counts_every_read() -> None:
    v = tf.Variable(2.0)
    grad = tf.gradients(v * v + v.read_value() * 3.0, v)[0]
    assert run(grad) == 7.0


def test_stop_gradient_and_stop_gradients_argument() -> None:
    a = tf.constant(0.0)
    b = 2.0 * a
    assert run(tf.gradients(a + b, [a, b])) == [3.0, 1.0]
    assert run(tf.gradients(a + b, [a, b], stop_gradients=[a, b])) == [1.0, 1.0]
    assert tf.gradients(tf.stop_gradient(a) * 2.0, a) == [None]
    assert tf.stop_gradient(a).op.type == "StopGradient"


def test_integer_tensors_carry_no_gradient() -> None:
    i = tf.placeholder(tf.int32, [2])
    assert tf.gradients(i * 2, i) == [None]
    x = tf.placeholder(tf.float32, [2])
    assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32), x) == [None]


def test_ops_are_named_under_the_gradients_scope() -> None:
    x = tf.constant(1.0)
    first = tf.gradients(x * x, x)[0]
    second = tf.gradients(x * x, x)[0]
    assert first.name.startswith("gradients/")
    assert second.name.startswith("gradients_1/")


def test_gate_and_colocate_options_give_the_same_values() -> None:
    with tf.device("/cpu:0"):
        x = tf.constant([1.0, 2.0])
        y = x * x
    grad = tf.gradients(y, x, colocate_gradients_with_ops=True, gate_gradients=True)[0]
    np.testing.assert_allclose(run(grad), [2.0, 4.0])
    mul_grads = [op for op in tf.get_default_graph().get_operations()
                 if op.name.startswith("gradients/mul_grad/")]
    assert mul_grads and all("loc:@mul" in op.colocation_groups() for op in mul_grads)


def test_invalid_aggregation_method() -> None:
    x = tf.constant(1.0)
    assert tf.gradients(x * x, x, aggregation_method=tf.AggregationMethod.ADD_N)[0] is not None
    with pytest.raises(ValueError, match="aggregation_method"):
        tf.gradients(x * x, x, aggregation_method=7)


# -- gradients shipped by third-party plugins ----------------------------------------------------

CUBE_OP = '''
import tensorweave as tw
from tensorweave.engine.op_def import REQUIRED


def unchanged(ctx):
    return [ctx.inputs[0]]


def cube_grad(op, grad):
    x = op.inputs[0]
    return [grad * 3.0 * x * x]


@tw.hookimpl
def tensorweave_register_ops(registry):
    registry.op("Cube", ["x:T"], unchanged, attrs={"T": REQUIRED})
    registry.op("CubeViaOpDef", ["x:T"], unchanged, attrs={"T": REQUIRED}, grad=cube_grad)
    registry.op("NoGrad", ["x:T"], unchanged, attrs={"T": REQUIRED})
    registry.op("BadGrad", ["x:T"], unchanged, attrs={"T": REQUIRED})


@tw.hookimpl
def tensorweave_register_kernels(registry):
    for name in ("Cube", "CubeViaOpDef"):
        registry.add(name, "CPU", lambda ctx, x: x * x * x)
    for name in ("NoGrad", "BadGrad"):
        registry.add(name, "CPU", lambda ctx, x: x)


@tw.hookimpl
def tensorweave_register_gradients(registry):
    registry.add("Cube", cube_grad)
    registry.add("BadGrad", lambda op, grad: [grad, grad])
'''


@pytest.fixture
def cube_plugin(tmp_path, monkeypatch):
    monkeypatch.delenv("TENSORWEAVE_DISABLE_PLUGINS", raising=False)
    install_plugin(tmp_path, monkeypatch, "tw_cube", CUBE_OP)
    yield
    monkeypatch.undo()
    plugin_manager.reset()


@pytest.mark.parametrize("op", ["Cube", "CubeViaOpDef"])
def test_plugin_ships_the_gradient_of_its_op(cube_plugin, op: str) -> None:
    x = tf.placeholder(tf.float64, [3])
    y = getattr(tf.raw_ops, op)(x=x)
    assert tf.test.compute_gradient_error(x, [3], y, [3], delta=1e-6) < 1e-6
    np.testing.assert_allclose(run(tf.gradients(y, x)[0], {x: [1.0, 2.0, 3.0]}), [3, 12, 27])


def test_op_without_gradient_raises_lookup_error(cube_plugin) -> None:
    x = tf.constant([1.0])
    with pytest.raises(LookupError, match="No gradient defined for operation.*NoGrad"):
        tf.gradients(tf.raw_ops.NoGrad(x=x), x)


def test_gradient_with_wrong_arity_is_rejected(cube_plugin) -> None:
    x = tf.constant([1.0])
    with pytest.raises(ValueError, match="Num gradients 2 generated for op"):
        tf.gradients(tf.raw_ops.BadGrad(x=x), x)


def test_unconnected_gradients_none_or_zero() -> None:
    # gradients_test.testUnconnectedGradients*
    x = tf.constant([1.0, 2.0])
    y = tf.constant(2.0) * 3.0
    v = tf.Variable([[1.0, 2.0]])
    assert tf.gradients(y, x) == [None]
    assert tf.gradients(y, x, unconnected_gradients="none") == [None]
    zeros = tf.gradients(y, [x, v], unconnected_gradients=tf.UnconnectedGradients.ZERO)
    got = run(zeros)
    np.testing.assert_array_equal(got[0], [0.0, 0.0])
    np.testing.assert_array_equal(got[1], [[0.0, 0.0]])
    connected = tf.gradients(x * 2.0, x, unconnected_gradients="zero")
    np.testing.assert_array_equal(run(connected)[0], [2.0, 2.0])
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'nonsense'"):
        tf.gradients(y, x, unconnected_gradients="nonsense")


def test_colocated_gradients_are_placed_as_tf_places_them() -> None:
    # gradients_test.testColocateGradients*: each op's gradient ops are colocated with it,
    # ignoring outer colocation and device scopes; a sum is colocated with its first summand.
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(2.0, name="w")
    with tf.device("/job:worker/task:0"):
        y = tf.multiply(w, tf.constant(3.0), name="y")
        z = tf.add(y, y, name="z")
    before = len(tf.get_default_graph().get_operations())
    with tf.device("/job:worker/task:1"):
        grad = tf.gradients(z, [w], colocate_gradients_with_ops=True)[0]
    built = tf.get_default_graph().get_operations()[before:]
    placed = {op.name: (op.type, op.device, op.get_attr("_class")) for op in built}
    worker = "/job:worker/task:0"
    assert placed["gradients/Shape"] == ("Const", worker, ["loc:@z"])
    assert placed["gradients/grad_ys_0/Const"] == ("Const", worker, ["loc:@z"])
    assert placed["gradients/grad_ys_0"] == ("Fill", worker, ["loc:@z"])
    assert placed["gradients/AddN"] == ("AddN", worker, ["loc:@z"])
    assert all(v[1:] == (worker, ["loc:@y"]) for k, v in placed.items() if "y_grad" in k)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(w.initializer)
        assert sess.run(grad) == 6.0


def test_gradients_of_complex_ys_need_grad_ys() -> None:
    y = tf.constant([1 + 1j]) * 2.0
    with pytest.raises(TypeError, match="Gradients of complex tensors must set grad_ys"):
        tf.gradients(y, y.op.inputs[0])
