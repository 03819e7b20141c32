"""TensorFlow-style dtypes.

Contract: a `DType` is a frozen value naming one numpy dtype. `as_dtype` accepts a `DType`, a
numpy dtype or type, a TF name string (``"float32"``) or a Python type (``float`` -> float32,
``int`` -> int32, ``bool`` -> bool, ``complex`` -> complex128), and raises `TypeError` for
anything else.

`string` is TF's variable-length byte string: its arrays are numpy object arrays whose elements
are `bytes` (numpy ``S``/``U`` dtypes, ``str``, ``bytes`` and ``object`` name it). It is not in
`ALL`, the dtypes with a fixed-size numeric representation that kernels compute on.

`resource` (TF's ``DT_RESOURCE``) is the dtype of a resource handle, a scalar naming state held
on a device (a resource variable); its values are host objects, never computed on, and it is
named only by ``"resource"`` or the `DType` itself. `variant` (TF's ``DT_VARIANT``) is the dtype
of a scalar holding a host object that ops pass on whole (a `TensorList`'s value), named so too.

``as_datatype_enum`` is TF's ``DataType`` number of a dtype (``types.proto``); `as_dtype` of such a
number (a ref type's number, ``+ 100``, included) gives the dtype back, as TF's ``tf.as_dtype(1)``.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np


@attrs.frozen(repr=False, eq=False)
class DType:
    """One element type. Compares equal to anything `as_dtype` maps to it (``tf.float32 ==
    np.float32 == "float32"``), as TF's DType does."""

    name: str
    np_type: type

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.name == other.name
        try:
            return self.name == as_dtype(other).name
        except TypeError:
            return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def as_numpy_dtype(self) -> type:
        return self.np_type

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def is_floating(self) -> bool:
        return np.issubdtype(self.np_type, np.floating)

    @property
    def is_integer(self) -> bool:
        return np.issubdtype(self.np_type, np.integer)

    @property
    def is_unsigned(self) -> bool:
        return np.issubdtype(self.np_type, np.unsignedinteger)

    @property
    def is_bool(self) -> bool:
        return self.np_type is np.bool_

    @property
    def is_string(self) -> bool:
        return self.np_type is np.object_ and self.name == "string"

    @property
    def is_complex(self) -> bool:
        return np.issubdtype(self.np_type, np.complexfloating)

    @property
    def is_numeric(self) -> bool:
        return self.is_floating or self.is_integer or self.is_complex

    @property
    def real_dtype(self) -> DType:
        """The dtype of the real and imaginary parts (complex64 -> float32); self otherwise."""
        return as_dtype(np.finfo(self.np_type).dtype) if self.is_complex else self

    @property
    def itemsize(self) -> int:
        return np.dtype(self.np_type).itemsize

    size = itemsize

    @property
    def min(self) -> Any:
        return np.finfo(self.np_type).min if self.is_floating else np.iinfo(self.np_type).min

    @property
    def max(self) -> Any:
        return np.finfo(self.np_type).max if self.is_floating else np.iinfo(self.np_type).max

    @property
    def as_datatype_enum(self) -> int:
        return DATA_TYPE_ENUMS[self]

    def is_compatible_with(self, other: Any) -> bool:
        return self == as_dtype(other)

    def __repr__(self) -> str:
        return f"tf.{self.name}"


float16 = half = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = double = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
bool_ = DType("bool", np.bool_)
string = DType("string", np.object_)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
resource = DType("resource", np.object_)
variant = DType("variant", np.object_)

ALL: tuple[DType, ...] = (float16, float32, float64, int8, int16, int32, int64, uint8, bool_,
                          complex64, complex128, uint16, uint32, uint64)
FLOATS: frozenset[DType] = frozenset({float16, float32, float64})
# TF 1.x's TF_CALL_INTEGRAL_TYPES: uint16 has the integer kernels, uint32/uint64 (added for XLA)
# only a few (Cast, Identity, bitwise ops), so op dtype lists name those two explicitly.
INTEGERS: frozenset[DType] = frozenset({int8, int16, int32, int64, uint8, uint16})
NUMERIC: frozenset[DType] = FLOATS | INTEGERS
INDEX: frozenset[DType] = frozenset({int32, int64})
COMPLEX: frozenset[DType] = frozenset({complex64, complex128})

# TF's DataType numbers (types.proto); a ref type is its value type's number + 100
DATA_TYPE_ENUMS: dict[DType, int] = {
    float32: 1, float64: 2, int32: 3, uint8: 4, int16: 5, int8: 6, string: 7, complex64: 8,
    int64: 9, bool_: 10, uint16: 17, complex128: 18, float16: 19, resource: 20, variant: 21,
    uint32: 22, uint64: 23}
REF_OFFSET = 100
_BY_ENUM = {number: d for d, number in DATA_TYPE_ENUMS.items()}

_BY_NAME = {d.name: d for d in ALL} | {"half": float16, "float": float32, "double": float64,
                                        "string": string, "resource": resource,
                                        "variant": variant}
_BY_NP = {np.dtype(d.np_type): d for d in ALL}


def as_dtype(value: Any) -> DType:
    """Return the `DType` that `value` names; `TypeError` if it names none."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
        raise TypeError(f"Cannot convert value {value!r} to a tensorweave DType.")
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        number = int(value)
        found = _BY_ENUM.get(number - REF_OFFSET if number > REF_OFFSET else number)
        if found is None:
            raise TypeError(f"Cannot convert value {value!r} to a tensorweave DType.")
        return found
    if value is bool:
        return bool_
    if value is int:
        return int32
    if value is float:
        return float32
    if value is complex:
        return complex128
    if value is object or value is np.object_:
        return string
    try:
        np_dtype = np.dtype(value)
        # np.dtype maps any Python class to object: only a real numpy dtype names string here
        if np_dtype.kind in "SU" or np_dtype.kind == "O" and isinstance(value, np.dtype):
            return string
        return _BY_NP[np_dtype]
    except (TypeError, KeyError):
        raise TypeError(f"Cannot convert value {value!r} to a tensorweave DType.") from None
