"""The outbox: replies too large for one gRPC message, parked until their client fetches them.

Contract: `put` parks an envelope under a fresh random 128-bit ticket (unguessable, so one
client cannot take another's reply) for `ttl` seconds; `take` hands it out once, else raises
`NotFoundError`; `sweep` drops the expired entries (the replies of clients that vanished).
"""

from __future__ import annotations

import secrets
import threading
import time

from tensorweave.engine import errors
from tensorweave.plugins.grpc import wire

TICKET_BYTES = 16


class Outbox:
    """Parked replies by ticket."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[bytes, tuple[wire.Envelope, float]] = {}

    def put(self, envelope: wire.Envelope, ttl: float) -> bytes:
        ticket = secrets.token_bytes(TICKET_BYTES)
        with self._lock:
            self._entries[ticket] = (envelope, time.monotonic() + ttl)
        return ticket

    def take(self, ticket: bytes) -> wire.Envelope:
        with self._lock:
            entry = self._entries.pop(ticket, None)
        if entry is None:
            raise errors.NotFoundError(None, None, f"Transfer {ticket.hex()} does not exist or "
                                       "has expired")
        return entry[0]

    def sweep(self) -> int:
        now = time.monotonic()
        with self._lock:
            expired = [t for t, (_, until) in self._entries.items() if until < now]
            for ticket in expired:
                del self._entries[ticket]
        return len(expired)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
