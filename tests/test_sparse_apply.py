"""Sparse updates: the ``SparseApply*`` ops against numpy, and the optimizers' `IndexedSlices`
path (only the touched rows change, repeated indices are summed, Adam as TF1)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf

V0 = np.arange(15.0).reshape(5, 3) / 10 - 0.5
WEIGHTS = np.array([[1.0], [2.0], [-1.5]])


def run_update(op_name: str, slots: dict[str, float], hyper: dict[str, float],
               grad: np.ndarray, indices: list[int], dtype=tf.float64, **attrs):
    """One raw sparse update; returns the new variable and slots."""
    var = tf.Variable(V0.astype(dtype.np_type), name="var")
    refs = {k: tf.Variable(np.full(V0.shape, v, dtype.np_type), name=k)
            for k, v in slots.items()}
    out = getattr(tf.raw_ops, op_name)(
        var=var._ref(), **{k: r._ref() for k, r in refs.items()},
        **{k: tf.constant(h, dtype) for k, h in hyper.items()},
        grad=tf.constant(grad.astype(dtype.np_type)), indices=indices, **attrs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        new = sess.run(out)
        return new, sess.run(var), [sess.run(r) for r in refs.values()]


def sequential(rows_fn, slots: dict[str, float], grad: np.ndarray, indices: list[int]):
    """numpy reference: TF's kernel loop, one index at a time."""
    var = V0.copy()
    state = [np.full(V0.shape, v) for v in slots.values()]
    for i, index in enumerate(indices):
        new = rows_fn(var[index], *(s[index] for s in state), grad[i])
        var[index] = new[0]
        for s, n in zip(state, new[1:]):
            s[index] = n
    return var, state


GRAD = np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5], [-2.0, 1.0, 0.1]])


@pytest.mark.parametrize("indices", [[3, 0, 1], [4, 1, 4]])
@pytest.mark.parametrize("nesterov", [False, True])
def test_sparse_apply_momentum(indices: list[int], nesterov: bool) -> None:
    lr, mu = 0.1, 0.9

    def rows(v, a, g):
        a = a * mu + g
        return (v - (g * lr + a * mu * lr) if nesterov else v - lr * a), a

    new, var, (accum,) = run_update("SparseApplyMomentum", {"accum": 0.2},
                                    {"lr": lr, "momentum": mu}, GRAD, indices,
                                    use_nesterov=nesterov)
    ref_var, (ref_accum,) = sequential(rows, {"accum": 0.2}, GRAD, indices)
    np.testing.assert_allclose(var, ref_var)
    np.testing.assert_allclose(new, ref_var)
    np.testing.assert_allclose(accum, ref_accum)


@pytest.mark.parametrize("update_slots", [True, False])
def test_sparse_apply_adagrad_replays_repeated_indices_in_order(update_slots: bool) -> None:
    indices = [2, 2, 0]

    def rows(v, a, g):
        a = a + g * g if update_slots else a
        return v - 0.5 * g / np.sqrt(a), a

    _, var, (accum,) = run_update("SparseApplyAdagrad", {"accum": 0.1}, {"lr": 0.5}, GRAD, indices,
                                  update_slots=update_slots)
    ref_var, (ref_accum,) = sequential(rows, {"accum": 0.1}, GRAD, indices)
    np.testing.assert_allclose(var, ref_var)
    np.testing.assert_allclose(accum, ref_accum)
    np.testing.assert_array_equal(var[[1, 3, 4]], V0[[1, 3, 4]])


def test_sparse_apply_rms_prop_and_centered() -> None:
    lr, rho, mu, eps = 0.01, 0.9, 0.5, 1e-6
    indices = [1, 3, 1]

    def rows(v, ms, mom, g):
        ms = ms + (g * g - ms) * (1 - rho)
        mom = mom * mu + lr * g / np.sqrt(ms + eps)
        return v - mom, ms, mom

    def centered_rows(v, mg, ms, mom, g):
        mg = mg + (g - mg) * (1 - rho)
        ms = ms + (g * g - ms) * (1 - rho)
        mom = mom * mu + lr * g / np.sqrt(ms - mg * mg + eps)
        return v - mom, mg, ms, mom

    hyper = {"lr": lr, "rho": rho, "momentum": mu, "epsilon": eps}
    slots = {"ms": 1.0, "mom": 0.0}
    _, var, got = run_update("SparseApplyRMSProp", slots, hyper, GRAD, indices)
    ref_var, ref = sequential(rows, slots, GRAD, indices)
    np.testing.assert_allclose(var, ref_var)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b)
    tf.reset_default_graph()
    slots = {"mg": 0.0, "ms": 1.0, "mom": 0.0}
    _, var, got = run_update("SparseApplyCenteredRMSProp", slots, hyper, GRAD,
                             indices)
    ref_var, ref = sequential(centered_rows, slots, GRAD, indices)
    np.testing.assert_allclose(var, ref_var)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b)


def test_sparse_apply_keeps_float32_and_takes_int64_indices() -> None:
    new, var, _ = run_update("SparseApplyAdagrad", {"accum": 0.1}, {"lr": 0.5}, GRAD,
                             tf.constant([0, 1, 2], tf.int64), dtype=tf.float32)
    assert new.dtype == var.dtype == np.float32


def adagrad_op(var, accum, lr, grad, indices):
    return tf.raw_ops.SparseApplyAdagrad(var=var._ref(), accum=accum._ref(), lr=lr, grad=grad,
                                         indices=indices)


def test_sparse_apply_shape_errors_at_construction() -> None:
    var, accum = tf.Variable(V0), tf.Variable(V0)
    with pytest.raises(ValueError, match="rank 1"):
        adagrad_op(var, accum, 0.1, GRAD, [[0, 1, 2]])
    with pytest.raises(ValueError, match="must be equal"):
        adagrad_op(var, accum, 0.1, GRAD, [0, 1])
    with pytest.raises(ValueError, match="all dimensions but the first"):
        adagrad_op(var, accum, 0.1, GRAD[:, :2], [0, 1, 2])
    with pytest.raises(ValueError, match="lr must be a scalar"):
        adagrad_op(var, accum, [0.1], GRAD, [0, 1, 2])
    with pytest.raises(TypeError):
        adagrad_op(var, accum, 0.1, GRAD, [0.0, 1.0, 2.0])


def test_sparse_apply_run_time_errors_leave_the_variable_unchanged() -> None:
    var, accum = tf.Variable(V0), tf.Variable(np.ones_like(V0))
    index = tf.placeholder(tf.int32, [None])
    grad = tf.placeholder(tf.float64, [None, 3])
    update = adagrad_op(var, accum, 0.1, grad, index)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Index 5 at offset 1 in indices is out of range"):
            sess.run(update, {index: [0, 5, 1], grad: GRAD})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="grad must be the same size as indices in the first dimension"):
            sess.run(update, {index: [0, 1], grad: GRAD})
        np.testing.assert_array_equal(sess.run(var), V0)
        np.testing.assert_array_equal(sess.run(accum), np.ones_like(V0))


# -- the optimizers' sparse path ------------------------------------------------------------------


def train(make_optimizer, id_steps: list[list[int]], sparse: bool = True,
          dtype=tf.float64) -> list[np.ndarray]:
    """The table after each step of minimizing ``sum(WEIGHTS * rows**2)`` over the looked-up
    rows; `sparse=False` densifies the gradient first."""
    table = tf.Variable(V0.astype(dtype.np_type), name="table")
    ids = tf.placeholder(tf.int32, [3])
    rows = tf.nn.embedding_lookup(table, ids)
    loss = tf.reduce_sum(rows * rows * WEIGHTS.astype(dtype.np_type))
    optimizer = make_optimizer()
    pairs = optimizer.compute_gradients(loss, [table])
    assert isinstance(pairs[0][0], tf.IndexedSlices)
    if not sparse:
        pairs = [(tf.convert_to_tensor(g), v) for g, v in pairs]
    train_op = optimizer.apply_gradients(pairs)
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step_ids in id_steps:
            sess.run(train_op, {ids: step_ids})
            out.append(sess.run(table))
    return out


def summed_grad(var: np.ndarray, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The loss's dense gradient (repeated ids summed) and the mask of touched rows."""
    grad = np.zeros_like(var)
    np.add.at(grad, ids, 2 * WEIGHTS * var[ids])
    touched = np.zeros(len(var), bool)
    touched[ids] = True
    return grad, touched


IDS = [[3, 0, 3], [1, 1, 4], [3, 2, 3]]


def reference(update, slots: dict[str, float]) -> list[np.ndarray]:
    """The dense formula `update(var, slots, grad)` applied to the touched rows only."""
    var = V0.copy()
    state = {k: np.full_like(V0, v) for k, v in slots.items()}
    out = []
    for ids in IDS:
        grad, touched = summed_grad(var, ids)
        new_var, new_state = update(var.copy(), {k: s.copy() for k, s in state.items()}, grad)
        var[touched] = new_var[touched]
        for k in state:
            state[k][touched] = new_state[k][touched]
        out.append(var.copy())
    return out


def sgd(var, state, g):
    return var - 0.1 * g, state


def momentum(var, state, g):
    state["momentum"] = 0.9 * state["momentum"] + g
    return var - 0.1 * state["momentum"], state


def adagrad(var, state, g):
    state["accumulator"] = state["accumulator"] + g * g
    return var - 0.1 * g / np.sqrt(state["accumulator"]), state


def rmsprop(var, state, g):
    state["rms"] = 0.9 * state["rms"] + 0.1 * g * g
    state["momentum"] = 0.5 * state["momentum"] + 0.1 * g / np.sqrt(state["rms"] + 1e-10)
    return var - state["momentum"], state


CASES = {
    "sgd": (lambda: tf.train.GradientDescentOptimizer(0.1), sgd, {}),
    "momentum": (lambda: tf.train.MomentumOptimizer(0.1, 0.9), momentum, {"momentum": 0.0}),
    "adagrad": (lambda: tf.train.AdagradOptimizer(0.1), adagrad, {"accumulator": 0.1}),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5), rmsprop,
                {"rms": 1.0, "momentum": 0.0}),
}


@pytest.mark.parametrize("name", CASES)
def test_sparse_update_moves_only_the_touched_rows_with_repeated_ids_summed(name: str) -> None:
    make, update, slots = CASES[name]
    got = train(make, IDS)
    for step, (g, ref) in enumerate(zip(got, reference(update, slots))):
        np.testing.assert_allclose(g, ref, rtol=1e-10, err_msg=f"step {step}")
    np.testing.assert_array_equal(got[0][[1, 2, 4]], V0[[1, 2, 4]])


@pytest.mark.parametrize("name", ["momentum", "rmsprop"])
def test_sparse_and_dense_differ_where_slots_would_move_untouched_rows(name: str) -> None:
    make, _, _ = CASES[name]
    sparse, dense = train(make, IDS)[1], train(make, IDS, sparse=False)[1]
    np.testing.assert_array_equal(sparse[[0, 3]], train(make, IDS[:1])[0][[0, 3]])
    assert not np.allclose(dense[[0, 3]], sparse[[0, 3]])  # dense momentum kept moving them


def test_centered_rmsprop_sparse_matches_dense_on_the_rows_it_touches() -> None:
    def make():
        return tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True)

    sparse, dense = train(make, IDS[:1]), train(make, IDS[:1], sparse=False)
    np.testing.assert_allclose(sparse[0], dense[0], rtol=1e-12)


def test_adam_sparse_is_tf1s_every_row_decays() -> None:
    """TF1's sparse Adam decays m and v in every row, so it equals the dense update: a row
    touched in step 1 only keeps moving in steps 2 and 3."""
    def make():
        return tf.train.AdamOptimizer(0.1)

    sparse, dense = train(make, IDS), train(make, IDS, sparse=False)
    for s, d in zip(sparse, dense):
        np.testing.assert_allclose(s, d, rtol=1e-10)
    assert not np.allclose(sparse[1][0], sparse[0][0])  # row 0: touched in step 1 only
    np.testing.assert_array_equal(sparse[0][[1, 2, 4]], V0[[1, 2, 4]])  # m = 0 there


def test_a_subclass_with_its_own_dense_rule_gets_densified_gradients() -> None:
    # Keras SGD redefines _apply_dense (plain ApplyGradientDescent without momentum).
    sparse = train(lambda: tf.keras.optimizers.SGD(0.1), IDS)
    # Keras keeps its learning rate in a float32 variable (as TF 1.15's OptimizerV2 does)
    np.testing.assert_allclose(sparse[-1], reference(sgd, {})[-1], rtol=1e-7)


def test_gate_graph_and_global_step_keep_the_sparse_path() -> None:
    table = tf.Variable(V0)
    step = tf.train.get_or_create_global_step()
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    loss = tf.reduce_sum(tf.nn.embedding_lookup(table, [2]))
    pairs = optimizer.compute_gradients(loss, [table],
                                        gate_gradients=tf.train.Optimizer.GATE_GRAPH)
    assert isinstance(pairs[0][0], tf.IndexedSlices)
    train_op = optimizer.apply_gradients(pairs, global_step=step)
    ops = {op.type for op in tf.get_default_graph().get_operations()}
    assert "ScatterSub" in ops and "ApplyGradientDescent" not in ops
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op)
        expected = V0.copy()
        expected[2] -= 0.1
        np.testing.assert_allclose(sess.run(table), expected)
        assert sess.run(step) == 1


def test_apply_gradients_refuses_what_is_not_a_gradient() -> None:
    table = tf.Variable(V0)
    with pytest.raises(TypeError, match="Tensor or IndexedSlices, or None"):
        tf.train.GradientDescentOptimizer(0.1).apply_gradients([(object(), table)])


def test_clipped_sparse_gradients_train_an_embedding_whose_loss_falls() -> None:
    rng = np.random.default_rng(0)
    table = tf.Variable(rng.normal(size=(50, 4)).astype(np.float32))
    ids = tf.placeholder(tf.int32, [8])
    targets = tf.placeholder(tf.float32, [8])
    logits = tf.reduce_sum(tf.nn.embedding_lookup(table, ids), axis=1)
    loss = tf.reduce_mean(tf.square(logits - targets))
    optimizer = tf.train.AdagradOptimizer(0.5)
    grads, variables = zip(*optimizer.compute_gradients(loss))
    clipped, _ = tf.clip_by_global_norm(list(grads), 5.0)
    assert isinstance(clipped[0], tf.IndexedSlices)
    train_op = optimizer.apply_gradients(zip(clipped, variables))
    labels = np.sin(np.arange(50)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        batch = rng.integers(0, 50, size=8)
        first = sess.run(loss, {ids: batch, targets: labels[batch]})
        for _ in range(150):
            batch = rng.integers(0, 50, size=8)
            sess.run(train_op, {ids: batch, targets: labels[batch]})
        every = np.arange(48).reshape(6, 8)
        last = np.mean([sess.run(loss, {ids: b, targets: labels[b]}) for b in every])
    assert last < 0.1 * first
