"""``TensorProto`` bytes: TF's ``tf.make_tensor_proto`` / ``tf.make_ndarray`` and the wire layout of
``SerializeTensor``.

Contract: `make_tensor_proto(values)` gives a `TensorProto` whose bytes are TF's
(``make_tensor_proto``'s layout: typed ``*_val`` fields for one element, ``tensor_content``
otherwise, ``string_val`` per string); `serialize_tensor_content(array)` is the layout of TF's
``SerializeTensor`` kernel (``AsProtoTensorContent``: always ``tensor_content`` for numbers).
`make_ndarray` (or ``graph_def_proto.parse_tensor`` on bytes) reads either back; a malformed
message raises `ValueError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph_def_proto import parse_tensor, tensor_message
from tensorweave.engine.graph.string_array import to_string_array
from tensorweave.engine.proto.message import Field, to_binary, to_text
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["TensorProto", "make_ndarray", "make_tensor_proto"]


class TensorProto:
    """A ``tensorflow.TensorProto`` holding one array: `SerializeToString`, `FromString`,
    `ParseFromString`, ``dtype``/``tensor_shape`` and protobuf text as ``str()``."""

    def __init__(self, array: np.ndarray | None = None) -> None:
        self._array = np.zeros([0], np.float32) if array is None else array

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.as_dtype(self._array.dtype)

    @property
    def tensor_shape(self) -> TensorShape:
        return TensorShape(self._array.shape)

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        return to_binary(tensor_message(self._array))

    def ParseFromString(self, data: bytes) -> None:  # noqa: N802 - protobuf's name
        self._array = parse_tensor(data)

    @classmethod
    def FromString(cls, data: bytes) -> TensorProto:  # noqa: N802 - protobuf's name
        return cls(parse_tensor(data))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorProto) and \
            self.SerializeToString() == other.SerializeToString()

    __hash__ = None  # type: ignore[assignment] - mutable, as protobuf messages

    def __str__(self) -> str:
        return to_text(tensor_message(self._array))

    def __repr__(self) -> str:
        return str(self)


def _as_array(values: Any, dtype: Any) -> np.ndarray:
    want = None if dtype is None else dtypes.as_dtype(dtype)
    if want == dtypes.string or (want is None and _is_stringy(values)):
        return to_string_array(values)
    if want is None:
        array = np.asarray(values)
        # TF's defaults: Python floats are float32, Python ints int32 when they fit
        if array.dtype == np.float64 and not isinstance(values, np.ndarray):
            array = array.astype(np.float32)
        elif array.dtype == np.int64 and not isinstance(values, np.ndarray) \
                and (array.size == 0 or np.abs(array).max() < 2 ** 31):
            array = array.astype(np.int32)
        dtypes.as_dtype(array.dtype)  # TypeError for dtypes tensorweave lacks
        return array
    array = np.asarray(values)
    converted = array.astype(want.np_type)
    if array.dtype.kind == "f" and want.is_integer and not np.array_equal(converted, array):
        raise TypeError(f"Expected {want.name}, got {values!r} of type "
                        f"'{type(values).__name__}' instead.")
    return converted


def _is_stringy(values: Any) -> bool:
    flat = np.asarray(values, dtype=object).reshape(-1)
    return flat.size > 0 and isinstance(flat[0], (str, bytes))


def make_tensor_proto(values: Any, dtype: Any = None, shape: Any = None,
                      verify_shape: bool = False, allow_broadcast: bool = False) -> TensorProto:
    """`values` (a scalar, nested list or numpy array) as a `TensorProto`; with `shape`, a
    single value is broadcast and a list of exactly that many values reshaped, as in TF."""
    array = _as_array(values, dtype)
    if shape is not None:
        shape = [int(d) for d in shape]
        count = int(np.prod(shape, dtype=np.int64))
        if verify_shape and list(array.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {array.shape}.")
        if array.size == count:
            array = array.reshape(shape)
        elif array.size == 1 or allow_broadcast:
            array = np.broadcast_to(array.reshape(-1)[:1] if array.size == 1 else array,
                                    shape).copy()
        else:
            raise ValueError(f"Too many elements provided. Needed at most {count}, but "
                             f"received {array.size}" if array.size > count else
                             f"Expected {count} elements, got {array.size}")
    return TensorProto(array)


def make_ndarray(tensor: TensorProto) -> np.ndarray:
    """The numpy array a `TensorProto` holds (a copy)."""
    if not isinstance(tensor, TensorProto):
        raise TypeError(f"make_ndarray expects a TensorProto, got {type(tensor).__name__}")
    return parse_tensor(tensor.SerializeToString())


def serialize_tensor_content(array: np.ndarray) -> bytes:
    """TF's ``SerializeTensor`` bytes of `array`: numbers always as ``tensor_content``."""
    message = tensor_message(array)
    if array.dtype != object and array.size == 1:
        content = np.ascontiguousarray(array).reshape(-1)
        message = [*message[:2], Field("tensor_content", 4, "bytes", content.astype(
            content.dtype.newbyteorder("<"), copy=False).tobytes())]
    return to_binary(message)

