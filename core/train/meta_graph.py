"""Meta graphs: a graph with its collections and saver, to resume training or serve it
(``tf.train.export_meta_graph`` / ``import_meta_graph``, the ``.meta`` file next to a
checkpoint).

Contract: `MetaGraphDef` reads and writes TF's ``meta_graph.proto`` (binary, and text with
``as_text``):

    MetaGraphDef  { MetaInfoDef meta_info_def = 1; GraphDef graph_def = 2; SaverDef saver_def = 3;
                    map<string, CollectionDef> collection_def = 4; }
    MetaInfoDef   { string meta_graph_version = 1; repeated string tags = 4;
                    string tensorflow_version = 5; string tensorflow_git_version = 6;
                    bool stripped_default_attrs = 7; }
    SaverDef      { string filename_tensor_name = 1; string save_tensor_name = 2;
                    string restore_op_name = 3; int32 max_to_keep = 4; bool sharded = 5;
                    float keep_checkpoint_every_n_hours = 6; CheckpointFormatVersion version = 7; }
    CollectionDef { oneof { NodeList node_list = 1; BytesList bytes_list = 2;
                    Int64List int64_list = 3; FloatList float_list = 4;
                    AnyList any_list = 5; } }  (each: value = 1; an Any's bytes kept as such)
    VariableDef   { string variable_name = 1; string initializer_name = 2;
                    string snapshot_name = 3; bool is_resource = 5;
                    string initial_value_name = 6; bool trainable = 7; }

`export_meta_graph` writes each collection as TF does: `Variable`s as ``bytes_list`` of
``VariableDef`` in the variable collections (elsewhere as ``node_list`` of their names),
tensors and operations as ``node_list`` of their names, ints, floats and
strings as ``int64_list``/``float_list``/``bytes_list``, `QueueRunner`s as ``bytes_list`` of
``QueueRunnerDef`` (rebuilt on import, so `start_queue_runners` works on an imported graph); a
collection holding anything else (a mix of kinds) is skipped with a warning, as TF does.

`import_meta_graph` imports the graph (`import_graph_def` with ``name=import_scope``, so names
are kept without a scope), restores every collection (one `Variable` object per variable, shared
by the collections that list it, so `global_variables()`, `trainable_variables()` and
``get_collection("train_op")`` work as before the export), and returns a `Saver`. As TF's, when
the ``SaverDef`` names a filename tensor and a restore op (TF's and tensorweave's do), that
saver runs the graph's own ops (``save/SaveV2``..., ``save/restore_all``), so it restores any
checkpoint keys the exporter chose; otherwise it is a `Saver` over the imported global variables
keyed by their names in the exported graph, with the exported ``max_to_keep`` and
``keep_checkpoint_every_n_hours`` (``None`` if there are no variables).
A binary meta graph's ``stripped_op_list`` (``MetaInfoDef`` field 2, which TF writes) gives the
producer's attr defaults, so a newer TF's attrs that hold their defaults are dropped on import,
as TF does. A ``.meta`` file is read as binary, else as text format (as TF does):
``META_GRAPH_SCHEMA`` names the fields above; a ``stripped_op_list`` is not part of it, so such
a text file raises `ValueError`.
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Sequence
from typing import Any

import attrs

import tensorweave
from tensorweave.api.resource_variable_ops import is_resource_variable
from tensorweave.api.variables import Variable
from tensorweave.engine.graph.graph import Graph, GraphKeys, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.graph_def_proto import to_proto
from tensorweave.engine.graph.importer import import_graph_def
from tensorweave.engine.graph.legacy_graph_def_proto import GraphDef
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.proto import text_format
from tensorweave.engine.proto.message import (
    Field,
    read_bool,
    read_string,
    to_binary,
)
from tensorweave.formats.atomic_file import write_atomic
from tensorweave.formats.meta_graph_proto import (
    CollectionDef,
    MetaGraphDef,
    MetaInfoDef,
    SaverDef,
    ValueList,
    meta_graph_fields,
    string_fields,
)
from tensorweave.train.queue_runner import QueueRunner

__all__ = ["export_meta_graph", "import_meta_graph"]

_log = logging.getLogger(__name__)

VARIABLE_COLLECTIONS = frozenset({
    GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
    GraphKeys.MODEL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.METRIC_VARIABLES,
    GraphKeys.GLOBAL_STEP,
})
# -- VariableDef ------------------------------------------------------------------------------


@attrs.frozen
class VariableDef:
    """TF's ``VariableDef``: the names of a variable's ops (`Variable.to_proto`)."""

    variable_name: str = ""
    initializer_name: str = ""
    snapshot_name: str = ""
    initial_value_name: str = ""
    trainable: bool = False
    is_resource: bool = False

    @classmethod
    def of(cls, var: Variable, export_scope: str | None = None) -> VariableDef:
        def strip(name: str) -> str:
            prefix = f"{export_scope}/" if export_scope else ""
            return name[len(prefix):] if prefix and name.startswith(prefix) else name

        return cls(strip(var.name), strip(var.initializer.name),
                   strip(var._as_graph_element().name), strip(var.initial_value.name),
                   var.trainable, is_resource_variable(var))

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        fields = string_fields(("variable_name", 1, self.variable_name),
                          ("initializer_name", 2, self.initializer_name),
                          ("snapshot_name", 3, self.snapshot_name),
                          ("initial_value_name", 6, self.initial_value_name))
        if self.is_resource:
            fields.append(Field("is_resource", 5, "bool", True))
        if self.trainable:
            fields.append(Field("trainable", 7, "bool", True))
        return to_binary(fields)

    @classmethod
    def FromString(cls, data: bytes, trainable: bool = False) -> VariableDef:  # noqa: N802
        """Parse `data`; `trainable` stands where the field is absent."""
        names: dict[int, str] = {}
        is_resource = False
        for number, wire_type, raw in meta_graph_fields(data, "VariableDef"):
            if number in (1, 2, 3, 6):
                names[number] = read_string(wire_type, raw, "VariableDef")
            elif number == 7:
                trainable = read_bool(wire_type, raw, "VariableDef.trainable")
            elif number == 5:
                is_resource = read_bool(wire_type, raw, "VariableDef.is_resource")
        if not all(names.get(n) for n in (1, 2, 3)):
            raise ValueError("Error parsing MetaGraphDef: a VariableDef lacks its variable, "
                             "initializer or snapshot name")
        return cls(names[1], names[2], names[3], names.get(6, ""), trainable, is_resource)


# -- export -----------------------------------------------------------------------------------


def _collection_def(name: str, items: list[Any], graph: Graph) -> CollectionDef | None:
    if not items or name in (GraphKeys.COND_CONTEXT, GraphKeys.WHILE_CONTEXT):
        # tensorweave's control flow is functional: there is no CondContextDef/WhileContextDef
        # to rebuild from, so these records are not exported
        return None
    if name in VARIABLE_COLLECTIONS and all(isinstance(i, Variable) for i in items):
        return CollectionDef(bytes_list=ValueList([
            VariableDef.of(v).SerializeToString() for v in items if v.graph is graph]))
    # elsewhere (TF: no proto function registered for the key) a variable is its tensor's name
    if all(isinstance(i, (Tensor, Operation, Variable)) for i in items):
        return CollectionDef(node_list=ValueList([i.name for i in items if i.graph is graph]))
    if all(isinstance(i, int) for i in items):  # TF counts bools as ints here too
        return CollectionDef(int64_list=ValueList([int(i) for i in items]))
    if all(isinstance(i, float) for i in items):
        return CollectionDef(float_list=ValueList(list(items)))
    if all(isinstance(i, QueueRunner) for i in items):
        return CollectionDef(bytes_list=ValueList([i.to_proto() for i in items]))
    if all(hasattr(i, "as_saver_def") for i in items):  # tf.train.Saver: TF writes SaverDefs
        saver_defs = [i.saver_def for i in items]
        if None in saver_defs:  # exporting must not build a saver whose build is deferred
            _log.warning("Issue encountered when serializing %s: a saver is not built yet; the "
                         "collection is not exported.", name)
            return None
        return CollectionDef(bytes_list=ValueList([to_binary(d.message()) for d in saver_defs]))
    if all(isinstance(i, (str, bytes)) for i in items):
        return CollectionDef(bytes_list=ValueList([i.encode() if isinstance(i, str) else i
                                                   for i in items]))
    _log.warning("Issue encountered when serializing %s: its items (%s) have no CollectionDef "
                 "form; the collection is not exported.", name,
                 ", ".join(sorted({type(i).__name__ for i in items})))
    return None


def _strip_defaults(graph_def: GraphDef) -> GraphDef:
    ops = get_registries().ops
    nodes = []
    for node in graph_def.node:
        op_def = ops.get(node.op)
        defaults = op_def.attrs if op_def is not None else {}
        attr = {k: v for k, v in node.attr.items()
                if not (k in defaults and _same(defaults[k], v))}
        nodes.append(node.copy(attr=attr))
    return GraphDef(node=nodes, versions=graph_def.versions, add_shapes=graph_def._add_shapes)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and not hasattr(a, "shape") and bool(a == b)


def export_meta_graph(filename: str | None = None, meta_info_def: MetaInfoDef | None = None,
                      graph_def: GraphDef | None = None, saver_def: SaverDef | None = None,
                      collection_list: Sequence[str] | None = None, as_text: bool = False,
                      graph: Graph | None = None, clear_devices: bool = False,
                      strip_default_attrs: bool = False) -> MetaGraphDef:
    """The `MetaGraphDef` of `graph` (default: the default graph); written to `filename`
    (binary, or text with `as_text`) if given."""
    graph = graph or get_default_graph()
    if graph_def is None:
        graph_def = GraphDef(node=graph._engine_graph_def().node)
    elif not isinstance(graph_def, GraphDef):
        graph_def = GraphDef.FromString(to_proto(graph_def).SerializeToString())
    if clear_devices:
        graph_def = GraphDef(node=[n.copy(device="") for n in graph_def.node],
                             versions=graph_def.versions, add_shapes=graph_def._add_shapes)
    info = attrs.evolve(meta_info_def) if meta_info_def is not None else MetaInfoDef()
    info.tensorflow_version = tensorweave.__version__
    info.tensorflow_git_version = "tensorweave"
    if strip_default_attrs:
        graph_def = _strip_defaults(graph_def)
        info.stripped_default_attrs = True
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    collections = {}
    for key in keys:
        if not isinstance(key, str):
            _log.warning("Only collections with string type keys will be serialized. This key "
                         "has %s", type(key))
            continue
        collection = _collection_def(key, graph.get_collection(key), graph)
        if collection is not None:
            collections[key] = collection
    meta = MetaGraphDef(meta_info_def=info, graph_def=graph_def, saver_def=saver_def,
                        collection_def=collections)
    if filename:
        write_meta_graph_file(meta, filename, as_text)
    return meta


def write_meta_graph_file(meta: MetaGraphDef, filename: str, as_text: bool = False) -> None:
    """Write `meta` atomically (a crash leaves the previous file)."""
    directory = os.path.dirname(filename)
    if directory:
        os.makedirs(directory, exist_ok=True)
    write_atomic(filename, str(meta).encode() if as_text else meta.SerializeToString())


_graph_bytes: weakref.WeakKeyDictionary[Graph, tuple[int, bytes]] = weakref.WeakKeyDictionary()


def save_meta_graph(filename: str, graph: Graph, saver_def: SaverDef) -> None:
    """What `Saver.save` writes next to a checkpoint: `export_meta_graph` to `filename`, with
    the graph's bytes reused while the graph is unchanged (a save per step stays cheap)."""
    cached = _graph_bytes.get(graph)
    if cached is None or cached[0] != graph.version:
        cached = (graph.version, graph.as_graph_def().SerializeToString())
        _graph_bytes[graph] = cached
    meta = export_meta_graph(graph=graph, graph_def=GraphDef(), saver_def=saver_def)
    fields = [Field("graph_def", 2, "bytes", cached[1]) if f.name == "graph_def" else f
              for f in meta._message()]  # a message's bytes are written as a bytes field is
    write_atomic(filename, to_binary(fields))


# -- import -----------------------------------------------------------------------------------


def read_meta_graph_file(filename: str) -> MetaGraphDef:
    if not os.path.isfile(filename):
        raise OSError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        data = f.read()
    try:
        return MetaGraphDef.FromString(data)
    except ValueError as exc:
        binary_error = exc
    try:  # as TF: what is not a binary MetaGraphDef is read as text
        return text_format.Merge(data, MetaGraphDef())
    except text_format.ParseError as exc:
        raise ValueError(f"Cannot parse file {filename}: not a binary MetaGraphDef "
                         f"({binary_error}), nor a text one ({exc})") from None
    except ValueError as exc:  # text that parses, holding a malformed message
        raise ValueError(f"Cannot parse file {filename}: {exc}") from None


def import_meta_graph(meta_graph_or_file: MetaGraphDef | str, clear_devices: bool = False,
                      import_scope: str | None = None,
                      input_map: dict[str, Any] | None = None) -> Any:
    """Import a meta graph into the default graph; returns a `Saver` for its variables (or
    ``None`` if it has none). See the module docstring."""
    from tensorweave.train.saver import Saver

    meta = (read_meta_graph_file(meta_graph_or_file) if isinstance(meta_graph_or_file, str)
            else meta_graph_or_file)
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = GraphDef(node=[n.copy(device="") for n in graph_def.node])
    graph = get_default_graph()
    import_graph_def(graph_def, input_map=input_map, name=import_scope or "",
                     producer_op_list=meta.meta_info_def.stripped_op_list)
    prefix = f"{import_scope}/" if import_scope else ""
    variables: dict[bytes, Variable] = {}
    trainable = meta.collection_def.get(GraphKeys.TRAINABLE_VARIABLES)
    trainable_defs = set(trainable.bytes_list.value if trainable and trainable.bytes_list
                         else ())
    for key in sorted(meta.collection_def):
        collection = meta.collection_def[key]
        kind = collection.kind
        if kind is None:
            continue
        values = getattr(collection, kind).value
        for value in values:
            if kind == "node_list":
                item: Any = graph.as_graph_element(prefix + value)
            elif kind == "bytes_list" and key in VARIABLE_COLLECTIONS:
                if value not in variables:
                    variable_def = VariableDef.FromString(value, value in trainable_defs)
                    variables[value] = Variable._from_def(graph, variable_def, prefix)
                item = variables[value]
            elif kind == "bytes_list" and key == GraphKeys.QUEUE_RUNNERS:
                item = QueueRunner.from_proto(value, import_scope)
            else:
                item = value
            graph.add_to_collection(key, item)
    saver_def = meta.saver_def
    if saver_def is not None and saver_def.filename_tensor_name and saver_def.restore_op_name:
        return Saver(saver_def=saver_def, name=import_scope)
    saved = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
    saved = [v for v in saved if isinstance(v, Variable) and v in variables.values()]
    if not saved:
        _log.info("Saver not created because there are no variables in the graph to restore")
        return None
    saver_def = saver_def or SaverDef()
    return Saver({v.op.name[len(prefix):]: v for v in saved},
                 max_to_keep=saver_def.max_to_keep if meta.saver_def else 5,
                 keep_checkpoint_every_n_hours=saver_def.keep_checkpoint_every_n_hours or 10000.0)
