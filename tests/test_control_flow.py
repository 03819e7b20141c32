"""Functional control flow: ``cond``, ``case``, ``switch_case`` and ``while_loop`` build one
``If``/``Case``/``While`` op whose functions run on the op's device within the step: results
against numpy, construction errors as ``tf.compat.v1``, branch-only side effects, nesting,
runtime errors naming the inner node, the graph passes, and TF1-style scripts."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine.graph.func_graph import FunctionDef
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.proto.framework import DATA_TYPES
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.engine.runtime.executor import StepContext
from tensorweave.engine.runtime.passes import PassContext
from tensorweave.engine.runtime.rendezvous import Rendezvous
from tensorweave.plugins.constant_folding import fold_constants
from tensorweave.plugins.cse import eliminate_common_subexpressions
from tensorweave.plugins.kernels.control_flow import if_kernel, while_kernel

Pair = collections.namedtuple("Pair", "a b")


# -- cond ---------------------------------------------------------------------------------------


def test_cond_runs_the_branch_the_fed_predicate_picks() -> None:
    x = tw.placeholder(tw.float32, [3])
    p = tw.placeholder(tw.bool, [])
    y = tw.cond(p, lambda: x * x, lambda: 3.0 * x)
    assert y.op.type == "StatelessIf" and y.op.name == "cond/If"
    assert y.dtype == tw.float32 and y.shape.as_list() == [3]
    then_fn = y.op.get_attr("then_branch")
    assert isinstance(then_fn, FunctionDef) and then_fn.arg_types == [tw.float32]
    value = np.array([1.0, -2.0, 3.0], np.float32)
    with tw.Session() as sess:
        got_t, got_f = sess.run(y, {x: value, p: True}), sess.run(y, {x: value, p: False})
    np.testing.assert_array_equal(got_t, value * value)
    np.testing.assert_array_equal(got_f, 3 * value)
    assert got_t.dtype == got_f.dtype == np.float32


def test_cond_nested_structures_and_singletons() -> None:
    p = tw.placeholder(tw.bool, [])
    a = tw.constant(1)
    nested = tw.cond(p, lambda: {"x": (a, Pair(a * 2, 1.5))}, lambda: {"x": (a - 1, Pair(7, 2.5))})
    assert isinstance(nested["x"][1], Pair)
    single = tw.cond(p, lambda: [a], lambda: [a + 1])
    strict = tw.cond(p, lambda: [a], lambda: [a + 1], strict=True)
    assert isinstance(single, tw.Tensor) and isinstance(strict, list) and len(strict) == 1
    with tw.Session() as sess:
        assert sess.run(nested, {p: True}) == {"x": (1, Pair(2, 1.5))}
        assert sess.run(nested, {p: False}) == {"x": (0, Pair(7, 2.5))}
        assert sess.run([single, strict], {p: False}) == [2, [2]]


def test_cond_output_shape_is_the_most_specific_compatible_one() -> None:
    p = tw.placeholder(tw.bool, [])
    same = tw.cond(p, lambda: tw.zeros([2, 3]), lambda: tw.ones([2, 3]))
    mixed = tw.cond(p, lambda: tw.zeros([2, 3]), lambda: tw.ones([2, 4]))
    ranks = tw.cond(p, lambda: tw.zeros([2]), lambda: tw.ones([2, 4]))
    assert same.shape.as_list() == [2, 3]
    assert mixed.shape.as_list() == [2, None]
    assert ranks.shape.ndims is None
    with tw.Session() as sess:
        assert sess.run(mixed, {p: False}).shape == (2, 4)


def test_cond_fn1_fn2_and_tensor_predicates() -> None:
    x = tw.constant(4)
    y = tw.cond(x > 3, fn1=lambda: x + 1, fn2=lambda: x - 1)
    with tw.Session() as sess:
        assert sess.run(y) == 5


@pytest.mark.parametrize("call, error, message", [
    (lambda p: tw.cond(True, lambda: 1, lambda: 2), TypeError, "must not be a Python bool"),
    (lambda p: tw.cond(p, None, lambda: 2), TypeError, "true_fn argument required"),
    (lambda p: tw.cond(p, lambda: 1), TypeError, "false_fn argument required"),
    (lambda p: tw.cond(p, 1, lambda: 2), TypeError, "true_fn must be callable"),
    (lambda p: tw.cond(p, lambda: 1, 2), TypeError, "false_fn must be callable"),
    (lambda p: tw.cond(p, lambda: 1, lambda: 2, fn1=lambda: 3), TypeError,
     "true_fn and fn1 may not be set simultaneously"),
    (lambda p: tw.cond(p, lambda: 1, lambda: 2, fn2=lambda: 3), TypeError,
     "false_fn and fn2 may not be set simultaneously"),
    (lambda p: tw.cond(tw.constant(1), lambda: 1, lambda: 2), TypeError, "bool tensor"),
    (lambda p: tw.cond(tw.constant([True]), lambda: 1, lambda: 2), ValueError, "rank 0"),
    (lambda p: tw.cond(p, lambda: (1, 2), lambda: 3), ValueError,
     "Incompatible return values of true_fn and false_fn"),
    (lambda p: tw.cond(p, lambda: tw.constant(1), lambda: tw.constant(1.0)), TypeError,
     "must have the same type: int32, float32"),
    (lambda p: tw.cond(p, lambda: [], lambda: []), ValueError, "at least one result"),
])
def test_cond_construction_errors(call: object, error: type, message: str) -> None:
    p = tw.placeholder(tw.bool, [])
    with pytest.raises(error, match=message):
        call(p)


def test_branches_read_variables() -> None:
    v = tw.Variable(5.0, name="v")
    p = tw.placeholder(tw.bool, [])
    y = tw.cond(p, lambda: v * 2, lambda: v + 1)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        assert sess.run(y, {p: True}) == 10.0 and sess.run(y, {p: False}) == 6.0


def test_an_assign_in_a_branch_runs_only_when_the_branch_is_taken() -> None:
    v = tw.Variable(0, name="hits")
    p = tw.placeholder(tw.bool, [])
    out = tw.cond(p, lambda: v.assign_add(1), lambda: tw.identity(v.value()))
    assert out.op.type == "If"  # stateful: never merged or folded
    assert out.op.get_attr("_class") == ["loc:@hits"]
    with tw.Session() as sess:
        sess.run(v.initializer)
        got = [sess.run(out, {p: taken}) for taken in (True, False, False, True, True)]
        assert got == [1, 1, 1, 2, 3] and sess.run(v) == 3


def test_control_dependencies_inside_a_branch_reach_outer_ops() -> None:
    v = tw.Variable(1.0, name="v")
    p = tw.placeholder(tw.bool, [])
    bump = v.assign_add(10.0)

    def after_bump() -> tw.Tensor:
        with tw.control_dependencies([bump]):
            return tw.identity(tw.constant(0.0))

    out = tw.cond(p, after_bump, lambda: tw.constant(1.0))
    assert bump.op in out.op.control_inputs
    with tw.Session() as sess:
        sess.run(v.initializer)
        sess.run(out, {p: False})
        assert sess.run(v) == 11.0


def test_an_error_in_a_branch_names_the_inner_node_op_and_device() -> None:
    p = tw.placeholder(tw.bool, [])
    k = tw.placeholder(tw.int32, [])
    out = tw.cond(p, lambda: tw.reshape(tw.range(6), tw.stack([k, 4])),
                  lambda: tw.zeros([2, 3], tw.int32), name="shaped")
    with tw.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {p: False, k: 9}), np.zeros((2, 3)))
        with pytest.raises(tw.errors.InvalidArgumentError) as info:
            sess.run(out, {p: True, k: 5})
    message = info.value.message
    assert "[[node shaped/Reshape (op: Reshape)" in message  # TF1: the branch op's own name
    assert "on device /job:localhost/replica:0/task:0/device:CPU:0" in message


def test_cond_on_a_fetched_tensor_from_another_graph_builds_there() -> None:
    graph = tw.Graph()
    with graph.as_default():
        p = tw.placeholder(tw.bool, [])
    y = tw.cond(p, lambda: tw.constant(1), lambda: tw.constant(2))
    assert y.graph is graph
    with tw.Session(graph=graph) as sess:
        assert sess.run(y, {p: False}) == 2


# -- case ---------------------------------------------------------------------------------------


def test_case_picks_the_first_true_predicate_else_the_default() -> None:
    x = tw.placeholder(tw.int32, [])
    out = tw.case([(x < 0, lambda: tw.constant(-1)), (x < 10, lambda: tw.constant(1)),
                   (x < 100, lambda: tw.constant(2))], default=lambda: tw.constant(3))
    last = tw.case([(x < 0, lambda: tw.constant(-1)), (x < 10, lambda: tw.constant(1))])
    by_dict = tw.case({x < 5: lambda: x * 10}, default=lambda: x, exclusive=True)
    with tw.Session() as sess:
        assert [sess.run(out, {x: v}) for v in (-5, 3, 50, 500)] == [-1, 1, 2, 3]
        # without a default the last pair's fn serves as it, when its predicate holds
        assert [sess.run(last, {x: v}) for v in (-5, 3)] == [-1, 1]
        with pytest.raises(tw.errors.InvalidArgumentError,
                           match="Input error: None of conditions evaluated as True"):
            sess.run(last, {x: 50})
        assert [sess.run(by_dict, {x: v}) for v in (2, 7)] == [20, 7]


def test_exclusive_case_fails_when_two_predicates_hold() -> None:
    x = tw.placeholder(tw.int32, [])
    pairs = [(x < 10, lambda: tw.constant(1)), (x > 5, lambda: tw.constant(2))]
    exclusive = tw.case(pairs, default=lambda: tw.constant(0), exclusive=True)
    first = tw.case(pairs, default=lambda: tw.constant(0))
    with tw.Session() as sess:
        assert [sess.run(exclusive, {x: v}) for v in (2, 20)] == [1, 2]
        assert sess.run(first, {x: 7}) == 1
        with pytest.raises(tw.errors.InvalidArgumentError,
                           match=r"exclusive=True: more than 1 conditions \(Less:0, Greater:0\)"):
            sess.run(exclusive, {x: 7})
        assert sess.run(exclusive, {x: 3}) == 1  # the session keeps working


@pytest.mark.parametrize("pairs, message", [
    (lambda x: "nope", "must be a list, tuple, or dict"),
    (lambda x: [(x > 0,)], "2-tuple"),
    (lambda x: [(True, lambda: 1)], "pred must be Tensor"),
    (lambda x: [(x, lambda: 1)], "pred must be Tensor of type bool"),
    (lambda x: [(x > 0, 1)], "must be callable"),
])
def test_case_errors(pairs: object, message: str) -> None:
    x = tw.placeholder(tw.int32, [])
    with pytest.raises(TypeError, match=message):
        tw.case(pairs(x), default=lambda: 0)


# -- switch_case --------------------------------------------------------------------------------


def test_switch_case_runs_the_branch_of_the_index_else_the_default() -> None:
    # control_flow_ops_test (SwitchCase): a list, a dict and (key, fn) pairs of branches.
    i = tw.placeholder(tw.int32, [])
    hits = tw.Variable(0)
    listed = tw.switch_case(i, [lambda: tw.constant(10), lambda: tw.constant(20)],
                            default=lambda: tw.constant(-1))
    keyed = tw.switch_case(i, {1: lambda: (i * 2, i), 0: lambda: (i, i * 3)})
    counted = tw.switch_case(i, [(0, lambda: tw.assign_add(hits, 1)),
                                 (1, lambda: tw.assign_add(hits, 100))])
    with tw.Session() as sess:
        sess.run(hits.initializer)
        assert [sess.run(listed, {i: v}) for v in (0, 1, 2, -3)] == [10, 20, -1, -1]
        assert sess.run(keyed, {i: 0}) == (0, 0) and sess.run(keyed, {i: 1}) == (2, 1)
        # without a default the highest key serves as it
        assert [tuple(sess.run(keyed, {i: v})) for v in (7, -1)] == [(14, 7), (-2, -1)]
        sess.run(counted, {i: 0})
        assert sess.run(hits) == 1  # only the chosen branch ran
        sess.run(counted, {i: 1})
        assert sess.run(hits) == 101


@pytest.mark.parametrize("index, fns, error, message", [
    (lambda: 1, [lambda: 1], TypeError, "'branch_index' must be a Tensor"),
    (lambda: tw.constant(1.0), [lambda: 1], TypeError, "must be an integer Tensor"),
    (lambda: tw.constant(1), [], ValueError, "at least one item"),
    (lambda: tw.constant(1), "fn", TypeError, "must be a list, tuple, or dict"),
    (lambda: tw.constant(1), [(0, lambda: 1, 2)], TypeError, "must be a 2-tuple"),
    (lambda: tw.constant(1), {0.5: lambda: 1}, TypeError, "key must be a Python `int`"),
    (lambda: tw.constant(1), {0: 1}, TypeError, "fn for key 0 must be callable"),
    (lambda: tw.constant(1), {0: lambda: 1, 2: lambda: 2}, ValueError,
     r"contiguous range of \[0 to 2\) but found \{0,2\}"),
])
def test_switch_case_errors(index, fns, error, message) -> None:
    with pytest.raises(error, match=message):
        tw.switch_case(index(), fns)


def test_switch_case_is_one_case_op_as_tf_builds_it() -> None:
    # TF's indexed_case: <name>/indexed_case, a Case over the branches (default last), then
    # one Identity per output; the branches' ops are named in its scope.
    i = tw.placeholder(tw.int32, [])
    x = tw.placeholder(tw.float32, [2])
    out = tw.switch_case(i, [lambda: x * 2.0, lambda: x + 1.0], default=lambda: tw.sin(x))
    assert out.op.name == "switch_case/indexed_case/Identity" and out.op.type == "Identity"
    case = out.op.inputs[0].op
    assert (case.name, case.type) == ("switch_case/indexed_case", "StatelessCase")
    branches = case.get_attr("branches")
    assert len(branches) == 3 and all(isinstance(fn, FunctionDef) for fn in branches)
    assert case.inputs[0] is i and [t.dtype for t in case.inputs[1:]] == [tw.float32]
    assert out.shape == tw.TensorShape([2])
    names = {op.name for fn in branches for op in fn.graph.get_operations()}
    assert {"switch_case/indexed_case/mul", "switch_case/indexed_case/add",
            "switch_case/indexed_case/Sin"} <= names
    hits = tw.Variable(0)
    stateful = tw.switch_case(i, [lambda: tw.assign_add(hits, 1), lambda: hits + 0])
    assert stateful.op.inputs[0].op.type == "Case"
    with tw.Session() as sess:
        for k, want in ((0, [2.0, 4.0]), (1, [2.0, 3.0]), (2, np.sin([1.0, 2.0])),
                        (3, np.sin([1.0, 2.0])), (-1, np.sin([1.0, 2.0]))):
            np.testing.assert_allclose(sess.run(out, {i: k, x: [1.0, 2.0]}), want, rtol=1e-6)


def test_switch_case_shapes_are_the_most_specific_compatible_with_every_branch() -> None:
    i = tw.placeholder(tw.int32, [])
    out = tw.switch_case(i, [lambda: tw.zeros([2, 3]), lambda: tw.ones([2, 5]),
                             lambda: tw.zeros([2, 3])])
    assert out.shape.as_list() == [2, None]
    singleton = tw.switch_case(i, [lambda: [tw.constant(1.0)], lambda: [tw.constant(2.0)]])
    assert isinstance(singleton, list) and len(singleton) == 1  # not unpacked, as TF


def test_switch_case_gradient_is_a_case_over_each_branch_gradient() -> None:
    # cond_v2's _CaseGrad: the same index picks the branch's gradient (the last when out of
    # range); a variable captured by one branch only gets zeros from the others.
    i = tw.placeholder(tw.int32, [])
    x = tw.placeholder(tw.float32, [2])
    w = tw.Variable([3.0, 4.0])
    out = tw.switch_case(i, [lambda: x * 2.0, lambda: x * w, lambda: tw.sin(x)])
    dx, dw = tw.gradients(out, [x, w])
    assert dx.op.name == "gradients/switch_case/indexed_case_grad/Identity"
    grad_case = dx.op.inputs[0].op
    assert grad_case.name == "gradients/switch_case/indexed_case_grad/gradient"
    assert grad_case.type == "StatelessCase" and grad_case.inputs[0] is i
    feed = [1.0, 2.0]
    with tw.Session() as sess:
        sess.run(w.initializer)
        for k, want_dx, want_dw in ((0, [2.0, 2.0], [0.0, 0.0]), (1, [3.0, 4.0], feed),
                                    (2, np.cos(feed), [0.0, 0.0]),
                                    (7, np.cos(feed), [0.0, 0.0])):
            got_dx, got_dw = sess.run([dx, dw], {i: k, x: feed})
            np.testing.assert_allclose(got_dx, want_dx, rtol=1e-6)
            np.testing.assert_allclose(got_dw, want_dw, rtol=1e-6)


def test_switch_case_of_several_outputs_of_several_dtypes() -> None:
    # functional_ops_test (Case): (int32, float32) outputs, fetched by name, >= N and < 0
    # run the last branch; only the floating output carries a gradient
    i = tw.placeholder(tw.int32, [])
    x = tw.placeholder(tw.float32, [])
    code, value = tw.switch_case(i, [lambda: (-1, x * 2.0), lambda: (0, x * 3.0),
                                        lambda: (1, x * 4.0)], name="my_case")
    (dx,) = tw.gradients(value, [x])
    case = "my_case/indexed_case"
    with tw.Session() as sess:
        for k, want in ((0, (-1, 2.0)), (1, (0, 21.0)), (2, (1, -12.0)), (7, (1, -16.0)),
                        (-1, (1, -20.0))):
            feed = {i: k, x: {0: 1.0, 1: 7.0, 2: -3.0, 7: -4.0, -1: -5.0}[k]}
            assert tuple(sess.run([code, value], feed)) == want
            assert sess.run(f"{case}:1", feed) == want[1]
        assert [sess.run(dx, {i: k, x: 1.0}) for k in (0, 1, 2, 9)] == [2.0, 3.0, 4.0, 4.0]


def test_switch_case_nests_in_a_loop_and_in_itself() -> None:
    n = tw.placeholder(tw.int32, [])

    def body(k, total):
        inner = tw.switch_case(k % 3, [lambda: total + 1, lambda: total * 2,
                                       lambda: tw.switch_case(k, [lambda: total - 100],
                                                              default=lambda: total - 1)])
        return k + 1, inner

    _, total = tw.while_loop(lambda k, total: k < n, body, [0, 0])
    with tw.Session() as sess:
        # k=0: +1 -> 1; k=1: *2 -> 2; k=2: -1 -> 1; k=3: +1 -> 2; k=4: *2 -> 4
        assert sess.run(total, {n: 5}) == 4


def test_switch_case_index_must_be_an_int32_scalar() -> None:
    with pytest.raises(TypeError, match="'branch_index' of 'StatelessCase' .* int64"):
        tw.switch_case(tw.constant(1, tw.int64), [lambda: 1.0, lambda: 2.0])
    i = tw.placeholder(tw.int32, None)
    out = tw.switch_case(i, [lambda: 1.0, lambda: 2.0])
    with tw.Session() as sess:
        with pytest.raises(tw.errors.InvalidArgumentError, match="branch_index must be scalar"):
            sess.run(out, {i: [1, 1]})


@pytest.mark.parametrize("fns, detail", [
    ([lambda: tw.constant(1.0), lambda: tw.constant(2)], "have different types"),
    ([lambda: tw.constant(1.0), lambda: (tw.constant(1.0), tw.constant(2.0))],
     "don't have the same nested structure"),
])
def test_switch_case_branches_must_return_the_same_structure_and_types(fns, detail) -> None:
    with pytest.raises(TypeError, match=r"(?s)branches\[0\] and branches\[1\] arguments to "
                                        rf"tf.switch_case must have the same number.*{detail}"):
        tw.switch_case(tw.placeholder(tw.int32, []), fns)


def test_an_error_in_a_switch_case_branch_is_the_branch_op() -> None:
    i = tw.placeholder(tw.int32, [])
    x = tw.constant([1.0, 2.0])
    built = []

    def picked():
        built.append(tw.gather(x, i, name="picked"))
        return built[-1]

    out = tw.switch_case(i, [lambda: x[0], picked], name="sw")
    with tw.Session() as sess:
        with pytest.raises(tw.errors.InvalidArgumentError) as info:
            sess.run(out, {i: 7})  # out of range: the last branch, which fails on it
    assert info.value.op is built[0].op and built[0].op.name == "sw/indexed_case/picked"
    assert "[[node sw/indexed_case/picked (op: GatherV2)" in info.value.message


def test_switch_case_survives_a_graph_def_round_trip() -> None:
    i = tw.placeholder(tw.int32, [], name="i")
    out = tw.switch_case(i, [lambda: tw.constant(1.0), lambda: tw.constant(2.0)])
    graph_def = tw.get_default_graph().as_graph_def()
    with tw.Graph().as_default():
        tw.import_graph_def(type(graph_def).FromString(graph_def.SerializeToString()), name="")
        with tw.Session() as sess:
            assert [sess.run(out.name, {"i:0": k}) for k in (0, 1, 5)] == [1.0, 2.0, 2.0]


# -- while_loop ---------------------------------------------------------------------------------


def test_counter_loop_with_a_fed_bound() -> None:
    n = tw.placeholder(tw.int32, [])
    i, acc = tw.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + i), [0, 0])
    assert i.op.type == "StatelessWhile" and i.op.name == "while/While"
    assert i.dtype == acc.dtype == tw.int32 and i.shape.as_list() == []
    with tw.Session() as sess:
        for bound in (0, 1, 10):
            got = sess.run([i, acc], {n: bound})
            assert got == [bound, sum(range(bound))]
            assert all(isinstance(v, np.int32) for v in got)


def test_collatz_steps() -> None:
    start = tw.placeholder(tw.int64, [])

    def step(n: tw.Tensor, k: tw.Tensor) -> tuple[tw.Tensor, tw.Tensor]:
        nxt = tw.cond(tw.equal(n % 2, 0), lambda: n // 2, lambda: 3 * n + 1)
        return nxt, k + 1

    _, steps = tw.while_loop(lambda n, k: n > 1, step, [start, tw.constant(0)])

    def collatz(n: int) -> int:
        k = 0
        while n > 1:
            n, k = (n // 2 if n % 2 == 0 else 3 * n + 1), k + 1
        return k

    with tw.Session() as sess:
        assert [sess.run(steps, {start: s}) for s in (1, 6, 27, 97)] == \
            [collatz(s) for s in (1, 6, 27, 97)]


def test_rnn_like_loop_over_fixed_steps_with_matmuls() -> None:
    rng = np.random.default_rng(0)
    xs_value = rng.standard_normal((5, 2, 3)).astype(np.float32)
    w_value = rng.standard_normal((3, 4)).astype(np.float32)
    u_value = rng.standard_normal((4, 4)).astype(np.float32)
    xs = tw.placeholder(tw.float32, [5, 2, 3])
    w, u = tw.constant(w_value), tw.constant(u_value)

    def body(t: tw.Tensor, h: tw.Tensor) -> tuple[tw.Tensor, tw.Tensor]:
        return t + 1, tw.tanh(tw.matmul(xs[t], w) + tw.matmul(h, u))

    _, h = tw.while_loop(lambda t, h: t < 5, body, [0, tw.zeros([2, 4])])
    assert h.shape.as_list() == [2, 4]
    expected = np.zeros((2, 4), np.float32)
    for t in range(5):
        expected = np.tanh(xs_value[t] @ w_value + expected @ u_value)
    with tw.Session() as sess:
        got = sess.run(h, {xs: xs_value})
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_maximum_iterations_and_single_loop_vars() -> None:
    limit = tw.placeholder(tw.int32, [])
    capped = tw.while_loop(lambda i: i < 100, lambda i: i + 1, [0], maximum_iterations=limit)
    same = tw.while_loop(lambda i: i < 3, lambda i: i + 1, [0], return_same_structure=True)
    assert isinstance(capped, tw.Tensor) and isinstance(same, list)
    with tw.Session() as sess:
        assert [sess.run(capped, {limit: v}) for v in (0, 7, 500)] == [0, 7, 100]
        assert sess.run(same) == [3]
    with pytest.raises(ValueError, match="maximum_iterations must be a scalar"):
        tw.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=[1, 2])


def test_nested_loop_vars() -> None:
    out = tw.while_loop(lambda i, p: i < 4, lambda i, p: (i + 1, Pair(p.a * 2, p.b + p.a)),
                        (0, Pair(tw.constant(1), tw.constant(0))))
    with tw.Session() as sess:
        got = sess.run(out)
    assert got[0] == 4 and isinstance(got[1], Pair) and got[1] == Pair(16, 15)


def test_shape_invariants() -> None:
    grow = (lambda x: tw.size(x) < 10, lambda x: tw.concat([x, x], 0))
    with pytest.raises(ValueError, match="enters the loop with shape \\(1,\\), but has shape "
                                         "\\(2,\\) after one iteration"):
        tw.while_loop(*grow, [tw.constant([1])])
    x = tw.while_loop(*grow, [tw.constant([1])], shape_invariants=[tw.TensorShape([None])])
    assert x.shape.as_list() == [None]
    with pytest.raises(ValueError, match="not compatible with the initial shape"):
        tw.while_loop(*grow, [tw.constant([1])], shape_invariants=[tw.TensorShape([3])])
    with tw.Session() as sess:
        np.testing.assert_array_equal(sess.run(x), np.ones(16, np.int32))


@pytest.mark.parametrize("call, error, message", [
    (lambda: tw.while_loop(1, lambda i: i, [0]), TypeError, "cond must be callable"),
    (lambda: tw.while_loop(lambda i: i < 1, 1, [0]), TypeError, "body must be callable"),
    (lambda: tw.while_loop(lambda i: i < 1, lambda i: i, []), ValueError,
     "No loop variables provided"),
    (lambda: tw.while_loop(lambda i: i < 1, lambda i: i, [0], parallel_iterations=0),
     TypeError, "parallel_iterations must be a positive integer"),
    (lambda: tw.while_loop(lambda i: i, lambda i: i, [0]), TypeError, "must be a bool tensor"),
    (lambda: tw.while_loop(lambda i: i < 1, lambda i: (i, i), [0]), ValueError,
     "same structure as loop_vars"),
    (lambda: tw.while_loop(lambda i: i < 1, lambda i: tw.cast(i, tw.float32), [0]), TypeError,
     "enters the loop with type tf.int32, but has type tf.float32"),
])
def test_while_loop_construction_errors(call: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_cond_inside_while_and_while_inside_cond() -> None:
    n = tw.placeholder(tw.int32, [])
    p = tw.placeholder(tw.bool, [])
    offset = tw.constant(100)  # captured two function levels down
    _, a = tw.while_loop(
        lambda i, a: i < n,
        lambda i, a: (i + 1, tw.cond(i % 2 > 0, lambda: a + i + offset, lambda: a - i)),
        [0, 0])
    w = tw.cond(p, lambda: tw.while_loop(lambda k: k < n, lambda k: k + offset, [0]),
                lambda: tw.constant(-1))
    with tw.Session() as sess:
        for bound in (0, 5, 8):
            assert sess.run(a, {n: bound}) == sum(k + 100 if k % 2 else -k
                                                  for k in range(bound))
        assert sess.run(w, {p: True, n: 250}) == 300
        assert sess.run(w, {p: False, n: 250}) == -1


def test_a_loop_assigning_a_variable_runs_its_body_each_iteration() -> None:
    v = tw.Variable(0.0, name="total")
    n = tw.placeholder(tw.int32, [])
    i = tw.while_loop(lambda i: i < n, lambda i: tw.tuple([i + 1], control_inputs=[
        v.assign_add(tw.cast(i, tw.float32))])[0], [0])
    assert i.op.type == "While"
    with tw.Session() as sess:
        sess.run(v.initializer)
        sess.run(i, {n: 4})
        assert sess.run(v) == 6.0


# -- the pipeline around the ops ------------------------------------------------------------------


def _pass_context() -> PassContext:
    return PassContext(get_registries(), frozenset())


def test_constant_folding_and_cse_keep_control_flow_ops_and_results() -> None:
    v = tw.Variable(0, name="v")
    pure = tw.cond(tw.constant(True), lambda: tw.constant(2) * 3, lambda: tw.constant(0))
    effect = tw.cond(tw.constant(True), lambda: v.assign_add(1), lambda: tw.identity(v.value()))
    loop = tw.while_loop(lambda i: i < 4, lambda i: i + 1, [tw.constant(0)])
    graph_def = tw.get_default_graph()._engine_graph_def()
    folded = fold_constants(graph_def, _pass_context())
    merged = eliminate_common_subexpressions(folded, _pass_context())
    kept = {n.name: n.op for n in merged.node}
    for t in (pure, effect, loop):
        assert kept[t.op.name] == t.op.type
    with tw.Session() as sess:
        sess.run(v.initializer)
        assert sess.run([pure, effect, loop]) == [6, 1, 4]
        assert sess.run(effect) == 2  # a stateful branch is never folded away


def test_partition_graphs_and_graph_def_export_carry_the_functions() -> None:
    p = tw.placeholder(tw.bool, [])
    y = tw.cond(p, lambda: tw.constant(1.0), lambda: tw.constant(2.0))
    node = next(n for n in tw.get_default_graph()._engine_graph_def().node if n.op == "StatelessIf")
    assert isinstance(node.attr["then_branch"], FunctionDef)
    metadata = tw.RunMetadata()
    with tw.Session() as sess:
        sess.run(y, {p: True}, options=tw.RunOptions(output_partition_graphs=True),
                 run_metadata=metadata)
    # a partition graph is TF's GraphDef message: the branches are in its function library
    ((graph, placed),) = [(g, n) for g in metadata.partition_graphs for n in g.node
                          if n.op == "StatelessIf"]
    functions = {f.signature.name: f for f in graph.library.function}
    else_branch = functions[placed.attr["else_branch"].func.name]
    assert placed.device.endswith("CPU:0")
    assert [arg.type for arg in else_branch.signature.output_arg] == [DATA_TYPES["DT_FLOAT"]]


def test_raw_ops_check_function_signatures() -> None:
    p = tw.placeholder(tw.bool, [])
    y = tw.cond(p, lambda: tw.constant(1.0), lambda: tw.constant(2.0))
    fn = y.op.get_attr("then_branch")
    with pytest.raises(TypeError, match="returns \\['float32'\\], the op declares"):
        tw.raw_ops.If(cond=p, input=[], Tin=[], Tout=[tw.int32], then_branch=fn,
                      else_branch=fn)
    (out,) = tw.raw_ops.If(cond=p, input=[], Tin=[], Tout=[tw.float32], then_branch=fn,
                           else_branch=y.op.get_attr("else_branch"), output_shapes=[[]])
    with tw.Session() as sess:
        assert sess.run(out, {p: False}) == 2.0


# -- the kernels ----------------------------------------------------------------------------------


def _kernel_context(op: tw.Operation) -> KernelContext:
    node = op._engine_node_def
    device = Device.create(TaskSpec(), "CPU", 0, np)
    return KernelContext(node.name, node.op, dict(node.attr), device, np, node.output_types,
                         node.output_shapes)


def test_the_kernel_compiles_each_function_once_per_node_and_only_when_taken() -> None:
    p = tw.placeholder(tw.bool, [])
    x = tw.placeholder(tw.float32, [])
    y = tw.cond(p, lambda: x + 1.0, lambda: x - 1.0)
    ctx = _kernel_context(y.op)
    step = StepContext(7, Rendezvous(7))

    def call(pred: bool, value: float) -> object:
        outcome: list[object] = []
        if_kernel(ctx, step, outcome.append, np.array(pred), np.float32(value))
        (result,) = outcome
        return result

    assert call(True, 2.0) == 3.0
    executor = ctx.state["then_branch"].executor
    assert "else_branch" not in ctx.state
    assert call(True, 5.0) == 6.0
    assert ctx.state["then_branch"].executor is executor
    out = call(False, 5.0)
    assert out == 4.0 and out.dtype == np.float32


def test_a_loop_stops_when_its_step_is_aborted() -> None:
    i = tw.while_loop(lambda i: i >= 0, lambda i: i + 1, [0])  # never ends on its own
    ctx = _kernel_context(i.op)
    rendezvous = Rendezvous(3)
    rendezvous.start_abort(tw.errors.DeadlineExceededError(None, None, "too slow"))
    outcome: list[object] = []
    while_kernel(ctx, StepContext(3, rendezvous), outcome.append, np.int32(0))
    (error,) = outcome
    assert isinstance(error, tw.errors.DeadlineExceededError)
    assert "stopped after 0 iterations: too slow" in error.message


def test_a_runaway_loop_fails_at_the_step_deadline() -> None:
    i = tw.while_loop(lambda i: i >= 0, lambda i: (i + 1) % 1000, [0], name="forever")
    with tw.Session() as sess:
        with pytest.raises(tw.errors.DeadlineExceededError, match="forever/While"):
            sess.run(i, options=tw.RunOptions(timeout_in_ms=300))
        assert sess.run(tw.constant(1)) == 1  # the session is still usable


def test_conds_and_loops_are_listed_in_tf1s_context_collections() -> None:
    take = tw.placeholder(tw.bool, [])
    tw.cond(take, lambda: tw.constant(1), lambda: tw.constant(2))
    contexts = tw.get_collection(tw.GraphKeys.COND_CONTEXT)
    assert tw.GraphKeys.COND_CONTEXT == "cond_context"
    assert [(c.name, c.branch, c.pred) for c in contexts] == [
        ("cond/cond_text", 1, take), ("cond/cond_text_1", 0, take)]
    tw.while_loop(lambda i: i < 3, lambda i: i + 1, [tw.constant(0)], back_prop=False)
    (loop,) = tw.get_collection(tw.GraphKeys.WHILE_CONTEXT)
    assert (loop.name, loop.back_prop, loop.parallel_iterations) == (
        "while/while_context", False, 10)


def test_conditionals_nested_200_deep_run():
    # TF has no nesting limit; each level is a function call inside its caller's kernel
    x = tw.placeholder(tw.float32, [])

    def nest(depth: int, value: tw.Tensor) -> tw.Tensor:
        if depth == 0:
            return value + 1.0
        return tw.cond(value > -1.0, lambda: nest(depth - 1, value), lambda: value)

    y = nest(200, x)
    with tw.Session() as sess:
        assert sess.run(y, {x: 0.0}) == 1.0
