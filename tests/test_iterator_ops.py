"""tw.data iterators: one-shot, initializable (re-fed), reinitializable; end of input, errors
inside the pipeline, captured variables, placement, the wire, and a TF1 training loop."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.distributed import messages
from tensorweave.plugins.grpc import wire


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def drain(sess: tf.Session, nxt) -> list:
    out = []
    while True:
        try:
            out.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            return out


def test_one_shot_iterator_ends_with_out_of_range_and_the_session_goes_on():
    it = tf.data.make_one_shot_iterator(tf.data.Dataset.range(3))
    nxt = it.get_next()
    assert nxt.dtype == tf.int64 and nxt.shape == tf.TensorShape([])
    other = tf.constant(5) * 2
    with tf.Session() as s:
        assert drain(s, nxt) == [0, 1, 2]
        with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence") as info:
            s.run(nxt)
        assert "IteratorGetNext" in str(info.value)  # the error names the node
        assert s.run(other) == 10
    with tf.Session() as s:  # a new session starts a new iterator
        assert drain(s, nxt) == [0, 1, 2]


def test_one_shot_iterator_rejects_a_placeholder():
    x = tf.placeholder(tf.float32, [None])
    with pytest.raises(ValueError, match="Cannot capture a placeholder"):
        tf.data.Dataset.from_tensor_slices(x).make_one_shot_iterator()


def test_initializable_iterator_is_refed_and_restarted():
    x = tf.placeholder(tf.float32, [None, 2])
    it = tf.data.Dataset.from_tensor_slices(x).map(lambda r: tf.reduce_sum(r)).batch(2) \
        .make_initializable_iterator()
    nxt = it.get_next()
    assert nxt.shape.as_list() == [None]
    a = np.arange(10, dtype=np.float32).reshape(5, 2)
    b = -np.ones([3, 2], np.float32)
    with tf.Session() as s:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            s.run(nxt)
        s.run(it.initializer, {x: a})
        first = s.run(nxt)
        np.testing.assert_allclose(first, a.sum(1)[:2])
        s.run(it.initializer, {x: b})  # restarts on new data
        got = drain(s, nxt)
        np.testing.assert_allclose(np.concatenate(got), b.sum(1))
        s.run(it.initializer, {x: a})
        np.testing.assert_allclose(np.concatenate(drain(s, nxt)), a.sum(1))


def test_get_next_ops_of_one_iterator_share_its_position():
    it = tf.data.Dataset.range(6).make_initializable_iterator()
    n1, n2 = it.get_next(), it.get_next()
    with tf.Session() as s:
        s.run(it.initializer)
        assert [s.run(n1), s.run(n2), s.run(n1)] == [0, 1, 2]
        both = s.run([n1, n2])
        assert sorted(both) == [3, 4]


def test_reinitializable_iterator_from_structure():
    train = tf.data.Dataset.from_tensor_slices((np.arange(4, dtype=np.float32),
                                                np.arange(4)))
    test = tf.data.Dataset.from_tensor_slices((np.full([2], 9, np.float32),
                                               np.array([7, 8])))
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    x, y = it.get_next()
    assert (x.dtype, y.dtype) == (tf.float32, tf.int64)
    init_train, init_test = it.make_initializer(train), it.make_initializer(test)
    with pytest.raises(ValueError, match="does not have an initializer"):
        _ = it.initializer
    with tf.Session() as s:
        s.run(init_train)
        assert [tuple(v) for v in drain(s, [x, y])] == [(0.0, 0), (1.0, 1), (2.0, 2), (3.0, 3)]
        s.run(init_test)
        assert [tuple(v) for v in drain(s, [x, y])] == [(9.0, 7), (9.0, 8)]
    with pytest.raises(TypeError, match="output types"):
        it.make_initializer(tf.data.Dataset.range(3))
    shaped = tf.data.Iterator.from_structure(tf.float32, tf.TensorShape([3]))
    with pytest.raises(TypeError, match="output shapes"):
        shaped.make_initializer(tf.data.Dataset.from_tensors(np.zeros(4, np.float32)))
    assert tf.data.get_output_shapes(shaped) == tf.TensorShape([3])
    assert tf.data.get_output_types(shaped) == tf.float32


def test_map_captures_a_variables_value_when_the_iterator_starts():
    # TF1 (ref variables): a captured tensor is an input of the initializer
    scale = tf.Variable(2.0)
    it = tf.data.Dataset.from_tensor_slices(np.arange(4, dtype=np.float32)) \
        .map(lambda v: v * scale).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(it.initializer)
        assert s.run(nxt) == 0.0
        s.run(scale.assign(10.0))
        assert s.run(nxt) == 2.0
        s.run(it.initializer)
        assert s.run(nxt) == 0.0
        assert s.run(nxt) == 10.0


def test_map_assigning_a_variable_updates_it_per_element():
    seen = tf.Variable(0, dtype=tf.int64)
    ds = tf.data.Dataset.range(5).map(lambda v: tf.assign_add(seen, v) + 0)
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(it.initializer)
        assert drain(s, nxt) == [0, 1, 3, 6, 10]
        assert s.run(seen) == 10


def test_an_error_inside_map_names_the_inner_node():
    ds = tf.data.Dataset.range(3).map(
        lambda v: tf.gather(tf.constant([1.0, 2.0]), v, name="lookup"))
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as s:
        s.run(it.initializer)
        assert drain_until_error(s, nxt) == [1.0, 2.0]
        with pytest.raises(tf.errors.OutOfRangeError):  # the failed pass is over
            s.run(nxt)
        s.run(it.initializer)
        assert s.run(nxt) == 1.0


def drain_until_error(sess: tf.Session, nxt) -> list:
    out = []
    while True:
        try:
            out.append(sess.run(nxt))
        except tf.errors.InvalidArgumentError as exc:
            assert "[[node lookup (op: GatherV2)" in str(exc)
            # the map function's op, as the error of a node of any function body
            assert exc.op is not None and exc.op.name == "lookup" and exc.op.type == "GatherV2"
            return out


def test_iterator_ops_are_placed_on_the_cpu():
    it = tf.data.Dataset.range(2).make_initializable_iterator()
    nxt = it.get_next()
    config = tf.ConfigProto(log_device_placement=False)
    with tf.Session(config=config) as s:
        s.run(it.initializer)
        metadata = tf.RunMetadata()
        s.run(nxt, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
              run_metadata=metadata)
        devices = [d.device for d in metadata.step_stats.dev_stats
                   if any(n.node_name == nxt.op.name for n in d.node_stats)]
    assert devices and all("CPU" in d for d in devices)


def test_ops_of_one_iterator_share_the_first_ops_device():
    it = tf.data.Iterator.from_structure(tf.int64, [])
    with tf.device("/job:localhost/task:0/device:CPU:0"):
        nxt = it.get_next()
    dataset = tf.data.Dataset.range(2)
    with tf.device("/job:elsewhere"):
        init = it.make_initializer(dataset)
    assert init.device == nxt.op.device == "/job:localhost/task:0/device:CPU:0"
    with tf.Session() as s:
        s.run(init)
        assert drain(s, nxt) == [0, 1]


def test_the_pipeline_travels_as_plain_data():
    offset = tf.constant(3, tf.int64)
    ds = tf.data.Dataset.range(6).map(lambda v: v + offset).filter(
        lambda v: tf.equal(v % 2, 0)).shuffle(4, seed=1).batch(2)
    init = ds.make_initializable_iterator().initializer
    node = init._engine_node_def
    (back,) = messages.graph_from_wire(wire.decode(wire.encode(
        messages.graph_to_wire([node])).frame()).body, "test", known=_inputs_of(init))
    assert back.attr["dataset"] == node.attr["dataset"]
    assert back.attr["f_0"].name == node.attr["f_0"].name
    assert [n.op for n in back.attr["f_1"].nodes] == [n.op for n in node.attr["f_1"].nodes]
    assert back.attr["f_2"] is None


def _inputs_of(op) -> dict:
    return {t.op.name: t.op._engine_node_def for t in op.inputs}


def test_a_tf1_training_loop_fed_by_a_dataset():
    rng = np.random.RandomState(0)
    features = rng.randn(64, 3).astype(np.float32)
    true_w = np.array([[1.5], [-2.0], [0.5]], np.float32)
    labels = features @ true_w + 0.3
    tf.set_random_seed(1)
    dataset = tf.data.Dataset.from_tensor_slices((features, labels)) \
        .shuffle(64).batch(16).repeat(5)
    x, y = dataset.make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([3, 1]))
    b = tf.Variable(0.0)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        while True:
            try:
                _, value = sess.run([train_op, loss])
            except tf.errors.OutOfRangeError:
                break
            losses.append(value)
        w_value = sess.run(w)
    assert len(losses) == 4 * 5
    assert losses[-1] < 0.1 * losses[0]
    np.testing.assert_allclose(w_value, true_w, atol=0.3)


GOOD = {"kind": "batch", "input": {"kind": "map", "input": {
    "kind": "tensor_slices", "components": [0]}, "f": "f_0", "captured": []},
    "batch_size": 1, "drop_remainder": 2}


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(kind="pad"), "at dataset: unknown kind 'pad'"),
    (lambda d: d.pop("batch_size"), "kind 'batch' has fields"),
    (lambda d: d.update(batch_size=3), "at dataset.batch_size: expected a tensor index, got 3"),
    (lambda d: d.update(batch_size=True), "expected a tensor index, got True"),
    (lambda d: d["input"].update(f="f_9"), "at dataset.input.f: 'f_9' names no function"),
    (lambda d: d["input"]["input"].update(components=[0, -1]), "list of tensor indices"),
    (lambda d: d.update(input=["tensors"]), "at dataset.input: expected a dict, got list"),
    (lambda d: d.update(input={"kind": "range", "args": [0, 1]}), "expected 3 items, got 2"),
    (lambda d: d.update(input={"kind": "shuffle", "input": {"kind": "cache", "input": {
        "kind": "tensors", "components": []}}, "buffer_size": 0, "seed": "1", "seed2": 0,
        "reshuffle": True}), "at dataset.input.seed: expected an int"),
])
def test_malformed_descriptions_are_refused_with_their_place(change, message):
    from tensorweave.plugins.kernels.dataset import check_description

    check_description(GOOD, 3, {"f_0"})
    bad = copy.deepcopy(GOOD)
    change(bad)
    with pytest.raises(ValueError, match=re.escape(message)):
        check_description(bad, 3, {"f_0"})


def test_a_malformed_description_fails_its_run_and_the_session_goes_on():
    values = tf.constant([1, 2, 3], tf.int64)
    bad = tf.raw_ops.MakeIterator(
        components=[values], Tcomponents=[tf.int64], shared_name="bad",
        dataset={"kind": "tensor_slices", "components": [5]}, output_types=[tf.int64],
        output_shapes=[tf.TensorShape([])])
    it = tf.data.Dataset.from_tensor_slices(values).make_initializable_iterator()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"dataset.components: expected a list of tensor indices"):
            sess.run(bad)
        sess.run(it.initializer)
        assert drain(sess, it.get_next()) == [1, 2, 3]


def test_feedable_iterator_switches_between_string_handles():
    training = tf.data.Dataset.range(100).map(lambda x: x * 10).repeat()
    validation = tf.data.Dataset.range(3)
    handle = tf.placeholder(tf.string, shape=[])
    it = tf.data.Iterator.from_string_handle(handle, training.output_types,
                                             training.output_shapes)
    nxt = it.get_next()
    assert nxt.dtype == tf.int64 and nxt.shape.as_list() == []
    train_it = training.make_one_shot_iterator()
    valid_it = validation.make_initializable_iterator()
    with tf.Session() as sess:
        train_h = sess.run(train_it.string_handle())  # starts the one-shot iterator
        valid_h = sess.run(valid_it.string_handle())
        assert isinstance(train_h, bytes) and train_h != valid_h
        assert [sess.run(nxt, {handle: train_h}) for _ in range(3)] == [0, 10, 20]
        sess.run(valid_it.initializer)
        assert [sess.run(nxt, {handle: valid_h}) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt, {handle: valid_h})
        assert sess.run(nxt, {handle: train_h}) == 30  # resumes where it left off
        with pytest.raises(tf.errors.InvalidArgumentError, match="not a string handle"):
            sess.run(nxt, {handle: b"no-such-iterator"})
    with pytest.raises(ValueError, match="cannot be initialized"):
        it.make_initializer(validation)
    with pytest.raises(ValueError):
        tf.data.Iterator.from_string_handle(tf.placeholder(tf.string, [2]), tf.int64).get_next()
