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
from tests.data.gradient_graphs.gradient_cases import gradient_graph

DATA = pathlib.Path(__file__).parent / "data" / "gradient_graphs"
ENTRIES = json.loads((DATA / "gradient_graphs.json").read_text())


def label(entry: dict) -> str:
    case = entry["case"]
    return "-".join(str(case[k]) for k in ("kind", "op", "x", "y", "axis", "keepdims", "perm",
                                            "multiples", "dtype") if k in case)


@pytest.mark.parametrize("entry", ENTRIES, ids=label)
def test_gradient_graph_is_tfs(entry: dict) -> None:
    ops, values = gradient_graph(tf, entry["case"])
    assert ops == entry["ops"]
    for value, want in zip(values, entry["values"]):
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6)
