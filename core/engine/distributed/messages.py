"""Runtime objects <-> wire values, with the validation every incoming message goes through.

Contract: each ``*_to_wire`` gives a wire value (see `transport`; the grpc plugin's `wire` codes
them), and each ``*_from_wire`` checks the value's structure and types before building the
object, raising `InvalidArgumentError` that names the message and field otherwise. Layouts (all
lists are positional, documented in SCHEMA.md):

- NodeDef: ``[name, op, inputs, device, attrs]``; a GraphDef is a list of NodeDefs. Attr values
  are wire values; a Const's value is a tensor, so constants travel as raw bytes. A function attr
  (``If``'s branches, ``While``'s cond and body) is a wire function: its name and its nodes as
  NodeDefs, checked like a graph's (and as a function: ``_Arg``/``_FunctionRetval`` indices
  0..n-1); functions may nest, within the wire's depth bound.
- DeviceAttributes: ``[name, device_type, incarnation]``.
- NodeStats: ``[node_name, op, all_start_micros, all_end_rel_micros, thread_id, label]``.
- PassRecord: ``[name, phase, nodes_before, nodes_after]``.
- ConfigProto: a dict of its fields (nested attrs classes as dicts); unknown fields are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.client.config import ConfigProto
from tensorweave.engine.graph.func_graph import FunctionDef, check_function
from tensorweave.engine.graph.graph_def import NodeDef, parse_input
from tensorweave.engine.runtime.device import DeviceAttributes
from tensorweave.engine.runtime.executor import NodeStats
from tensorweave.engine.runtime.passes import PassRecord
from tensorweave.engine.tensor_shape import TensorShape

_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "a bool",
               list: "a list", dict: "a dict", np.ndarray: "a tensor"}



@attrs.frozen
class WireFunction:
    """A function attr as the wire carries it: a name and its nodes as wire values (this module
    turns it into a `FunctionDef` and back, validating the nodes)."""

    name: str
    nodes: list[Any]


def bad(message: str, field: str, why: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"Invalid {message}: field '{field}' {why}")


def _is(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


def fields(body: Mapping[str, Any], message: str, /, **spec: type) -> list[Any]:
    """The values of `spec`'s fields of `body`, in order, each checked against its type
    (``int`` excludes bool; ``float`` accepts ints; ``type(None)`` entries may be absent)."""
    out = []
    for name, kind in spec.items():
        if name not in body:
            raise bad(message, name, "is missing")
        value = body[name]
        if not _is(value, kind):
            raise bad(message, name, f"must be {_TYPE_NAMES.get(kind, kind.__name__)}, "
                      f"got {type(value).__name__}")
        out.append(float(value) if kind is float else value)
    return out


def optional_float(body: Mapping[str, Any], message: str, name: str) -> float | None:
    value = body.get(name)
    if value is None:
        return None
    if not _is(value, float) or value != value or value < 0:
        raise bad(message, name, "must be a non-negative number or None")
    return float(value)


def strings(values: Any, message: str, field: str) -> list[str]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise bad(message, field, "must be a list of strings")
    return values


def tensors_by(keys: type, values: Any, message: str, field: str) -> dict[Any, np.ndarray]:
    if not isinstance(values, dict) or not all(
            _is(k, keys) and isinstance(v, np.ndarray) for k, v in values.items()):
        raise bad(message, field, f"must map {_TYPE_NAMES[keys].split()[-1]}s to tensors")
    return values


# -- graphs -------------------------------------------------------------------------------------


def _function_to_wire(value: Any) -> Any:
    """A function attr (or a list of them, as ``Case``'s ``branches``) as the wire carries it;
    any other attr value as it is."""
    if isinstance(value, FunctionDef):
        return WireFunction(value.name, graph_to_wire(value.nodes))
    if isinstance(value, list) and value and all(isinstance(v, FunctionDef) for v in value):
        return [_function_to_wire(v) for v in value]
    return value


def node_to_wire(node: NodeDef) -> list[Any]:
    attr = {k: _function_to_wire(v) for k, v in node.attr.items()}
    return [node.name, node.op, list(node.input), node.device, attr]


def _function_from_wire(value: WireFunction, message: str, node: str) -> FunctionDef:
    fn = FunctionDef(value.name, tuple(graph_from_wire(value.nodes, message)))
    try:
        check_function(fn)
    except ValueError as exc:
        raise bad(message, "node", f"'{node}' has a malformed function: {exc}") from None
    return fn


def graph_to_wire(nodes: Iterable[NodeDef]) -> list[Any]:
    return [node_to_wire(n) for n in nodes]


def node_from_wire(value: Any, message: str) -> NodeDef:
    if not (isinstance(value, list) and len(value) == 5):
        raise bad(message, "node", "must be [name, op, inputs, device, attrs]")
    name, op, inputs, device, attr = value
    if not (isinstance(name, str) and name and isinstance(op, str) and op
            and isinstance(device, str) and isinstance(attr, dict)):
        raise bad(message, "node", f"{str(name)[:80]!r} has a malformed name, op, device or "
                  "attrs")
    inputs = strings(inputs, message, f"node '{name}' inputs")
    if not all(isinstance(k, str) for k in attr):
        raise bad(message, "node", f"'{name}' has a non-string attr name")
    types = attr.get("_output_types", [])
    shapes = attr.get("_output_shapes", [])
    if not (isinstance(types, list) and all(isinstance(t, dtypes.DType) for t in types)
            and isinstance(shapes, list) and len(shapes) == len(types)
            and all(isinstance(s, TensorShape) for s in shapes)):
        raise bad(message, "node", f"'{name}' has malformed _output_types/_output_shapes")
    for key, item in attr.items():
        if isinstance(item, WireFunction):
            attr[key] = _function_from_wire(item, message, name)
        elif isinstance(item, (list, tuple)) and any(isinstance(i, WireFunction) for i in item):
            if not all(isinstance(i, WireFunction) for i in item):
                raise bad(message, "node", f"'{name}' has a list attr of functions and other "
                          "values")
            attr[key] = [_function_from_wire(i, message, name) for i in item]
    return NodeDef(name=name, op=op, input=inputs, device=device, attr=attr)


def graph_from_wire(value: Any, message: str,
                    known: Mapping[str, NodeDef] | None = None) -> list[NodeDef]:
    """Nodes of a wire graph; every input must name a node of the graph (or of `known`) and an
    output it has."""
    if not isinstance(value, list):
        raise bad(message, "graph", "must be a list of nodes")
    nodes = [node_from_wire(v, message) for v in value]
    by_name: dict[str, NodeDef] = dict(known or {})
    seen: set[str] = set()
    for node in nodes:
        if node.name in seen:
            raise bad(message, "graph", f"has two nodes named '{node.name}'")
        seen.add(node.name)
        by_name[node.name] = node
    for node in nodes:
        for text in node.input:
            src, index = parse_input(text)
            producer = by_name.get(src)
            if producer is None or index >= len(producer.output_types):
                raise bad(message, "graph", f"node '{node.name}' has input '{text}', which is "
                          "not an output of a node of the graph")
    return nodes


# -- runtime records ----------------------------------------------------------------------------


def devices_to_wire(devices: Iterable[DeviceAttributes]) -> list[Any]:
    return [[d.name, d.device_type, d.incarnation] for d in devices]


def devices_from_wire(value: Any, message: str) -> list[DeviceAttributes]:
    if not isinstance(value, list) or not all(
            isinstance(d, list) and len(d) == 3 and isinstance(d[0], str)
            and isinstance(d[1], str) and _is(d[2], int) for d in value):
        raise bad(message, "devices", "must be a list of [name, device_type, incarnation]")
    return [DeviceAttributes(*d) for d in value]


def stats_to_wire(stats: Mapping[str, list[NodeStats]]) -> dict[str, Any]:
    return {device: [[s.node_name, s.op, s.all_start_micros, s.all_end_rel_micros,
                      s.thread_id, s.timeline_label] for s in nodes]
            for device, nodes in stats.items()}


def stats_from_wire(value: Any, message: str) -> dict[str, list[NodeStats]]:
    kinds = (str, str, int, int, int, str)
    if not isinstance(value, dict) or not all(
            isinstance(dev, str) and isinstance(nodes, list) and all(
                isinstance(s, list) and len(s) == 6 and all(map(_is, s, kinds))
                for s in nodes)
            for dev, nodes in value.items()):
        raise bad(message, "stats", "must map devices to lists of node stats")
    return {dev: [NodeStats(*s) for s in nodes] for dev, nodes in value.items()}


def records_to_wire(records: Iterable[PassRecord]) -> list[Any]:
    return [[r.name, r.phase, r.nodes_before, r.nodes_after] for r in records]


def records_from_wire(value: Any, message: str) -> list[PassRecord]:
    kinds = (str, str, int, int)
    if not isinstance(value, list) or not all(
            isinstance(r, list) and len(r) == 4 and all(map(_is, r, kinds)) for r in value):
        raise bad(message, "records", "must be a list of [name, phase, before, after]")
    return [PassRecord(*r) for r in value]


def error_to_wire(error: BaseException) -> dict[str, Any]:
    if isinstance(error, errors.OpError):
        return {"code": error.error_code, "message": error.message}
    return {"code": errors.INTERNAL, "message": f"{type(error).__name__}: {error}"}


def error_from_wire(value: Any, message: str) -> errors.OpError:
    code, text = fields(value if isinstance(value, dict) else {}, message, code=int, message=str)
    return errors.exception_type_from_error_code(code)(None, None, text)


# -- config -------------------------------------------------------------------------------------


def _attrs_to_wire(obj: Any) -> dict[str, Any]:
    out = {}
    for f in attrs.fields(type(obj)):
        value = getattr(obj, f.name)
        if attrs.has(type(value)):
            out[f.name] = _attrs_to_wire(value)
        elif value is None or isinstance(value, (bool, int, float, str)) or (
                isinstance(value, dict) and all(isinstance(k, str) and _is(v, int)
                                                for k, v in value.items())):
            out[f.name] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[f.name] = list(value)
    return out


def _attrs_from_wire(template: Any, value: Any, message: str) -> Any:
    if not isinstance(value, dict):
        raise bad(message, "config", "must be a dict")
    changes = {}
    for f in attrs.fields(type(template)):
        if f.name not in value:
            continue
        current, given = getattr(template, f.name), value[f.name]
        if attrs.has(type(current)):
            changes[f.name] = _attrs_from_wire(current, given, message)
        elif isinstance(current, dict):
            if not isinstance(given, dict) or not all(
                    isinstance(k, str) and _is(v, int) for k, v in given.items()):
                raise bad(message, f"config.{f.name}", "must map strings to integers")
            changes[f.name] = given
        elif isinstance(current, list):
            if not isinstance(given, list) or not all(isinstance(v, str) for v in given):
                raise bad(message, f"config.{f.name}", "must be a list of strings")
            changes[f.name] = given
        elif current is None or type(given) is type(current) or (
                isinstance(current, float) and _is(given, float)):
            changes[f.name] = given
        else:
            raise bad(message, f"config.{f.name}", f"must be {type(current).__name__}")
    return attrs.evolve(template, **changes)


def config_to_wire(config: ConfigProto) -> dict[str, Any]:
    return _attrs_to_wire(config)


def config_from_wire(value: Any, message: str) -> ConfigProto:
    return _attrs_from_wire(ConfigProto(), value, message)
