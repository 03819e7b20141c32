"""``tf.strings.unicode_decode``, ``unicode_decode_with_offsets``, ``unicode_encode``,
``unicode_split`` and ``unicode_transcode`` (TF 1.15's ``ragged_string_ops``), dense or ragged.

Contract: decoding a string tensor of static rank ``N`` gives int32 code points of rank ``N+1``
(a `RaggedTensor`; a dense vector for a scalar input), keeping a ragged input's partitions;
``unicode_split`` gives each character re-encoded as its own string. ``unicode_encode`` takes
code points of rank ``N+1`` (dense or ragged, the last dimension the characters) and gives
strings of rank ``N``. Encodings are ``UTF-8``, ``UTF-16-BE`` and ``UTF-32-BE``; `errors` is
``strict``, ``replace`` or ``ignore`` (see `tensorweave.plugins.kernels.unicode_ops`). An unknown
rank, a scalar to encode, or a bad encoding raises `ValueError` at construction.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.api.ragged_array_ops import expand_dims
from tensorweave.api.ragged_ops import _graph_tensors
from tensorweave.api.ragged_tensor import RaggedTensor
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.op_builder import make_op

__all__: list[str] = []


def _decode(input: Any, input_encoding: str, errors: str, replacement_char: int,  # noqa: A002
            replace_control_characters: bool, with_offsets: bool) -> Any:
    if not isinstance(input, RaggedTensor):
        input = convert_to_tensor(input, dtypes.string, name="input")
    ndims = input.shape.ndims
    if ndims is None:
        raise ValueError("Rank of `input` must be statically known.")
    if ndims > 1 and not isinstance(input, RaggedTensor):
        input = RaggedTensor.from_tensor(input, ragged_rank=ndims - 1)
    elif isinstance(input, RaggedTensor) and input.ragged_rank < ndims - 1:
        input = input.with_flat_values(RaggedTensor.from_tensor(
            input.flat_values, ragged_rank=ndims - input.ragged_rank - 1))
    flat = input.flat_values if isinstance(input, RaggedTensor) else input
    op = make_op("UnicodeDecodeWithOffsets" if with_offsets else "UnicodeDecode",
                 [array_ops.reshape(flat, [-1])],
                 {"input_encoding": input_encoding, "errors": errors,
                  "replacement_char": replacement_char,
                  "replace_control_characters": replace_control_characters})
    splits = op.outputs[0]
    parts = [RaggedTensor(out, splits, internal=True) for out in op.outputs[1:]]
    if ndims == 0:
        parts = [p.values for p in parts]
    elif ndims > 1:
        parts = [input.with_flat_values(p) for p in parts]
    return tuple(parts) if with_offsets else parts[0]


def unicode_decode(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 0xFFFD, replace_control_characters: bool = False,
                   name: str | None = None) -> Any:
    """The code points of each string of `input`, one more (ragged) dimension."""
    with name_scope(name, "UnicodeDecode", _graph_tensors([input])):
        return _decode(input, input_encoding, errors, replacement_char,
                       replace_control_characters, with_offsets=False)


def unicode_decode_with_offsets(input: Any, input_encoding: str,  # noqa: A002
                                errors: str = "replace", replacement_char: int = 0xFFFD,
                                replace_control_characters: bool = False,
                                name: str | None = None) -> tuple[Any, Any]:
    """``(codepoints, start byte offsets)`` of each string's characters."""
    with name_scope(name, "UnicodeDecodeWithOffsets", _graph_tensors([input])):
        return _decode(input, input_encoding, errors, replacement_char,
                       replace_control_characters, with_offsets=True)


def unicode_encode(input: Any, output_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 65533, name: str | None = None) -> Any:
    """The string of each sequence of code points along `input`'s last dimension."""
    with name_scope(name, "UnicodeEncode", _graph_tensors([input])):
        return _encode(input, output_encoding, errors, replacement_char)


def _encode(codes: Any, encoding: str, errors: str, replacement_char: int) -> Any:
    if not isinstance(codes, RaggedTensor):
        codes = convert_to_tensor(codes, dtypes.int32, name="input")
    ndims = codes.shape.ndims
    if ndims is None:
        raise ValueError("Rank of input_tensor must be statically known.")
    if isinstance(codes, RaggedTensor):
        if codes.flat_values.shape.ndims > 1:
            return codes.with_flat_values(_encode(codes.flat_values, encoding, errors,
                                                  replacement_char))
        if codes.ragged_rank > 1:
            return codes.with_values(_encode(codes.values, encoding, errors, replacement_char))
        return make_op("UnicodeEncode", [codes.values, codes.row_splits],
                       {"output_encoding": encoding, "errors": errors,
                        "replacement_char": replacement_char}).outputs[0]
    if ndims == 0:
        raise ValueError("input_tensor's rank must be at least 1.")
    if ndims == 1:
        one_row = RaggedTensor.from_tensor(array_ops.expand_dims(codes, 0))
        return array_ops.reshape(_encode(one_row, encoding, errors, replacement_char), [])
    shape = array_ops.shape(codes)
    rows = array_ops.reshape(codes, array_ops.stack([-1, shape[-1]]))
    flat = _encode(RaggedTensor.from_tensor(rows), encoding, errors, replacement_char)
    return array_ops.reshape(flat, shape[:-1])


def unicode_split(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                  replacement_char: int = 0xFFFD, name: str | None = None) -> Any:
    """Each string's characters, each as a string in `input_encoding`."""
    with name_scope(name, "UnicodeSplit", _graph_tensors([input])):
        codes = _decode(input, input_encoding, errors, replacement_char, False,
                        with_offsets=False)
        expanded = expand_dims(codes, -1) if isinstance(codes, RaggedTensor) \
            else array_ops.expand_dims(codes, -1)
        return _encode(expanded, input_encoding, errors, replacement_char)


def unicode_transcode(input: Any, input_encoding: str, output_encoding: str,  # noqa: A002
                      errors: str = "replace", replacement_char: int = 65533,
                      replace_control_characters: bool = False,
                      name: str | None = None) -> Any:
    """Each string re-encoded from `input_encoding` to `output_encoding`."""
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(unicode_transcode(
            input.flat_values, input_encoding, output_encoding, errors, replacement_char,
            replace_control_characters, name))
    return make_op("UnicodeTranscode", [convert_to_tensor(input, dtypes.string)],
                   {"input_encoding": input_encoding, "output_encoding": output_encoding,
                    "errors": errors, "replacement_char": replacement_char,
                    "replace_control_characters": replace_control_characters},
                   name=name or "UnicodeTranscode").outputs[0]
