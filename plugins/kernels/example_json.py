"""Kernel of ``DecodeJSONExample``: ``tf.train.Example`` records in protobuf's proto3 JSON
mapping to their binary encoding, host-only as in TF.

Contract, as protobuf's ``JsonStringToMessage`` for ``tensorflow.Example``: each element is one
JSON object; a field is named by its JSON name (``int64List``) or its proto name
(``int64_list``); ``null`` leaves a field unset; ``features.feature`` is an object of features;
a feature sets at most one of its kinds, and an empty kind (``{"floatList": {}}``) is still set.
``bytes`` values are base64 (standard or web-safe, padding optional), ``int64`` values JSON
integers or decimal strings, ``float`` values numbers, numeric strings, ``"NaN"``,
``"Infinity"`` or ``"-Infinity"``. Anything else (bad JSON, unknown fields, wrong types, values
out of range) is `InvalidArgumentError` ``Error while parsing JSON: ...``. The output has the
input's shape; the bytes are the deterministic serialization of `tensorweave.train.Example`.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.formats.example_proto import (
    BytesList,
    Example,
    Feature,
    Features,
    FloatList,
    Int64List,
)

_FLOAT32_MAX = float(np.finfo(np.float32).max)
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_KINDS = {"bytesList": "bytes_list", "floatList": "float_list", "int64List": "int64_list"}
_LISTS = {"bytes_list": BytesList, "float_list": FloatList, "int64_list": Int64List}


class _JsonError(ValueError):
    """A JSON text that is not an Example in proto3's JSON mapping."""


def _fields(obj: Any, message: str, names: dict[str, str]) -> dict[str, Any]:
    """`obj`'s non-null fields under their proto names; `names` maps JSON names to them."""
    if not isinstance(obj, dict):
        raise _JsonError(f"{message}: expected an object, got {json.dumps(obj)}")
    out: dict[str, Any] = {}
    accepted = {**names, **{proto: proto for proto in names.values()}}
    for key, value in obj.items():
        if key not in accepted:
            raise _JsonError(f"{message}: cannot find field '{key}'")
        if value is not None:
            if accepted[key] in out:
                raise _JsonError(f"{message}: field '{key}' given twice")
            out[accepted[key]] = value
    return out


def _bytes_value(value: Any) -> bytes:
    if not isinstance(value, str):
        raise _JsonError(f"bytes value must be a base64 string, got {json.dumps(value)}")
    text = value.replace("-", "+").replace("_", "/").rstrip("=")
    if re.fullmatch(r"[A-Za-z0-9+/]*", text) is None or len(text) % 4 == 1:
        raise _JsonError(f"invalid base64 in bytes value {json.dumps(value)}")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error as e:
        raise _JsonError(f"invalid base64 in bytes value {json.dumps(value)}") from e


def _float_value(value: Any) -> float:
    if isinstance(value, str):
        if value in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[value]
        try:
            number = float(value)
        except ValueError:
            raise _JsonError(f"invalid float value {json.dumps(value)}") from None
        if not math.isfinite(number):
            raise _JsonError(f"invalid float value {json.dumps(value)}")
        value = number
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _JsonError(f"invalid float value {json.dumps(value)}")
    if abs(value) > _FLOAT32_MAX:
        raise _JsonError(f"float value {value} out of range")
    return float(value)


def _int64_value(value: Any) -> int:
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        value = int(value)
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _JsonError(f"invalid int64 value {json.dumps(value)}")
    if not -(1 << 63) <= value < (1 << 63):
        raise _JsonError(f"int64 value {value} out of range")
    return value


_CONVERT = {"bytes_list": _bytes_value, "float_list": _float_value, "int64_list": _int64_value}


def _feature(obj: Any) -> Feature:
    kinds = _fields(obj, "tensorflow.Feature", _KINDS)
    if len(kinds) > 1:
        raise _JsonError(f"tensorflow.Feature sets more than one of its kinds: {sorted(kinds)}")
    if not kinds:
        return Feature()
    (kind, body), = kinds.items()
    values = _fields(body, _LISTS[kind].DESCRIPTOR.full_name, {"value": "value"})
    items = values.get("value", [])
    if not isinstance(items, list):
        raise _JsonError(f"repeated field 'value' must be an array, got {json.dumps(items)}")
    if any(item is None for item in items):
        raise _JsonError("null is not allowed in repeated field 'value'")
    return Feature(**{kind: _LISTS[kind](value=[_CONVERT[kind](v) for v in items])})


def example_from_json(text: str) -> Example:
    """The Example `text` encodes in proto3's JSON mapping; `ValueError` if it does not."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise _JsonError(f"invalid JSON: {e}") from None
    fields = _fields(obj, "tensorflow.Example", {"features": "features"})
    example = Example()
    if "features" in fields:
        feature_map = _fields(fields["features"], "tensorflow.Features",
                              {"feature": "feature"}).get("feature", {})
        if not isinstance(feature_map, dict):
            raise _JsonError("map field 'feature' must be an object")
        example.features.CopyFrom(Features(feature={key: _feature(value)
                                                    for key, value in feature_map.items()}))
    return example


def decode_json_example(ctx: KernelContext, json_examples: Any) -> np.ndarray:
    arr = np.asarray(json_examples, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, element in enumerate(arr.reshape(-1)):
        try:
            flat[i] = example_from_json(element.decode("utf-8")).SerializeToString(
                deterministic=True)
        except (UnicodeDecodeError, ValueError) as e:
            raise errors.InvalidArgumentError(ctx.node_name, ctx.op,
                                              f"Error while parsing JSON: {e}") from None
    return out


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("DecodeJSONExample", device_type, decode_json_example)
