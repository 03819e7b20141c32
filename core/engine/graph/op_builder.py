"""Turning the arguments of an op call into typed graph inputs.

Contract: `complete_attrs` adds the OpDef's defaults and rejects unknown attrs. `build_inputs`
converts each argument to a `Tensor` (Python values and numpy arrays become ``Const`` ops named
as TF's op library names them, after the op and the argument: ``mul/y``, ``Pack/values_1``), fills
type attrs (``T``) and list lengths (``N``) from the inputs, and raises `TypeError` naming the node
when inputs that share a type attr disagree, a fixed-dtype input has another dtype, or a dtype is
outside the op's `type_constraints`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import Graph, Operation, Tensor, get_default_graph
from tensorweave.engine.op_def import REQUIRED, ArgSpec, OpDef


def complete_attrs(op_def: OpDef, attrs: dict[str, Any], node_name: str) -> dict[str, Any]:
    unknown = [k for k in attrs if k not in op_def.attrs and not k.startswith("_")]
    if unknown:
        raise TypeError(f"Op '{node_name}' ({op_def.name}) got unexpected attrs {unknown}")
    type_attrs = {a.type_attr for a in op_def.args if a.type_attr} | set(op_def.type_constraints)
    out = dict(op_def.attrs)
    for key, value in attrs.items():
        if key in type_attrs and isinstance(value, list):  # a list(type) attr
            value = [dtypes.as_dtype(v) for v in value]
        elif key in type_attrs and value is not None:
            value = dtypes.as_dtype(value)
        out[key] = value
    return out


def build_inputs(graph: Graph, op_def: OpDef, inputs: Sequence[Any], attrs: dict[str, Any],
                 node_name: str) -> list[Tensor]:
    args = op_def.args
    if len(inputs) != len(args):
        raise TypeError(
            f"Op '{node_name}' ({op_def.name}) takes {len(args)} inputs "
            f"({', '.join(a.name for a in args)}), got {len(inputs)}"
        )
    grouped: list[list[Any]] = []
    for arg, value in zip(args, inputs):
        if arg.is_list:
            if not isinstance(value, (list, tuple)):
                raise TypeError(
                    f"Expected list for '{arg.name}' argument to '{op_def.name}' Op, not {value!r}."
                )
            grouped.append(list(value))
            if "N" in op_def.attrs and not _is_type_list(op_def, arg):
                attrs["N"] = len(value)
        else:
            grouped.append([value])

    # Type attrs come from the first argument that is already a tensor.
    for arg, values in zip(args, grouped):
        if arg.type_attr and attrs.get(arg.type_attr) in (REQUIRED, None):
            for v in values:
                if is_tensor_like(v):
                    attrs[arg.type_attr] = convert_to_tensor(v).dtype
                    break

    flat: list[Tensor] = []
    for arg, values in zip(args, grouped):
        names = [f"{arg.name}_{i}" for i in range(len(values))] if arg.is_list else [arg.name]
        tensors = [_convert(graph, op_def, arg, v, attrs, node_name, n)
                   for v, n in zip(values, names)]
        if _is_type_list(op_def, arg):
            attrs[arg.type_attr] = [t.dtype for t in tensors]
        flat.extend(tensors)
    for attr, allowed in op_def.type_constraints.items():
        value = attrs.get(attr)
        if isinstance(value, dtypes.DType) and value not in allowed:
            names = ", ".join(sorted(d.name for d in allowed))
            raise TypeError(
                f"Value passed to parameter '{attr}' of op '{node_name}' ({op_def.name}) has "
                f"DataType {value.name} not in list of allowed values: {names}"
            )
    return flat


def _is_type_list(op_def: OpDef, arg: ArgSpec) -> bool:
    """Whether `arg` is typed by a TF ``list(type)`` attr (declared with a list default), so its
    elements may differ in dtype (``SparseCross``'s ``values: sparse_types``)."""
    return arg.is_list and isinstance(op_def.attrs.get(arg.type_attr), list)


def _convert(graph: Graph, op_def: OpDef, arg: ArgSpec, value: Any, attrs: dict[str, Any],
             node_name: str, name: str) -> Tensor:
    want = arg.fixed
    if arg.type_attr and not _is_type_list(op_def, arg):
        want = attrs.get(arg.type_attr)
        want = None if want is REQUIRED else want
    if is_tensor_like(value):
        tensor = convert_to_tensor(value, graph=graph)
    else:  # in the op's own name scope, as TF's op library converts it
        with graph.name_scope(f"{node_name}/"):
            tensor = convert_to_tensor(value, dtype=want, name=name, graph=graph)
    if want is not None and tensor.dtype != want:
        raise TypeError(
            f"Input '{arg.name}' of '{op_def.name}' Op (node '{node_name}') has type "
            f"{tensor.dtype.name} that does not match expected type {want.name}."
        )
    if arg.type_attr and attrs.get(arg.type_attr) in (REQUIRED, None):
        attrs[arg.type_attr] = tensor.dtype
    if tensor.graph is not graph and graph.encloses(tensor.graph):
        tensor = graph.capture(tensor)  # a function graph using an enclosing graph's tensor
    if tensor.graph is not graph:
        raise ValueError(
            f"Tensor {tensor.name} must be from the same graph as op '{node_name}'."
        )
    return tensor


def _graph_of(inputs: Sequence[Any]) -> Graph | None:
    for value in inputs:
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, Tensor):
                return v.graph
            if hasattr(v, "_as_graph_element") and hasattr(v, "graph"):
                return v.graph
    return None


def make_op(op_type: str, inputs: Sequence[Any], attrs: dict[str, Any] | None = None,
            name: str | None = None) -> Operation:
    """Create an op in the graph of its inputs (else the default graph); returns the
    `Operation`."""
    default = get_default_graph()
    graph = _graph_of(inputs)
    if graph is None or default.encloses(graph):
        graph = default  # a function graph being built captures the tensors of outer graphs
    return graph.create_op(op_type, inputs, attrs, name)


def apply(op_type: str, inputs: Sequence[Any], attrs: dict[str, Any] | None = None,
          name: str | None = None) -> Tensor:
    """Create an op and return its first output."""
    return make_op(op_type, inputs, attrs, name).outputs[0]
