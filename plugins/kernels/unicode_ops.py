"""Host kernels of the unicode ops (`tensorweave.plugins.standard_ops.unicode_ops`), on
Python's codecs.

Contract: UTF-8, UTF-16-BE and UTF-32-BE (no byte-order mark). With ``errors="strict"`` an
undecodable string or an invalid code point (negative, past U+10FFFF, or a surrogate) fails the
step with `InvalidArgumentError`; ``"replace"`` puts ``replacement_char`` in its place (one per
maximal invalid subsequence, Python's and ICU's rule) and ``"ignore"`` drops it.
``replace_control_characters`` also replaces U+0000-U+001F. Offsets are byte offsets of each
character's first byte in its string.
"""

from __future__ import annotations

import codecs
from typing import Any

import numpy as np

from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.kernels.array import _fail

_CODECS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
# a lone surrogate can never come out of a successful decode, so it marks an invalid span
_MARK = "\udfff"


def _mark_invalid(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return _MARK, exc.end


codecs.register_error("tensorweave.unicode_mark", _mark_invalid)


def _decode_one(ctx: KernelContext, data: bytes) -> list[tuple[int, int]]:
    """The (code point, byte offset) of each character of `data`, errors handled per attrs."""
    codec = _CODECS[ctx.attrs["input_encoding"]]
    errors = ctx.attrs["errors"]
    replacement = int(ctx.attrs["replacement_char"])
    decoder = codecs.getincrementaldecoder(codec)("tensorweave.unicode_mark")
    chars: list[tuple[int, int]] = []
    pending = 0  # where the bytes the decoder still holds begin
    for i in range(len(data) + 1):
        final = i == len(data)
        text = decoder.decode(data[i:i + 1], final=final)
        for k, ch in enumerate(text):
            at = pending if k == 0 or ch == _MARK else i + 1 - len(ch.encode(codec))
            chars.append((ord(ch), at))
        pending = i + 1 - len(decoder.getstate()[0])
    out = []
    for code, at in chars:
        if code == ord(_MARK):
            if errors == "strict":
                raise _fail(ctx, f"Invalid formatting on input string at byte {at}")
            if errors == "ignore":
                continue
            code = replacement
        elif ctx.attrs["replace_control_characters"] and code < 0x20:
            code = replacement
        out.append((code, at))
    return out


def _decode(ctx: KernelContext, strings: Any) -> tuple[list[int], list[int], list[int]]:
    splits, codes, offsets = [0], [], []
    for item in np.asarray(strings, dtype=object).ravel().tolist():
        chars = _decode_one(ctx, bytes(item))
        codes.extend(c for c, _ in chars)
        offsets.extend(o for _, o in chars)
        splits.append(len(codes))
    return splits, codes, offsets


def unicode_decode(ctx: KernelContext, strings: Any) -> tuple[np.ndarray, np.ndarray]:
    splits, codes, _ = _decode(ctx, strings)
    return (np.asarray(splits, ctx.output_dtypes[0].as_numpy_dtype),
            np.asarray(codes, np.int32))


def unicode_decode_with_offsets(ctx: KernelContext,
                                strings: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    splits, codes, offsets = _decode(ctx, strings)
    return (np.asarray(splits, ctx.output_dtypes[0].as_numpy_dtype),
            np.asarray(codes, np.int32), np.asarray(offsets, np.int64))


def _encode_one(ctx: KernelContext, codes: list[int]) -> bytes:
    errors = ctx.attrs["errors"]
    replacement = int(ctx.attrs["replacement_char"])
    chars = []
    for code in codes:
        if not 0 <= code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            if errors == "strict":
                raise _fail(ctx, f"Invalid code point: {code}")
            if errors == "ignore":
                continue
            code = replacement
        chars.append(chr(code))
    return "".join(chars).encode(_CODECS[ctx.attrs["output_encoding"]])


def unicode_encode(ctx: KernelContext, values: Any, splits: Any) -> np.ndarray:
    codes = [int(v) for v in np.asarray(values).tolist()]
    bounds = [int(v) for v in np.asarray(splits).tolist()]
    if not bounds or bounds[0] != 0 or bounds[-1] != len(codes) \
            or any(b > a for a, b in zip(bounds[1:], bounds[:-1])):
        raise _fail(ctx, "input_splits must start at 0, never decrease and end at the number "
                         "of input_values")
    out = np.empty(len(bounds) - 1, dtype=object)
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        out[i] = _encode_one(ctx, codes[lo:hi])
    return out


def unicode_transcode(ctx: KernelContext, strings: Any) -> np.ndarray:
    arr = np.asarray(strings, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for index, item in np.ndenumerate(arr):
        out[index] = _encode_one(ctx, [c for c, _ in _decode_one(ctx, bytes(item))])
    return out


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("UnicodeDecode", device_type, unicode_decode)
    registry.add("UnicodeDecodeWithOffsets", device_type, unicode_decode_with_offsets)
    registry.add("UnicodeEncode", device_type, unicode_encode)
    registry.add("UnicodeTranscode", device_type, unicode_transcode)
