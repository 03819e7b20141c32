"""numpy arrays <-> TF's ``TensorProto`` messages (``tf.make_tensor_proto`` / ``tf.make_ndarray``).

Contract: `tensor_to_proto(array)` gives a `TensorProto` (the protobuf class of
`tensorweave.engine.proto.framework`) laid out as TF's ``make_tensor_proto``: typed ``*_val``
fields for one element, ``tensor_content`` otherwise, ``string_val`` per string; with
``content=True`` numbers always go to ``tensor_content``, as TF's ``SerializeTensor`` kernel
(``AsProtoTensorContent``). `tensor_from_proto` reads either back and validates it: a known
dtype, a fully defined shape, content length or value count against the element count (fewer
values than elements repeat the last, as TF), values only in the dtype's field; anything else is
a `ValueError` naming `what` and the field. `shape_to_proto` / `shape_from_proto` do the same for
``TensorShapeProto`` (dims >= -1; no dims with unknown rank).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from tensorweave.engine import dtypes
from tensorweave.engine.graph.string_array import to_string_array
from tensorweave.engine.proto.framework import TensorProto, TensorShapeProto
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["TensorProto", "make_ndarray", "make_tensor_proto"]

_MAX_SPLAT = 1 << 28  # elements a tensor may expand to from fewer stored values

# the typed field of each dtype (tensor.proto); complex values are (real, imaginary) pairs
_VALUE_FIELDS: dict[dtypes.DType, str] = {
    dtypes.float32: "float_val", dtypes.float64: "double_val", dtypes.int32: "int_val",
    dtypes.int16: "int_val", dtypes.int8: "int_val", dtypes.uint8: "int_val",
    dtypes.uint16: "int_val", dtypes.int64: "int64_val", dtypes.bool_: "bool_val",
    dtypes.float16: "half_val", dtypes.complex64: "scomplex_val",
    dtypes.complex128: "dcomplex_val", dtypes.uint32: "uint32_val", dtypes.uint64: "uint64_val",
}
_ALL_VALUE_FIELDS = tuple(sorted(set(_VALUE_FIELDS.values())))


def dtype_from_enum(number: int, what: str) -> dtypes.DType:
    """The dtype of TF ``DataType`` `number` (a ref type reads as its value type)."""
    try:
        return dtypes.as_dtype(int(number))
    except TypeError:
        raise ValueError(f"{what} has unsupported DataType {number}") from None


def shape_to_proto(shape: Any, proto: TensorShapeProto | None = None) -> TensorShapeProto:
    """`shape` (a `TensorShape` or a list of dims) as a ``TensorShapeProto``, written into
    `proto` when given."""
    proto = TensorShapeProto() if proto is None else proto
    dims = TensorShape(shape).dims
    if dims is None:
        proto.unknown_rank = True
    else:
        for d in dims:
            proto.dim.add(size=-1 if d is None else int(d))
    return proto


def shape_from_proto(proto: TensorShapeProto, what: str = "shape") -> TensorShape:
    sizes = [d.size for d in proto.dim]
    if proto.unknown_rank:
        if sizes:
            raise ValueError(f"{what} has unknown rank and {len(sizes)} dimensions")
        return TensorShape(None)
    if any(s < -1 for s in sizes):
        raise ValueError(f"{what} has a dimension of size {min(sizes)}")
    return TensorShape([None if s == -1 else s for s in sizes])


def tensor_to_proto(array: Any, content: bool = False,
                    proto: TensorProto | None = None) -> TensorProto:
    """`array` as a ``TensorProto`` (see the module docstring), written into `proto` when given."""
    array = np.asarray(array)
    dtype = dtypes.as_dtype(array.dtype)
    proto = TensorProto() if proto is None else proto
    proto.dtype = dtype.as_datatype_enum
    proto.tensor_shape.SetInParent()  # a scalar's empty shape is still written, as TF's
    shape_to_proto(array.shape, proto.tensor_shape)
    flat = array.reshape(-1)
    if dtype == dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode() for v in flat)
    elif flat.size != 1 or content:
        if flat.size:
            proto.tensor_content = flat.astype(flat.dtype.newbyteorder("<"), copy=False).tobytes()
    elif dtype == dtypes.float16:
        proto.half_val.append(int(flat.view(np.uint16)[0]))
    elif dtype.is_complex:
        getattr(proto, _VALUE_FIELDS[dtype]).extend((flat[0].real.item(), flat[0].imag.item()))
    else:
        getattr(proto, _VALUE_FIELDS[dtype]).append(flat[0].item())
    return proto


def tensor_from_proto(proto: TensorProto, what: str = "tensor") -> np.ndarray:
    """The array `proto` holds; `ValueError` naming `what` if it is malformed."""
    if not proto.dtype:
        raise ValueError(f"{what} has no dtype")
    dtype = dtype_from_enum(proto.dtype, what)
    shape = shape_from_proto(proto.tensor_shape, f"{what}.tensor_shape")
    if not shape.is_fully_defined():
        raise ValueError(f"{what} has a shape that is not fully defined: {shape}")
    dims = shape.as_list()
    count = shape.num_elements()
    np_type = np.dtype(dtype.np_type)
    if dtype == dtypes.string:
        given: Any = list(proto.string_val)
    elif proto.tensor_content:
        content = proto.tensor_content
        if len(content) != count * np_type.itemsize:
            raise ValueError(f"{what}.tensor_content has {len(content)} bytes for {count} "
                             f"{dtype.name} elements")
        return np.frombuffer(content, np_type.newbyteorder("<")).astype(np_type).reshape(dims)
    else:
        field = _VALUE_FIELDS.get(dtype)
        if field is None:
            raise ValueError(f"{what} of dtype {dtype.name} has no values")
        stray = [f for f in _ALL_VALUE_FIELDS if f != field and len(getattr(proto, f))]
        if stray:
            raise ValueError(f"{what} of dtype {dtype.name} has {stray[0]}")
        given = list(getattr(proto, field))
        if dtype.is_complex:
            if len(given) % 2:
                raise ValueError(f"{what} has an odd number of {field} values")
            given = [complex(re, im) for re, im in zip(given[::2], given[1::2])]
    if len(given) > count:
        raise ValueError(f"{what} has {len(given)} values for {count} elements")
    if given and len(given) < count and count > _MAX_SPLAT:
        raise ValueError(f"{what} would expand to {count} elements")
    if dtype == dtypes.string:
        flat = np.empty(count, dtype=object)
        flat[:] = given + [given[-1] if given else b""] * (count - len(given))
        return flat.reshape(dims)
    if not len(given):
        return np.zeros(dims, np_type)
    if dtype == dtypes.float16:
        array = np.array(given, dtype=np.int64).astype(np.uint16).view(np.float16)
    else:
        try:
            array = np.array(given, dtype=np_type)
        except OverflowError:
            raise ValueError(f"{what} has a value out of range for {dtype.name}") from None
    if len(given) < count:
        array = np.concatenate([array, np.full(count - len(given), array[-1], np_type)])
    return array.reshape(dims)


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
    return tensor_to_proto(array)


def make_ndarray(tensor: TensorProto) -> np.ndarray:
    """The numpy array a `TensorProto` holds (a copy)."""
    if not isinstance(tensor, TensorProto):
        raise TypeError(f"make_ndarray expects a TensorProto, got {type(tensor).__name__}")
    return np.array(tensor_from_proto(tensor))


def parse_tensor(data: bytes, what: str = "tensor") -> np.ndarray:
    """The array of serialized ``TensorProto`` `data`; `ValueError` if it is none."""
    try:
        proto = TensorProto.FromString(data)
    except (DecodeError, TypeError) as exc:
        raise ValueError(f"{what}: Malformed TensorProto ({exc})") from None
    return tensor_from_proto(proto, what)


def serialize_tensor_content(array: np.ndarray) -> bytes:
    """TF's ``SerializeTensor`` bytes of `array`: numbers always as ``tensor_content``."""
    return tensor_to_proto(array, content=True).SerializeToString()
