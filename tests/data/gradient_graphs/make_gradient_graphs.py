"""Writes ``gradient_graphs.json``: for each small case, the ops (name, type, in creation
order) that TF 2.21's ``compat.v1`` (v1 behaviour) ``tf.gradients`` builds and its results
use (ops it builds and leaves unused are left out), and the gradients' values on fixed inputs.
``tests/test_gradient_graphs.py`` builds the same cases from each entry's ``case``, with the
same code (``gradient_cases.py``).

Run with a Python that has TensorFlow: ``python make_gradient_graphs.py``.
"""

import json
import pathlib

import numpy as np
import tensorflow.compat.v1 as tf
from gradient_cases import functions, gradient_graph  # (this folder, on the path as a script's)

tf.disable_v2_behavior()
HERE = pathlib.Path(__file__).parent

BINARY, UNARY = functions(tf)
SHAPES = {"same": ([2, 3], [2, 3]), "bcast": ([2, 3], [3]), "bcast_left": ([3], [2, 3]),
          "scalar": ([2, 3], []), "partial": ([None, 3], [3]), "unknown": (None, None)}


def cases():
    for op in [op for op in BINARY if op not in ("matmul", "bias_add", "pow",
                                                 "squared_difference")]:
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
    for op in ("pow", "squared_difference"):
        for sx, sy in SHAPES.values():
            yield {"kind": "binary", "op": op, "x": sx, "y": sy, "dtype": "float32"}
    for sx, sy, axis in (([2, 3], [2, 4], 1), ([2, 3], [4, 3], 0), ([None, 3], [None, 2], 1),
                         ([2, 3, 4], [2, 1, 4], 1)):
        yield {"kind": "concat", "x": sx, "y": sy, "axis": axis, "dtype": "float32"}
    for shape, multiples in (([2, 3], [2, 1]), ([None, 3], [1, 2]), ([2, 3, 4], [1, 2, 3])):
        yield {"kind": "tile", "x": shape, "multiples": multiples, "dtype": "float32"}


out = []
for case in cases():
    ops, values = gradient_graph(tf, case)
    out.append({"case": case, "ops": ops, "values": [np.asarray(v).tolist() for v in values]})
(HERE / "gradient_graphs.json").write_text(  # one case a line
    "[\n" + ",\n".join(json.dumps(entry) for entry in out) + "\n]\n")
