"""``py_func``/``numpy_function``: numpy references, dtypes and strings, several outputs, one
call per run, typed errors (the callable's exceptions, bad results, a token from another
process on a real local cluster), never folded or evaluated at graph construction, merged by
CSE only when stateless, no gradient, and the callable's lifetime tied to its graph."""

from __future__ import annotations

import gc
import itertools
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.engine.graph import py_func_registry
from tensorweave.engine.graph.graph import constant_value
from tensorweave.engine.graph.graph_def import GraphDef
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.passes import PassContext
from tensorweave.engine.runtime.prune import prune
from tensorweave.plugins.constant_folding import fold_constants
from tensorweave.plugins.cse import eliminate_common_subexpressions
from tensorweave.train.local_cluster import LocalCluster

TOKEN = r"pyfunc_\d+_[0-9a-f]+"


def counting(func: Callable[..., Any]) -> tuple[Callable[..., Any], Counter[str]]:
    calls: Counter[str] = Counter()

    def wrapped(*args: Any) -> Any:
        calls["n"] += 1
        return func(*args)

    return wrapped, calls


def pruned(fetches: list[tw.Tensor]) -> tuple[GraphDef, PassContext]:
    graph_def = prune(tw.get_default_graph()._engine_graph_def(), [], [t.name for t in fetches], [])
    keep = {n.name for n in graph_def.node if n.op in ("_Arg", "_Retval")}
    return graph_def, PassContext(get_registries(), frozenset(keep))


def test_single_dtype_gives_one_tensor_of_unknown_shape_matching_numpy() -> None:
    x = tw.placeholder(tw.float32, [None])
    y = tw.py_func(np.sinh, [x], tw.float32)
    assert isinstance(y, tw.Tensor) and y.dtype == tw.float32 and y.shape.ndims is None
    assert y.op.type == "PyFunc" and y.op.name == "PyFunc"
    assert y.op.get_attr("Tin") == [tw.float32] and y.op.get_attr("Tout") == [tw.float32]
    assert isinstance(y.op.get_attr("token"), str)
    value = np.array([-1.5, 0.0, 2.0], np.float32)
    with tw.Session() as sess:
        got = sess.run(y, {x: value})
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.sinh(value))


def test_list_tout_gives_a_list_and_inputs_of_mixed_dtypes_arrive_as_numpy() -> None:
    seen: list[tuple[Any, ...]] = []

    def f(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> list[np.ndarray]:
        seen.append((type(a), a.dtype, b.dtype, c.dtype, a.shape, b.shape))
        return [np.where(c, a * 2, a), (b + 1).astype(np.int64), np.float64(a.sum())]

    a = tw.constant([[1.0, 2.0], [3.0, 4.0]], tw.float64)
    b = tw.constant(7)
    c = tw.constant([True, False])
    outs = tw.py_func(f, [a, b, c], [tw.float64, tw.int64, tw.float64], stateful=False,
                      name="mixed")
    assert isinstance(outs, list) and [t.dtype for t in outs] == [tw.float64, tw.int64,
                                                                   tw.float64]
    assert outs[0].op.type == "PyFuncStateless" and outs[0].op.name == "mixed"
    assert outs[0].op.get_attr("Tin") == [tw.float64, tw.int32, tw.bool]
    single = tw.py_func(lambda v: v * 3, [b], [tw.int32])
    assert isinstance(single, list) and len(single) == 1
    with tw.Session() as sess:
        first, second, total, tripled = sess.run([*outs, single[0]])
    np.testing.assert_array_equal(first, [[2.0, 2.0], [6.0, 4.0]])
    assert second.dtype == np.int64 and second == 8
    assert total.dtype == np.float64 and total == 10.0
    assert tripled.dtype == np.int32 and tripled == 21
    # a scalar arrives as a 0-d array, not a numpy scalar
    assert seen == [(np.ndarray, np.float64, np.int32, np.bool_, (2, 2), ())]


def test_numpy_function_is_a_stateful_py_func() -> None:
    x = tw.constant([1, 2, 3], tw.int32)
    y = tw.numpy_function(lambda v: np.cumsum(v).astype(np.int32), [x], tw.int32, name="cum")
    assert y.op.type == "PyFunc" and y.op.name == "cum"
    with tw.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [1, 3, 6])


def test_arguments_are_private_writable_copies() -> None:
    def mutate(v: np.ndarray) -> np.ndarray:
        v += 100  # the callable owns its argument
        return v

    x = tw.constant([1.0, 2.0])
    y = tw.py_func(mutate, [x], tw.float32)
    z = tw.identity(x)
    with tw.Session() as sess:
        got_y, got_z = sess.run([y, z])
    np.testing.assert_array_equal(got_y, [101.0, 102.0])
    np.testing.assert_array_equal(got_z, [1.0, 2.0])


def test_results_are_copied_so_the_callable_may_keep_them() -> None:
    buffer = np.zeros(3, np.float32)

    def fill(v: np.ndarray) -> np.ndarray:
        buffer[:] = v
        return buffer

    p = tw.placeholder(tw.float32, [3])
    y = tw.py_func(fill, [p], tw.float32)
    with tw.Session() as sess:
        first = sess.run(y, {p: [1, 2, 3]})
        second = sess.run(y, {p: [4, 5, 6]})
    assert first is not buffer
    np.testing.assert_array_equal(first, [1, 2, 3])
    np.testing.assert_array_equal(second, [4, 5, 6])


def test_strings_arrive_as_bytes_and_return_from_str_bytes_and_numpy_string_arrays() -> None:
    seen: list[Any] = []

    def f(scalar: bytes, vector: np.ndarray) -> list[Any]:
        seen.extend([scalar, vector.dtype, vector.tolist()])
        return [scalar.decode().upper(), np.array(["ab", "c"]), np.array([b"x", b"yz"]),
                [b"p", "q"], len(vector)]

    s = tw.constant("hi")
    v = tw.constant(["a", "bcd"])
    outs = tw.py_func(f, [s, v], [tw.string, tw.string, tw.string, tw.string, tw.int64])
    with tw.Session() as sess:
        upper, unicode_array, bytes_array, mixed, length = sess.run(outs)
    assert seen == [b"hi", np.dtype(object), [b"a", b"bcd"]]
    assert upper == b"HI" and type(upper) is bytes
    for got, want in ((unicode_array, [b"ab", b"c"]), (bytes_array, [b"x", b"yz"]),
                      (mixed, [b"p", b"q"])):
        assert got.dtype == object and got.tolist() == want  # unpadded bytes
    assert length == 2


def test_a_stateful_func_runs_once_per_run_however_many_consumers() -> None:
    func, calls = counting(lambda: np.float32(calls["n"]))
    y = tw.py_func(func, [], tw.float32)
    a, b = y + 1, y * 2
    with tw.Session() as sess:  # (later runs take the compiled plan)
        results = [sess.run([y, a, b]) for _ in range(5)]
    assert calls["n"] == 5
    assert [list(map(float, r)) for r in results] == [[n, n + 1, 2 * n] for n in range(1, 6)]


def test_empty_tout_gives_the_operation_and_none_means_no_outputs() -> None:
    log: list[int] = []
    x = tw.placeholder(tw.int32, [])
    op = tw.py_func(lambda v: log.append(int(v)), [x], [])
    assert isinstance(op, tw.Operation) and op.outputs == []
    with tw.Session() as sess:
        assert sess.run(op, {x: 5}) is None
        sess.run(op, {x: 6})
    assert log == [5, 6]


@pytest.mark.parametrize("raised, expected", [
    (ValueError("bad value"), errors.InvalidArgumentError),
    (TypeError("bad type"), errors.InvalidArgumentError),
    (StopIteration("done"), errors.OutOfRangeError),
    (MemoryError("full"), errors.ResourceExhaustedError),
    (NotImplementedError("later"), errors.UnimplementedError),
    (KeyError("k"), errors.UnknownError),
    (RuntimeError("oops"), errors.UnknownError),
    (errors.NotFoundError(None, None, "inner"), errors.UnknownError),  # as TF: not mapped back
])
def test_exceptions_of_the_callable_are_typed_and_the_session_keeps_working(
        raised: Exception, expected: type[errors.OpError]) -> None:
    def f(flag: np.ndarray) -> np.ndarray:
        if flag:
            raise raised
        return np.float32(1.5)

    p = tw.placeholder(tw.bool, [])
    y = tw.py_func(f, [p], tw.float32, name="user_fn")
    with tw.Session() as sess:
        for _ in range(3):  # so the failure also happens on the compiled plan
            sess.run(y, {p: False})
        with pytest.raises(expected) as info:
            sess.run(y, {p: True})
        assert sess.run(y, {p: False}) == np.float32(1.5)
    assert type(info.value) is expected
    message = str(info.value)
    assert message.startswith(f"{type(raised).__name__}: ")
    assert "Traceback (most recent call last)" in message and "in f\n" in message
    assert "[[node user_fn (op: PyFunc) on device /job:localhost/replica:0/task:0/" in message
    assert info.value.op.name == "user_fn" and info.value.op.type == "PyFunc"


@pytest.mark.parametrize("returned, tout, expected, pattern", [
    (np.zeros(2), tw.float32, errors.InvalidArgumentError,
     rf"^0-th value returned by {TOKEN} is float64, but expects float32"),
    (1.0, tw.float32, errors.InvalidArgumentError,  # a Python float is float64, as in TF
     rf"^0-th value returned by {TOKEN} is float64, but expects float32"),
    ((np.int32(1), np.int64(2)), [tw.int32, tw.int32], errors.InvalidArgumentError,
     rf"^1-th value returned by {TOKEN} is int64, but expects int32"),
    ((np.int32(1), np.int32(2)), tw.int32, errors.InvalidArgumentError,
     rf"^{TOKEN} returns 2 values, but expects to see 1 values\."),
    (None, tw.int32, errors.InvalidArgumentError,
     rf"^{TOKEN} returns 0 values, but expects to see 1 values\."),
    (np.zeros(2, "datetime64[s]"), tw.int32, errors.UnimplementedError,
     r"^Unsupported numpy type datetime64"),
    (([[1, 2], [3]],), tw.int64, errors.InvalidArgumentError,  # a ragged list: no array
     r"^ValueError: .*inhomogeneous"),
    (np.array(["a", 3], dtype=object), tw.string, errors.UnimplementedError,
     r"^Unsupported object type int"),
])
def test_results_of_the_wrong_dtype_or_count_are_typed_errors(
        returned: Any, tout: Any, expected: type[errors.OpError], pattern: str) -> None:
    y = tw.py_func(lambda: returned, [], tout, name="bad")
    fetch = y[0] if isinstance(y, list) else y
    with tw.Session() as sess:
        with pytest.raises(expected, match=pattern) as info:
            sess.run(fetch)
        assert sess.run(tw.constant(2) + 1) == 3
    assert type(info.value) is expected
    assert "[[node bad (op: PyFunc) on device " in str(info.value)


def test_bad_arguments_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="Expected func to be callable"):
        tw.py_func(3, [], tw.float32)
    with pytest.raises(TypeError, match="Expected list for 'input'"):
        tw.py_func(np.sinh, tw.constant(1.0), tw.float32)
    with pytest.raises(TypeError):
        tw.py_func(np.sinh, [], "no-such-dtype")
    x = tw.constant(1.0)
    with pytest.raises(TypeError, match="attr Tin is"):
        tw.raw_ops.PyFunc(input=[x], token="t", Tin=[tw.int32], Tout=[])


def test_an_unknown_token_is_invalid_argument_naming_node_op_and_device() -> None:
    y = tw.raw_ops.PyFunc(input=[], token="pyfunc_0_elsewhere", Tin=[], Tout=[tw.int32],
                          name="orphan")
    with tw.Session() as sess, pytest.raises(
            errors.InvalidArgumentError,
            match=r"^callback pyfunc_0_elsewhere is not found: .*not registered in this process"
                  r"(.|\n)*\[\[node orphan \(op: PyFunc\) on device /job:localhost"):
        sess.run(y)


def test_never_folded_nor_evaluated_when_the_graph_is_built() -> None:
    func, calls = counting(lambda v: (v * 2).astype(np.int32))
    shape = tw.py_func(func, [tw.constant([1, 2])], tw.int32, stateful=False)
    assert constant_value(shape) is None
    reshaped = tw.reshape(tw.range(8), shape)  # shape inference asks for its value
    assert reshaped.shape.ndims is None and calls["n"] == 0
    graph_def = fold_constants(*pruned([reshaped]))
    assert [n.op for n in graph_def.node].count("PyFuncStateless") == 1
    assert calls["n"] == 0
    with tw.Session() as sess:
        for _ in range(3):
            assert sess.run(reshaped).shape == (2, 4)
    assert calls["n"] == 3


def test_cse_merges_stateless_calls_of_one_token_only() -> None:
    x = tw.constant([1.0, 2.0])
    token = tw.py_func(np.exp, [x], tw.float32).op.get_attr("token")
    outs = []
    for op in ("PyFunc", "PyFunc", "PyFuncStateless", "PyFuncStateless"):
        out = getattr(tw.raw_ops, op)(input=[x], token=token, Tin=[tw.float32],
                                     Tout=[tw.float32])
        outs.append(tw.identity(out[0]))
    merged = eliminate_common_subexpressions(*pruned(outs))
    kinds = Counter(n.op for n in merged.node)
    assert kinds["PyFunc"] == 2 and kinds["PyFuncStateless"] == 1
    with tw.Session() as sess:
        for got in sess.run(outs):
            np.testing.assert_allclose(got, np.exp([1.0, 2.0]).astype(np.float32))


def test_gradients_do_not_flow_through_a_py_func() -> None:
    x = tw.constant([1.0, 2.0])
    y = tw.py_func(np.square, [x], tw.float32)
    assert tw.gradients(y, x) == [None]
    assert tw.gradients(tw.reduce_sum(y), x) == [None]
    direct = tw.gradients(tw.reduce_sum(y * x), x)[0]  # only the path around the py_func
    with tw.Session() as sess:
        np.testing.assert_allclose(sess.run(direct), [1.0, 4.0])


def test_the_graph_keeps_the_callable_alive_and_takes_it_along() -> None:
    class Func:
        def __call__(self, v: np.ndarray) -> np.ndarray:
            return v + 1

    graph = tw.Graph()
    with graph.as_default():
        func = Func()
        token = tw.py_func(func, [tw.constant(1)], tw.int32).op.get_attr("token")
    probe = weakref.ref(func)
    del func
    gc.collect()
    assert py_func_registry.lookup(token) is probe()
    assert probe() is not None
    del graph
    gc.collect()
    assert probe() is None and py_func_registry.lookup(token) is None


def test_a_py_func_inside_a_cond_branch_lives_with_the_outer_graph() -> None:
    func, calls = counting(lambda v: v * 10)
    p = tw.placeholder(tw.bool, [])
    x = tw.placeholder(tw.int32, [])
    out = tw.cond(p, lambda: tw.py_func(func, [x], tw.int32), lambda: x)
    gc.collect()
    with tw.Session() as sess:
        assert sess.run(out, {p: True, x: 3}) == 30
        assert sess.run(out, {p: False, x: 3}) == 3
    assert calls["n"] == 1


def test_builtin_callables_are_accepted() -> None:
    y = tw.py_func(len, [tw.constant(["a", "b", "c"])], tw.int64)
    with tw.Session() as sess:
        assert sess.run(y) == 3


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster({"worker": 1}) as local:
        yield local


def test_on_another_process_the_token_is_not_found_and_the_session_goes_on(
        cluster: LocalCluster) -> None:
    ids = itertools.count()
    x = tw.placeholder(tw.float32, [], name="x")
    y = tw.py_func(lambda v: v + next(ids), [x], tw.float32, name="local_only")
    z = x * 2
    with tw.Session(cluster.target("worker", 0)) as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(y, {x: 1.0})
        assert sess.run(z, {x: 4.0}) == 8.0
    assert type(info.value) is errors.InvalidArgumentError
    assert info.value.op.type == "PyFunc" and info.value.op.name == "local_only"
    message = str(info.value)
    assert message.startswith(f"callback {y.op.get_attr('token')} is not found")
    assert "[[node local_only (op: PyFunc) on device /job:worker/replica:0/task:0/" in message
    assert next(ids) == 0  # never called here either


def test_py_function_hands_eager_like_tensors_and_converts_results() -> None:
    seen: dict[str, Any] = {}

    def func(a: Any, s: Any) -> Any:
        seen.update(dtype=a.dtype, shape=a.shape, numpy=a.numpy(), string=s.numpy(),
                    summed=np.sum(a), item=float(a[1]))
        return a * 2 + 1, 7, [[True]]

    x = tw.constant([1.0, 2.0, 3.0])
    y, n, flag = tw.py_function(func, [x, tw.constant("hi")], [tw.float32, tw.int64, tw.bool])
    single = tw.py_function(lambda a: np.asarray(a, np.float64) - a.numpy(), [x], tw.float32)
    with tw.Session() as sess:
        out = sess.run([y, n, flag, single])
    np.testing.assert_array_equal(out[0], [3.0, 5.0, 7.0])
    assert out[0].dtype == np.float32
    assert out[1] == 7 and out[1].dtype == np.int64  # a Python int takes Tout's dtype
    np.testing.assert_array_equal(out[2], [[True]])
    np.testing.assert_array_equal(out[3], [0.0, 0.0, 0.0])
    assert out[3].dtype == np.float32  # a float64 array is converted, as eager conversion
    assert seen["dtype"] == tw.float32 and seen["shape"] == tw.TensorShape([3])
    assert isinstance(seen["numpy"], np.ndarray) and seen["string"] == b"hi"
    assert seen["summed"] == 6.0 and seen["item"] == 2.0
    assert y.op.type == "PyFunc" and y.op.op_def.stateful


def test_py_function_bad_results_fail_the_step() -> None:
    x = tw.constant([1.0])
    lossy = tw.py_function(lambda a: 2.5, [x], tw.int32)
    other_dtype = tw.py_function(lambda a: a, [x], tw.float64)
    too_many = tw.py_function(lambda a: (a, a), [x], [tw.float32])
    with tw.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="Cannot convert 2.5"):
            sess.run(lossy)
        with pytest.raises(errors.InvalidArgumentError, match="requested dtype float64"):
            sess.run(other_dtype)
        with pytest.raises(errors.InvalidArgumentError, match="returns 2 values"):
            sess.run(too_many)
    with pytest.raises(ValueError, match="callable"):
        tw.py_function(3, [x], tw.float32)
