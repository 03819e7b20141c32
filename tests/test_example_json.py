"""tf.decode_json_example (DecodeJSONExample): TF's round trips through protobuf's JSON form
(`_message_to_json` writes it as ``json_format.MessageToJson`` does) and its parse errors."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors
from tensorweave.formats.example_proto import BytesList
from tensorweave.train import Example, Feature, Features, FloatList, Int64List


def _feature_json(feature: Feature) -> dict[str, Any]:
    kind = feature.WhichOneof("kind")
    if kind is None:
        return {}
    values = list(getattr(feature, kind).value)
    if kind == "bytes_list":
        values = [base64.b64encode(v).decode() for v in values]
    elif kind == "int64_list":
        values = [str(v) for v in values]  # protobuf writes int64 as strings
    else:
        values = [("NaN" if math.isnan(v) else "Infinity" if v > 0 else "-Infinity")
                  if not math.isfinite(v) else v for v in values]
    json_kind = {"bytes_list": "bytesList", "float_list": "floatList",
                 "int64_list": "int64List"}[kind]
    return {json_kind: {"value": values} if values else {}}


def _message_to_json(example: Example) -> str:
    if not example.HasField("features"):
        return "{}"
    feature = {k: _feature_json(v) for k, v in example.features.feature.items()}
    return json.dumps({"features": {"feature": feature} if feature else {}}, indent=2)


def _example(**features: Feature) -> Example:
    return Example(features=Features(feature=features))


def _decode(json_values: Any) -> np.ndarray:
    with tw.Graph().as_default():
        out = tw.decode_json_example(tw.constant(json_values, dtype=tw.string))
        with tw.Session() as sess:
            return sess.run(out)


EXAMPLES = [
    Example(),
    _example(),
    _example(a=Feature(float_list=FloatList(value=[1, 1, 3]))),
    _example(a=Feature(float_list=FloatList(value=[-1.5, math.inf, -math.inf, math.nan]))),
    _example(b=Feature(bytes_list=BytesList(value=[b"a", b"", b"\xff\xfe\x00 long value"]))),
    _example(c=Feature(int64_list=Int64List(value=[3, -(1 << 63), (1 << 63) - 1])),
             d=Feature(float_list=FloatList(value=[])), e=Feature()),
]


def test_round_trips_match_the_binary_serialization() -> None:
    grid = np.array([_message_to_json(e) for e in EXAMPLES], dtype=object).reshape(2, 3)
    got = _decode(grid)
    assert got.shape == (2, 3) and got.dtype == object
    for example, binary in zip(EXAMPLES, got.reshape(-1)):
        assert binary == example.SerializeToString(deterministic=True)
        parsed = Example.FromString(binary)
        assert str(parsed) == str(example)


def test_empty_and_scalar_inputs_keep_their_shape() -> None:
    assert _decode(np.empty((0,), object)).shape == (0,)
    assert _decode(np.empty((3, 0), object)).shape == (3, 0)
    assert _decode(_message_to_json(EXAMPLES[2])) == \
        EXAMPLES[2].SerializeToString(deterministic=True)


def test_proto_names_nulls_and_number_forms_are_accepted() -> None:
    text = json.dumps({"features": {"feature": {
        "i": {"int64_list": {"value": [1, "2", -3.0]}},
        "f": {"floatList": {"value": ["1.5", 2, "-Infinity"]}},
        "b": {"bytesList": {"value": ["_-8", "YQ"]}},  # web-safe, unpadded
        "n": {"int64List": None}}}})
    expected = _example(i=Feature(int64_list=Int64List(value=[1, 2, -3])),
                        f=Feature(float_list=FloatList(value=[1.5, 2, -math.inf])),
                        b=Feature(bytes_list=BytesList(value=[b"\xff\xef", b"a"])),
                        n=Feature())
    assert _decode([text])[0] == expected.SerializeToString(deterministic=True)


def test_graph_construction() -> None:
    with tw.Graph().as_default():
        x = tw.placeholder(tw.string, [None, 2])
        y = tw.io.decode_json_example(x, name="json")
        assert y.dtype == tw.string and y.shape.as_list() == [None, 2]
        assert y.op.type == "DecodeJSONExample" and y.op.name == "json"
        with pytest.raises((TypeError, ValueError)):
            tw.decode_json_example(tw.constant([1.0]))


@pytest.mark.parametrize("text", [
    "{]",
    "[]",
    '{"feature": {}}',
    '{"features": {"feature": {"a": {"int64List": {"value": ["x"]}}}}}',
    '{"features": {"feature": {"a": {"int64List": {"value": [1.5]}}}}}',
    '{"features": {"feature": {"a": {"int64List": {"value": ["9223372036854775808"]}}}}}',
    '{"features": {"feature": {"a": {"floatList": {"value": [1e300]}}}}}',
    '{"features": {"feature": {"a": {"floatList": {"value": [true]}}}}}',
    '{"features": {"feature": {"a": {"bytesList": {"value": ["a$b"]}}}}}',
    '{"features": {"feature": {"a": {"bytesList": {"value": [null]}}}}}',
    '{"features": {"feature": {"a": {"bytesList": {}, "floatList": {}}}}}',
    '{"features": {"feature": {"a": {"int64List": {"value": 3}}}}}',
])
def test_bad_json_is_invalid_argument(text: str) -> None:
    with pytest.raises(errors.InvalidArgumentError, match="Error while parsing JSON"):
        _decode([text])
