"""Alias of ``tensorflow.python.framework.dtypes``: re-exports `tensorweave.dtypes`."""

from tensorweave.engine.dtypes import (
    DType,
    as_dtype,
    bool_,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
)
from tensorweave.engine.dtypes import bool_ as bool  # noqa: A004 - TF's name
