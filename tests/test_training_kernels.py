"""The fused optimizer kernels (``Apply*``): TF's update formulas, evaluated in TF's order, on
the stored arrays in place (a step allocates only the kernel's scratch arrays), and a value read
before the update keeps its contents."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorweave as tf

F = np.float32
N = 1 << 18
HYPER = {"alpha": 0.1, "lr": 0.01, "momentum": 0.9, "beta1_power": 0.9 ** 3,
         "beta2_power": 0.999 ** 3, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7, "rho": 0.95,
         "l1": 0.001, "l2": 0.02, "l2_shrinkage": 0.01, "lr_power": -0.5}


def _gd(h: dict[str, Any], g: np.ndarray, var: np.ndarray) -> list[np.ndarray]:
    return [var - g * h["alpha"]]


def _momentum(nesterov: bool) -> Callable[..., list[np.ndarray]]:
    def rows(h: dict[str, Any], g: np.ndarray, var: np.ndarray,
             accum: np.ndarray) -> list[np.ndarray]:
        accum = accum * h["momentum"] + g
        if nesterov:
            return [var - (g * h["lr"] + accum * h["momentum"] * h["lr"]), accum]
        return [var - accum * h["lr"], accum]

    return rows


def _adam(nesterov: bool) -> Callable[..., list[np.ndarray]]:
    def rows(h: dict[str, Any], g: np.ndarray, var: np.ndarray, m: np.ndarray,
             v: np.ndarray) -> list[np.ndarray]:
        b1, b2 = h["beta1"], h["beta2"]
        lr_t = h["lr"] * np.sqrt(1 - h["beta2_power"]) / (1 - h["beta1_power"])
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        num = (m * b1 + g * (1 - b1)) * lr_t if nesterov else m * lr_t
        return [var - num / (np.sqrt(v) + h["epsilon"]), m, v]

    return rows


def _adagrad(h: dict[str, Any], g: np.ndarray, var: np.ndarray,
             accum: np.ndarray) -> list[np.ndarray]:
    accum = accum + g * g
    return [var - g * h["lr"] / np.sqrt(accum), accum]


def _rms_prop(h: dict[str, Any], g: np.ndarray, var: np.ndarray, ms: np.ndarray,
              mom: np.ndarray) -> list[np.ndarray]:
    ms = ms + (g * g - ms) * (1 - h["rho"])
    mom = mom * h["momentum"] + g * h["lr"] / np.sqrt(ms + h["epsilon"])
    return [var - mom, ms, mom]


def _centered_rms_prop(h: dict[str, Any], g: np.ndarray, var: np.ndarray, mg: np.ndarray,
                       ms: np.ndarray, mom: np.ndarray) -> list[np.ndarray]:
    mg = mg + (g - mg) * (1 - h["rho"])
    ms = ms + (g * g - ms) * (1 - h["rho"])
    mom = mom * h["momentum"] + g * h["lr"] / np.sqrt(ms - mg * mg + h["epsilon"])
    return [var - mom, mg, ms, mom]


def _adadelta(h: dict[str, Any], g: np.ndarray, var: np.ndarray, accum: np.ndarray,
              accum_update: np.ndarray) -> list[np.ndarray]:
    accum = accum * h["rho"] + g * g * (1 - h["rho"])
    update = np.sqrt(accum_update + h["epsilon"]) * (1 / np.sqrt(accum + h["epsilon"])) * g
    accum_update = accum_update * h["rho"] + update * update * (1 - h["rho"])
    return [var - update * h["lr"], accum, accum_update]


def _ftrl(shrinkage: bool, lr_power: float) -> Callable[..., list[np.ndarray]]:
    def power(x: np.ndarray) -> np.ndarray:
        return np.sqrt(x) if lr_power == -0.5 else np.power(x, F(-lr_power))

    def rows(h: dict[str, Any], g: np.ndarray, var: np.ndarray, accum: np.ndarray,
             linear: np.ndarray) -> list[np.ndarray]:
        g_s = g + 2 * h["l2_shrinkage"] * var if shrinkage else g
        new_accum = accum + g * g
        linear = linear + (g_s - (power(new_accum) - power(accum)) / h["lr"] * var)
        x = np.sign(linear) * h["l1"] - linear
        y = power(new_accum) / h["lr"] + 2 * h["l2"]
        return [np.where(np.abs(linear) > h["l1"], x / y, F(0)), new_accum, linear]

    return rows


FTRL = ("lr", "l1", "l2")
# op, slots, scalar inputs, attrs, numpy reference, scratch arrays of the variable's size
CASES = [
    ("ApplyGradientDescent", (), ("alpha",), {}, _gd, 1),
    ("ApplyMomentum", ("accum",), ("lr", "momentum"), {}, _momentum(False), 1),
    ("ApplyMomentum", ("accum",), ("lr", "momentum"), {"use_nesterov": True},
     _momentum(True), 2),
    ("ApplyAdam", ("m", "v"), ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"),
     {}, _adam(False), 2),
    ("ApplyAdam", ("m", "v"), ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"),
     {"use_nesterov": True}, _adam(True), 2),
    ("ApplyAdagrad", ("accum",), ("lr",), {}, _adagrad, 2),
    ("ApplyRMSProp", ("ms", "mom"), ("lr", "rho", "momentum", "epsilon"), {}, _rms_prop, 2),
    ("ApplyCenteredRMSProp", ("mg", "ms", "mom"), ("lr", "rho", "momentum", "epsilon"), {},
     _centered_rms_prop, 2),
    ("ApplyAdadelta", ("accum", "accum_update"), ("lr", "rho", "epsilon"), {}, _adadelta, 2),
    ("ApplyFtrl", ("accum", "linear"), (*FTRL, "lr_power"), {}, _ftrl(False, -0.5), 6),
    ("ApplyFtrlV2", ("accum", "linear"), (*FTRL, "l2_shrinkage", "lr_power"), {},
     _ftrl(True, -0.5), 6),
]
IDS = [f"{c[0]}{'-nesterov' if c[3] else ''}" for c in CASES]


def _build(op: str, slots: tuple[str, ...], scalars: tuple[str, ...], attrs: dict[str, Any],
           size: int, hyper: dict[str, float] = HYPER) -> tuple[Any, ...]:
    """Variables (var and slots) of positive random floats (a small mean gradient ``mg``, so
    that ``ms - mg**2 > 0``), a fed gradient and the update."""
    rs = np.random.RandomState(0)
    start = [(rs.rand(size) * 0.1 if name == "mg" else rs.rand(size) + 0.5).astype(F)
             for name in ("var", *slots)]
    refs = [tf.Variable(value, name=name) for name, value in zip(("var", *slots), start)]
    grad = tf.placeholder(tf.float32, [size], name="grad")
    inputs = {"delta" if op == "ApplyGradientDescent" else "grad": grad}
    inputs |= {name: tf.constant(F(hyper[name])) for name in scalars}
    update = getattr(tf.raw_ops, op)(
        var=refs[0]._ref(), **{n: r._ref() for n, r in zip(slots, refs[1:])}, **inputs, **attrs)
    return start, refs, grad, update


@pytest.mark.parametrize(("op", "slots", "scalars", "attrs", "reference", "scratch"), CASES,
                         ids=IDS)
def test_update_follows_tf_formula_in_tf_order(op, slots, scalars, attrs, reference,
                                               scratch) -> None:
    _check_formula(op, slots, scalars, attrs, reference, HYPER)


def test_ftrl_with_another_learning_rate_power_uses_powers() -> None:
    hyper = HYPER | {"lr_power": -0.7}
    _check_formula("ApplyFtrlV2", ("accum", "linear"), (*FTRL, "l2_shrinkage", "lr_power"), {},
                   _ftrl(True, -0.7), hyper)


def _check_formula(op: str, slots: tuple[str, ...], scalars: tuple[str, ...],
                   attrs: dict[str, Any], reference: Callable[..., list[np.ndarray]],
                   hyper_values: dict[str, float]) -> None:
    with tf.Graph().as_default():
        start, refs, grad, update = _build(op, slots, scalars, attrs, 1000, hyper_values)
        grads = [np.random.RandomState(k).randn(1000).astype(F) for k in range(3)]
        hyper = {k: F(v) for k, v in hyper_values.items()}
        want = start
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for g in grads:
                new = sess.run(update, {grad: g})
                want = reference(hyper, g, *want)
                np.testing.assert_array_equal(new, want[0])
            for ref, value in zip(refs, want):
                np.testing.assert_array_equal(sess.run(ref), value)


@pytest.mark.parametrize(("op", "slots", "scalars", "attrs", "reference", "scratch"), CASES,
                         ids=IDS)
def test_update_allocates_only_its_scratch_arrays(op, slots, scalars, attrs, reference,
                                                  scratch) -> None:
    with tf.Graph().as_default():
        _, _, grad, update = _build(op, slots, scalars, attrs, N)
        train = tf.group(update)
        feed = {grad: np.ones(N, F)}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):  # the first updates copy the initial values, owned by no one
                sess.run(train, feed)
            tracemalloc.start()
            try:
                sess.run(train, feed)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    # a new variable or slot array would add a whole N * 4 bytes
    assert peak < (scratch + 0.5) * N * 4, peak / (N * 4)


def test_a_value_read_before_the_update_keeps_its_contents() -> None:
    with tf.Graph().as_default():
        var = tf.Variable(np.ones(8, F))
        read = tf.identity(var.value())
        with tf.control_dependencies([read]):
            update = tf.raw_ops.ApplyGradientDescent(var=var._ref(), alpha=tf.constant(F(0.5)),
                                                     delta=tf.constant(np.ones(8, F)))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(3):
                before, after = sess.run([read, update])
                np.testing.assert_array_equal(before, np.full(8, 1 - 0.5 * step, F))
                np.testing.assert_array_equal(after, np.full(8, 1 - 0.5 * (step + 1), F))


@pytest.mark.parametrize("use_resource", [False, True])
def test_a_hyper_parameter_of_unknown_rank_must_be_a_scalar_when_it_runs(use_resource):
    with tf.Graph().as_default():
        var = tf.get_variable("v", initializer=np.ones(3, np.float32), use_resource=use_resource)
        lr = tf.placeholder(tf.float32)  # rank unknown: the shape function cannot refuse it
        dense = tf.train.GradientDescentOptimizer(lr).apply_gradients(
            [(tf.constant(np.ones(3, np.float32)), var)])
        sparse = tf.train.AdagradOptimizer(lr).apply_gradients(
            [(tf.IndexedSlices(tf.constant([1.0]), tf.constant([0])), var)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"alpha is not a scalar: \[3\]"):
                sess.run(dense, {lr: [0.1, 0.1, 0.1]})
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"lr is not a scalar: \[2\]"):
                sess.run(sparse, {lr: [0.1, 0.1]})
            np.testing.assert_array_equal(sess.run(var), np.ones(3))  # left as it was
            sess.run(dense, {lr: 0.5})
            np.testing.assert_allclose(sess.run(var), np.full(3, 0.5))
