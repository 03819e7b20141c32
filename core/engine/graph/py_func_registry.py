"""The process-wide table of `py_func` callables, by token (TF's ``FuncRegistry``).

Contract: `register(func, build)` gives `func` a new token, unique in this process and across
processes (``pyfunc_<n>_<process nonce>``, so a token made elsewhere never finds an unrelated
callable here), calls ``build(token)`` to create the op, and ties the callable's lifetime to the
op's graph (its outermost enclosing graph, for a function graph): that graph holds the only
strong reference, the table a weak one, so a dropped graph takes its callables with it and a
failed `build` leaves nothing behind. `lookup(token)` returns the callable while that graph
lives, and ``None`` once it is gone or when the token was made in another process. Nothing here
is ever pickled or sent: a token is all that leaves the process.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import weakref
from collections.abc import Callable
from typing import Any

import attrs

from tensorweave.engine.graph.func_graph import FuncGraph
from tensorweave.engine.graph.graph import Graph, Operation

# The graph attribute holding the strong references (TF uses the same private attribute).
_KEEP_ALIVE = "_py_funcs_used_in_graph"
_NONCE = secrets.token_hex(4)


@attrs.define(eq=False, weakref_slot=True)
class _Callback:
    """`func` behind a weak-referenceable holder: many callables (builtins, ufuncs) are not."""

    func: Callable[..., Any]


_lock = threading.Lock()
_ids = itertools.count()
_callbacks: weakref.WeakValueDictionary[str, _Callback] = weakref.WeakValueDictionary()


def _owner(graph: Graph) -> Graph:
    """The graph whose lifetime the callable shares: a function graph lives only while it is
    built, its enclosing graph as long as the model."""
    while isinstance(graph, FuncGraph):
        graph = graph.outer_graph
    return graph


def register(func: Callable[..., Any], build: Callable[[str], Operation]) -> Operation:
    """The op ``build(token)`` creates, `func` registered under `token` while its graph lives."""
    callback = _Callback(func)
    with _lock:
        token = f"pyfunc_{next(_ids)}_{_NONCE}"
        _callbacks[token] = callback
    op = build(token)
    with _lock:
        _owner(op.graph).__dict__.setdefault(_KEEP_ALIVE, []).append(callback)
    return op


def lookup(token: str) -> Callable[..., Any] | None:
    """The callable registered under `token` in this process, if it is still alive."""
    with _lock:
        callback = _callbacks.get(token)
    return None if callback is None else callback.func
