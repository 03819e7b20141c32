"""Resource variables: the ops (`plugins/standard_ops/resource_variables.py`, their kernels in
`plugins/kernels/resource_variables.py`) and `ResourceVariable` with its switches
(`core/api/resource_variable_ops.py`), with gradients, optimizers and checkpoints."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api.resource_variable_ops import ResourceVariable
from tensorweave.engine.graph.op_builder import apply, make_op

INIT = np.arange(8, dtype=np.float32).reshape(4, 2)


@pytest.fixture(autouse=True)
def graph() -> tf.Graph:
    tf.disable_resource_variables()
    with tf.Graph().as_default() as g:
        yield g
    tf.disable_resource_variables()


def handle(name: str = "v", dtype: tf.DType = tf.float32, shape: list[int] | None = None,
           **attrs: object) -> tf.Tensor:
    shape = [4, 2] if shape is None else shape
    return apply("VarHandleOp", [], {"dtype": dtype, "shape": tf.TensorShape(shape), **attrs},
                 name=name)


def read(h: tf.Tensor, dtype: tf.DType = tf.float32) -> tf.Tensor:
    return apply("ReadVariableOp", [h], {"dtype": dtype})


# -- the ops ------------------------------------------------------------------------------------

def test_handle_is_a_scalar_resource_that_knows_its_variable() -> None:
    h = handle()
    assert h.dtype == tf.resource and h.shape == tf.TensorShape([])
    assert read(h).shape == tf.TensorShape([4, 2]) and read(h).dtype == tf.float32
    gathered = apply("ResourceGather", [h, tf.placeholder(tf.int32, [None, 3])],
                     {"dtype": tf.float32})
    assert gathered.shape.as_list() == [None, 3, 2]
    assert tf.identity(h)._handle == h._handle  # an Identity keeps the handle data
    assert tf.as_dtype("resource") is tf.resource and not tf.resource.is_string


def test_assign_read_and_updates() -> None:
    h = handle()
    ops = [make_op("AssignVariableOp", [h, INIT], {}),
           make_op("AssignAddVariableOp", [h, np.ones((4, 2), np.float32)], {}),
           make_op("AssignSubVariableOp", [h, np.full((4, 2), 3, np.float32)], {})]
    initialized = apply("VarIsInitializedOp", [h])
    shape = apply("VariableShape", [h], {"out_type": tf.int64})
    with tf.Session() as sess:
        assert not sess.run(initialized)
        sess.run(ops[0])
        assert sess.run(initialized)
        np.testing.assert_array_equal(sess.run(read(h)), INIT)
        sess.run(ops[1])
        sess.run(ops[2])
        np.testing.assert_array_equal(sess.run(read(h)), INIT - 2)
        value = sess.run(shape)
        assert value.tolist() == [4, 2] and value.dtype == np.int64


@pytest.mark.parametrize("op, combine", [
    ("ResourceScatterUpdate", lambda a, i, u: a.__setitem__(i, u)),
    ("ResourceScatterAdd", np.add.at), ("ResourceScatterSub", np.subtract.at),
    ("ResourceScatterMul", np.multiply.at), ("ResourceScatterDiv", np.divide.at),
    ("ResourceScatterMin", np.minimum.at), ("ResourceScatterMax", np.maximum.at),
])
def test_scatters_match_numpy(op: str, combine: object) -> None:
    h = handle()
    indices = np.array([3, 0, 3] if op != "ResourceScatterUpdate" else [3, 0])
    updates = np.linspace(-2, 5, 2 * len(indices), dtype=np.float32).reshape(-1, 2)
    init = make_op("AssignVariableOp", [h, INIT + 1], {})
    scatter = make_op(op, [h, indices, updates], {})
    assert scatter.outputs == []
    expected = INIT + 1
    combine(expected, indices, updates)
    with tf.Session() as sess:
        sess.run(init)
        sess.run(scatter)
        np.testing.assert_allclose(sess.run(read(h)), expected, rtol=1e-6)


def test_gather_and_its_errors() -> None:
    h = handle()
    ids = tf.placeholder(tf.int32, [None])
    gathered = apply("ResourceGather", [h, ids], {"dtype": tf.float32})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Error while reading resource variable v"):
            sess.run(gathered, {ids: [0]})
        sess.run(make_op("AssignVariableOp", [h, INIT], {}))
        np.testing.assert_array_equal(sess.run(gathered, {ids: [2, 0, 2]}), INIT[[2, 0, 2]])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 4"):
            sess.run(gathered, {ids: [0, 4]})


def test_dtype_and_shape_mismatches() -> None:
    h = handle()
    with pytest.raises(TypeError, match="variable of dtype float32 as int32"):
        read(h, tf.int32)
    with pytest.raises(ValueError, match="incompatible"):
        make_op("AssignVariableOp", [h, np.zeros((3, 2), np.float32)], {})
    # A second handle to the same shared variable with another dtype fails when it runs.
    other = handle("w", tf.int32, shared_name="v")
    init = make_op("AssignVariableOp", [h, INIT], {})
    with tf.Session() as sess:
        sess.run(init)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="variable v of dtype float32 as int32") as info:
            sess.run(read(other, tf.int32))
        assert info.value.node_def.name == "w"


def test_validate_shape_and_reshaping_assignments() -> None:
    h = apply("VarHandleOp", [], {"dtype": tf.float32, "shape": tf.TensorShape(None)}, name="v")
    value = tf.placeholder(tf.float32)
    loose = make_op("AssignVariableOp", [h, value], {})
    strict = make_op("AssignVariableOp", [h, value], {"validate_shape": True})
    with tf.Session() as sess:
        sess.run(loose, {value: np.ones(3)})
        sess.run(loose, {value: np.ones((2, 2))})  # without validate_shape the shape may change
        assert sess.run(read(h)).shape == (2, 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match="shapes of both tensors"):
            sess.run(strict, {value: np.ones(5)})


def test_destroy_resource_op() -> None:
    h = handle()
    destroy = make_op("DestroyResourceOp", [h], {"ignore_lookup_error": False})
    with tf.Session() as sess:
        sess.run(make_op("AssignVariableOp", [h, INIT], {}))
        sess.run(destroy)
        # the next run of the handle makes a new, empty variable
        assert not sess.run(apply("VarIsInitializedOp", [h]))


def test_resource_apply_matches_the_ref_update() -> None:
    grad = np.full((4, 2), 0.5, np.float32)
    values = {}
    for kind in ("ref", "resource"):
        with tf.Graph().as_default():
            if kind == "ref":
                var = tf.Variable(INIT, name="v")
                accum = tf.Variable(np.full((4, 2), 0.1, np.float32), name="a")
                update = apply("ApplyAdagrad", [var._ref(), accum._ref(), np.float32(0.3), grad])
                sparse = apply("SparseApplyAdagrad", [var._ref(), accum._ref(),
                                                      np.float32(0.3), grad[:2], [3, 1]])
            else:
                var = ResourceVariable(INIT, name="v")
                accum = ResourceVariable(np.full((4, 2), 0.1, np.float32), name="a")
                update = make_op("ResourceApplyAdagrad",
                                 [var.handle, accum.handle, np.float32(0.3), grad], {})
                sparse = make_op("ResourceSparseApplyAdagrad",
                                 [var.handle, accum.handle, np.float32(0.3), grad[:2], [3, 1]],
                                 {})
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(update)
                sess.run(sparse)
                values[kind] = sess.run([var, accum])
    for ref, res in zip(values["ref"], values["resource"]):
        np.testing.assert_array_equal(ref, res)


def test_resource_apply_checks_shapes_through_the_handle() -> None:
    h = handle()
    with pytest.raises(ValueError, match="Shapes of var"):
        make_op("ResourceApplyGradientDescent", [h, np.float32(0.1), np.ones(3, np.float32)],
                {})


# -- ResourceVariable ---------------------------------------------------------------------------

def test_resource_variable_builds_tf_1_15s_ops(graph: tf.Graph) -> None:
    v = ResourceVariable(INIT, name="v")
    assert isinstance(v, tf.Variable)
    assert v.name == "v:0" and v.op.type == "VarHandleOp"
    assert v.op.get_attr("shared_name") == "v"
    assert v.initializer.name == "v/Assign" and v.initializer.type == "AssignVariableOp"
    assert v._as_graph_element().name == "v/Read/ReadVariableOp:0"
    assert graph.get_operation_by_name("v/IsInitialized/VarIsInitializedOp")
    assert v.shape == tf.TensorShape([4, 2]) and v.dtype == tf.float32
    assert repr(v) == "<tf.Variable 'v:0' shape=(4, 2) dtype=float32>"
    assert v in tf.global_variables() and v in tf.trainable_variables()


def test_the_ways_to_ask_for_one() -> None:
    assert isinstance(tf.Variable(1.0, use_resource=True), ResourceVariable)
    assert type(tf.Variable(1.0)) is tf.Variable
    assert isinstance(tf.get_variable("a", [2], use_resource=True), ResourceVariable)
    with tf.variable_scope("s", use_resource=True):
        assert isinstance(tf.get_variable("b", [2]), ResourceVariable)
        assert type(tf.get_variable("c", [2], use_resource=False)) is tf.Variable
    assert not tf.resource_variables_enabled()
    tf.enable_resource_variables()
    assert tf.resource_variables_enabled()
    assert isinstance(tf.Variable(1.0), ResourceVariable)
    assert isinstance(tf.get_variable("d", [2]), ResourceVariable)
    assert type(tf.Variable(1.0, use_resource=False)) is tf.Variable
    tf.disable_resource_variables()
    assert type(tf.get_variable("e", [2])) is tf.Variable


def test_reads_are_ordered_by_control_dependencies() -> None:
    v = ResourceVariable(1.0, name="v")
    assign = v.assign(5.0, read_value=False)
    with tf.control_dependencies([assign]):
        after = v + 0.0
    added = v.assign_add(2.0)  # returns a read made after the update
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(after) == 5.0
        assert sess.run(added) == 7.0
        assert sess.run(tf.assign_sub(v, 3.0)) == 4.0
        assert sess.run(tf.assign(v, 9.0)) == 9.0
        assert sess.run(tf.is_variable_initialized(v))
        v.load(2.5, sess)
        assert v.eval(sess) == 2.5


def test_scatter_methods_and_state_ops_dispatch() -> None:
    v = ResourceVariable(INIT, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        out = sess.run(tf.scatter_add(v, [1, 1], np.ones((2, 2), np.float32)))
        np.testing.assert_array_equal(out[1], INIT[1] + 2)
        out = sess.run(v.scatter_update([0], [[-1.0, -2.0]]))
        np.testing.assert_array_equal(out[0], [-1, -2])
        out = sess.run(tf.scatter_nd_update(v, [[3, 1]], [7.0]))
        assert out[3, 1] == 7.0
        out = sess.run(v.scatter_nd_add([[2], [2]], np.ones((2, 2), np.float32)))
        np.testing.assert_array_equal(out[2], INIT[2] + 2)
        out = sess.run(tf.scatter_nd_sub(v, [[2, 0]], [5.0]))
        assert out[2, 0] == INIT[2, 0] - 3
    assert {op.type for op in tf.get_default_graph().get_operations()} >= {
        "ResourceScatterAdd", "ResourceScatterUpdate", "ResourceScatterNdUpdate",
        "ResourceScatterNdAdd", "ResourceScatterNdSub"}
    with pytest.raises(ValueError, match="must be indices.shape"):
        v.scatter_nd_update([[0]], np.ones((3,), np.float32))


def test_gradients_sum_reads_and_gathers() -> None:
    v = ResourceVariable(INIT, name="v")
    rows = tf.gather(v, [2, 0, 2])
    assert rows.op.type == "ResourceGather"
    (sparse,) = tf.gradients(tf.reduce_sum(rows), [v])
    assert isinstance(sparse, tf.IndexedSlices)
    (dense,) = tf.gradients(tf.reduce_sum(v * v) + tf.reduce_sum(rows), [v])
    with tf.Session() as sess:
        sess.run(v.initializer)
        values, indices = sess.run([sparse.values, sparse.indices])
        assert indices.tolist() == [2, 0, 2] and values.tolist() == [[1, 1]] * 3
        expected = 2 * INIT
        np.add.at(expected, [2, 0, 2], 1.0)
        np.testing.assert_array_equal(sess.run(dense), expected)


def build_model(use_resource: bool, optimizer: tf.train.Optimizer) -> tuple:
    w = tf.get_variable("w", initializer=tf.constant([[0.5], [-0.25]]), use_resource=use_resource)
    emb = tf.get_variable("emb", initializer=INIT, use_resource=use_resource)
    step = tf.get_variable("step", initializer=tf.constant(0, tf.int64), trainable=False,
                           use_resource=use_resource)
    h = tf.constant([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]) + tf.gather(emb, [0, 2, 2])
    loss = tf.reduce_mean(tf.square(tf.matmul(h, w) - 1.0))
    return optimizer.minimize(loss, global_step=step), [w, emb, step, loss]


OPTIMIZERS = {
    "sgd": lambda: tf.train.GradientDescentOptimizer(0.05),
    "momentum": lambda: tf.train.MomentumOptimizer(0.05, 0.9),
    "nesterov": lambda: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adam": lambda: tf.train.AdamOptimizer(0.05),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5),
    "centered": lambda: tf.train.RMSPropOptimizer(0.01, centered=True),
    "adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda: tf.train.FtrlOptimizer(0.1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizers_train_resource_variables_as_ref_ones(name: str) -> None:
    results, op_types = {}, {}
    for use_resource in (False, True):
        with tf.Graph().as_default() as g:
            train, fetches = build_model(use_resource, OPTIMIZERS[name]())
            op_types[use_resource] = {op.type for op in g.get_operations()}
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(3):
                    sess.run(train)
                results[use_resource] = sess.run(fetches)
            if use_resource:
                assert all(isinstance(v, ResourceVariable) for v in tf.global_variables())
    for ref, res in zip(results[False], results[True]):
        np.testing.assert_allclose(res, ref, rtol=1e-6)
    assert results[True][2] == 3
    assert not op_types[True] & {"VariableV2", "Assign", "AssignAdd", "ApplyAdam",
                                 "ApplyGradientDescent", "SparseApplyAdagrad"}
    fused = {t for t in op_types[False] if "Apply" in t}
    assert {f"Resource{t}" for t in fused} <= op_types[True]


def test_saver_keys_are_the_ref_variables(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "ckpt")
    v = ResourceVariable(INIT, name="scope/v")
    tf.Variable(3.0, name="r")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(v.assign(INIT * 2))
        saver.save(sess, path)
    assert tf.train.list_variables(path) == [("r", []), ("scope/v", [4, 2])]
    with tf.Graph().as_default():
        ref = tf.get_variable("scope/v", shape=[4, 2])  # restored into a ref variable
        res = tf.Variable(0.0, name="r", use_resource=True)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            np.testing.assert_array_equal(sess.run(ref), INIT * 2)
            assert sess.run(res) == 3.0


def test_saved_model_round_trip(tmp_path: object) -> None:
    export = os.path.join(str(tmp_path), "model")
    v = ResourceVariable(INIT, name="v")
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    tf.identity(tf.matmul(x, v, transpose_b=True), name="y")
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(v.assign(INIT + 1))
        builder = tf.saved_model.builder.SavedModelBuilder(export)
        builder.add_meta_graph_and_variables(sess, ["serve"])
        builder.save()
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export)
        (loaded,) = tf.global_variables()
        assert isinstance(loaded, ResourceVariable) and loaded.name == "v:0"
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": [[1.0, 0.0]]}),
                                      [(INIT + 1)[:, 0]])
        assert sess.run(loaded.assign_add(np.ones((4, 2), np.float32)))[0, 0] == 2.0


def test_control_flow_reads_and_differentiates_resource_variables() -> None:
    v = ResourceVariable(2.0, name="v")
    flag = tf.placeholder(tf.bool)
    branch = tf.cond(flag, lambda: v * v, lambda: v * 3.0)
    (grad,) = tf.gradients(branch, [v])
    _, total = tf.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc + v), [0, 0.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run([branch, grad], {flag: True}) == [4.0, 4.0]
        assert sess.run([branch, grad], {flag: False}) == [6.0, 3.0]
        assert sess.run(total) == 6.0


def test_while_loop_gradients_reach_resource_variables_read_in_the_body() -> None:
    v = ResourceVariable(2.0, name="v")
    m = ResourceVariable(np.ones([2, 2], np.float32), name="m")
    x = tf.constant([[1.0, 2.0]])
    cube = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * v.read_value()),
                         [0, tf.constant(1.0)])[1]
    twice = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, tf.matmul(a, m)), [0, x])[1]
    (dv,) = tf.gradients(cube, [v])
    (dm,) = tf.gradients(tf.reduce_sum(twice), [m])
    train = tf.train.GradientDescentOptimizer(0.01).minimize(cube, var_list=[v])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(dv) == 12.0  # d(v**3)/dv at 2
        # d sum(x m m)/dm = x^T (1 m^T) + (x m)^T 1
        np.testing.assert_allclose(sess.run(dm), [[5.0, 5.0], [7.0, 7.0]])
        sess.run(train)
        assert sess.run(v) == pytest.approx(2.0 - 0.12)


def test_embedding_lookup_reads_rows_and_gives_indexed_slices() -> None:
    table = ResourceVariable(INIT, name="table")
    rows = tf.nn.embedding_lookup(table, [3, 1])
    (grad,) = tf.gradients(tf.reduce_sum(rows), [table])
    assert isinstance(grad, tf.IndexedSlices)
    assert {op.type for op in tf.get_default_graph().get_operations()} & {"GatherV2"} == set()
    with tf.Session() as sess:
        sess.run(table.initializer)
        np.testing.assert_array_equal(sess.run(rows), INIT[[3, 1]])
        assert sess.run(grad.indices).tolist() == [3, 1]


def test_fetching_a_handle_is_an_error() -> None:
    v = ResourceVariable(1.0, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot fetch a resource"):
            sess.run(v.handle)
        assert sess.run(v) == 1.0


def test_partitioned_resource_variables(tmp_path: object) -> None:
    table = tf.get_variable("table", shape=[6, 2], initializer=tf.ones_initializer(),
                            partitioner=tf.fixed_size_partitioner(3), use_resource=True)
    assert all(isinstance(shard, ResourceVariable) for shard in table)
    rows = tf.nn.embedding_lookup(table, [5, 0, 3], partition_strategy="div")
    train = tf.train.AdagradOptimizer(0.1).minimize(tf.reduce_sum(rows))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        value = sess.run(tf.convert_to_tensor(table))
        path = tf.train.Saver().save(sess, os.path.join(str(tmp_path), "ckpt"))
    np.testing.assert_array_equal(value[[1, 2, 4]], 1.0)
    assert np.all(value[[0, 3, 5]] < 1.0)
    assert ("table", [6, 2]) in tf.train.list_variables(path)


def test_an_update_read_inside_a_loop_body_or_branch_runs() -> None:
    # assign_add's read waits for the update in the body's graph, so the update runs (TF: 3)
    count = tf.Variable(0, use_resource=True, name="count")

    def body(i: tf.Tensor) -> tf.Tensor:
        with tf.control_dependencies([count.assign_add(1)]):
            return i + 1

    loop = tf.while_loop(lambda i: i < 3, body, [0])

    def branch() -> tf.Tensor:
        with tf.control_dependencies([count.assign_add(10)]):
            return tf.constant(1)

    taken = tf.cond(tf.constant(True), branch, lambda: tf.constant(2))
    with tf.Session() as sess:
        sess.run(count.initializer)
        assert sess.run(loop) == 3 and sess.run(count) == 3
        assert sess.run(taken) == 1 and sess.run(count) == 13


def test_validate_shape_false_is_ignored_as_tf_1_15_does() -> None:
    # TF 1.15's ResourceVariable takes validate_shape only for compatibility: the handle has
    # the initial value's shape (shape=TensorShape(None) is what leaves it open), a static
    # mismatch fails when built, and an assignment of a shape known only at run time passes
    v = tf.Variable(tf.constant([1.0, 2.0]), use_resource=True, validate_shape=False)
    w = tf.get_variable("w", initializer=tf.constant([1.0, 2.0]), use_resource=True,
                        validate_shape=False)
    for var in (v, w, ResourceVariable([1.0, 2.0], validate_shape=False)):
        assert var.shape.as_list() == [2]
        assert var.handle.op.get_attr("shape").as_list() == [2]
        assert var.read_value().shape.as_list() == [2]
    assert tf.Variable([1.0, 2.0], use_resource=True,
                       shape=tf.TensorShape(None)).shape.ndims is None
    with pytest.raises(ValueError):
        v.assign([1.0, 2.0, 3.0])
    value = tf.placeholder(tf.float32)
    grow = v.assign(value)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(grow, {value: [5.0, 6.0, 7.0]})
        np.testing.assert_array_equal(sess.run(v.read_value()), [5.0, 6.0, 7.0])
