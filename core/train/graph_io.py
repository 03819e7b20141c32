"""``tw.train.write_graph``: a graph's `GraphDef` to a file, in TF's binary or text format.

Contract: `write_graph(graph_or_graph_def, logdir, name, as_text=True)` writes
``<logdir>/<name>`` (creating `logdir`), atomically, and returns its path; a `Graph` is written
as ``graph.as_graph_def()``. Text is ``text_format.MessageToString`` (map keys sorted, as TF's),
binary is ``SerializeToString()``; `tw.GraphDef.FromString` reads the binary back.
"""

from __future__ import annotations

import os
from typing import Any

from google.protobuf import text_format

from tensorweave.engine.graph.graph import Graph
from tensorweave.engine.graph.graph_def_proto import to_proto

__all__ = ["write_graph"]


def write_graph(graph_or_graph_def: Any, logdir: str, name: str, as_text: bool = True) -> str:
    if isinstance(graph_or_graph_def, Graph):
        graph_def = graph_or_graph_def.as_graph_def()
    elif hasattr(graph_or_graph_def, "node"):
        graph_def = to_proto(graph_or_graph_def)
    else:
        raise TypeError(f"write_graph expects a Graph or a GraphDef, got "
                        f"{type(graph_or_graph_def).__name__}")
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    data = text_format.MessageToString(graph_def).encode() if as_text \
        else graph_def.SerializeToString()
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return path
