"""What the distributed services need of a transport: named services, methods and channels.

Contract: a transport plugin (``tensorweave_transports``) serves each service's `Method`s under
``/<service>/<name>`` and gives clients a `Channel` to a task. Bodies are wire values (nested
lists, dicts, strings, numbers, numpy arrays, `DType`, `TensorShape`, `messages.WireFunction`);
the services validate them with `messages`, so a transport carries bytes and checks nothing but
its own framing and authentication. A method raises `OpError` for a bad request; the transport
returns it to the caller as the same typed error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

MASTER = "tensorweave.Master"
WORKER = "tensorweave.Worker"

Method = Callable[[Any], Any]
"""``method(body) -> reply body``; may block."""

Reply = Callable[[BaseException | None, Any], None]
"""``reply(error, body)``: called exactly once, with an error or a reply body."""

AsyncMethod = Callable[[Any, Reply], None]
"""``method(body, reply)``: returns at once and answers through `reply`, from any thread."""


class Channel(Protocol):
    """The client end of one remote task.

    `task` names the task in the errors the channel raises (a caller may rename it once it
    learns the task's name). `call` blocks up to `timeout` seconds and returns the reply body or
    raises the server's `OpError` (`UnavailableError` / `DeadlineExceededError` for a transport
    failure). `call_async` never blocks: `callback(error, body)` runs once, and must be quick
    (``quick=True`` lets the transport run it on its reader thread); it returns a function that
    cancels the call. `close` ends the channel; calls in flight fail.
    """

    task: str

    def call(self, service: str, method: str, body: Any, timeout: float) -> Any: ...

    def call_async(self, service: str, method: str, body: Any, timeout: float,
                   callback: Callable[[Any, Any], None] | None = None,
                   quick: bool = False) -> Callable[[], None]: ...

    def close(self) -> None: ...
