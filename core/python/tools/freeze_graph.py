"""``tensorflow.python.tools.freeze_graph``: a graph plus a checkpoint to one `GraphDef` whose
variables are constants.

Contract: `freeze_graph` reads `input_graph` (a binary `GraphDef` when `input_binary`, else text
format; ``IOError`` if missing) or `input_meta_graph` (a ``.meta`` file), then calls
`freeze_graph_with_def_protos`, which imports the graph into a fresh graph (devices cleared when
`clear_devices`), restores its variables from `input_checkpoint` in a session, runs the
comma-separated `initializer_nodes`, and returns `graph_util.convert_variables_to_constants`'s
result for the comma-separated `output_node_names` (the comma-separated variable white/black
lists passed on), also written in binary to `output_graph` when that is a path. Without a meta
graph, each checkpoint tensor whose name is a ``VariableV2`` node of the graph is restored into
it, and names of the checkpoint that are not variables of the graph are skipped, as TF does. TF's
`ValueError`s: a missing checkpoint, no output node names, a graph with no variables to restore
(frozen before). `input_saver`, `restore_op_name` and `filename_tensor_name` are accepted for
TF's signature: tensorweave's savers feed values to ``Assign`` ops rather than running a
restore op on a file name, so a `SaverDef` names nothing to run, and restoring by name covers it.
"""

from __future__ import annotations

import os
from typing import Any

import attrs
import numpy as np

from tensorweave.api.control_flow_ops import group
from tensorweave.api.graph_util import convert_variables_to_constants
from tensorweave.api.state_ops import assign, placeholder
from tensorweave.engine.client.session import Session
from tensorweave.engine.graph.graph import Graph
from tensorweave.engine.graph.graph_def import GraphDef
from tensorweave.engine.graph.graph_def_proto import GraphDef as ProtoGraphDef
from tensorweave.engine.graph.importer import import_graph_def
from tensorweave.formats.meta_graph_proto import MetaGraphDef
from tensorweave.train.checkpoint_management import checkpoint_exists
from tensorweave.train.checkpoint_reader import NewCheckpointReader
from tensorweave.train.meta_graph import (
    graph_def_from_proto,
    import_meta_graph,
    read_meta_graph_file,
)

__all__ = ["freeze_graph", "freeze_graph_with_def_protos"]


def _names(text: str | None) -> list[str] | None:
    """TF's comma-separated flag value as a list (spaces dropped), None when empty."""
    return text.replace(" ", "").split(",") if text else None


def _parse_input_graph(input_graph: str, input_binary: bool) -> ProtoGraphDef:
    if not os.path.exists(input_graph):
        raise OSError(f"Input graph file '{input_graph}' does not exist!")
    with open(input_graph, "rb") as f:
        data = f.read()
    return ProtoGraphDef.FromString(data) if input_binary else ProtoGraphDef.FromText(data)


def _restore_by_name(sess: Session, graph: Graph, checkpoint: str) -> None:
    """Assign each checkpoint tensor to the graph's ``VariableV2`` node of the same name."""
    reader = NewCheckpointReader(checkpoint)
    variables = {op.name: op for op in graph.get_operations() if op.type == "VariableV2"}
    if not variables:
        raise ValueError("No variables were found in this model. It is likely the model was "
                         "frozen previously. You cannot freeze a graph twice.")
    assigns, feeds = [], {}
    with graph.as_default():
        for name in sorted(reader.get_variable_to_shape_map()):
            op = variables.get(name)
            if op is None:  # e.g. housekeeping tensors of another graph
                continue
            ref = op.outputs[0]
            dtype = ref.dtype.base_dtype
            fed = placeholder(dtype, ref.shape, name=f"{name}/freeze_restore")
            assigns.append(assign(ref, fed))
            feeds[fed] = np.asarray(reader.get_tensor(name), dtype=dtype.as_numpy_dtype)
        if assigns:
            sess.run(group(*assigns), feeds)


def freeze_graph_with_def_protos(input_graph_def: GraphDef | None, input_saver_def: Any,
                                 input_checkpoint: str, output_node_names: str,
                                 restore_op_name: str | None, filename_tensor_name: str | None,
                                 output_graph: str | None, clear_devices: bool,
                                 initializer_nodes: str | None,
                                 variable_names_whitelist: str = "",
                                 variable_names_blacklist: str = "",
                                 input_meta_graph_def: MetaGraphDef | None = None
                                 ) -> ProtoGraphDef:
    """The frozen `GraphDef`; see the module docstring."""
    del input_saver_def, restore_op_name, filename_tensor_name  # see the module docstring
    if not checkpoint_exists(input_checkpoint):
        raise ValueError(f"Input checkpoint '{input_checkpoint}' doesn't exist!")
    if not output_node_names:
        raise ValueError("You need to supply the name of a node to --output_node_names.")
    source = (graph_def_from_proto(input_meta_graph_def.graph_def) if input_meta_graph_def
              else input_graph_def)
    if source is None:
        raise ValueError("freeze_graph needs an input graph or an input meta graph.")
    if clear_devices:
        source = attrs.evolve(source, node=[n.copy(device="") for n in source.node])
    graph = Graph()
    with graph.as_default(), Session(graph=graph) as sess:
        if input_meta_graph_def:
            restorer = import_meta_graph(input_meta_graph_def, clear_devices=True)
            if restorer is None:
                raise ValueError("No variables were found in this model. It is likely the "
                                 "model was frozen previously. You cannot freeze a graph twice.")
            restorer.restore(sess, input_checkpoint)
        else:
            import_graph_def(source, name="")
            _restore_by_name(sess, graph, input_checkpoint)
        if initializer_nodes:
            sess.run(_names(initializer_nodes))
        frozen = convert_variables_to_constants(
            sess, source, _names(output_node_names),
            variable_names_whitelist=_names(variable_names_whitelist),
            variable_names_blacklist=_names(variable_names_blacklist))
    if output_graph:
        with open(output_graph, "wb") as f:
            f.write(frozen.SerializeToString())
    return frozen


def freeze_graph(input_graph: str | None, input_saver: str | None, input_binary: bool,
                 input_checkpoint: str, output_node_names: str, restore_op_name: str | None,
                 filename_tensor_name: str | None, output_graph: str | None,
                 clear_devices: bool, initializer_nodes: str | None,
                 variable_names_whitelist: str = "", variable_names_blacklist: str = "",
                 input_meta_graph: str | None = None) -> ProtoGraphDef:
    """Freeze the graph file `input_graph` (or `input_meta_graph`) with `input_checkpoint`."""
    input_graph_def = _parse_input_graph(input_graph, input_binary) if input_graph else None
    meta = read_meta_graph_file(input_meta_graph) if input_meta_graph else None
    return freeze_graph_with_def_protos(
        input_graph_def, input_saver, input_checkpoint, output_node_names, restore_op_name,
        filename_tensor_name, output_graph, clear_devices, initializer_nodes,
        variable_names_whitelist, variable_names_blacklist, meta)
