"""DTypes and their conversions."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import dtypes


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


@pytest.mark.parametrize("bad", ["complex64", dict, np.complex128, "bfloat16"])
def test_unknown_dtypes_are_type_errors(bad):
    with pytest.raises(TypeError):
        tf.as_dtype(bad)


def test_equality_follows_as_dtype():
    assert tf.float32 == np.float32 and tf.float32 == "float32" and tf.float32 == np.dtype("f4")
    assert tf.float32 != tf.float64 and tf.int32 != "int64" and tf.int32 != "no-such-type"
    assert len({tf.float32, tf.as_dtype("float32"), tf.float64}) == 2
