"""The attrs TF 2.x added (`tensorweave.engine.graph.tf_added_attrs`) as `import_graph_def`
treats them: hints are dropped whatever their value, the others only at TF's default, and an
attr TF does not declare with a default is an error that names it."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine.graph import tf_added_attrs
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.plugin_manager import get_registries


def matmul_graph(**extra: object) -> GraphDef:
    const = {"dtype": tf.float32, "value": np.eye(2, dtype=np.float32)}
    return GraphDef(node=[NodeDef("a", "Const", attr=const), NodeDef("b", "Const", attr=const),
                          NodeDef("m", "MatMul", input=["a", "b"],
                                  attr={"T": tf.float32, "transpose_a": False,
                                        "transpose_b": False, **extra})])


@pytest.mark.parametrize("grad_a, grad_b", [(False, False), (True, False), (False, True)])
def test_hints_are_dropped_whatever_their_value(grad_a: bool, grad_b: bool) -> None:
    with tf.Graph().as_default():
        (m,) = tf.import_graph_def(matmul_graph(grad_a=grad_a, grad_b=grad_b),
                                   return_elements=["m:0"])
        assert "grad_a" not in m.op.node_def.attr
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(m), np.eye(2))


def test_an_attr_at_tf_default_is_dropped_and_elsewhere_named() -> None:
    params = {"dtype": tf.float32, "value": np.arange(4, dtype=np.float32)}
    indices = {"dtype": tf.int32, "value": np.array([[2], [0]], np.int32)}

    def gather(policy: str) -> GraphDef:
        return GraphDef(node=[NodeDef("p", "Const", attr=params),
                              NodeDef("i", "Const", attr=indices),
                              NodeDef("g", "GatherNd", input=["p", "i"],
                                      attr={"Tparams": tf.float32, "Tindices": tf.int32,
                                            "bad_indices_policy": policy})])

    with tf.Graph().as_default():
        (g,) = tf.import_graph_def(gather(""), return_elements=["g:0"])
        with tf.Session() as sess:
            assert sess.run(g).tolist() == [2.0, 0.0]
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match="attr 'bad_indices_policy' not in Op 'GatherNd' \\(node 'g'\\): "
                              "tensorweave runs it only with its default ''"):
        tf.import_graph_def(gather("IGNORE"))


def test_an_attr_tf_does_not_declare_is_an_error_naming_it() -> None:
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match="NodeDef mentions attr 'grad_c' not in Op 'MatMul' \\(node 'm'\\)$"):
        tf.import_graph_def(matmul_graph(grad_c=False))


def test_the_table_names_only_attrs_tensorweave_lacks() -> None:
    ops = get_registries().ops
    for table in (tf_added_attrs.HINTS, tf_added_attrs.DEFAULTS):
        for op, attrs in table.items():
            op_def = ops.get(op)
            assert op_def is not None, op
            assert not set(attrs) & set(op_def.attrs), op
