"""Placement: choose a device for every node.

The master places its whole graph once per graph version (`assign_devices`), then each step's
pruned and optimized graph with those choices fixed (`place`), as TF's placer does, so a
variable and the ops that use it agree in every step.

Contract: `place` returns a copy of the graph with every node's ``device`` set to a full device
name. A node's request (already merged with its device scopes) is merged over the session's
default task. Nodes are grouped by colocation (``_class = ["loc:@x"]``, an op with the variable
it reads or assigns through a ref input, an op with the producer of each resource handle it
takes, and ``_Arg``/``_Retval`` with the node they feed or drain); a group goes to one device
that matches every member's request and has a kernel for every member, preferring the
higher-priority device type (GPU over CPU) and then the lowest index. With
``allow_soft_placement`` an unsatisfiable request is relaxed (device type and index, then task).
Otherwise it raises `InvalidArgumentError` naming the node, the request and the devices there
are.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from tensorweave.engine import dtypes, errors
from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef, parse_input
from tensorweave.engine.kernel import type_key

DEVICE_TYPE_PRIORITY = {"GPU": 2, "CPU": 1}


class _UnionFind:
    def __init__(self, names: Sequence[str]) -> None:
        self.parent = {n: n for n in names}

    def find(self, x: str) -> str:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _groups(graph_def: GraphDef, ops: Any) -> dict[str, list[NodeDef]]:
    by_name = graph_def.by_name()
    uf = _UnionFind(list(by_name))
    first_consumer: dict[str, str] = {}
    for node in graph_def.node:
        for group in node.attr.get("_class", ()):
            target = group[len("loc:@"):] if group.startswith("loc:@") else None
            if target in by_name:
                uf.union(target, node.name)
        op_def = ops.get(node.op)
        inputs = [parse_input(t) for t in node.input]
        data = [src for src, index in inputs if index >= 0]
        if op_def is not None:
            for i in op_def.ref_inputs:
                if i < len(data):
                    uf.union(data[i], node.name)
        for src, index in inputs:  # a resource handle is used where its resource lives
            if index >= 0 and _is_resource(by_name[src], index):
                uf.union(src, node.name)
        if node.op == "_Retval":
            uf.union(data[0], node.name)
        for src in data:
            if by_name[src].op == "_Arg" and src not in first_consumer:
                first_consumer[src] = node.name
    for arg, consumer in first_consumer.items():
        uf.union(consumer, arg)
    groups: dict[str, list[NodeDef]] = {}
    for node in graph_def.node:
        groups.setdefault(uf.find(node.name), []).append(node)
    return groups


def _is_resource(node: NodeDef, index: int) -> bool:
    types = node.output_types
    return index < len(types) and types[index] == dtypes.resource


def _uses_state(node: NodeDef, ops: Any) -> bool:
    """Whether `node` takes a variable ref or a resource handle: then its own device request
    yields to its variable's (TF's placer ignores it across a reference or resource edge)."""
    op_def = ops.get(node.op)
    return op_def is not None and (bool(op_def.ref_inputs) or any(
        arg.fixed == dtypes.resource for arg in op_def.args))


def _has_kernels(members: list[NodeDef], device_type: str, kernels: Any) -> bool:
    return all(
        kernels.lookup(n.op, device_type, type_key(n.attr, n.output_types)) is not None
        for n in members
    )


def place(graph_def: GraphDef, devices: Sequence[Any], default_task: DeviceSpec, ops: Any,
          kernels: Any, allow_soft_placement: bool = False,
          log_device_placement: bool = False,
          fixed: Mapping[str, str] | None = None) -> GraphDef:
    """Assign a device to every node; see the module docstring.

    `fixed` maps node names to devices chosen earlier (the session places its whole graph once,
    so a variable stays on one device whatever a step prunes away); a group holding such a node
    goes where it is, and only the others (feeds, fetches, nodes made by passes) are chosen here.
    """
    fixed = fixed or {}
    assigned = assign_devices(graph_def, devices, default_task, ops, kernels,
                              allow_soft_placement, fixed)
    out = GraphDef(node=[n.copy(device=assigned[n.name]) for n in graph_def.node])
    if log_device_placement:
        log_placement([n for n in out.node if n.name not in fixed])
    return out


def log_placement(nodes: Sequence[NodeDef]) -> None:
    """TF's ``log_device_placement`` lines, on stderr."""
    for node in nodes:
        print(f"{node.name}: ({node.op}): {node.device}", file=sys.stderr)


def assign_devices(graph_def: GraphDef, devices: Sequence[Any], default_task: DeviceSpec,
                   ops: Any, kernels: Any, allow_soft_placement: bool = False,
                   fixed: Mapping[str, str] | None = None,
                   strict: bool = True) -> dict[str, str]:
    """Node name -> device. With ``strict=False`` a group that cannot be placed is left out
    instead of raising (the whole-graph placement defers such errors to the steps that need
    the group)."""
    fixed = fixed or {}
    specs = [(d, DeviceSpec.from_string(d.name)) for d in devices]
    task_order = {}
    for _, spec in specs:
        task_order.setdefault(spec.task_name, len(task_order))

    def rank(item: tuple[Any, DeviceSpec]) -> tuple[int, int, int]:
        d, spec = item
        return (-DEVICE_TYPE_PRIORITY.get(d.device_type, 0), task_order[spec.task_name],
                spec.device_index or 0)

    specs.sort(key=rank)
    assigned: dict[str, str] = {}
    # Groups alike in requests and ops go to the same device: decide each kind once.
    decided: dict[tuple[Any, ...], str] = {}
    for members in _groups(graph_def, ops).values():
        known = next((fixed[n.name] for n in members if n.name in fixed), None)
        if known is not None:
            for node in members:
                assigned[node.name] = fixed.get(node.name, known)
            continue
        kind = tuple((n.device, n.op, type_key(n.attr, n.output_types)) for n in members)
        try:
            device = decided.get(kind)
            if device is None:
                device = decided[kind] = _place_group(members, specs, default_task, ops,
                                                      kernels, allow_soft_placement)
        except errors.InvalidArgumentError:
            if strict:
                raise
            continue
        for node in members:
            assigned[node.name] = device
    return assigned


def _place_group(members: list[NodeDef], specs: list[tuple[Any, DeviceSpec]],
                 default_task: DeviceSpec, ops: Any, kernels: Any, soft: bool) -> str:
    explicit = DeviceSpec()
    # TF's placer: a node using a variable through a ref or a handle yields its own request
    for node in sorted(members, key=lambda n: _uses_state(n, ops)):
        if not node.device:
            continue
        try:
            spec = DeviceSpec.from_string(node.device)
        except ValueError as exc:
            raise errors.InvalidArgumentError(
                node.name, node.op, f"Malformed device specification '{node.device}' for "
                f"node '{node.name}' (op {node.op}): {exc}") from None
        if _conflicts(explicit, spec):
            if _uses_state(node, ops):
                continue
            if not soft:
                raise errors.InvalidArgumentError(
                    node.name, node.op,
                    f"Cannot colocate nodes {[m.name for m in members]}: node "
                    f"'{node.name}' requests '{node.device}' but the group requests "
                    f"'{explicit.to_string()}'.")
            continue
        explicit = explicit.make_merged_spec(spec)
    request = default_task.make_merged_spec(explicit)
    return _choose(request, members, specs, kernels, soft, default_task)


def _conflicts(a: DeviceSpec, b: DeviceSpec) -> bool:
    return any(
        getattr(a, f) is not None and getattr(b, f) is not None and getattr(a, f) != getattr(b, f)
        for f in ("job", "replica", "task", "device_type", "device_index")
    )


def _choose(request: DeviceSpec, members: list[NodeDef], specs: list[tuple[Any, DeviceSpec]],
            kernels: Any, soft: bool, default_task: DeviceSpec) -> str:
    attempts = [request]
    if soft:
        attempts.append(DeviceSpec(job=request.job, replica=request.replica, task=request.task))
        attempts.append(default_task)
    for attempt in attempts:
        matching = [d for d, spec in specs if attempt.is_compatible_with(spec)]
        for d in matching:
            if _has_kernels(members, d.device_type, kernels):
                return d.name
    node = next((n for n in members if n.device), members[0])
    available = ", ".join(d.name for d, _ in specs) or "none"
    device_types = {d.device_type for d, spec in specs if request.is_compatible_with(spec)}
    # A request for a device type this task lacks is a missing device, not a missing kernel.
    device_types = device_types or ({"CPU"} if request.device_type is None else set())
    lacking = next(
        ((n, t) for n in members for t in sorted(device_types)
         if not _has_kernels([n], t, kernels)), None)
    if lacking is not None:
        missing, device_type = lacking
        have = kernels.device_types_for(missing.op)
        dtype = type_key(missing.attr, missing.output_types)
        reason = (f"No OpKernel was registered to support Op '{missing.op}' used by node "
                  f"{missing.name}{'' if dtype is None else f' with dtype {dtype.name}'}. "
                  f"No kernel for op {missing.op} on device type {device_type} (node "
                  f"'{missing.name}'); device types with a kernel for it: "
                  f"{', '.join(have) if have else 'none'}")
    else:
        reason = (f"no device matches '{request.to_string()}'; make sure the device "
                  "specification refers to a valid device")
    raise errors.InvalidArgumentError(
        node.name, node.op,
        f"Cannot assign a device for operation {node.name} (op {node.op}) with device "
        f"specification '{node.device or request.to_string()}': {reason}. Available devices: "
        f"[{available}]. Set allow_soft_placement=True to relax the request.")
