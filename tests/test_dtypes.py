"""DTypes and their conversions."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import dtypes


@pytest.mark.parametrize("dtype", dtypes.ALL)
def test_round_trips(dtype):
    assert tf.as_dtype(dtype.name) is dtype
    assert tf.as_dtype(dtype.np_type) is dtype
    assert tf.as_dtype(np.dtype(dtype.np_type)) is dtype
    assert dtype.as_numpy_dtype is dtype.np_type


def test_python_types_and_properties():
    assert tf.as_dtype(float) is tf.float32 and tf.as_dtype(int) is tf.int32
    assert tf.as_dtype(bool) is tf.bool and repr(tf.float32) == "tf.float32"
    assert tf.float16.is_floating and not tf.int8.is_floating
    assert tf.uint8.is_unsigned and tf.int64.is_integer and tf.bool.is_bool
    assert tf.int8.max == 127 and tf.float64.itemsize == 8


def test_tf1_name_aliases():
    # TF1 tutorials write `tf.placeholder("float", ...)` and `tf.cast(x, "float")`.
    assert tf.as_dtype("float") is tf.float32
    assert tf.as_dtype("double") is tf.float64 and tf.as_dtype("half") is tf.float16
    assert tf.placeholder("float", [None, 3]).dtype == tf.float32


@pytest.mark.parametrize("bad", ["qint8", dict, np.clongdouble, "bfloat16"])
def test_unknown_dtypes_are_type_errors(bad):
    with pytest.raises(TypeError):
        tf.as_dtype(bad)


def test_equality_follows_as_dtype():
    assert tf.float32 == np.float32 and tf.float32 == "float32" and tf.float32 == np.dtype("f4")
    assert tf.float32 != tf.float64 and tf.int32 != "int64" and tf.int32 != "no-such-type"
    assert len({tf.float32, tf.as_dtype("float32"), tf.float64}) == 2


UNSIGNED_WIDE = [(tf.uint16, np.uint16), (tf.uint32, np.uint32), (tf.uint64, np.uint64)]


@pytest.mark.parametrize("dtype, np_type", UNSIGNED_WIDE, ids=lambda d: str(d))
def test_wide_unsigned_dtypes(dtype, np_type):
    assert tf.as_dtype(np_type) is dtype and tf.as_dtype(np.dtype(np_type).name) is dtype
    assert dtype.is_unsigned and dtype.is_integer and not dtype.is_floating
    assert dtype.min == 0 and dtype.max == np.iinfo(np_type).max
    assert dtype.itemsize == np.dtype(np_type).itemsize and dtype in dtypes.ALL


def test_uint16_has_the_integer_kernels_and_uint32_uint64_do_not():
    # TF 1.x's TF_CALL_INTEGRAL_TYPES holds uint16 but not uint32/uint64
    assert tf.uint16 in dtypes.INTEGERS
    assert tf.uint32 not in dtypes.NUMERIC and tf.uint64 not in dtypes.NUMERIC


@pytest.mark.parametrize("dtype, np_type", UNSIGNED_WIDE, ids=lambda d: str(d))
def test_constants_feeds_and_fetches_keep_the_extremes(dtype, np_type):
    top = int(np.iinfo(np_type).max)
    const = tf.constant([0, top], dtype)
    fed = tf.placeholder(dtype, [2])
    with tf.Session() as sess:
        got_const, got_fed = sess.run([const, tf.identity(fed)], {fed: [top, 0]})
    assert got_const.dtype == np_type and got_const.tolist() == [0, top]
    assert got_fed.dtype == np_type and got_fed.tolist() == [top, 0]


@pytest.mark.parametrize("bad", [[2**64], [1.5]])
def test_values_that_do_not_fit_uint64_are_type_errors(bad):
    with pytest.raises(TypeError):
        tf.constant(bad, tf.uint64)


def test_negative_ints_wrap_into_unsigned_dtypes_as_in_tf():
    # TF 1.15 converts with numpy 1.x's np.array(values, dtype) or astype, which wrap.
    with tf.Session() as sess:
        got = sess.run([tf.constant([-1], tf.uint64), tf.constant(np.array([-3]), tf.uint64),
                        tf.constant([[0, 2, -1]], tf.uint8), tf.constant(-129, tf.int8)])
    assert got[0].tolist() == [2**64 - 1] and got[1].tolist() == [2**64 - 3]
    assert got[2].tolist() == [[0, 2, 255]] and got[3] == 127


def test_cast_to_and_from_the_wide_unsigned_types():
    big = tf.constant([2**64 - 1, 2**32 + 5, 7], tf.uint64)
    with tf.Session() as sess:
        to32, to16, as_float, back = sess.run([
            tf.cast(big, tf.uint32), tf.cast(big, tf.uint16), tf.cast(big, tf.float64),
            tf.cast(tf.cast(tf.constant([65535], tf.uint16), tf.uint64), tf.uint16)])
    assert to32.dtype == np.uint32 and to32.tolist() == [2**32 - 1, 5, 7]  # keeps low bits
    assert to16.dtype == np.uint16 and to16.tolist() == [65535, 5, 7]
    assert as_float.dtype == np.float64 and as_float[0] == 2.0**64
    assert back.dtype == np.uint16 and back.tolist() == [65535]


def test_uint16_arithmetic_wraps_and_signed_only_ops_refuse_it():
    x = tf.constant([65535, 3], tf.uint16)
    with tf.Session() as sess:
        total, top, half = sess.run([x + 1, tf.reduce_max(x), x / 2])
    assert total.dtype == np.uint16 and total.tolist() == [0, 4]
    assert half.dtype == np.float32 and half.tolist() == [32767.5, 1.5]  # TF's truediv table
    assert top.dtype == np.uint16 and top == 65535
    with pytest.raises(TypeError, match="uint16 not in list of allowed values"):
        tf.negative(x)
    with pytest.raises(TypeError, match="uint32 not in list of allowed values"):
        tf.add(tf.constant(1, tf.uint32), tf.constant(2, tf.uint32))
