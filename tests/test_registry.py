"""Op/gradient/kernel registries: priorities, conflicts naming both plugins, freezing."""

from __future__ import annotations

import pytest

from tensorweave.engine import dtypes
from tensorweave.engine.kernel import ANY_DEVICE
from tensorweave.engine.op_def import OpDef, TensorSpec
from tensorweave.engine.registry import (
    GradientRegistry,
    KernelRegistry,
    NamedRegistry,
    OpRegistry,
    PluginConflictError,
    PluginError,
)


def _infer(ctx):
    return [TensorSpec(ctx.dtype(0), ctx.shape(0))]


def _fn_a(ctx, x):
    return x


def _fn_b(ctx, x):
    return x


def _fn_c(ctx, x):
    return x


# -- NamedRegistry -------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["high_first", "low_first"])
def test_named_higher_priority_wins_either_order(order: str) -> None:
    reg = NamedRegistry("thing")
    adds = [("x", "high", "plugin_hi", 5), ("x", "low", "plugin_lo", 1)]
    if order == "low_first":
        adds.reverse()
    for name, value, plugin, prio in adds:
        reg._add(name, value, plugin, prio)
    assert reg.get("x") == "high"
    assert reg.plugin_of("x") == "plugin_hi"
    assert len(reg) == 1


def test_named_equal_priority_conflict_names_both_plugins() -> None:
    reg = NamedRegistry("op")
    reg._add("Foo", 1, "first_plugin", 0)
    with pytest.raises(PluginConflictError) as info:
        reg._add("Foo", 2, "second_plugin", 0)
    msg = str(info.value)
    assert "first_plugin" in msg and "second_plugin" in msg and "'Foo'" in msg
    assert msg.startswith("op ")
    assert reg.get("Foo") == 1  # the first registration stays


def test_named_conflict_is_a_plugin_error() -> None:
    assert issubclass(PluginConflictError, PluginError)
    assert issubclass(PluginError, RuntimeError)


def test_named_lookup_names_and_by_plugin() -> None:
    reg = NamedRegistry("thing")
    reg._add("b", 1, "p1", 0)
    reg._add("a", 2, "p2", 0)
    reg._add("c", 3, "p1", 0)
    assert reg.get("missing") is None
    assert "a" in reg and "missing" not in reg
    assert reg.names() == ["a", "b", "c"]
    assert dict(reg.by_plugin()) == {"p1": ["b", "c"], "p2": ["a"]}
    with pytest.raises(KeyError):
        reg.plugin_of("missing")


def test_named_frozen_refuses_additions() -> None:
    reg = NamedRegistry("gradient")
    reg._add("a", 1, "p", 0)
    reg.freeze()
    with pytest.raises(PluginError, match="gradient registry is frozen"):
        reg._add("b", 2, "p", 0)
    with pytest.raises(PluginError):
        reg._add("a", 3, "p", 10)  # not even a higher priority
    assert reg.get("a") == 1 and "b" not in reg


def test_op_registration_view_binds_plugin() -> None:
    reg = OpRegistry()
    view = reg.bind("my_plugin")
    op_def = view.op("MyOp", ["x:T"], _infer, attrs={"T": None})
    assert isinstance(op_def, OpDef)
    assert reg.get("MyOp") is op_def
    assert reg.plugin_of("MyOp") == "my_plugin"
    other = OpDef(name="MyOp", inputs=("x",), infer=_infer)
    reg.bind("override").add(other, priority=1)
    assert reg.get("MyOp") is other
    assert reg.plugin_of("MyOp") == "override"


def test_gradient_registration_accepts_none() -> None:
    reg = GradientRegistry()
    reg.bind("g").add("Floor", None)
    assert "Floor" in reg
    assert reg.get("Floor") is None
    assert reg.kind == "gradient"


# -- KernelRegistry ------------------------------------------------------------------------


def test_kernel_lookup_by_dtype_constraint() -> None:
    reg = KernelRegistry()
    reg.bind("p").add("Op", "CPU", _fn_a, dtypes=[dtypes.float32])
    reg.bind("p").add("Op", "CPU", _fn_b, dtypes=[dtypes.int32])
    reg.freeze()
    assert reg.lookup("Op", "CPU", dtypes.float32).fn is _fn_a
    assert reg.lookup("Op", "CPU", dtypes.int32).fn is _fn_b
    assert reg.lookup("Op", "CPU", dtypes.int64) is None
    assert reg.lookup("Op", "GPU", dtypes.float32) is None
    assert reg.lookup("Other", "CPU", dtypes.float32) is None


def test_kernel_any_device_fallback() -> None:
    reg = KernelRegistry()
    reg.bind("core").add("Op", ANY_DEVICE, _fn_a)
    reg.bind("gpu").add("Op", "GPU", _fn_b, dtypes=[dtypes.float32])
    reg.freeze()
    assert reg.lookup("Op", "CPU", dtypes.float32).fn is _fn_a
    assert reg.lookup("Op", "GPU", dtypes.float32).fn is _fn_b  # specific device first
    assert reg.lookup("Op", "GPU", dtypes.int32).fn is _fn_a  # falls back for other dtypes


@pytest.mark.parametrize("order", ["high_first", "low_first"])
def test_kernel_priority_order(order: str) -> None:
    reg = KernelRegistry()
    adds = [("hi", _fn_a, 3), ("lo", _fn_b, 0)]
    if order == "low_first":
        adds.reverse()
    for plugin, fn, prio in adds:
        reg.bind(plugin).add("Op", "CPU", fn, priority=prio)
    reg.freeze()
    kernel = reg.lookup("Op", "CPU", dtypes.float32)
    assert kernel.fn is _fn_a
    assert kernel.plugin == "hi"
    assert kernel.priority == 3


def test_kernel_overlapping_dtypes_conflict_at_freeze() -> None:
    reg = KernelRegistry()
    reg.bind("plugin_one").add("Op", "CPU", _fn_a, dtypes=[dtypes.float32, dtypes.int32])
    reg.bind("plugin_two").add("Op", "CPU", _fn_b, dtypes=[dtypes.int32])  # no error yet
    with pytest.raises(PluginConflictError) as info:
        reg.freeze()
    msg = str(info.value)
    assert "plugin_one" in msg and "plugin_two" in msg
    assert "'Op'" in msg and "CPU" in msg


def test_kernel_unconstrained_overlaps_constrained() -> None:
    reg = KernelRegistry()
    reg.bind("a").add("Op", "CPU", _fn_a)
    reg.bind("b").add("Op", "CPU", _fn_b, dtypes=[dtypes.int32])
    with pytest.raises(PluginConflictError):
        reg.freeze()


def test_kernel_non_overlapping_dtypes_coexist() -> None:
    reg = KernelRegistry()
    reg.bind("a").add("Op", "CPU", _fn_a, dtypes=[dtypes.float32])
    reg.bind("b").add("Op", "CPU", _fn_b, dtypes=[dtypes.int32])
    reg.bind("c").add("Op", "GPU", _fn_c, dtypes=[dtypes.float32])  # other device type
    reg.freeze()
    assert reg.lookup("Op", "CPU", dtypes.float32).plugin == "a"
    assert reg.lookup("Op", "CPU", dtypes.int32).plugin == "b"
    assert reg.lookup("Op", "GPU", dtypes.float32).plugin == "c"
    assert len(reg.all()) == 3


def test_kernel_overlap_at_different_priorities_is_fine() -> None:
    reg = KernelRegistry()
    reg.bind("base").add("Op", "CPU", _fn_a)
    reg.bind("fast").add("Op", "CPU", _fn_b, dtypes=[dtypes.float32], priority=1)
    reg.freeze()
    assert reg.lookup("Op", "CPU", dtypes.float32).plugin == "fast"
    assert reg.lookup("Op", "CPU", dtypes.int32).plugin == "base"


def test_kernel_frozen_refuses_additions() -> None:
    reg = KernelRegistry()
    reg.freeze()
    with pytest.raises(PluginError, match="kernel registry is frozen"):
        reg.bind("late").add("Op", "CPU", _fn_a)
    assert reg.all() == []


def test_kernel_registration_fields() -> None:
    reg = KernelRegistry()
    reg.bind("p").add("Op", "CPU", _fn_a, dtypes=(dtypes.int8,), is_async=True,
                      needs_step=True, expensive=True)
    (kernel,) = reg.all()
    assert kernel.dtypes == frozenset({dtypes.int8})
    assert (kernel.is_async, kernel.needs_step, kernel.expensive) == (True, True, True)
    assert kernel.plugin == "p" and kernel.op == "Op" and kernel.device_type == "CPU"


def test_device_types_for() -> None:
    reg = KernelRegistry()
    reg.bind("p").add("Op", "GPU", _fn_a)
    reg.bind("p").add("Op", "CPU", _fn_b)
    reg.bind("p").add("Op", ANY_DEVICE, _fn_c)
    reg.bind("p").add("Other", "TPU", _fn_c)
    assert reg.device_types_for("Op") == sorted(["CPU", "GPU", ANY_DEVICE])
    assert reg.device_types_for("Other") == ["TPU"]
    assert reg.device_types_for("Missing") == []
