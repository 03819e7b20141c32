"""`KernelDef` dtype matching and overlap, `KernelContext` accessors, `type_key` precedence."""

from __future__ import annotations

import numpy as np
import pytest

from tensorweave.engine import dtypes
from tensorweave.engine.kernel import ANY_DEVICE, KernelContext, KernelDef, type_key


def _kernel(dts=None, **kwargs) -> KernelDef:
    return KernelDef(op="Op", device_type="CPU", fn=lambda ctx: None, plugin="p",
                     dtypes=None if dts is None else frozenset(dts), **kwargs)


def test_unconstrained_kernel_matches_everything() -> None:
    k = _kernel()
    assert k.matches(dtypes.float32)
    assert k.matches(dtypes.bool_)
    assert k.matches(None)


def test_constrained_kernel_matches_only_its_dtypes() -> None:
    k = _kernel({dtypes.float32, dtypes.float64})
    assert k.matches(dtypes.float32)
    assert k.matches(dtypes.float64)
    assert not k.matches(dtypes.int32)
    assert not k.matches(dtypes.float16)


def test_unknown_dtype_matches_a_constrained_kernel() -> None:
    assert _kernel({dtypes.int32}).matches(None)


@pytest.mark.parametrize("a, b, expected", [
    (None, None, True),
    (None, {dtypes.int32}, True),
    ({dtypes.int32}, None, True),
    ({dtypes.int32, dtypes.float32}, {dtypes.float32}, True),
    ({dtypes.int32}, {dtypes.float32}, False),
    ({dtypes.int32, dtypes.int64}, {dtypes.float32, dtypes.float64}, False),
])
def test_overlaps(a, b, expected: bool) -> None:
    ka, kb = _kernel(a), _kernel(b)
    assert ka.overlaps(kb) is expected
    assert kb.overlaps(ka) is expected


def test_kernel_def_defaults_and_frozen() -> None:
    k = _kernel()
    assert (k.priority, k.is_async, k.needs_step, k.expensive) == (0, False, False, False)
    with pytest.raises(AttributeError):
        k.priority = 3  # type: ignore[misc]
    assert ANY_DEVICE == "*"


def test_type_key_prefers_T() -> None:
    attrs = {"T": dtypes.int32, "dtype": dtypes.float64}
    assert type_key(attrs, [dtypes.bool_]) == dtypes.int32


def test_type_key_falls_back_to_dtype_attr() -> None:
    assert type_key({"dtype": dtypes.float64}, [dtypes.bool_]) == dtypes.float64


def test_type_key_falls_back_to_output_0() -> None:
    assert type_key({}, [dtypes.int64, dtypes.float32]) == dtypes.int64


def test_type_key_ignores_non_dtype_attrs() -> None:
    # an attr named T that is not a DType (e.g. an int) does not count
    assert type_key({"T": 3, "dtype": "float32"}, [dtypes.int16]) == dtypes.int16


def test_type_key_none_without_anything() -> None:
    assert type_key({}, []) is None


def test_kernel_context_accessors() -> None:
    ctx = KernelContext(node_name="n", op="Op", attrs={"axis": 1}, device=None, xp=np,
                        output_dtypes=[dtypes.int8], output_shapes=[None])
    assert ctx.attr("axis") == 1
    with pytest.raises(KeyError):
        ctx.attr("missing")
    assert ctx.out_np is np.int8
    assert ctx.state == {}
    other = KernelContext(node_name="m", op="Op", attrs={}, device=None, xp=np,
                          output_dtypes=[dtypes.float32], output_shapes=[None])
    assert other.state is not ctx.state
