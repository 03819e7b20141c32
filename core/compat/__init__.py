"""``tensorweave.compat.v1`` is tensorweave itself, so ``import tensorweave.compat.v1 as tf``
works like ``import tensorweave as tf``; ``as_bytes``/``as_text``/``as_str`` are TF's string
helpers; ``dimension_value``/``dimension_at_index`` read TF1 `Dimension`s."""

import sys

import tensorweave as v1
from tensorweave.engine.tensor_shape import dimension_at_index, dimension_value  # noqa: F401

sys.modules[__name__ + ".v1"] = v1


def as_bytes(bytes_or_text: bytes | bytearray | str, encoding: str = "utf-8") -> bytes:
    """TF's ``compat.as_bytes``: `bytes_or_text` as bytes, text encoded with `encoding`."""
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: bytes | bytearray | str, encoding: str = "utf-8") -> str:
    """TF's ``compat.as_text`` (``as_str``): `bytes_or_text` as str, bytes decoded."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, (bytes, bytearray)):
        return bytes(bytes_or_text).decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text
