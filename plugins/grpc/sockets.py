"""TCP options of the call and bulk lanes' sockets (both ends).

Contract: `keep_alive` turns on TCP keepalive: after `IDLE_SECONDS` without a byte the kernel
probes the peer every `INTERVAL_SECONDS` and resets the connection after `PROBES` unanswered
probes, and data it sent that goes unacknowledged for `USER_TIMEOUT_SECONDS` resets it too
(``TCP_USER_TIMEOUT``). So a peer whose host vanished, or whose network dropped without a
reset, ends the connection within about 10 s, its reads and writes failing, instead of holding
it until the operation timeout; a lane with calls in flight notices sooner by its own stall
watch. Options a platform lacks are left out.
"""

from __future__ import annotations

import socket

IDLE_SECONDS = 5
INTERVAL_SECONDS = 2
PROBES = 3
USER_TIMEOUT_SECONDS = 15


def keep_alive(conn: socket.socket) -> None:
    """Turn on keepalive (and the user timeout, where there is one) for `conn`."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", IDLE_SECONDS), ("TCP_KEEPINTVL", INTERVAL_SECONDS),
                        ("TCP_KEEPCNT", PROBES),
                        ("TCP_USER_TIMEOUT", USER_TIMEOUT_SECONDS * 1000)):
        option = getattr(socket, name, None)
        if option is not None:
            conn.setsockopt(socket.IPPROTO_TCP, option, value)
