"""Graphs: `Graph`/`Operation`/`Tensor`, GraphDefs, function graphs, import and op building."""
