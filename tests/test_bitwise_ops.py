"""``tw.bitwise`` and the bitwise ops (``tensorweave.plugins.standard_ops.bitwise`` and its
kernels): numpy references at every integer dtype's extremes, TF's shift clamping, the uint8
``PopulationCount``, and TF's errors for the dtypes without a kernel or an OpDef."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.api.gradients import gradient_function
from tensorweave.engine import errors

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def run(*fetches):
    with tw.Session() as sess:
        return sess.run(list(fetches))


def extremes(np_type: type) -> np.ndarray:
    info = np.iinfo(np_type)
    return np.array([info.min, info.max, 0, 1, info.max // 3, info.min + 5], np_type)


@pytest.mark.parametrize("np_type", INT_TYPES, ids=lambda t: np.dtype(t).name)
def test_and_or_xor_invert_match_numpy(np_type: type) -> None:
    x = extremes(np_type)
    y = x[::-1].copy()
    got = run(tw.bitwise.bitwise_and(x, y), tw.bitwise.bitwise_or(x, y),
              tw.bitwise.bitwise_xor(x, y), tw.bitwise.invert(x))
    for result, expected in zip(got, (x & y, x | y, x ^ y, ~x)):
        assert result.dtype == np_type
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("np_type", INT_TYPES, ids=lambda t: np.dtype(t).name)
def test_shifts_clamp_the_amount_to_the_width(np_type: type) -> None:
    bits = np.dtype(np_type).itemsize * 8
    x = extremes(np_type)
    amounts = np.array([0, 1, bits - 1, bits, bits + 40, 3], np_type)
    left, right = run(tw.bitwise.left_shift(x, amounts), tw.bitwise.right_shift(x, amounts))
    clamped = np.minimum(amounts, bits - 1)
    assert left.dtype == np_type and right.dtype == np_type
    np.testing.assert_array_equal(left, np.left_shift(x, clamped))
    np.testing.assert_array_equal(right, np.right_shift(x, clamped))


def test_shift_examples_from_tf_docs() -> None:
    # a negative shift counts as 0; right shifts of signed values are arithmetic
    x = np.array([-1, -128, 64], np.int8)
    left, right = run(tw.bitwise.left_shift(x, np.array([7, -3, 1], np.int8)),
                      tw.bitwise.right_shift(x, np.array([100, 1, -2], np.int8)))
    assert left.tolist() == [-128, -128, -128]
    assert right.tolist() == [-1, -64, 64]
    top, = run(tw.bitwise.right_shift(tw.constant([2**64 - 1], tw.uint64), 63))
    assert top.dtype == np.uint64 and top.tolist() == [1]


def test_binary_ops_broadcast_and_convert_python_operands() -> None:
    x = tw.constant([[1], [6]], tw.uint16)
    out = tw.bitwise.bitwise_or(x, [8, 16, 65535])
    assert out.shape.as_list() == [2, 3] and out.dtype == tw.uint16
    got, = run(out)
    np.testing.assert_array_equal(got, np.array([[1], [6]], np.uint16) | [8, 16, 65535])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.bitwise.bitwise_and(tw.constant([1, 2], tw.int32), tw.constant([1, 2, 3], tw.int32))


@pytest.mark.parametrize("np_type", [np.int8, np.int16, np.int32, np.int64, np.uint8,
                                     np.uint16], ids=lambda t: np.dtype(t).name)
def test_population_count_is_uint8_set_bits(np_type: type) -> None:
    x = extremes(np_type).reshape(2, 3)
    count = tw.raw_ops.PopulationCount(x=tw.constant(x))
    assert count.dtype == tw.uint8 and count.shape.as_list() == [2, 3]
    got, = run(count)
    expected = [[bin(int(v) & ((1 << x.dtype.itemsize * 8) - 1)).count("1") for v in row]
                for row in x]
    assert got.dtype == np.uint8 and got.tolist() == expected


@pytest.mark.parametrize("dtype", [tw.uint32, tw.uint64])
def test_population_count_has_no_kernel_for_uint32_and_uint64(dtype) -> None:
    count = tw.raw_ops.PopulationCount(x=tw.constant([1, 3], dtype))  # the OpDef allows it
    with pytest.raises(errors.InvalidArgumentError,
                       match=f"No OpKernel was registered to support Op 'PopulationCount'"
                             f".* with dtype {dtype.name}"):
        run(count)


@pytest.mark.parametrize("value", [1.5, True])
def test_non_integer_inputs_are_type_errors(value) -> None:
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tw.bitwise.invert(tw.constant([value]))
    with pytest.raises(TypeError, match="not in list of allowed values"):
        tw.bitwise.bitwise_xor(tw.constant([value]), tw.constant([value]))


def test_bitwise_ops_are_registered_as_not_differentiable() -> None:
    x = tw.constant([3, 5], tw.int32)
    outputs = [tw.bitwise.bitwise_and(x, 6), tw.bitwise.bitwise_or(x, 6),
               tw.bitwise.bitwise_xor(x, 6), tw.bitwise.left_shift(x, 1),
               tw.bitwise.right_shift(x, 1), tw.bitwise.invert(x),
               tw.raw_ops.PopulationCount(x=x)]
    for out in outputs:
        assert gradient_function(out.op) is None  # unregistered would raise LookupError
