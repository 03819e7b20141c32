"""The figures of issue 17's network items, each beside a baseline measured in the same run.

Run ``python benchmarks/hardening.py``. It starts a ps and a worker as ``tensorweave server``
processes on 127.0.0.1 and prints:

- **amplification**: the worker's RSS growth 2 s after a 48-byte streamed request that declares
  2**28 empty strings (2 GiB of object pointers, as the issue's) and sends nothing more, and
  the same with 2**27 (within the default per-connection cap); baseline: its RSS before the
  request;
- **idle bulk connections**: the time to fetch a 12 MiB reply (a deferred one, over the bulk
  port) while 8 connections to that port sit idle; baseline: the same fetch without them;
- **orphaned step**: the time from SIGKILL of a client in the middle of a CPU-bound loop that
  spans both tasks until the loop stops (its counter on the ps stops moving); baseline: the
  step's deadline, which bounded it before;
- **hostile header**: the worker's peak RSS growth while it decodes a streamed request whose
  168 MiB header is 2**25 empty lists (over the default per-message cap once decoded: refused
  naming it); baseline: what those lists take decoded, measured here on 2**16 of them and
  scaled;
- **hostile strings**: the same for a streamed request of 2**25 two-byte strings (320 MiB on
  the wire, under the default per-message cap, but over it once their 2**25 `bytes` objects are
  counted: refused naming it); baseline: what they take decoded, measured on 2**16 and scaled;
- **black-holed peer**: the time until a call through a TCP proxy that stops forwarding
  (holding its connections open) fails, on a channel with the transport's options (HTTP/2
  keepalive); baseline: the same call on a channel with gRPC's default options, which waits
  for the call's 30 s deadline;
- with ``--graph-nodes N`` (1e6 for the issue's figure), an ExtendSession of a chain of N placed
  ``Neg`` ops on a fed scalar (a header well over the 64 MiB the wire once capped), then a step
  running them all (its first run compiles: prune, place, partition, register) and the same
  step again (cached): the time of each and the worker's RSS before and after; baseline: the
  time of the ExtendSession.
"""

from __future__ import annotations

import argparse
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator

import grpc
import numpy as np
from common import rss

import tensorweave as tf
from tensorweave.plugins.grpc import rpc, wire
from tensorweave.train.local_cluster import LocalCluster

MIB = 1 << 20
ORPHAN_CLIENT = """
import sys
import tensorweave as tf
with tf.device("/job:ps/task:0"):
    counter = tf.Variable(0, dtype=tf.int64, name="orphan_counter")
    def body(i):
        with tf.control_dependencies([tf.assign_add(counter, tf.constant(1, tf.int64))]):
            return i + 1
    loop = tf.while_loop(lambda i: i < 10**9, body, [tf.constant(0)])
with tf.device("/job:worker/task:0"):
    out = loop * 2
sess = tf.Session(sys.argv[1], config=tf.ConfigProto(operation_timeout_in_ms=int(sys.argv[2])))
sess.run(counter.initializer)
print("running", flush=True)
sess.run(out)
"""



def string_head(count: int) -> bytes:
    table = struct.pack("<BBqQ", wire.STRING_CODE, 1, count, 8 * count)
    body = bytes([wire.T_TENSOR]) + struct.pack("<I", 0)
    header = table + body + bytes(-(len(table) + len(body)) % 8)
    return struct.pack("<2sBBIIIQ", b"TW", wire.VERSION, 0, 1, len(header), 0,
                       8 * count) + header


def amplification(cluster: LocalCluster, count: int) -> None:
    pid = cluster.process("worker").pid
    address = cluster.target("worker")[len("grpc://"):]
    release = threading.Event()

    def chunks() -> Iterator[bytes]:
        yield string_head(count)
        release.wait(60)

    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        before = rss(pid)
        call = channel.stream_unary("/tensorweave.Worker/GetStatusStream").future(
            chunks(), timeout=60)
        time.sleep(2.0)
        after = rss(pid)
        release.set()
        try:
            call.result()
        except grpc.RpcError as exc:
            outcome = exc.code().name
    print(f"amplification, {count * 8 / (1 << 30):g} GiB of pointers declared: worker RSS "
          f"{before / MIB:.1f} MiB before, {after / MIB:.1f} MiB 2 s "
          f"after the request: {(after - before) / MIB:+.1f} MiB, ratio {after / before:.3f} "
          f"(the call ended {outcome})")


def empty_lists(count: int) -> bytes:
    """A request ``{"x": [[], [], ...]}`` of `count` empty lists (5 header bytes each)."""
    body = b"".join((bytes([wire.T_DICT]), struct.pack("<I", 1), bytes([wire.T_STR]),
                     struct.pack("<I", 1), b"x", bytes([wire.T_LIST]), struct.pack("<I", count),
                     (bytes([wire.T_LIST]) + bytes(4)) * count))
    header = body + bytes(-len(body) % 8)
    return struct.pack("<2sBBIIIQ", b"TW", wire.VERSION, 0, 0, len(header), 0, 0) + header


def two_byte_strings(count: int) -> bytes:
    """A request ``{"x": <string tensor of `count` two-byte strings>}`` (10 bytes each)."""
    table = struct.pack("<BBqQ", wire.STRING_CODE, 1, count, 10 * count)
    body = b"".join((bytes([wire.T_DICT]), struct.pack("<I", 1), bytes([wire.T_STR]),
                     struct.pack("<I", 1), b"x", bytes([wire.T_TENSOR]), struct.pack("<I", 0)))
    header = table + body + bytes(-(len(table) + len(body)) % 8)
    payload = np.full(count, 2, "<u8").tobytes() + b"ab" * count
    payload += bytes(-len(payload) % 8)
    return struct.pack("<2sBBIIIQ", b"TW", wire.VERSION, 0, 1, len(header), 0,
                       len(payload)) + header + payload


def peak_growth(pid: int, request: bytes, address: str) -> tuple[int, int, str]:
    """(RSS before, peak RSS, how the call ended) while `request` streams to GetStatus."""
    chunks = [request[i:i + wire.CHUNK_BYTES] for i in range(0, len(request), wire.CHUNK_BYTES)]
    before = rss(pid)
    peak = [before]
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.01):
            peak[0] = max(peak[0], rss(pid))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    outcome = "OK"
    with grpc.insecure_channel(address) as channel:
        try:
            channel.stream_unary("/tensorweave.Worker/GetStatusStream")(iter(chunks),
                                                                        timeout=600)
        except grpc.RpcError as exc:
            outcome = f"{exc.code().name}: {exc.details()[-60:]}"
    done.set()
    watcher.join()
    return before, peak[0], outcome


def hostile(cluster: LocalCluster, make: Callable[[int], bytes], count: int, what: str) -> None:
    """Streams `make(count)`, a request that decodes to `count` small objects (`what`), to the
    worker and prints its peak RSS growth against what decoding it in full would take (per
    object, measured with tracemalloc on 2^16 of them)."""
    sample = 1 << 16
    frame = make(sample)
    tracemalloc.start()
    decoded = wire.decode(frame)
    per_object = tracemalloc.get_traced_memory()[0] / sample
    tracemalloc.stop()
    del decoded
    request = make(count)
    before, peak, outcome = peak_growth(cluster.process("worker").pid, request,
                                        cluster.target("worker")[len("grpc://"):])
    uncapped = per_object * count
    grown = peak - before
    print(f"hostile request of {len(request) / MIB:.0f} MiB ({count} {what}): worker RSS "
          f"{before / MIB:.0f} MiB before, peak {peak / MIB:.0f} MiB ({grown / MIB:+.0f} MiB);"
          f" decoded in full they take {uncapped / MIB:.0f} MiB ({per_object:.1f} B each): "
          f"ratio {grown / uncapped:.2f} (the call ended {outcome})")


class BlackHole:
    """A TCP proxy to ``127.0.0.1:port`` that forwards until `stop`, then holds its
    connections open and moves nothing more."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stopped = threading.Event()
        self._sockets = [self._listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self._port))
            except OSError:
                return
            self._sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        src.settimeout(0.1)
        while not self._stopped.is_set():
            try:
                data = src.recv(1 << 16)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data or self._stopped.is_set():
                return
            dst.sendall(data)

    def stop(self) -> None:
        self._stopped.set()

    def close(self) -> None:
        self._stopped.set()
        for sock in self._sockets:
            sock.close()


def black_holed(cluster: LocalCluster, deadline: float) -> None:
    port = int(cluster.target("worker").rsplit(":", 1)[1])
    took = {}

    def call(name: str, options: list) -> None:
        hole = BlackHole(port)
        channel = grpc.insecure_channel(f"127.0.0.1:{hole.port}", options=options)
        try:
            status = channel.unary_unary("/tensorweave.Worker/GetStatus")
            status(wire.encode({}).frame(), timeout=10)
            hole.stop()
            start = time.monotonic()
            try:
                status(wire.encode({}).frame(), timeout=deadline)
                outcome = "answered"
            except grpc.RpcError as exc:
                outcome = f"{exc.code().name}: {exc.details()}"
            took[name] = (time.monotonic() - start, outcome)
        finally:
            channel.close()
            hole.close()

    calls = [threading.Thread(target=call, args=args) for args in (
        ("keepalive", rpc.CHANNEL_OPTIONS), ("default", rpc.OPTIONS))]
    for thread in calls:
        thread.start()
    for thread in calls:
        thread.join()
    (fast, why), (slow, why_slow) = took["keepalive"], took["default"]
    print(f"black-holed peer: the call failed after {fast:.1f} s with keepalive ({why}), "
          f"{slow:.1f} s with gRPC's defaults ({why_slow}): ratio {fast / slow:.2f}")


def fetch_time(cluster: LocalCluster, idle: int) -> float:
    address = cluster.target("worker")[len("grpc://"):]
    with grpc.insecure_channel(address) as channel:
        reply = channel.unary_unary("/tensorweave.Transfer/Lane")(wire.encode({}).frame(),
                                                                   timeout=10)
    port = wire.decode(reply).body["port"]
    conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(idle)]
    try:
        graph = tf.Graph()
        with graph.as_default(), tf.device("/job:worker/task:0"):
            big = tf.fill([3 * MIB], 2.0)
        with tf.Session(cluster.target("worker"), graph=graph) as sess:
            start = time.monotonic()
            try:
                sess.run(big)
            except tf.errors.OpError as exc:
                print(f"  the fetch with {idle} idle connections failed: "
                      f"{type(exc).__name__}: {exc.message[:120]}")
            return time.monotonic() - start
    finally:
        for conn in conns:
            conn.close()


def orphan_abort(cluster: LocalCluster, deadline_ms: int) -> float:
    client = subprocess.Popen([sys.executable, "-c", ORPHAN_CLIENT, cluster.target("worker"),
                               str(deadline_ms)], stdout=subprocess.PIPE, text=True)
    graph = tf.Graph()
    with graph.as_default(), tf.device("/job:ps/task:0"):
        counter = tf.Variable(0, dtype=tf.int64, name="orphan_counter")
    with tf.Session(cluster.target("ps"), graph=graph) as sess:
        assert client.stdout.readline().strip() == "running"
        while sess.run(counter) < 1000:
            time.sleep(0.02)
        client.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        client.wait()
        last, last_change = sess.run(counter), time.monotonic()
        while time.monotonic() - last_change < 1.0:  # until it has not moved for 1 s
            time.sleep(0.02)
            now = sess.run(counter)
            if now != last:
                last, last_change = now, time.monotonic()
        return last_change - killed


def big_graph(cluster: LocalCluster, count: int) -> None:
    pid = cluster.process("worker").pid
    device = "/job:worker/replica:0/task:0/device:CPU:0"
    scalar = tf.TensorShape([])
    typed = {"_output_types": [tf.float32], "_output_shapes": [scalar]}
    nodes = [["x", "Placeholder", [], device, {"dtype": tf.float32, "shape": scalar, **typed}],
             *([f"n{i}", "Neg", [f"n{i - 1}" if i else "x"], device, {"T": tf.float32, **typed}]
               for i in range(count))]
    with grpc.insecure_channel(cluster.target("worker")[len("grpc://"):]) as channel:
        created = channel.unary_unary("/tensorweave.Master/CreateSession")(
            wire.encode({"config": {}}).frame(), timeout=30)
        handle = wire.decode(created).body["session_handle"]
        envelope = wire.encode({"session_handle": handle, "nodes": nodes})
        before = rss(pid)
        start = time.monotonic()
        channel.stream_unary("/tensorweave.Master/ExtendSessionStream")(envelope.chunks(),
                                                                          timeout=900)
        took = time.monotonic() - start
        extended = rss(pid)
        step = wire.encode({"session_handle": handle, "feeds": {"x:0": np.array(1.5, np.float32)},
                            "fetches": [f"n{count - 1}:0"], "targets": [],
                            "collect_stats": False, "timeout": 3600.0}).frame()
        runs = []
        for _ in range(2):
            start = time.monotonic()
            reply = channel.unary_unary("/tensorweave.Master/RunStep")(step, timeout=3600)
            runs.append(time.monotonic() - start)
            assert wire.decode(reply).body["values"][0] == 1.5 * (-1) ** count
    print(f"graph of {count} nodes: a {len(envelope.head) / MIB:.1f} MiB header, ExtendSession "
          f"took {took:.1f} s; worker RSS {before / MIB:.0f} -> {extended / MIB:.0f} MiB")
    print(f"  a step running all {count}: first (compiling) {runs[0]:.2f} s, again (cached) "
          f"{runs[1]:.3f} s: ratios {runs[0] / took:.2f} and {runs[1] / took:.3f} of the "
          f"ExtendSession; worker RSS then {rss(pid) / MIB:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph-nodes", type=int, default=0)
    args = parser.parse_args()
    with LocalCluster({"ps": 1, "worker": 1}, host="127.0.0.1") as cluster:
        amplification(cluster, 1 << 28)  # 2 GiB, as the request: over the cap
        amplification(cluster, 1 << 27)  # 1 GiB: within the cap, allocated only as it arrives
        hostile(cluster, empty_lists, 1 << 25, "empty lists in its header")
        hostile(cluster, two_byte_strings, 1 << 25, "two-byte strings")
        black_holed(cluster, 30.0)
        fetch_time(cluster, 0)  # warm-up: connections, the call lane
        quiet = fetch_time(cluster, 0)
        busy = fetch_time(cluster, 8)
        print(f"idle bulk connections: 12 MiB fetch {busy:.3f} s with 8 idle connections, "
              f"{quiet:.3f} s without: ratio {busy / quiet:.2f}")
        deadline_ms = 60_000
        took = orphan_abort(cluster, deadline_ms)
        print(f"orphaned step: stopped {took:.3f} s after its client was killed; the step's "
              f"deadline {deadline_ms / 1000:.0f} s: ratio {took / (deadline_ms / 1000):.4f}")
        if args.graph_nodes:
            big_graph(cluster, args.graph_nodes)


if __name__ == "__main__":
    main()
