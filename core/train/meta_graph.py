"""Meta graphs: a graph with its collections and saver, to resume training or serve it
(``tf.train.export_meta_graph`` / ``import_meta_graph``, the ``.meta`` file next to a
checkpoint).

Contract: `MetaGraphDef` is TF's ``meta_graph.proto`` message, a protobuf class
(`tensorweave.formats.meta_graph_proto`); a ``.meta`` file is its bytes, or its text format with
``as_text``.

`export_meta_graph` writes each collection as TF does: `Variable`s as ``bytes_list`` of
``VariableDef`` in the variable collections (elsewhere as ``node_list`` of their names),
tensors and operations as ``node_list`` of their names, ints, floats and
strings as ``int64_list``/``float_list``/``bytes_list``, ``google.protobuf.Any`` messages (the
``saved_model_assets`` of TF's v1 SavedModel builder) as ``any_list``, `QueueRunner`s as
``bytes_list`` of ``QueueRunnerDef`` (rebuilt on import, so `start_queue_runners` works on an
imported graph), a collection with registered proto functions
(`tensorweave.engine.graph.proto_functions`: the ``cond_context``/``while_context`` contexts as
``CondContextDef``/``WhileContextDef``) as ``bytes_list`` of its messages, rebuilt on import
with its ``from_proto`` (a bad item is a `ValueError`); a collection holding anything else (a
mix of kinds) is skipped with a warning, as TF does. ``meta_info_def.stripped_op_list`` lists
the ops the graph uses with their attr defaults, as TF's does.

`import_meta_graph` imports the graph (`import_graph_def` with ``name=import_scope``, so names
are kept without a scope), restores every collection (one `Variable` object per variable, shared
by the collections that list it, so `global_variables()`, `trainable_variables()` and
``get_collection("train_op")`` work as before the export; an ``any_list``'s ``Any`` messages as
they are), and returns a `Saver`. As TF's, when
the ``SaverDef`` names a filename tensor and a restore op (TF's and tensorweave's do), that
saver runs the graph's own ops (``save/SaveV2``..., ``save/restore_all``), so it restores any
checkpoint keys the exporter chose; otherwise it is a `Saver` over the imported global variables
keyed by their names in the exported graph, with the exported ``max_to_keep`` and
``keep_checkpoint_every_n_hours`` (``None`` if there are no variables).
The ``stripped_op_list`` gives the producer's attr defaults, so a newer TF's attrs that hold
their defaults are dropped on import, as TF does. A ``.meta`` file is read as binary, else as
text format (as TF does).
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import DecodeError, Message

import tensorweave
from tensorweave.api.resource_variable_ops import is_resource_variable
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph import graph_def_proto
from tensorweave.engine.graph.graph import Graph, GraphKeys, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.graph.importer import import_graph_def
from tensorweave.engine.graph.proto_functions import (
    get_collection_proto_type,
    get_from_proto_function,
    get_to_proto_function,
)
from tensorweave.engine.op_def import REQUIRED
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.proto import framework, schema
from tensorweave.formats.atomic_file import write_atomic
from tensorweave.formats.meta_graph_proto import (
    CollectionDef,
    MetaGraphDef,
    MetaInfoDef,
    QueueRunnerDef,
    SaverDef,
    VariableDef,
    merge_text,
    to_text,
)
from tensorweave.train.queue_runner import QueueRunner

__all__ = ["export_meta_graph", "import_meta_graph"]

_log = logging.getLogger(__name__)

VARIABLE_COLLECTIONS = frozenset({
    GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
    GraphKeys.MODEL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.METRIC_VARIABLES,
    GraphKeys.GLOBAL_STEP,
})
_Any = schema.message_class("google.protobuf.Any")

def _engine_form(graph_def: Any) -> GraphDef:
    """`graph_def` (a ``GraphDef`` message, or the engine's form) in the engine's form."""
    if isinstance(graph_def, framework.GraphDef):
        return graph_def_proto.from_proto(graph_def)
    return graph_def


# -- VariableDef ------------------------------------------------------------------------------


def variable_def(var: Variable, export_scope: str | None = None) -> VariableDef:
    """TF's ``VariableDef`` of `var` (`Variable.to_proto`): its ops' names without
    `export_scope`, and where a shard of a partitioned variable sits in the full one."""
    def strip(name: str) -> str:
        prefix = f"{export_scope}/" if export_scope else ""
        return name[len(prefix):] if prefix and name.startswith(prefix) else name

    out = VariableDef(variable_name=strip(var.name), initializer_name=strip(var.initializer.name),
                      snapshot_name=strip(var._as_graph_element().name),
                      initial_value_name=strip(var.initial_value.name),
                      trainable=var.trainable, is_resource=is_resource_variable(var))
    info = getattr(var, "_save_slice_info", None)
    if info is not None:
        out.save_slice_info_def.full_name = strip(info.full_name)
        out.save_slice_info_def.full_shape.extend(info.full_shape)
        out.save_slice_info_def.var_offset.extend(info.var_offset)
        out.save_slice_info_def.var_shape.extend(info.var_shape)
    return out


def _parse_variable_def(data: bytes, trainable: bool) -> VariableDef:
    """The `VariableDef` in `data`; `trainable` marks one that a ``trainable_variables``
    collection lists (TF's older producers leave the field unset)."""
    out = VariableDef.FromString(data)
    if not (out.variable_name and out.initializer_name and out.snapshot_name):
        raise ValueError("Error parsing MetaGraphDef: a VariableDef lacks its variable, "
                         "initializer or snapshot name")
    out.trainable = out.trainable or trainable
    return out


# -- export -----------------------------------------------------------------------------------


def _is_any(item: Any) -> bool:
    """Whether `item` is a ``google.protobuf.Any`` (protobuf's class or tensorweave's pool's)."""
    return isinstance(item, Message) and item.DESCRIPTOR.full_name == "google.protobuf.Any"


def _in_graph(item: Any, graph: Graph) -> bool:
    """Whether `item` (a registered proto function's item) belongs to `graph`: a control-flow
    context built inside a function body does not."""
    return getattr(item, "graph", graph) is graph


def _collection_def(name: str, items: list[Any], graph: Graph) -> CollectionDef | None:
    if not items:
        return None
    out = CollectionDef()
    to_proto = get_to_proto_function(name)
    if to_proto is not None and name not in VARIABLE_COLLECTIONS:
        protos = [to_proto(i) for i in items if _in_graph(i, graph)]
        out.bytes_list.value.extend(p.SerializeToString() for p in protos if p is not None)
    elif name in VARIABLE_COLLECTIONS and all(isinstance(i, Variable) for i in items):
        out.bytes_list.value.extend(variable_def(v).SerializeToString()
                                    for v in items if v.graph is graph)
    # elsewhere (TF: no proto function registered for the key) a variable is its tensor's name
    elif all(isinstance(i, (Tensor, Operation, Variable)) for i in items):
        out.node_list.value.extend(i.name for i in items if i.graph is graph)
    elif all(isinstance(i, int) for i in items):  # TF counts bools as ints here too
        out.int64_list.value.extend(int(i) for i in items)
    elif all(isinstance(i, float) for i in items):
        out.float_list.value.extend(items)
    elif all(_is_any(i) for i in items):
        out.any_list.value.extend(_Any(type_url=i.type_url, value=i.value) for i in items)
    elif all(isinstance(i, QueueRunner) for i in items):
        out.bytes_list.value.extend(i.to_proto().SerializeToString() for i in items)
    elif all(hasattr(i, "as_saver_def") for i in items):  # tf.train.Saver: TF writes SaverDefs
        saver_defs = [i.saver_def for i in items]
        if None in saver_defs:  # exporting must not build a saver whose build is deferred
            _log.warning("Issue encountered when serializing %s: a saver is not built yet; the "
                         "collection is not exported.", name)
            return None
        out.bytes_list.value.extend(d.SerializeToString() for d in saver_defs)
    elif all(isinstance(i, (str, bytes)) for i in items):
        out.bytes_list.value.extend(i.encode() if isinstance(i, str) else i for i in items)
    else:
        _log.warning("Issue encountered when serializing %s: its items (%s) have no "
                     "CollectionDef form; the collection is not exported.", name,
                     ", ".join(sorted({type(i).__name__ for i in items})))
        return None
    return out


def _strip_defaults(graph_def: GraphDef) -> GraphDef:
    ops = get_registries().ops
    nodes = []
    for node in graph_def.node:
        op_def = ops.get(node.op)
        defaults = op_def.attrs if op_def is not None else {}
        attr = {k: v for k, v in node.attr.items()
                if not (k in defaults and _same(defaults[k], v))}
        nodes.append(node.copy(attr=attr))
    return GraphDef(node=nodes)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and not hasattr(a, "shape") and bool(a == b)


def _attr_type(value: framework.AttrValue) -> str:
    """TF's ``AttrDef.type`` of an attr whose default is `value` (``"list(int)"``, ...)."""
    kind = value.WhichOneof("value")
    if kind != "list":
        return {"s": "string", "i": "int", "f": "float", "b": "bool"}.get(kind, kind)
    for field, items in value.list.ListFields():
        return f"list({_attr_type(framework.AttrValue(**{field.name: items[0]}))})"
    return "list(type)"  # an empty list's element type is not recorded in tensorweave's op


def stripped_op_list(graph_def: framework.GraphDef) -> framework.OpList:
    """TF's ``stripped_op_list_for_graph``: the ops `graph_def` (and its functions) uses, by
    name, each with its inputs' type rules and its attrs with their defaults, from the op
    registry (ops it does not know are left out). The registry has no output args and no
    types of attrs without a default other than type attrs, so those are left unset."""
    ops = get_registries().ops
    names = {n.op for n in graph_def.node}
    names.update(n.op for f in graph_def.library.function for n in f.node_def)
    used = [op for op in map(ops.get, sorted(names)) if op is not None]
    # the defaults become AttrValues as a GraphDef's attrs do: one node per op holds them
    # (None: a type attr filled from the inputs, which has no default either)
    holder = graph_def_proto.to_proto(GraphDef(node=[
        NodeDef(name=op.name, op=op.name, attr={k: v for k, v in op.attrs.items()
                                                if v is not REQUIRED and v is not None})
        for op in used]))
    out = framework.OpList()
    for op, node in zip(used, holder.node, strict=True):
        op_def = out.op.add(name=op.name, is_stateful=op.stateful)
        for arg in op.args:
            input_arg = op_def.input_arg.add(name=arg.name)
            # a list input of an op with an "N" attr is TF's "N * T"; other lists are a
            # list(type) attr's
            repeated = arg.is_list and "N" in op.attrs
            if repeated:
                input_arg.number_attr = "N"
            if arg.fixed is not None:
                input_arg.type = dtypes.as_dtype(arg.fixed).as_datatype_enum
            elif arg.type_attr is not None and arg.is_list and not repeated:
                input_arg.type_list_attr = arg.type_attr
            elif arg.type_attr is not None:
                input_arg.type_attr = arg.type_attr
        for name in op.attrs:
            attr = op_def.attr.add(name=name)
            if name in node.attr:
                attr.default_value.CopyFrom(node.attr[name])
                attr.type = _attr_type(node.attr[name])
            elif name in op.type_constraints:
                attr.type = "type"
    return out


def export_meta_graph(filename: str | None = None, meta_info_def: MetaInfoDef | None = None,
                      graph_def: Any = None, saver_def: SaverDef | None = None,
                      collection_list: Sequence[str] | None = None, as_text: bool = False,
                      graph: Graph | None = None, clear_devices: bool = False,
                      strip_default_attrs: bool = False) -> MetaGraphDef:
    """The `MetaGraphDef` of `graph` (default: the default graph); written to `filename`
    (binary, or text with `as_text`) if given. `graph_def` (the engine's or the framework's
    `GraphDef`) stands for the graph's own."""
    graph = graph or get_default_graph()
    meta = _meta_graph_def(graph, meta_info_def, saver_def, collection_list)
    proto = graph.as_graph_def() if graph_def is None else graph_def_proto.to_proto(graph_def)
    if strip_default_attrs:
        proto = graph_def_proto.to_proto(_strip_defaults(_engine_form(proto)),
                                         versions=proto.versions)
        meta.meta_info_def.stripped_default_attrs = True
    meta.graph_def.CopyFrom(proto)
    if clear_devices:
        for node in meta.graph_def.node:
            node.device = ""
    meta.meta_info_def.stripped_op_list.CopyFrom(stripped_op_list(meta.graph_def))
    if filename:
        write_meta_graph_file(meta, filename, as_text)
    return meta


def _meta_graph_def(graph: Graph, meta_info_def: MetaInfoDef | None, saver_def: SaverDef | None,
                    collection_list: Sequence[str] | None) -> MetaGraphDef:
    """A `MetaGraphDef` of `graph` without its ``graph_def`` and ``stripped_op_list``."""
    meta = MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.meta_info_def.tensorflow_version = tensorweave.__version__
    meta.meta_info_def.tensorflow_git_version = "tensorweave"
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        if not isinstance(key, str):
            _log.warning("Only collections with string type keys will be serialized. This key "
                         "has %s", type(key))
            continue
        collection = _collection_def(key, graph.get_collection(key), graph)
        if collection is not None:
            meta.collection_def[key].CopyFrom(collection)
    return meta


def write_meta_graph_file(meta: MetaGraphDef, filename: str, as_text: bool = False) -> None:
    """Write `meta` atomically (a crash leaves the previous file)."""
    directory = os.path.dirname(filename)
    if directory:
        os.makedirs(directory, exist_ok=True)
    write_atomic(filename, to_text(meta).encode() if as_text
                 else meta.SerializeToString(deterministic=True))


# per graph: its version, and the bytes of the MetaGraphDef fields that depend on the graph alone
# (meta_info_def = 1 and graph_def = 2)
_graph_bytes: weakref.WeakKeyDictionary[Graph, tuple[int, bytes]] = weakref.WeakKeyDictionary()


def save_meta_graph(filename: str, graph: Graph, saver_def: SaverDef) -> None:
    """What `Saver.save` writes next to a checkpoint: `export_meta_graph` to `filename`, with
    the graph's part reused while the graph is unchanged (a save per step stays cheap)."""
    cached = _graph_bytes.get(graph)
    if cached is None or cached[0] != graph.version:
        part = export_meta_graph(graph=graph, collection_list=[])
        cached = (graph.version, part.SerializeToString(deterministic=True))
        _graph_bytes[graph] = cached
    rest = _meta_graph_def(graph, None, saver_def, None)
    rest.ClearField("meta_info_def")
    # concatenated messages are their merge: fields 1-2, then 3-4, are the whole in TF's order
    write_atomic(filename, cached[1] + rest.SerializeToString(deterministic=True))


# -- import -----------------------------------------------------------------------------------


def read_meta_graph_file(filename: str) -> MetaGraphDef:
    """The `MetaGraphDef` in `filename`: its bytes, else its text (as TF reads it)."""
    if not os.path.isfile(filename):
        raise OSError(f"File {filename} does not exist.")
    with open(filename, "rb") as f:
        data = f.read()
    try:
        return MetaGraphDef.FromString(data)
    except DecodeError as exc:
        binary_error = exc
    try:
        return merge_text(data, MetaGraphDef())
    except (text_format.ParseError, UnicodeDecodeError) as exc:
        raise ValueError(f"Cannot parse file {filename}: not a binary MetaGraphDef "
                         f"({binary_error}), nor a text one ({exc})") from None


def _producer_op_defaults(op_list: framework.OpList) -> dict[str, dict[str, Any]]:
    """``{op: {attr: default}}`` of a ``stripped_op_list``, as `import_graph_def` takes it: the
    defaults read back as a GraphDef's attrs are (one node per op holds them)."""
    holder = framework.GraphDef()
    for op in op_list.op:
        node = holder.node.add(name=op.name, op=op.name)
        for attr in op.attr:
            if attr.HasField("default_value"):
                node.attr[attr.name].CopyFrom(attr.default_value)
    try:
        nodes = graph_def_proto.from_proto(holder).node
    except ValueError as exc:  # e.g. a default naming a function, which no library holds
        raise ValueError(f"Error parsing MetaGraphDef: stripped_op_list: {exc}") from None
    return {node.op: dict(node.attr) for node in nodes}


def _collection_items(key: str, collection: CollectionDef, graph: Graph, prefix: str,
                      import_scope: str | None, trainable: set[bytes],
                      variables: dict[bytes, Variable]) -> list[Any]:
    kind = collection.WhichOneof("kind")
    if kind is None:
        return []
    values = getattr(collection, kind).value
    if kind == "node_list":
        return [graph.as_graph_element(prefix + value) for value in values]
    if kind == "bytes_list" and key in VARIABLE_COLLECTIONS:
        for value in values:
            if value not in variables:
                variables[value] = Variable._from_def(
                    graph, _parse_variable_def(value, value in trainable), prefix)
        return [variables[value] for value in values]
    from_proto = get_from_proto_function(key)
    proto_type = get_collection_proto_type(key)
    if kind == "bytes_list" and from_proto is not None and proto_type is not None:
        try:
            protos = [proto_type.FromString(value) for value in values]
        except DecodeError as exc:
            raise ValueError(f"Error parsing MetaGraphDef: collection {key!r} holds an item "
                             f"that is not a {proto_type.DESCRIPTOR.name}: {exc}") from None
        return [from_proto(proto, import_scope=import_scope) for proto in protos]
    if kind == "bytes_list" and key == GraphKeys.QUEUE_RUNNERS:
        return [QueueRunner.from_proto(QueueRunnerDef.FromString(value), import_scope)
                for value in values]
    return list(values)


def import_meta_graph(meta_graph_or_file: MetaGraphDef | str, clear_devices: bool = False,
                      import_scope: str | None = None,
                      input_map: Mapping[str, Any] | None = None) -> Any:
    """Import a meta graph into the default graph; returns a `Saver` for its variables (or
    ``None`` if it has none). See the module docstring."""
    from tensorweave.train.saver import Saver

    meta = (read_meta_graph_file(meta_graph_or_file) if isinstance(meta_graph_or_file, str)
            else meta_graph_or_file)
    graph_def = _engine_form(meta.graph_def)
    if clear_devices:
        graph_def = GraphDef(node=[n.copy(device="") for n in graph_def.node])
    graph = get_default_graph()
    import_graph_def(graph_def, input_map=dict(input_map) if input_map else None,
                     name=import_scope or "",
                     producer_op_list=_producer_op_defaults(meta.meta_info_def.stripped_op_list))
    prefix = f"{import_scope}/" if import_scope else ""
    variables: dict[bytes, Variable] = {}
    trainable = meta.collection_def.get(GraphKeys.TRAINABLE_VARIABLES)
    trainable_defs = set(trainable.bytes_list.value if trainable is not None else ())
    for key in sorted(meta.collection_def):
        for item in _collection_items(key, meta.collection_def[key], graph, prefix,
                                      import_scope, trainable_defs, variables):
            graph.add_to_collection(key, item)
    saver_def = meta.saver_def if meta.HasField("saver_def") else None
    if saver_def is not None and saver_def.filename_tensor_name and saver_def.restore_op_name:
        return Saver(saver_def=saver_def, name=import_scope)
    saved = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
    saved = [v for v in saved if isinstance(v, Variable) and v in variables.values()]
    if not saved:
        _log.info("Saver not created because there are no variables in the graph to restore")
        return None
    return Saver({v.op.name[len(prefix):]: v for v in saved},
                 max_to_keep=saver_def.max_to_keep if saver_def is not None else 5,
                 keep_checkpoint_every_n_hours=(saver_def.keep_checkpoint_every_n_hours
                                                if saver_def is not None else 0) or 10000.0)
