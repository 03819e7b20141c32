"""The default partitioner plugin: one partition per location, Send/Recv on crossing edges.

Contract: `partition(graph_def, incarnations, location=None)` splits a placed graph by
``location(node.device)`` (the device itself by default; the task for the master's first split).
Every data edge whose ends lie in different partitions is replaced by a ``_Send`` in the source
partition and a ``_Recv`` in the destination, sharing a rendezvous key made of the send device,
its incarnation, the receive device and the tensor name; a tensor is received once per
destination partition. A control edge that crosses becomes a ``_Send`` of a dummy constant that
depends on the source, and a control edge from the matching ``_Recv``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef, parse_input, tensor_input
from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.engine.tensor_shape import TensorShape


def _safe(name: str) -> str:
    return name.replace("/", "_").replace(":", "_")


def partition(graph_def: GraphDef, incarnations: Mapping[str, int],
              location: Callable[[str], str] | None = None) -> dict[str, GraphDef]:
    where = location or (lambda device: device)
    by_name = graph_def.by_name()
    parts: dict[str, list[NodeDef]] = {}
    recvs: dict[tuple[str, int, str], str] = {}  # (src, index, dst location) -> recv node

    def transfer(src: NodeDef, index: int, dst: NodeDef) -> str:
        src_loc, dst_loc = where(src.device), where(dst.device)
        key = (src.name, index, dst_loc)
        if key in recvs:
            return recvs[key]
        control = index < 0
        if control:  # carry a control edge as a dummy scalar
            const = NodeDef(
                name=f"_ctrl_{_safe(src.name)}_to_{_safe(dst_loc)}", op="Const",
                input=[f"^{src.name}"], device=src.device,
                attr={"value": np.zeros((), np.float32), "dtype": dtypes.float32,
                      "_output_types": [dtypes.float32], "_output_shapes": [TensorShape([])]})
            parts[src_loc].append(const)
            src, index = const, 0
        dtype = src.output_types[index]
        shape = src.output_shapes[index]
        tensor_name = f"{src.name}:{index}"
        transfer_attrs = {
            "tensor_name": tensor_name, "send_device": src.device,
            "send_device_incarnation": incarnations.get(src.device, 0),
            "recv_device": dst.device, "client_terminated": False,
        }
        suffix = f"{_safe(tensor_name)}_to_{_safe(dst_loc)}"
        parts[src_loc].append(NodeDef(
            name=f"_send_{suffix}", op="_Send", input=[tensor_input(src.name, index)],
            device=src.device,
            attr={"T": dtype, **transfer_attrs, "_output_types": [], "_output_shapes": []}))
        recv = NodeDef(
            name=f"_recv_{suffix}", op="_Recv", device=dst.device,
            attr={"tensor_type": dtype, **transfer_attrs, "_shape": shape,
                  "_output_types": [dtype], "_output_shapes": [shape]})
        parts.setdefault(dst_loc, []).append(recv)
        result = f"^{recv.name}" if control else recv.name
        recvs[key] = result
        return result

    for node in graph_def.node:
        parts.setdefault(where(node.device), [])
    for node in graph_def.node:
        loc = where(node.device)
        inputs = []
        for text in node.input:
            src_name, index = parse_input(text)
            src = by_name[src_name]
            if where(src.device) == loc:
                inputs.append(text)
            else:
                inputs.append(transfer(src, index, node))
        parts[loc].append(node.copy(input=inputs) if inputs != node.input else node)
    return {loc: GraphDef(node=nodes) for loc, nodes in parts.items()}


@hookimpl
def tensorweave_partitioner() -> Callable[..., dict[str, GraphDef]]:
    return partition
