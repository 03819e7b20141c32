"""`tw.raw_ops`: every registered op as a keyword-only function."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api import raw_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.plugin_manager import get_registries


def _run(fetches):
    with tw.Session() as sess:
        return sess.run(fetches)


def test_keyword_inputs_build_the_op() -> None:
    x = tw.constant([1.0, 2.0])
    y = tw.constant([10.0, 20.0])
    out = tw.raw_ops.AddV2(x=x, y=y, name="my_add")
    assert isinstance(out, Tensor)
    assert out.op.type == "AddV2"
    assert out.op.name == "my_add"
    assert list(out.op.inputs) == [x, y]
    assert out.dtype == dtypes.float32
    np.testing.assert_array_equal(_run(out), [11.0, 22.0])


def test_keyword_order_does_not_matter() -> None:
    x = tw.constant([8.0])
    y = tw.constant([2.0])
    out = tw.raw_ops.Sub(y=y, x=x)
    assert list(out.op.inputs) == [x, y]
    np.testing.assert_array_equal(_run(out), [6.0])


def test_python_values_are_converted() -> None:
    x = tw.constant([1, 2], dtype=tw.int32)
    out = tw.raw_ops.Mul(x=x, y=3)
    assert out.dtype == dtypes.int32
    np.testing.assert_array_equal(_run(out), [3, 6])


def test_list_inputs_set_N() -> None:
    a, b, c = tw.constant([1]), tw.constant([2]), tw.constant([4])
    out = tw.raw_ops.AddN(inputs=[a, b, c])
    assert out.op.get_attr("N") == 3
    assert list(out.op.inputs) == [a, b, c]
    np.testing.assert_array_equal(_run(out), [7])


def test_attrs_are_passed() -> None:
    x = tw.constant([[1.0, 2.0], [3.0, 4.0]])
    out = tw.raw_ops.Sum(input=x, axis=1, keep_dims=True)
    assert out.op.get_attr("keep_dims") is True
    assert out.shape.as_list() == [2, 1]
    np.testing.assert_array_equal(_run(out), [[3.0], [7.0]])


def test_multi_output_op_returns_a_list() -> None:
    outs = tw.raw_ops.Unique(x=tw.constant([3, 1, 3]))
    assert isinstance(outs, list) and len(outs) == 2
    values, idx = _run(outs)
    np.testing.assert_array_equal(values, [3, 1])
    np.testing.assert_array_equal(idx, [0, 1, 0])


def test_list_output_op_returns_a_list_even_of_one() -> None:
    outs = tw.raw_ops.Unpack(value=tw.constant([[1.0, 2.0]]), num=1)
    assert isinstance(outs, list) and len(outs) == 1
    np.testing.assert_array_equal(_run(outs[0]), [1.0, 2.0])


def test_zero_output_op_returns_the_operation() -> None:
    op = tw.raw_ops.NoOp(name="nothing")
    assert isinstance(op, Operation)
    assert op.name == "nothing" and op.type == "NoOp"


def test_missing_input_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"AddV2\(\) missing required inputs \['y'\]"):
        tw.raw_ops.AddV2(x=tw.constant(1.0))


def test_positional_arguments_are_refused() -> None:
    with pytest.raises(TypeError):
        tw.raw_ops.Identity(tw.constant(1.0))  # type: ignore[misc]


def test_unknown_op_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no op 'NoSuchOp'"):
        tw.raw_ops.NoSuchOp  # noqa: B018
    assert not hasattr(tw.raw_ops, "NoSuchOp")


def test_dunder_lookups_are_attribute_errors() -> None:
    with pytest.raises(AttributeError):
        raw_ops.__wrapped__  # noqa: B018


def test_dir_lists_every_registered_op() -> None:
    names = dir(tw.raw_ops)
    assert names == get_registries().ops.names()
    assert {"AddV2", "NoOp", "Split", "_Recv"} <= set(names)


def test_functions_are_named_documented_and_cached() -> None:
    fn = tw.raw_ops.Split
    assert fn.__name__ == "Split"
    assert "split_dim" in fn.__doc__ and "value" in fn.__doc__
    assert tw.raw_ops.Split is fn
