"""Run-time errors as the user sees them: about the Operation they built, and where.

Contract: `user_error(exc, graph)` returns `exc` as TF reports it. The node is found from the
error's node name, or failing that from the ``[[node NAME ...]]`` line or the placement
message it carries (an error that crossed a process boundary keeps only its message). A
constant the folding pass made stands for the node the user created, `<node>`: the message
names that node's op for a constant that took its place (under its name), and that node and
its op for one named ``ConstantFolding/<node>-folded`` (``-folded-<i>``). When the node is in
`graph`, the error's ``op`` is that `Operation` and ``node_def`` its `NodeDef`, the node line
says where the op was defined (``defined at FILE:LINE``, the innermost frame outside
tensorweave) and the message ends with TF's "Original stack trace for 'NAME':". A node of a
function body (a ``cond`` branch, a loop body), which runs as ``<node>/<attr>/<inner node>``
(``<node>/<attr>/<i>/<inner node>`` for the i-th function of a list attr, as ``Case``'s
branches), is the `Operation` of the body's function graph, and the message names it by its
own name (``cond/truediv``), as TF1, where a branch's ops are ops of the graph. An error of no
node of `graph` (a session-level one, or a body whose function graph is not at hand) gets
``op`` None.
"""

from __future__ import annotations

import importlib.util
import os
import re

from tensorweave.engine import errors
from tensorweave.engine.graph.graph import Graph, Operation

_NODE_LINE = re.compile(r"\[\[node (?P<name>[^\s\]]+) \(op: [^)]*\)[^\]]*(?=\]\])")
_PLACEMENT = re.compile(r"Cannot assign a device for operation (?P<name>\S+) \(op "
                        r"(?P<op>[^)]*)\)")
_FOLDED = re.compile(r"^ConstantFolding/(?P<source>.+)-folded(?:-\d+)?(?:_\d+)?$")
# tensorweave's own code (the library, its plugins and contrib): not where a user defined an op
_OWN_DIRS = tuple(os.path.join(location, "") for package in (
    "tensorweave", "tensorweave.plugins", "tensorweave.contrib")
    for location in importlib.util.find_spec(package).submodule_search_locations)


def user_error(exc: errors.OpError, graph: Graph) -> errors.OpError:
    """`exc` about the user's node of `graph` (see the module docstring)."""
    name = exc.node_def if isinstance(exc.node_def, str) else _named_in(exc.message)
    if name is None:
        return _without_op(exc) if isinstance(exc.op, str) else exc
    message = exc.message
    folded = _FOLDED.match(name)
    op = _operation(graph, name)
    if op is None and folded is not None:
        op = graph._by_name.get(folded["source"])
        if op is not None:
            message = _unfolded(message, name, op)
            name = op.name
    elif op is not None and op.type != "Const":  # perhaps a constant folded in its place
        message = _unfolded(message, name, op)
    if op is None:
        return _without_op(exc) if isinstance(exc.op, str) else exc
    if op.name != name:  # a node of a function body, which ran under its caller's name
        message = message.replace(name, op.name)
    return type(exc)(op.node_def, op, _with_origin(message, op))


def _operation(graph: Graph, name: str) -> Operation | None:
    """The op of `graph`, or of a function graph of one of its ops, that ran as node `name`
    (see the module docstring)."""
    op = graph._by_name.get(name)
    if op is not None:
        return op
    parts = name.split("/")
    for i in range(1, len(parts) - 1):
        caller = graph._by_name.get("/".join(parts[:i]))
        if caller is None:
            continue
        function, rest = caller.attrs.get(parts[i]), parts[i + 1:]
        if isinstance(function, list) and rest[0].isdigit() and int(rest[0]) < len(function):
            function, rest = function[int(rest[0])], rest[1:]
        body = getattr(function, "graph", None)
        if getattr(body, "outer_graph", None) is graph and rest:  # (not an imported copy's)
            inner = _operation(body, "/".join(rest))
            if inner is not None:
                return inner
    return None


def _named_in(message: str) -> str | None:
    match = _NODE_LINE.search(message) or _PLACEMENT.search(message)
    return match["name"] if match else None


def _without_op(exc: errors.OpError) -> errors.OpError:
    return type(exc)(None, None, exc.message)


def _unfolded(message: str, folded: str, source: Operation) -> str:
    """`message` naming the node the folded constant came from, and that node's op."""
    for pattern in (f"{folded} (op Const)", f"{folded} (op: Const)"):
        message = message.replace(pattern, pattern.replace(folded, source.name)
                                  .replace("Const", source.type))
    return message.replace(folded, source.name)


def defined_at(op: Operation) -> tuple[str, int] | None:
    """(file, line) of the innermost frame of `op`'s creation outside tensorweave."""
    for filename, line, _, _ in reversed(op.traceback):
        if not filename.startswith(_OWN_DIRS):
            return filename, line
    return None


def _with_origin(message: str, op: Operation) -> str:
    where = defined_at(op)
    if where is not None:
        note = f" (defined at {where[0]}:{where[1]})"
        message = _NODE_LINE.sub(lambda m: m[0] + note if m["name"] == op.name else m[0],
                                 message, count=1)
    frames = "".join(f'  File "{f}", line {n}, in {fn}\n' + (f"    {text}\n" if text else "")
                     for f, n, fn, text in op.traceback)
    return f"{message}\n\nOriginal stack trace for '{op.name}':\n{frames}"
