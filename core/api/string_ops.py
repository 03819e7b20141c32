"""Dense string ops under ``tf.compat.v1``'s top-level names (``string_join``, ``substr``,
``regex_replace``, ``string_to_number``, ``as_string``, ``reduce_join``,
``string_to_hash_bucket_fast``, ...); `tensorweave.strings` gives them their ``tf.strings``
names.

Contract: each function builds one op (``reduce_join`` with ``axis=None`` adds the constant, or
``Range``/``Rank``, of all axes from last to first, as TF1 does) and returns its output. Python
strings convert to ``string`` tensors; a non-string tensor where a string is expected raises
`TypeError` at construction, as does an ``out_type``/dtype outside TF's list. ``regex_replace``
and ``regex_full_match`` build TF's ``StaticRegex*`` ops when the pattern (and rewrite) are
Python strings, as TF does; their regexes are RE2's, as TF's (a pattern RE2 rejects raises
`InvalidArgumentError` when run). ``string_split`` and
``strings_split`` (``tw.strings.split``) return a `SparseTensor` of the tokens of a vector of
strings (a source of another rank raises `ValueError` at construction), or with
``result_type="RaggedTensor"`` a `RaggedTensor` with one row per string; ``strings_split`` then
takes any rank, as TF 1.15: a scalar gives its tokens as a vector, and a source of rank ``r > 1``
a tensor of ragged rank ``r``.
``string_format`` (``tw.strings.format``) checks its placeholder count at construction
(`ValueError`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tensorweave.api import array_ops, dispatch
from tensorweave.api.deprecation import deprecated_argument_lookup
from tensorweave.api.ragged_tensor import RaggedTensor
from tensorweave.api.scopes import name_scope
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply, make_op

__all__ = [
    "as_string", "decode_base64", "encode_base64", "reduce_join", "regex_replace",
    "string_join", "string_split", "string_strip", "string_to_hash_bucket",
    "string_to_hash_bucket_fast", "string_to_hash_bucket_strong", "string_to_number", "substr",
]


@dispatch.dispatchable
def string_join(inputs: Sequence[Any], separator: str = "", name: str | None = None) -> Tensor:
    """Elementwise concatenation of `inputs` (scalars broadcast), joined by `separator`."""
    return apply("StringJoin", [list(inputs)], {"separator": separator},
                 name=name or "StringJoin")


@dispatch.dispatchable
def string_length(input: Any, name: str | None = None,  # noqa: A002 - TF's name
                  unit: str = "BYTE") -> Tensor:
    """Length of each string in bytes, or in UTF-8 characters for ``unit="UTF8_CHAR"``."""
    return apply("StringLength", [input], {"unit": unit}, name=name or "StringLength")


@dispatch.dispatchable
def substr(input: Any, pos: Any, len: Any, name: str | None = None,  # noqa: A002
           unit: str = "BYTE") -> Tensor:
    """``len`` bytes (or characters) of each string from ``pos`` (negative: from the end)."""
    return apply("Substr", [input, pos, len], {"unit": unit}, name=name or "Substr")


@dispatch.dispatchable
def string_upper(input: Any, encoding: str = "", name: str | None = None) -> Tensor:  # noqa: A002
    return apply("StringUpper", [input], {"encoding": encoding}, name=name or "StringUpper")


@dispatch.dispatchable
def string_lower(input: Any, encoding: str = "", name: str | None = None) -> Tensor:  # noqa: A002
    return apply("StringLower", [input], {"encoding": encoding}, name=name or "StringLower")


@dispatch.dispatchable
def string_strip(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Each string without its leading and trailing ASCII whitespace."""
    return apply("StringStrip", [input], name=name or "StringStrip")


def _is_text(value: Any) -> bool:
    return isinstance(value, (str, bytes))


@dispatch.dispatchable
def regex_replace(input: Any, pattern: Any, rewrite: Any,  # noqa: A002
                  replace_global: bool = True, name: str | None = None) -> Tensor:
    """Each string with the matches of `pattern` replaced by `rewrite` (``\\1`` names a group,
    ``\\0`` the whole match), all of them or only the first."""
    if _is_text(pattern) and _is_text(rewrite):
        return apply("StaticRegexReplace", [input],
                     {"pattern": pattern, "rewrite": rewrite, "replace_global": replace_global},
                     name=name or "StaticRegexReplace")
    return apply("RegexReplace", [input, pattern, rewrite], {"replace_global": replace_global},
                 name=name or "RegexReplace")


@dispatch.dispatchable
def regex_full_match(input: Any, pattern: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Whether each whole string matches `pattern`."""
    if _is_text(pattern):
        return apply("StaticRegexFullMatch", [input], {"pattern": pattern},
                     name=name or "StaticRegexFullMatch")
    return apply("RegexFullMatch", [input, pattern], name=name or "RegexFullMatch")


@dispatch.dispatchable
def string_to_number(string_tensor: Any, out_type: Any = dtypes.float32,
                     name: str | None = None) -> Tensor:
    """Each string parsed as `out_type` (float32, float64, int32 or int64)."""
    return apply("StringToNumber", [string_tensor], {"out_type": out_type},
                 name=name or "StringToNumber")


@dispatch.dispatchable
def as_string(input: Any, precision: int = -1, scientific: bool = False,  # noqa: A002
              shortest: bool = False, width: int = -1, fill: str = "",
              name: str | None = None) -> Tensor:
    """Each number or bool as a string, formatted as C's printf with TF's attrs."""
    return apply("AsString", [input],
                 {"precision": precision, "scientific": scientific, "shortest": shortest,
                  "width": width, "fill": fill}, name=name or "AsString")


@dispatch.dispatchable
def reduce_join(inputs: Any, axis: Any = None, keep_dims: bool | None = None,
                separator: str = "", name: str | None = None, reduction_indices: Any = None,
                keepdims: bool | None = None) -> Tensor:
    """The strings joined across `axis` (all axes, last to first, when None)."""
    axis = deprecated_argument_lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = deprecated_argument_lookup("keepdims", keepdims, "keep_dims", keep_dims)
    x = convert_to_tensor(inputs)
    if axis is None:
        rank = x.shape.ndims
        if rank is not None:
            axis = np.arange(rank - 1, -1, -1, dtype=np.int32)
        else:
            with x.graph.as_default():
                last = apply("Sub", [apply("Rank", [x]), 1], name="sub")
                axis = apply("Range", [last, -1, -1], name="range")
    elif not is_tensor_like(axis):
        axis = np.asarray(axis, dtype=np.int32)
    return apply("ReduceJoin", [x, axis], {"keep_dims": bool(keepdims), "separator": separator},
                 name=name or "ReduceJoin")


def unsorted_segment_join(inputs: Any, segment_ids: Any, num_segments: Any,
                          separator: str = "", name: str | None = None) -> Tensor:
    """The rows of `inputs` whose `segment_ids` are ``i`` joined item by item into row ``i``
    (row-major order; "" for an empty segment)."""
    return apply("UnsortedSegmentJoin", [inputs, segment_ids, num_segments],
                 {"separator": separator}, name=name or "UnsortedSegmentJoin")


@dispatch.dispatchable
def string_to_hash_bucket(string_tensor: Any, num_buckets: int,
                          name: str | None = None) -> Tensor:
    """TF's legacy ``Hash64(s) % num_buckets`` for each string (prefer the fast variant)."""
    return apply("StringToHashBucket", [string_tensor], {"num_buckets": num_buckets},
                 name=name or "StringToHashBucket")


@dispatch.dispatchable
def string_to_hash_bucket_fast(input: Any, num_buckets: int,  # noqa: A002
                               name: str | None = None) -> Tensor:
    """``Fingerprint64(s) % num_buckets`` for each string (farmhash, as TF)."""
    return apply("StringToHashBucketFast", [input], {"num_buckets": num_buckets},
                 name=name or "StringToHashBucketFast")


@dispatch.dispatchable
def string_to_hash_bucket_strong(input: Any, num_buckets: int, key: Sequence[int],  # noqa: A002
                                 name: str | None = None) -> Tensor:
    """``SipHash-2-4(key, s) % num_buckets`` for each string; `key` is two ints."""
    return apply("StringToHashBucketStrong", [input],
                 {"num_buckets": num_buckets, "key": list(key)},
                 name=name or "StringToHashBucketStrong")


@dispatch.dispatchable
def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Tensor:  # noqa: A002
    """Web-safe base64 (``-`` and ``_``) of each string, ``=``-padded only when `pad`."""
    return apply("EncodeBase64", [input], {"pad": pad}, name=name or "EncodeBase64")


@dispatch.dispatchable
def decode_base64(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Each web-safe base64 string decoded, padded or not."""
    return apply("DecodeBase64", [input], name=name or "DecodeBase64")


def _check_result_type(result_type: str) -> None:
    if result_type not in ("RaggedTensor", "SparseTensor"):
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")


def _ragged_rows(tokens: SparseTensor) -> RaggedTensor:
    """The tokens of a split, one row per string."""
    return RaggedTensor.from_value_rowids(tokens.values, tokens.indices[:, 0],
                                          tokens.dense_shape[0], validate=False)


def _split(op_type: str, source: Any, sep: Any, attrs: dict[str, Any],
           name: str | None) -> SparseTensor:
    with name_scope(name, "StringSplit", [source]):
        source = convert_to_tensor(source, dtypes.string, name="input")
        sep = convert_to_tensor(sep, dtypes.string)
        op = make_op(op_type, [source, sep], attrs, name=op_type)
        return SparseTensor(*op.outputs)


def string_split(source: Any, sep: Any = None, skip_empty: bool = True, delimiter: Any = None,
                 result_type: str = "SparseTensor",
                 name: str | None = None) -> SparseTensor | RaggedTensor:
    """The tokens of each string of the vector `source`, split at any byte of `sep` (default
    ``" "``; empty: into single bytes), as a `SparseTensor` of dense shape ``[len(source),
    most tokens]`` or a `RaggedTensor` of one row per string; empty tokens are dropped when
    `skip_empty`."""
    _check_result_type(result_type)
    sep = deprecated_argument_lookup("sep", sep, "delimiter", delimiter)
    tokens = _split("StringSplit", source, " " if sep is None else sep,
                    {"skip_empty": bool(skip_empty)}, name)
    return tokens if result_type == "SparseTensor" else _ragged_rows(tokens)


def strings_split(input: Any = None, sep: Any = None, maxsplit: int = -1,  # noqa: A002
                  result_type: str = "SparseTensor", source: Any = None,
                  name: str | None = None) -> SparseTensor | RaggedTensor | Tensor:
    """``tf.compat.v1.strings.split``: the tokens of each string of the vector `input` as
    Python's ``bytes.split(sep, maxsplit)`` gives them (``sep=None``: runs of whitespace), as a
    `SparseTensor` of dense shape ``[len(input), most tokens]``, or as a `RaggedTensor` (any
    rank of `input`; a scalar gives a vector of its tokens)."""
    _check_result_type(result_type)
    input = deprecated_argument_lookup("input", input, "source", source)  # noqa: A001
    sep = "" if sep is None else sep
    attrs = {"maxsplit": int(maxsplit)}
    if result_type == "SparseTensor":
        return _split("StringSplitV2", input, sep, attrs, name)
    with name_scope(name, "StringSplit", [input]):
        input = convert_to_tensor(input, dtypes.string, name="input")  # noqa: A001
        rank = input.shape.ndims
        if rank == 0:
            return _ragged_rows(_split("StringSplitV2", array_ops.reshape(input, [1]), sep,
                                       attrs, None)).values
        if rank is None or rank == 1:
            return _ragged_rows(_split("StringSplitV2", input, sep, attrs, None))
        rows = RaggedTensor.from_tensor(input, ragged_rank=rank - 1)
        tokens = _ragged_rows(_split("StringSplitV2", rows.flat_values, sep, attrs, None))
        return rows.with_flat_values(tokens)


def string_format(template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3,
                  name: str | None = None) -> Tensor:
    """`template` with each `placeholder` replaced by the summary of the next tensor of
    `inputs` (one tensor needs no list): the first and last `summarize` entries of each
    dimension (all when -1), as ``tf.print`` shows them."""
    if is_tensor_like(inputs):
        inputs = [inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(f"{template.count(placeholder)} placeholder(s) in template does not "
                         f"match {len(inputs)} tensor(s) provided as input")
    return apply("StringFormat", [[convert_to_tensor(x) for x in inputs]],
                 {"template": template, "placeholder": placeholder, "summarize": summarize},
                 name=name or "StringFormat")
