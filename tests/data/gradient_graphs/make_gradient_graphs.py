"""Writes ``gradient_graphs.json``: for each small case, the ops (name, type, in creation
order) that TF 2.21's ``compat.v1`` (v1 behaviour) ``tf.gradients`` builds and its results
use (ops it builds and leaves unused are left out), and the gradients' values on fixed inputs.
``tests/test_gradient_graphs.py`` builds the same cases from each entry's ``case``.

Run with a Python that has TensorFlow: ``python make_gradient_graphs.py``.
"""

import json
import pathlib

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
HERE = pathlib.Path(__file__).parent

BINARY = {"mul": lambda x, y: x * y, "add": lambda x, y: x + y, "sub": lambda x, y: x - y,
          "truediv": lambda x, y: x / y, "maximum": tf.maximum, "minimum": tf.minimum,
          "matmul": tf.matmul, "bias_add": tf.nn.bias_add}
UNARY = {"relu": tf.nn.relu, "sigmoid": tf.sigmoid, "tanh": tf.tanh, "exp": tf.exp,
         "log": tf.log, "softmax": tf.nn.softmax, "l2_loss": tf.nn.l2_loss,
         "reshape": lambda x: tf.reshape(x, [-1]),
         "sparse_xent": lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(
             labels=tf.constant([0, 1]), logits=x)}
SHAPES = {"same": ([2, 3], [2, 3]), "bcast": ([2, 3], [3]), "bcast_left": ([3], [2, 3]),
          "scalar": ([2, 3], []), "partial": ([None, 3], [3]), "unknown": (None, None)}


def cases():
    for op in [op for op in BINARY if op not in ("matmul", "bias_add")]:
        for sx, sy in SHAPES.values():
            yield {"kind": "binary", "op": op, "x": sx, "y": sy, "dtype": "float32"}
    yield {"kind": "binary", "op": "mul", "x": [2, 3], "y": [2, 3], "dtype": "float64"}
    yield {"kind": "binary", "op": "matmul", "x": [2, 3], "y": [3, 4], "dtype": "float32"}
    yield {"kind": "binary", "op": "bias_add", "x": [2, 3], "y": [3], "dtype": "float32"}
    for op in UNARY:
        yield {"kind": "unary", "op": op, "x": [2, 3], "dtype": "float32"}
    for op in ("reduce_sum", "reduce_mean"):
        for shape, axis, keepdims in (([2, 3], None, False), ([2, 3], 1, False),
                                      ([2, 3], -1, True), ([None, 3], 0, False),
                                      ([None, 3], None, False), ([2, 3, 4], [0, 2], False)):
            yield {"kind": "reduce", "op": op, "x": shape, "axis": axis, "keepdims": keepdims,
                   "dtype": "float32"}
    for op in ("reduce_max", "reduce_min"):
        for shape, axis, keepdims in (([2, 3], 1, False), ([2, 3], 0, True),
                                      ([None, 3], 1, False)):
            yield {"kind": "reduce", "op": op, "x": shape, "axis": axis, "keepdims": keepdims,
                   "dtype": "float32"}
    for shape in ([2, 3], None):
        yield {"kind": "square", "x": shape, "dtype": "float32"}
    for shape, perm in (([2, 3], None), ([2, 3, 4], [2, 0, 1]), ([None, 3, 4], [1, 2, 0])):
        yield {"kind": "transpose", "x": shape, "perm": perm, "dtype": "float32"}
    for logits in ([2, 3], [None, 3], [2, 2, 3]):
        yield {"kind": "xent", "x": logits, "dtype": "float32"}


def build(case):
    dtype = tf.as_dtype(case["dtype"])
    if case["kind"] == "binary":
        x = tf.placeholder(dtype, case["x"], name="x")
        y = tf.placeholder(dtype, case["y"], name="y")
        return BINARY[case["op"]](x, y), [x, y]
    if case["kind"] == "unary":
        x = tf.placeholder(dtype, case["x"], name="x")
        return UNARY[case["op"]](x), [x]
    if case["kind"] == "transpose":
        x = tf.placeholder(dtype, case["x"], name="x")
        return tf.transpose(x, case["perm"]), [x]
    if case["kind"] == "square":
        x = tf.placeholder(dtype, case["x"], name="x")
        return tf.square(x), [x]
    if case["kind"] == "reduce":
        x = tf.placeholder(dtype, case["x"], name="x")
        return getattr(tf, case["op"])(x, axis=case["axis"], keepdims=case["keepdims"]), [x]
    logits = tf.placeholder(dtype, case["x"], name="logits")
    labels = tf.nn.softmax(tf.placeholder(dtype, case["x"], name="labels"))
    return tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits), [logits]


def fed_shape(placeholder):
    """The shape a case feeds `placeholder` with: its own, a 2 for each unknown dim
    ([2, 3] for an unknown rank)."""
    shape = placeholder.shape
    return [2, 3] if shape.rank is None else [d or 2 for d in shape.as_list()]


def used(graph, before, outputs):
    """The new ops `outputs` reach, in creation order."""
    seen, stack = set(), [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if op.name in seen or op.name in before:
            continue
        seen.add(op.name)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return [[op.name, op.type] for op in graph.get_operations() if op.name in seen]


out = []
for case in cases():
    with tf.Graph().as_default() as graph:
        y, xs = build(case)
        before = {op.name for op in graph.get_operations()}
        grads = tf.gradients(y, xs)
        rng = np.random.RandomState(0)
        feed = {t: rng.uniform(0.5, 2.0, fed_shape(t)).astype(case["dtype"]) for t in
                [op.outputs[0] for op in graph.get_operations() if op.type == "Placeholder"]}
        with tf.Session() as sess:
            values = sess.run(grads, feed)
        out.append({"case": case, "ops": used(graph, before, grads),
                    "values": [np.asarray(v).tolist() for v in values]})
(HERE / "gradient_graphs.json").write_text(  # one case a line
    "[\n" + ",\n".join(json.dumps(entry) for entry in out) + "\n]\n")
