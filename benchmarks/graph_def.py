"""GraphDef coding of a 20k-node graph, against the protobuf package used directly.

``tw.GraphDef`` is a protobuf message class, so parse and serialize are protobuf's own; the
baseline is a class made by ``message_factory`` from a copy of the same descriptors in a pool of
its own, timed in the same run, in alternation (the fastest of ``--repeats`` each). The script
also prints what tensorweave adds on top: writing the graph as a message (``Graph.as_graph_def``)
and reading one into the engine's form (what ``import_graph_def`` does before it builds ops), as
ratios against the baseline's parse.

Run: ``python benchmarks/graph_def.py [--nodes 20000] [--repeats 21]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from common import timed
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

import tensorweave as tf
from tensorweave.engine.graph.graph_def_proto import from_proto


def wide_graph(nodes: int) -> tf.Graph:
    """About `nodes` nodes: Const/Mul/Add chains on one placeholder, reduced by ``add_n``."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [4], name="x")
        outs = []
        for i in range(nodes // 4):
            outs.append(x * np.float32(i) + np.float32(1.0))
        tf.add_n(outs[:100], name="sum")
    return graph


def baseline_class(message: type) -> type:
    """The same message type built by protobuf directly from a copy of its descriptors."""
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file_descriptor: object) -> None:
        if file_descriptor.name in added:
            return
        for dependency in file_descriptor.dependencies:
            add(dependency)
        proto = descriptor_pb2.FileDescriptorProto()
        file_descriptor.CopyToProto(proto)
        pool.Add(proto)
        added.add(file_descriptor.name)

    add(message.DESCRIPTOR.file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(message.DESCRIPTOR.full_name))


def paired_ms(first: object, second: object, repeats: int) -> tuple[float, float]:
    """The fastest of `repeats` timings of each of two calls, taken in alternation, so both
    see the same load."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for fn, out in ((first, times[0]), (second, times[1])):
            out.append(timed(fn, 1)[0])
    return min(times[0]) * 1e3, min(times[1]) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    graph = wide_graph(args.nodes)
    proto = graph.as_graph_def()
    data = proto.SerializeToString()
    base = baseline_class(tf.GraphDef)
    base_message = base.FromString(data)
    assert base_message.SerializeToString(deterministic=True) == \
        proto.SerializeToString(deterministic=True)
    figures: dict[str, float] = {}
    figures["parse (protobuf)"], figures["parse (tw.GraphDef)"] = paired_ms(
        lambda: base.FromString(data), lambda: tf.GraphDef.FromString(data), args.repeats)
    figures["serialize (protobuf)"], figures["serialize (tw.GraphDef)"] = paired_ms(
        base_message.SerializeToString, proto.SerializeToString, args.repeats)
    figures["as_graph_def"], figures["message -> engine form"] = paired_ms(
        graph.as_graph_def, lambda: from_proto(proto), max(3, args.repeats // 4))
    print(f"{len(proto.node)} nodes, {len(data) / 1e6:.2f} MB")
    for key, value in figures.items():
        print(f"  {key:26s} {value:8.2f} ms")
    parse = figures["parse (tw.GraphDef)"] / figures["parse (protobuf)"]
    print(f"parse     tw/protobuf: {parse:.2f}x (target <= 1.2x)")
    print(f"serialize tw/protobuf: "
          f"{figures['serialize (tw.GraphDef)'] / figures['serialize (protobuf)']:.2f}x"
          " (target <= 1.2x)")
    print(f"as_graph_def / protobuf parse: "
          f"{figures['as_graph_def'] / figures['parse (protobuf)']:.1f}x; "
          f"engine form / protobuf parse: "
          f"{figures['message -> engine form'] / figures['parse (protobuf)']:.1f}x")


if __name__ == "__main__":
    main()
