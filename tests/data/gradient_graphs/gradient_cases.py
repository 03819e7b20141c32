"""The cases of ``gradient_graphs.json``, built, differentiated and run the same way under TF
(``make_gradient_graphs.py`` writes what TF does) and under tensorweave
(``tests/test_gradient_graphs.py`` compares): each function takes the framework's ``tf``
module, whose TF1 API the two share.

Contract: `gradient_graph(tf, case)` is ``(ops, values)``: the ops (``[name, type]``, in
creation order) that ``tf.gradients`` of the case's output with respect to its inputs builds
and its results use (ops it builds and leaves unused are left out), and the gradients' values
on fixed inputs (uniform in [0.5, 2), seed 0; a 2 for each unknown dim, [2, 3] for an unknown
rank).
"""

import numpy as np


def functions(tf):
    """(binary, unary): the case ops by name, as functions of ``tf``."""
    binary = {"mul": lambda x, y: x * y, "add": lambda x, y: x + y, "sub": lambda x, y: x - y,
              "truediv": lambda x, y: x / y, "maximum": tf.maximum, "minimum": tf.minimum,
              "matmul": tf.matmul, "bias_add": tf.nn.bias_add, "pow": tf.pow,
              "squared_difference": tf.squared_difference}
    unary = {"relu": tf.nn.relu, "sigmoid": tf.sigmoid, "tanh": tf.tanh, "exp": tf.exp,
             "log": tf.log, "softmax": tf.nn.softmax, "l2_loss": tf.nn.l2_loss,
             "reshape": lambda x: tf.reshape(x, [-1]),
             "sparse_xent": lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(
                 labels=tf.constant([0, 1]), logits=x)}
    return binary, unary


def build(tf, case):
    """(the case's output, its inputs to differentiate by) in the default graph."""
    binary, unary = functions(tf)
    dtype = tf.as_dtype(case["dtype"])
    if case["kind"] == "binary":
        x = tf.placeholder(dtype, case["x"], name="x")
        y = tf.placeholder(dtype, case["y"], name="y")
        return binary[case["op"]](x, y), [x, y]
    if case["kind"] == "concat":
        x = tf.placeholder(dtype, case["x"], name="x")
        y = tf.placeholder(dtype, case["y"], name="y")
        return tf.concat([x, y], case["axis"]), [x, y]
    if case["kind"] == "xent":
        logits = tf.placeholder(dtype, case["x"], name="logits")
        labels = tf.nn.softmax(tf.placeholder(dtype, case["x"], name="labels"))
        return tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits), [logits]
    x = tf.placeholder(dtype, case["x"], name="x")
    if case["kind"] == "unary":
        return unary[case["op"]](x), [x]
    if case["kind"] == "transpose":
        return tf.transpose(x, case["perm"]), [x]
    if case["kind"] == "tile":
        return tf.tile(x, case["multiples"]), [x]
    if case["kind"] == "square":
        return tf.square(x), [x]
    return getattr(tf, case["op"])(x, axis=case["axis"], keepdims=case["keepdims"]), [x]


def _fed_shape(placeholder):
    shape = placeholder.shape
    return [2, 3] if shape.ndims is None else [d or 2 for d in shape.as_list()]


def _used(graph, before, outputs):
    seen, stack = set(), [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if op.name in seen or op.name in before:
            continue
        seen.add(op.name)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return [[op.name, op.type] for op in graph.get_operations() if op.name in seen]


def gradient_graph(tf, case):
    """(ops, values) of `case` under ``tf`` (see the module docstring)."""
    with tf.Graph().as_default() as graph:
        y, xs = build(tf, case)
        before = {op.name for op in graph.get_operations()}
        grads = tf.gradients(y, xs)
        rng = np.random.RandomState(0)
        feed = {t: rng.uniform(0.5, 2.0, _fed_shape(t)).astype(case["dtype"]) for t in
                [op.outputs[0] for op in graph.get_operations() if op.type == "Placeholder"]}
        with tf.Session() as sess:
            values = sess.run(grads, feed)
        return _used(graph, before, grads), values
