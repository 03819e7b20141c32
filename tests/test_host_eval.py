"""Evaluating one node's CPU kernel on the host, and the cases where it must give up."""

from __future__ import annotations

import numpy as np
import pytest

from tensorweave.engine import dtypes
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.registry import KernelRegistry
from tensorweave.engine.runtime.device import host_device
from tensorweave.engine.runtime.host_eval import evaluate_on_host


def _registry(fn, **kwargs) -> KernelRegistry:
    reg = KernelRegistry()
    reg.bind("test").add("TestOp", "CPU", fn, **kwargs)
    reg.freeze()
    return reg


def _eval(kernels, inputs, out_types=(dtypes.float32,), out_shapes=([2],), attrs=None,
          op="TestOp"):
    return evaluate_on_host("node", op, attrs or {}, list(out_types), list(out_shapes),
                            inputs, kernels)


def test_evaluates_a_real_cpu_kernel() -> None:
    x = np.array([1, 2], dtype=np.int32)
    y = np.array([10, 20], dtype=np.int32)
    out = _eval(get_registries().kernels, [x, y], [dtypes.int32], [[2]],
                attrs={"T": dtypes.int32}, op="AddV2")
    assert out is not None and len(out) == 1
    np.testing.assert_array_equal(out[0], x + y)
    assert out[0].dtype == np.int32


def test_evaluates_a_multi_output_kernel() -> None:
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = _eval(get_registries().kernels, [np.int32(0), value],
                [dtypes.float32, dtypes.float32], [[1, 3], [1, 3]],
                attrs={"T": dtypes.float32, "num_split": 2}, op="Split")
    assert out is not None and len(out) == 2
    np.testing.assert_array_equal(out[0], value[:1])
    np.testing.assert_array_equal(out[1], value[1:])


def test_kernel_sees_attrs_without_output_annotations() -> None:
    seen = {}

    def fn(ctx, x):
        seen.update(ctx.attrs)
        seen["device"] = ctx.device
        seen["xp"] = ctx.xp
        return x * np.float32(ctx.attr("scale"))

    out = _eval(_registry(fn), [np.ones(2, np.float32)],
                attrs={"scale": 3.0, "_output_shapes": [[2]]})
    np.testing.assert_array_equal(out[0], [3.0, 3.0])
    assert "_output_shapes" not in seen and seen["scale"] == 3.0
    assert seen["device"] is host_device() and seen["xp"] is np


def test_numpy_warnings_are_silenced() -> None:
    def divide(ctx, x):
        return x / np.float32(0)

    with np.errstate(all="raise"):
        out = _eval(_registry(divide), [np.ones(2, np.float32)])
    assert out is not None and np.isinf(out[0]).all()


def test_no_op_evaluates_to_nothing() -> None:
    assert _eval(_registry(lambda ctx: None), [], out_types=(), out_shapes=()) == []


def test_missing_kernel_gives_none() -> None:
    assert _eval(_registry(lambda ctx, x: x), [np.ones(2, np.float32)], op="OtherOp") is None


def test_kernel_for_another_dtype_gives_none() -> None:
    reg = _registry(lambda ctx, x: x, dtypes=[dtypes.int32])
    assert _eval(reg, [np.ones(2, np.float32)], attrs={"T": dtypes.float32}) is None


def test_failing_kernel_gives_none() -> None:
    def boom(ctx, x):
        raise ValueError("kernel failure")

    assert _eval(_registry(boom), [np.ones(2, np.float32)]) is None


def test_wrong_dtype_gives_none() -> None:
    def upcast(ctx, x):
        return x.astype(np.float64)

    assert _eval(_registry(upcast), [np.ones(2, np.float32)]) is None


def test_wrong_shape_gives_none() -> None:
    assert _eval(_registry(lambda ctx, x: np.ones(3, np.float32)),
                 [np.ones(2, np.float32)]) is None


def test_unknown_declared_shape_accepts_any_shape() -> None:
    out = _eval(_registry(lambda ctx, x: np.ones((2, 5), np.float32)),
                [np.ones(2, np.float32)], out_shapes=[None])
    assert out is not None and out[0].shape == (2, 5)


def test_wrong_output_count_gives_none() -> None:
    two = _registry(lambda ctx, x: (x, x))
    assert _eval(two, [np.ones(2, np.float32)]) is None


def test_non_array_output_gives_none() -> None:
    assert _eval(_registry(lambda ctx, x: [1.0, 2.0][0]), [np.ones(2, np.float32)],
                 out_shapes=[[]]) is None


@pytest.mark.parametrize("flags", [{"needs_step": True}, {"is_async": True},
                                   {"needs_step": True, "is_async": True}])
def test_step_and_async_kernels_are_refused(flags) -> None:
    called = []

    def fn(ctx, *args):
        called.append(args)
        return np.ones(2, np.float32)

    assert _eval(_registry(fn, **flags), [np.ones(2, np.float32)]) is None
    assert called == []
