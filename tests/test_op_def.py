"""`OpDef` input-spec parsing, `TensorSpec`, and `InferContext`'s accessors and error wording."""

from __future__ import annotations

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.op_def import REQUIRED, ArgSpec, InferContext, OpDef, TensorSpec
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.tensor_shape import TensorShape


def _infer(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.dtype(0), ctx.shape(0))]


def _op(*inputs: str, **kwargs) -> OpDef:
    return OpDef(name="Test", inputs=tuple(inputs), infer=_infer, **kwargs)


def test_type_attr_input() -> None:
    (arg,) = _op("x:T").args
    assert arg == ArgSpec("x", False, "T", None)


def test_fixed_dtype_input() -> None:
    (arg,) = _op("shape:int32").args
    assert arg == ArgSpec("shape", False, None, dtypes.int32)


def test_list_input_with_type_attr() -> None:
    (arg,) = _op("values:*T").args
    assert arg == ArgSpec("values", True, "T", None)


def test_list_input_of_any_dtype() -> None:
    (arg,) = _op("values:*").args
    assert arg == ArgSpec("values", True, None, None)


def test_untyped_input() -> None:
    (arg,) = _op("x").args
    assert arg == ArgSpec("x", False, None, None)


def test_spaces_around_parts_are_ignored() -> None:
    (arg,) = _op(" y : float64 ").args
    assert arg == ArgSpec("y", False, None, dtypes.float64)


def test_input_names_keep_order() -> None:
    op = _op("split_dim:int32", "value:T", "rest:*T", "any")
    assert op.input_names == ("split_dim", "value", "rest", "any")
    assert [a.is_list for a in op.args] == [False, False, True, False]


def test_op_def_defaults() -> None:
    op = _op("x:T")
    assert op.attrs == {} and op.type_constraints == {}
    assert (op.stateful, op.ref_output, op.list_output) == (False, False, False)
    assert op.ref_inputs == () and op.grad is None and op.doc == ""
    assert repr(REQUIRED) == "REQUIRED"


def test_registered_list_output_ops() -> None:
    ops = get_registries().ops
    assert ops.get("Split").list_output is True
    assert ops.get("Unpack").list_output is True
    assert ops.get("AddV2").list_output is False


def test_tensor_spec_converts_shape() -> None:
    spec = TensorSpec(dtypes.float32, [2, None])
    assert isinstance(spec.shape, TensorShape)
    assert spec.shape.as_list() == [2, None]
    assert TensorSpec(dtypes.int32, None).shape.dims is None


def _ctx(*shapes, attrs=None, values=None) -> InferContext:
    values = values or {}
    return InferContext(
        node_name="scope/node", op="MyOp",
        inputs=[TensorSpec(dtypes.float32, s) for s in shapes],
        attrs=attrs or {}, value_of=lambda i: values.get(i))


def test_infer_context_accessors() -> None:
    ctx = _ctx([2, 3], None, attrs={"axis": 1}, values={1: np.array(5)})
    assert ctx.attr("axis") == 1
    assert ctx.dtype(0) == dtypes.float32
    assert ctx.shape(0).as_list() == [2, 3]
    assert ctx.constant_value(0) is None
    assert int(ctx.constant_value(1)) == 5


def test_shape_error_wording() -> None:
    ctx = _ctx([2, 3], [None, 3], None)
    err = ctx.shape_error("Dimensions must be equal, but are 2 and 4")
    assert isinstance(err, ValueError)
    assert str(err) == (
        "Dimensions must be equal, but are 2 and 4 for '{{node scope/node}} = MyOp[]' "
        "(op: 'MyOp') with input shapes: [2,3], [?,3], ?.")


def test_type_error_wording() -> None:
    err = _ctx([1]).type_error("bad dtype")
    assert isinstance(err, TypeError)
    assert str(err) == "bad dtype (node 'scope/node', op 'MyOp')"
