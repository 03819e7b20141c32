"""The rendezvous: a per-step table that pairs each `_Send` with its `_Recv` by key.

Contract (after TF's ``rendezvous.h``): a producer never blocks -- `send` stores the value or hands
it to a waiting consumer and returns. A consumer may ask before or after the send: `recv_async`
calls its callback as soon as the value is there (on the sender's thread if it was waiting), and
`recv` blocks with a deadline; `cancel_recv` withdraws a waiting `recv_async`. Each key carries
one value per step. `start_abort(error)` fails every pending and future recv with `error`.
Callbacks run outside the table's lock. Between CPU devices of one process the array object itself
is handed over, never copied.

Keys use TF's format ``send_device;send_incarnation_hex;recv_device;tensor_name;frame:iter``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import attrs

from tensorweave.engine import errors

RecvCallback = Callable[[BaseException | None, Any], None]


@attrs.frozen
class ParsedKey:
    """The fields of a rendezvous key."""

    src_device: str
    src_incarnation: int
    dst_device: str
    edge_name: str
    frame_iter: tuple[int, int]

    @property
    def src_task(self) -> str:
        return self.src_device.rsplit("/device:", 1)[0]


def create_key(src_device: str, src_incarnation: int, dst_device: str, edge_name: str,
               frame_iter: tuple[int, int] = (0, 0)) -> str:
    return (f"{src_device};{src_incarnation:016x};{dst_device};{edge_name};"
            f"{frame_iter[0]}:{frame_iter[1]}")


def parse_key(key: str) -> ParsedKey:
    parts = key.split(";")
    if len(parts) != 5:
        raise errors.InvalidArgumentError(None, None, f"Invalid rendezvous key: {key}")
    frame, _, it = parts[4].partition(":")
    try:
        return ParsedKey(parts[0], int(parts[1], 16), parts[2], parts[3], (int(frame), int(it)))
    except ValueError:
        raise errors.InvalidArgumentError(None, None, f"Invalid rendezvous key: {key}") from None


class Rendezvous:
    """The in-process rendezvous of one step."""

    def __init__(self, step_id: int = 0) -> None:
        self.step_id = step_id
        self._lock = threading.Lock()
        self._values: dict[str, deque[Any]] = {}
        self._waiters: dict[str, deque[RecvCallback]] = {}
        self._status: BaseException | None = None

    @property
    def status(self) -> BaseException | None:
        return self._status

    def send(self, key: str, value: Any) -> None:
        """Deliver `value` under `key`; never blocks. Raises the abort error after an abort."""
        with self._lock:
            if self._status is not None:
                raise self._status
            waiters = self._waiters.get(key)
            if not waiters:
                self._values.setdefault(key, deque()).append(value)
                return
            callback = waiters.popleft()
            if not waiters:
                del self._waiters[key]
        callback(None, value)

    def recv_async(self, key: str, callback: RecvCallback) -> None:
        """Call ``callback(None, value)`` once the value for `key` is there, or
        ``callback(error, None)`` if the step aborts first."""
        with self._lock:
            status = self._status
            if status is None:
                values = self._values.get(key)
                if not values:
                    self._waiters.setdefault(key, deque()).append(callback)
                    return
                value = values.popleft()
                if not values:
                    del self._values[key]
        if status is not None:
            callback(status, None)
        else:
            callback(None, value)

    def recv(self, key: str, timeout: float | None = None) -> Any:
        """Block until the value for `key` arrives; `DeadlineExceededError` after `timeout` s."""
        done = threading.Event()
        box: list[Any] = []

        def on_value(error: BaseException | None, value: Any) -> None:
            box.append((error, value))
            done.set()

        self.recv_async(key, on_value)
        if not done.wait(timeout):
            if self.cancel_recv(key, on_value):
                raise errors.DeadlineExceededError(
                    None, None, f"Timed out after {timeout}s waiting for rendezvous key {key}")
            done.wait()  # the value arrived as we gave up: take it
        error, value = box[0]
        if error is not None:
            raise error
        return value

    def cancel_recv(self, key: str, callback: RecvCallback) -> bool:
        """Withdraw a `recv_async` still waiting for `key`; False if its callback has been (or
        is being) called."""
        with self._lock:
            waiters = self._waiters.get(key)
            if waiters is None or callback not in waiters:
                return False
            waiters.remove(callback)
            if not waiters:
                del self._waiters[key]
            return True

    def start_abort(self, error: BaseException) -> None:
        """Fail every pending and future recv of this step with `error` (first abort wins)."""
        with self._lock:
            if self._status is not None:
                return
            self._status = error
            waiters = [cb for queue in self._waiters.values() for cb in queue]
            self._waiters.clear()
            self._values.clear()
        for callback in waiters:
            callback(error, None)

    def pending_count(self) -> int:
        with self._lock:
            return sum(map(len, self._values.values())) + sum(map(len, self._waiters.values()))


class RendezvousManager:
    """step id -> the step's `Rendezvous`; entries live until `cleanup`."""

    def __init__(self, factory: Callable[[int], Rendezvous] = Rendezvous) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._table: dict[int, Rendezvous] = {}

    def find_or_create(self, step_id: int) -> Rendezvous:
        with self._lock:
            rendezvous = self._table.get(step_id)
            if rendezvous is None:
                rendezvous = self._table[step_id] = self._factory(step_id)
            return rendezvous

    def cleanup(self, step_id: int) -> None:
        with self._lock:
            rendezvous = self._table.pop(step_id, None)
        if rendezvous is not None:
            rendezvous.start_abort(errors.CancelledError(
                None, None, f"Step {step_id} cleaned up"))

    def abort(self, step_id: int, error: BaseException) -> None:
        self.find_or_create(step_id).start_abort(error)

    def __len__(self) -> int:
        with self._lock:
            return len(self._table)
