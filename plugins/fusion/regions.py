"""The ``fusion`` pass: replace each region of elementwise ops by one ``_FusedElementwise`` node.

Contract: runs after partitioning, on each device's partition, so a region never spans devices
or tasks (a tensor another device needs leaves through a ``_Send``, which is a consumer outside
the region). A node may join a region when its op is one of `program.OPS` on a CPU device, its
dtypes are known and supported (float32/float64/int32/int64; the ops of float only for floats; a
``Cast`` only between those, never float to int, never with ``Truncate``; a gradient op only on
operands statically of one shape), it is not in `PassContext.protected` (fed, fetched, targeted,
runtime ops), and, for a transcendental op, its output is statically known to hold at most
`TRANSCENDENTAL_MAX_ELEMENTS` elements. Regions grow from a sink (their one result) toward the
inputs: a node joins the region of its consumers when every consumer, by data or control edge,
is in that one region, so no intermediate value is needed outside it and the region is convex. A
region of fewer than `MIN_STEPS` ops is not fused, nor one of `MIN_STEPS` ops whose result is
statically known to hold at most `SHORT_MAX_ELEMENTS` elements; a region stops growing at
`MAX_STEPS` ops or `MAX_INPUTS` tensors read. The fused node takes the sink's name, device and
output attrs (consumers, step stats and errors keep the user's name), reads the region's outside
tensors in first-use order and every outside control input of its members.
``TENSORWEAVE_FUSION=0`` turns the pass off (`switches`). A graph with a cycle or without two
adjacent fusable nodes comes back unchanged.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef, parse_input, topological_order
from tensorweave.engine.runtime.passes import PassContext
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.plugins.fusion.kernel import OP
from tensorweave.plugins.fusion.program import (
    FLOATS,
    OPS,
    SAME_SHAPE,
    SUPPORTED,
    TRANSCENDENTAL,
    Program,
    Step,
    encode,
    scalar_source,
)
from tensorweave.plugins.fusion.switches import enabled

MIN_STEPS = 2  # one op gains nothing from a compiled loop; two save a dispatch and a pass
# ... but not on small tensors: 5000 regions of `p * c + 1` on a float32[4] took 24-39 ms of CPU
# a step fused against 13-20 ms unfused (and 62-74 ms against 15-21 ms in the op-by-op runs
# before compiling), where at 4096 elements the two were equal: a fused node's dispatch costs
# about what the second ufunc call it saves does.
SHORT_MAX_ELEMENTS = 4096
MAX_INPUTS = 32  # numpy's ufuncs take at most 64 operands; numba compiles fewer faster
# numba's compile time grows faster than the region past this (about 1.5 s at 64 ops, 6 s at
# 256, 50 s at 2000 on the measuring machine); a longer chain becomes several regions, which
# share one compiled ufunc where their programs are the same.
MAX_STEPS = 64
# Past this many elements numpy's vectorized exp/log/tanh beat a scalar loop by more than the
# dispatch a fused node saves (benchmarks/fusion_backends.py: ~25 ns more per element against
# the 3-7 us a node costs the executor).
TRANSCENDENTAL_MAX_ELEMENTS = 128


def _input_dtype(text: str, by_name: dict[str, NodeDef]) -> Any:
    src, index = parse_input(text)
    producer = by_name.get(src)
    types = producer.output_types if producer is not None else []
    return types[index] if 0 <= index < len(types) else None


def _input_shape(text: str, by_name: dict[str, NodeDef]) -> TensorShape:
    src, index = parse_input(text)
    producer = by_name.get(src)
    shapes = producer.output_shapes if producer is not None else []
    return TensorShape(shapes[index] if 0 <= index < len(shapes) else None)


def _static_same_shape(data: list[str], by_name: dict[str, NodeDef]) -> bool:
    """Whether the inputs are statically known to have one shape (a gradient kernel rejects
    others, where the fused ufunc would broadcast them)."""
    shapes = [_input_shape(t, by_name) for t in data]
    return all(s.is_fully_defined() for s in shapes) and len({tuple(s.as_list())
                                                              for s in shapes}) == 1


def _on_cpu(node: NodeDef) -> bool:
    try:
        return DeviceSpec.from_string(node.device).device_type == "CPU"
    except ValueError:
        return False


def _fusable(node: NodeDef, by_name: dict[str, NodeDef], protected: frozenset[str]) -> bool:
    spec = OPS.get(node.op)
    if spec is None or node.name in protected or len(node.output_types) != 1:
        return False
    arity, _, allowed = spec
    out = node.output_types[0]
    data = [t for t in node.input if not t.startswith("^")]
    if out not in allowed or len(data) != arity or not _on_cpu(node):
        return False
    in_types = [_input_dtype(t, by_name) for t in data]
    if node.op == "Cast":
        src = in_types[0]
        if src not in SUPPORTED or node.attr.get("Truncate") or (src in FLOATS and out not in
                                                                  FLOATS):
            return False
    elif any(t != out for t in in_types):
        return False
    if node.op in SAME_SHAPE and not _static_same_shape(data, by_name):
        return False
    if node.op in TRANSCENDENTAL:
        return _static_elements(node) <= TRANSCENDENTAL_MAX_ELEMENTS
    return True


def _static_elements(node: NodeDef) -> float:
    """The elements of `node`'s output where its shape is static, else infinity."""
    shape = TensorShape(node.output_shapes[0]) if node.output_shapes else TensorShape(None)
    return shape.num_elements() if shape.is_fully_defined() else float("inf")


class _Region:
    __slots__ = ("sink", "members", "inputs")

    def __init__(self, sink: NodeDef) -> None:
        self.sink = sink
        self.members: set[str] = {sink.name}
        self.inputs: set[tuple[str, int]] = set()
        self._add_inputs(sink)

    def _add_inputs(self, node: NodeDef) -> None:
        for text in node.input:
            if not text.startswith("^"):
                self.inputs.add(parse_input(text))

    def inputs_with(self, node: NodeDef) -> int:
        """How many outside tensors the region reads once `node` joins it."""
        own = {parse_input(t) for t in node.input if not t.startswith("^")}
        return len((self.inputs - {(node.name, 0)}) | own)

    def add(self, node: NodeDef) -> None:
        self.members.add(node.name)
        self.inputs.discard((node.name, 0))
        self._add_inputs(node)


def _regions(order: list[NodeDef], by_name: dict[str, NodeDef],
             protected: frozenset[str]) -> list[_Region]:
    consumers: dict[str, list[str]] = defaultdict(list)
    for node in order:
        for text in node.input:
            consumers[parse_input(text)[0]].append(node.name)
    region_of: dict[str, _Region] = {}
    regions: list[_Region] = []
    for node in reversed(order):
        if not _fusable(node, by_name, protected):
            continue
        owners = {id(region_of.get(c)): region_of.get(c) for c in consumers[node.name]}
        region = next(iter(owners.values())) if len(owners) == 1 else None
        if region is not None and region.sink.device == node.device \
                and len(region.members) < MAX_STEPS and region.inputs_with(node) <= MAX_INPUTS:
            region.add(node)
        else:
            region = _Region(node)
            regions.append(region)
        region_of[node.name] = region
    return [r for r in regions if len(r.inputs) <= MAX_INPUTS and (
        len(r.members) > MIN_STEPS
        or (len(r.members) == MIN_STEPS and _static_elements(r.sink) > SHORT_MAX_ELEMENTS))]


def _fused_node(region: _Region, position: dict[str, int], order: list[NodeDef],
                by_name: dict[str, NodeDef]) -> NodeDef:
    members = [order[i] for i in sorted(position[name] for name in region.members)]
    inputs: list[str] = []
    index: dict[tuple[str, int], int] = {}
    controls: list[str] = []
    in_types: list[Any] = []
    for node in members:
        for text in node.input:
            src, i = parse_input(text)
            if i < 0:
                if src not in region.members and text not in controls:
                    controls.append(text)
            elif src not in region.members and (src, i) not in index:
                index[(src, i)] = len(inputs)
                inputs.append(text)
                in_types.append(_input_dtype(text, by_name))
    slot = {n.name: len(inputs) + j for j, n in enumerate(members)}
    steps = []
    for node in members:
        operands = tuple(slot[src] if src in region.members else index[(src, i)]
                         for src, i in map(parse_input, node.input) if i >= 0)
        steps.append(Step(node.name, node.op, node.output_types[0], operands))
    program = Program(len(inputs), tuple(steps))
    sink = region.sink
    attr = {"expression": scalar_source(program), "program": encode(program),
            "Tin": in_types, "T": sink.output_types[0],
            "_output_types": list(sink.output_types),
            "_output_shapes": list(sink.output_shapes)}
    return NodeDef(name=sink.name, op=OP, input=inputs + controls, device=sink.device,
                   attr=attr)


def _has_pair(graph_def: GraphDef, by_name: dict[str, NodeDef],
              protected: frozenset[str]) -> bool:
    """Whether some fusable node reads another, found without sorting the graph."""
    for node in graph_def.node:
        if node.op in OPS and _fusable(node, by_name, protected):
            for text in node.input:
                src = by_name.get(parse_input(text)[0])
                if src is not None and src.op in OPS and _fusable(src, by_name, protected):
                    return True
    return False


def fuse_elementwise(graph_def: GraphDef, ctx: PassContext) -> GraphDef:
    """Fuse the graph's elementwise regions; see the module docstring."""
    if not enabled():
        return graph_def
    by_name = graph_def.by_name()
    protected = frozenset(ctx.protected)
    if not _has_pair(graph_def, by_name, protected):
        return graph_def
    order = topological_order(graph_def)
    if order is None:
        return graph_def
    regions = _regions(order, by_name, protected)
    if not regions:
        return graph_def
    position = {n.name: i for i, n in enumerate(order)}
    fused = {r.sink.name: _fused_node(r, position, order, by_name) for r in regions}
    removed = set().union(*(r.members for r in regions)) - set(fused)
    return GraphDef(node=[fused.get(n.name, n) for n in graph_def.node
                          if n.name not in removed])

