"""tw.keras.constraints: each projection against numpy, `get`/`serialize`, and layers whose
``*_constraint`` (objects and names) the optimizer applies after every update."""

import numpy as np
import pytest

import tensorweave as tw
from tensorweave import keras
from tensorweave.keras import constraints, layers
from tests.keras_support import fresh_graph, run  # noqa: F401 - the fixture

W = np.array([[3.0, -0.2, 0.0], [4.0, 0.1, -1.0]], np.float32)
EPS = 1e-7


def col_norms(w, axis=0):
    return np.sqrt((w ** 2).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("constraint, expect", [
    (constraints.MaxNorm(2.0), W * np.clip(col_norms(W), 0, 2) / (EPS + col_norms(W))),
    (constraints.MaxNorm(1.0, axis=1),
     W * np.clip(col_norms(W, 1), 0, 1) / (EPS + col_norms(W, 1))),
    (constraints.NonNeg(), np.maximum(W, 0)),
    (constraints.UnitNorm(), W / (EPS + col_norms(W))),
    (constraints.MinMaxNorm(0.5, 1.0, rate=0.5),
     W * (0.5 * np.clip(col_norms(W), 0.5, 1.0) + 0.5 * col_norms(W)) / (EPS + col_norms(W))),
    (constraints.Constraint(), W),
])
def test_projections_match_numpy(constraint, expect):
    value = run(tw.convert_to_tensor(constraint(tw.constant(W))))
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, expect, rtol=1e-6, atol=1e-7)


def test_get_serialize_and_deserialize():
    assert constraints.get(None) is None
    assert isinstance(constraints.get("non_neg"), constraints.NonNeg)
    assert isinstance(constraints.get("max_norm"), constraints.MaxNorm)
    assert isinstance(constraints.get("UnitNorm"), constraints.UnitNorm)
    config = constraints.serialize(constraints.MinMaxNorm(0.1, 2.0, 0.5, axis=1))
    assert config == {"class_name": "MinMaxNorm",
                      "config": {"min_value": 0.1, "max_value": 2.0, "rate": 0.5, "axis": 1}}
    restored = constraints.get(config)
    assert isinstance(restored, constraints.MinMaxNorm) and restored.get_config() == \
        config["config"]

    def fn(w):
        return w

    assert constraints.get(fn) is fn
    with pytest.raises(ValueError, match="Unknown constraint: bogus"):
        constraints.get("bogus")
    with pytest.raises(ValueError, match="Could not interpret constraint identifier: 3"):
        constraints.get(3)


def test_layer_constraints_hold_after_training():
    model = keras.Sequential([layers.Dense(3, input_shape=(4,), kernel_constraint="non_neg",
                                           bias_constraint=constraints.MaxNorm(0.1),
                                           kernel_initializer="ones")])
    model.compile(keras.optimizers.SGD(0.5), "mse")
    x = np.random.RandomState(0).rand(16, 4).astype(np.float32)
    y = -5.0 * np.ones((16, 3), np.float32)  # pulls the kernel negative, the bias far away
    before, _ = model.get_weights()
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    kernel, bias = model.get_weights()
    assert not np.allclose(kernel, before)
    assert kernel.min() >= 0.0 and (kernel == 0).any()
    np.testing.assert_allclose(np.linalg.norm(bias), 0.1, rtol=1e-5)


def test_one_sgd_step_then_the_projection_matches_numpy():
    w0 = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)
    w = tw.get_variable("w", initializer=w0, constraint=constraints.UnitNorm())
    loss = tw.reduce_sum(w * tw.constant([[1.0, 2.0], [3.0, 4.0]]))
    step = tw.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        sess.run(step)
        updated = w0 - 0.1 * np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
        np.testing.assert_allclose(sess.run(w), updated / (EPS + col_norms(updated)),
                                   rtol=1e-6)
