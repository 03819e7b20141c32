"""Matching each ``_Send`` of a step's partition graphs with its ``_Recv``.

Contract: a ``_Send`` and a ``_Recv`` form a pair when the fields of their rendezvous key agree:
the ``tensor_name``, ``send_device``, ``send_device_incarnation`` and ``recv_device`` attrs that
the partitioner gives both. `transfer_pairs` returns every pair once, each end with the index of
the graph holding it; an end without its partner is left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from tensorweave.engine.graph.graph_def import GraphDef, NodeDef

TransferKey = tuple[str, str, int, str]
Located = tuple[int, NodeDef]  # (index of the graph that holds the node, the node)


def transfer_key(node: NodeDef) -> TransferKey:
    """The rendezvous-key fields of a ``_Send`` or ``_Recv`` node."""
    a = node.attr
    return (a["tensor_name"], a["send_device"], a.get("send_device_incarnation", 0),
            a["recv_device"])


def transfer_pairs(graphs: Sequence[GraphDef]) -> list[tuple[Located, Located]]:
    """Every (``_Send``, ``_Recv``) pair across `graphs`, in the order of the sends."""
    sends: list[tuple[TransferKey, Located]] = []
    recvs: dict[TransferKey, Located] = {}
    for k, graph_def in enumerate(graphs):
        for node in graph_def.node:
            if node.op == "_Send":
                sends.append((transfer_key(node), (k, node)))
            elif node.op == "_Recv":
                recvs[transfer_key(node)] = (k, node)
    return [(send, recvs[key]) for key, send in sends if key in recvs]
