"""`tw.string` tensors: constants, feeds, fetches, passes, GPU exclusion and the gRPC wire."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import dtypes, errors
from tensorweave.engine.graph.graph_def import GraphDef, NodeDef
from tensorweave.engine.graph.string_array import string_nbytes, to_string_array
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.passes import PassContext
from tensorweave.engine.runtime.prune import prune
from tensorweave.plugins.constant_folding import fold_constants
from tensorweave.plugins.cse import eliminate_common_subexpressions
from tensorweave.plugins.grpc import wire


def test_string_dtype_names_and_numpy_mapping() -> None:
    assert tw.string == dtypes.as_dtype("string") == dtypes.as_dtype(bytes) == tw.as_dtype(str)
    assert dtypes.as_dtype(np.dtype("S3")) is tw.string
    assert dtypes.as_dtype(np.dtype("U2")) is tw.string
    assert dtypes.as_dtype(np.dtype(object)) is tw.string
    assert tw.string.is_string and not tw.string.is_numeric and not tw.float32.is_string
    assert tw.string not in dtypes.ALL
    with pytest.raises(TypeError):
        dtypes.as_dtype(dict)  # np.dtype(dict) is object, yet names no dtype


def test_to_string_array_encodes_str_and_refuses_other_elements() -> None:
    out = to_string_array([["a", b"b"], [np.str_("\u00e9"), np.bytes_(b"d")]])
    assert out.dtype == object and out.shape == (2, 2)
    assert out.tolist() == [[b"a", b"b"], ["\u00e9".encode(), b"d"]]
    assert all(type(e) is bytes for e in out.reshape(-1))
    assert string_nbytes(out) == 5
    with pytest.raises(TypeError, match="Expected string, got 1 of type 'int'"):
        to_string_array(["a", 1])


def test_constants_of_strings_fetch_as_bytes() -> None:
    scalar, vector = tw.constant(b"x"), tw.constant(["a", "bc"])
    typed = tw.constant("q", dtype=tw.string, shape=[2])
    assert scalar.dtype == vector.dtype == tw.string
    assert vector.shape.as_list() == [2] and typed.shape.as_list() == [2]
    with tw.Session() as sess:
        got_scalar, got_vector, got_typed = sess.run([scalar, vector, typed])
    assert got_scalar == b"x" and type(got_scalar) is bytes
    assert got_vector.dtype == object and got_vector.tolist() == [b"a", b"bc"]
    assert got_typed.tolist() == [b"q", b"q"]
    with pytest.raises(TypeError):
        tw.constant(1, dtype=tw.string)
    with pytest.raises(TypeError):
        tw.constant("a", dtype=tw.float32)


def test_string_placeholder_feeds_str_bytes_and_lists() -> None:
    p = tw.placeholder(tw.string, [None])
    out = tw.identity(p)
    with tw.Session() as sess:
        assert sess.run(out, {p: ["q", b"r"]}).tolist() == [b"q", b"r"]
        # an object array holding str still goes through the conversion
        assert sess.run(out, {p: np.array(["s"], dtype=object)}).tolist() == [b"s"]
        assert sess.run(out, {p: np.array([b"t", b"uv"])}).tolist() == [b"t", b"uv"]
        with pytest.raises(ValueError, match="Expected string"):
            sess.run(out, {p: [1]})
        with pytest.raises(ValueError, match="shape"):
            sess.run(out, {p: "scalar"})


def _pruned(fetches: list[tw.Tensor]) -> tuple[GraphDef, PassContext]:
    graph_def = prune(tw.get_default_graph()._engine_graph_def(), [], [t.name for t in fetches], [])
    keep = {n.name for n in graph_def.node if n.op in ("_Arg", "_Retval")}
    return graph_def, PassContext(get_registries(), frozenset(keep))


def test_cse_merges_equal_string_constants_only() -> None:
    outs = [tw.identity(tw.constant(v)) for v in (["ab", "c"], ["ab", "c"], ["ab", "d"])]
    merged = eliminate_common_subexpressions(*_pruned(outs))
    consts = [n.attr["value"].tolist() for n in merged.node if n.op == "Const"]
    assert sorted(consts) == [[b"ab", b"c"], [b"ab", b"d"]]
    with tw.Session() as sess:
        assert [g.tolist() for g in sess.run(outs)] == [[b"ab", b"c"], [b"ab", b"c"],
                                                         [b"ab", b"d"]]


def test_constant_folding_limits_string_values_by_their_bytes() -> None:
    out = tw.identity(tw.identity(tw.constant(["ab", "c"])))  # 3 bytes of strings
    graph_def, ctx = _pruned([out])

    def folded(limit: int) -> list[NodeDef]:
        return [n for n in fold_constants(graph_def, ctx, max_constant_bytes=limit).node
                if n.name == out.op.name and n.op == "Const"]  # folded in its place

    (const,) = folded(3)
    assert const.attr["value"].tolist() == [b"ab", b"c"] and const.attr["dtype"] == tw.string
    assert folded(2) == []  # nbytes (16 bytes of pointers) would not count the strings


def test_no_gpu_kernel_takes_strings() -> None:
    from tensorweave.engine.registry import KernelRegistry
    from tensorweave.plugins.gpu import kernels

    registry = KernelRegistry()
    kernels.register_kernels(registry.bind("gpu"))
    registry.freeze()
    assert registry.lookup("Identity", "GPU", tw.string) is None
    assert registry.lookup("Identity", "GPU", tw.float32) is not None
    assert registry.lookup("Const", "GPU", tw.string) is None


def test_wire_round_trips_string_tensors_whole_and_streamed() -> None:
    arrays = {"t": to_string_array([[b"ab", b""], [b"xyz", b"\x00\xff"]]),
              "e": np.empty((0, 3), object), "s": to_string_array(b"q"),
              "f": np.arange(3, dtype=np.float32), "d": tw.string}
    envelope = wire.encode(arrays)
    for message in (wire.decode(envelope.frame()), wire.decode_stream(envelope.chunks(7))):
        body = message.body
        assert body["t"].dtype == object and body["t"].tolist() == arrays["t"].tolist()
        assert body["e"].shape == (0, 3) and body["s"].shape == () and body["s"][()] == b"q"
        assert body["f"].tolist() == [0.0, 1.0, 2.0] and body["d"] is tw.string


def test_wire_refuses_non_bytes_elements_at_the_sender() -> None:
    with pytest.raises(errors.InvalidArgumentError, match="holding a str"):
        wire.encode({"t": np.array(["not bytes"], dtype=object)})


def _string_frame(lengths: list[int], data: bytes, count_field: int | None = None) -> bytearray:
    """A frame with one 1-d string tensor whose payload we forge."""
    frame = bytearray(wire.encode({"t": to_string_array([b"x"] * len(lengths))}).frame())
    payload = np.array(lengths, "<u8").tobytes() + data
    declared = len(payload) if count_field is None else count_field
    padded = (len(payload) + 7) & ~7
    # preamble: payload_len at offset 16; table entry: code, rank, dim, byte count (offset 34)
    frame[16:24] = padded.to_bytes(8, "little")
    frame[34:42] = declared.to_bytes(8, "little")
    head = frame[:24 + int.from_bytes(frame[8:12], "little")]
    return head + payload + bytes(padded - len(payload))


def test_wire_validates_string_lengths_on_receipt() -> None:
    assert wire.decode(bytes(_string_frame([2, 1], b"abc"))).body["t"].tolist() == [b"ab", b"c"]
    with pytest.raises(errors.InvalidArgumentError, match="do not add up"):
        wire.decode(bytes(_string_frame([2, 2], b"abc")))
    with pytest.raises(errors.InvalidArgumentError, match="do not add up"):
        wire.decode(bytes(_string_frame([2**64 - 1, 4], b"abc")))  # would wrap a sum
    with pytest.raises(errors.InvalidArgumentError, match="declares"):
        wire.decode(bytes(_string_frame([1, 1], b"ab", count_field=9)))  # < 8 bytes/element
    with pytest.raises(errors.InvalidArgumentError, match="declares"):
        wire.decode(bytes(_string_frame([1, 1], b"ab", count_field=wire.MAX_STRING_TENSOR_BYTES
                                        + 1)))
    decoder = wire.StreamDecoder()
    with pytest.raises(errors.InvalidArgumentError, match="do not add up"):
        decoder.feed(bytes(_string_frame([3, 1], b"abc")))
        decoder.finish()


def test_string_tensor_fetched_from_an_in_process_server() -> None:
    with tw.train.Server.create_local_server() as server:
        p = tw.placeholder(tw.string, [None])
        out = tw.identity(p)
        const = tw.constant(["k", "\u00e9"])
        with tw.Session(server.target) as sess:
            got, fed = sess.run([const, out], {p: [b"a" * 100, b""]})
    assert got.tolist() == [b"k", "\u00e9".encode()]
    assert fed.tolist() == [b"a" * 100, b""]


def test_string_tensor_crosses_processes_in_a_local_cluster() -> None:
    from tensorweave.train.local_cluster import LocalCluster

    with LocalCluster({"worker": 2}) as cluster:
        with tw.device("/job:worker/task:1"):
            p = tw.placeholder(tw.string, [None], name="p")
            on_1 = tw.identity(p)
            summary = tw.summary.scalar("x", tw.constant(2.5))
        with tw.device("/job:worker/task:0"):
            on_0 = tw.identity(on_1)
        with tw.Session(cluster.target("worker", 0)) as sess:
            got, serialized = sess.run([on_0, summary], {p: ["one", b"\x00two"]})
    assert got.tolist() == [b"one", b"\x00two"]
    assert tw.Summary.FromString(serialized).value[0].simple_value == 2.5
