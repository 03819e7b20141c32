"""`tf.gradients` builds the ops TF builds: for each case of
``tests/data/gradient_graphs/gradient_graphs.json`` (made by its ``make_gradient_graphs.py``
with TF 2.21's ``compat.v1``), the ops the gradients use have TF's names and types, in TF's
order (Mean's gradient through ``Tile``, the binary ops' through
``Shape``/``BroadcastGradientArgs``/``Sum``/``Reshape`` where shapes need it, cross-entropy's
through the ``Reshape``s of its flattening, Max/Min's, Square's and Transpose's as TF builds
them; MatMul, BiasAdd and common unary ops too), and the gradients have TF's values."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import tensorweave as tf

DATA = pathlib.Path(__file__).parent / "data" / "gradient_graphs"
ENTRIES = json.loads((DATA / "gradient_graphs.json").read_text())
BINARY = {"mul": lambda x, y: x * y, "add": lambda x, y: x + y, "sub": lambda x, y: x - y,
          "truediv": lambda x, y: x / y, "maximum": tf.maximum, "minimum": tf.minimum,
          "matmul": tf.matmul, "bias_add": tf.nn.bias_add}
UNARY = {"relu": tf.nn.relu, "sigmoid": tf.sigmoid, "tanh": tf.tanh, "exp": tf.exp,
         "log": tf.log, "softmax": tf.nn.softmax, "l2_loss": tf.nn.l2_loss,
         "reshape": lambda x: tf.reshape(x, [-1]),
         "sparse_xent": lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(
             labels=tf.constant([0, 1]), logits=x)}


def label(entry: dict) -> str:
    case = entry["case"]
    return "-".join(str(case[k]) for k in ("kind", "op", "x", "y", "axis", "keepdims", "perm",
                                            "dtype") if k in case)


def build(case: dict) -> tuple[tf.Tensor, list[tf.Tensor]]:
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


def fed_shape(placeholder: tf.Tensor) -> list[int]:
    shape = placeholder.shape
    return [2, 3] if shape.ndims is None else [d or 2 for d in shape.as_list()]


def used(graph: tf.Graph, before: set[str], outputs: list[tf.Tensor]) -> list[list[str]]:
    """The new ops `outputs` reach, in creation order (as the fixture script lists TF's)."""
    seen: set[str] = set()
    stack = [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if op.name in seen or op.name in before:
            continue
        seen.add(op.name)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return [[op.name, op.type] for op in graph.get_operations() if op.name in seen]


@pytest.mark.parametrize("entry", ENTRIES, ids=label)
def test_gradient_graph_is_tfs(entry: dict) -> None:
    with tf.Graph().as_default() as graph:
        y, xs = build(entry["case"])
        before = {op.name for op in graph.get_operations()}
        grads = tf.gradients(y, xs)
        assert used(graph, before, grads) == entry["ops"]
        rng = np.random.RandomState(0)
        feed = {t: rng.uniform(0.5, 2.0, fed_shape(t)).astype(entry["case"]["dtype"]) for t in
                [op.outputs[0] for op in graph.get_operations() if op.type == "Placeholder"]}
        with tf.Session() as sess:
            values = sess.run(grads, feed)
    for value, want in zip(values, entry["values"]):
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6)
