"""`tensorweave.contrib.viz`: Graphviz DOT of graphs and partitions."""

from __future__ import annotations

import re

import pytest

import tensorweave as tf
from tensorweave.contrib.viz import device_color, to_dot
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def node_lines(dot: str) -> dict[str, str]:
    """Node id -> its attribute text."""
    return dict(re.findall(r'^\s*("[^"]*") \[label=(.*)\];$', dot, flags=re.M))


def edges(dot: str) -> list[tuple[str, str, str]]:
    return re.findall(r'^\s*("[^"]*") -> ("[^"]*")(.*);$', dot, flags=re.M)


def two_device_partitions() -> list[GraphDef]:
    x = tf.placeholder(tf.float32, [2], name="x")
    with tf.device("/cpu:1"):
        a = tf.multiply(x, 3.0, name="a")
    with tf.device("/cpu:0"), tf.control_dependencies([a.op]):
        b = tf.add(a, tf.identity(x), name="b")
    metadata = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
        s.run(b, {x: [1.0, 2.0]}, options=tf.RunOptions(output_partition_graphs=True),
              run_metadata=metadata)
    return metadata.partition_graphs


def test_graph_nodes_edges_and_control_edges() -> None:
    x = tf.constant(1.0, name="x")
    with tf.device("/cpu:0"):
        y = tf.identity(x, name="y")
    with tf.control_dependencies([y.op]):
        tf.identity(x, name="z")
    dot = to_dot(tf.get_default_graph())
    assert dot.startswith("digraph tensorweave {") and dot.rstrip().endswith("}")
    nodes = node_lines(dot)
    assert set(nodes) == {'"x"', '"y"', '"z"'}
    assert nodes['"y"'].startswith('"y\\nIdentity"')
    assert f'fillcolor="{device_color(y.op.device)}"' in nodes['"y"']
    assert 'fillcolor="#ffffff"' in nodes['"x"']
    assert sorted(edges(dot)) == [('"x"', '"y"', ""), ('"x"', '"z"', ""),
                                  ('"y"', '"z"', " [style=dashed]")]


def test_graph_def_and_graph_give_the_same_dot() -> None:
    tf.constant(1.0) + tf.constant(2.0)
    graph = tf.get_default_graph()
    assert to_dot(graph.as_graph_def()) == to_dot(graph)


def test_names_with_quotes_are_escaped() -> None:
    dot = to_dot(GraphDef(node=[NodeDef(name='odd"name\\', op="NoOp")]))
    assert '"odd\\"name\\\\"' in dot


def test_partitions_are_clusters_coloured_by_device() -> None:
    partitions = two_device_partitions()
    dot = to_dot(partitions)
    clusters = re.findall(r"subgraph (cluster_\d+) \{\n\s*label=\"([^\"]*)\";", dot)
    assert sorted(label for _, label in clusters) == [CPU0, CPU1]
    nodes = node_lines(dot)
    assert len(nodes) == sum(len(g.node) for g in partitions)
    for k, graph_def in enumerate(partitions):
        for node in graph_def.node:
            assert f'fillcolor="{device_color(node.device)}"' in nodes[f'"{k}/{node.name}"']
    assert device_color(CPU0) != device_color(CPU1)


def test_each_send_is_dotted_to_its_recv_and_control_edges_stay_dashed() -> None:
    partitions = two_device_partitions()
    dot = to_dot(partitions)
    location = {n.name: (k, n) for k, g in enumerate(partitions) for n in g.node}
    dotted = [(s, r, a) for s, r, a in edges(dot) if "dotted" in a]
    sends = [n for _, n in location.values() if n.op == "_Send"]
    assert len(dotted) == len(sends) >= 2  # the data edge a -> b and the control edge
    for src, dst, attrs in dotted:
        _, send = location[src.strip('"').split("/", 1)[1]]
        _, recv = location[dst.strip('"').split("/", 1)[1]]
        assert (send.op, recv.op) == ("_Send", "_Recv")
        assert send.attr["tensor_name"] == recv.attr["tensor_name"]
        assert send.attr["tensor_name"].s.decode() in attrs
    assert any("dashed" in a for _, _, a in edges(dot))


def test_partitioner_output_mapping_is_accepted() -> None:
    partitions = two_device_partitions()
    mapping = {g.node[0].device: g for g in partitions}
    assert to_dot(mapping) == to_dot(list(mapping.values()))


def test_device_colours_are_stable() -> None:
    assert device_color(CPU1) == device_color(CPU1)
    assert re.fullmatch(r"#[0-9a-f]{6}", device_color(CPU1))
    assert device_color("") == "#ffffff"


def test_other_inputs_are_refused() -> None:
    with pytest.raises(TypeError, match="GraphDef"):
        to_dot("not a graph")


def test_edges_from_a_later_output_are_labelled() -> None:
    graph_def = GraphDef(node=[NodeDef(name="split", op="Split"),
                               NodeDef(name="use", op="Identity", input=["split:1", "split"])])
    assert sorted(edges(to_dot(graph_def))) == [('"split"', '"use"', ""),
                                                ('"split"', '"use"', ' [label=":1"]')]
