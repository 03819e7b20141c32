"""CRC32C (Castagnoli) and TF's masked form of it, over the C-backed ``crc32c`` package (SSE4.2
or ARMv8 instructions where the CPU has them, a C table otherwise; it reads any buffer in place
and releases the GIL).

Contract: `value` is the CRC32C of `data` (any C-contiguous bytes-like object: bytes, memoryview,
numpy array); `extend` continues a CRC over more data, so ``extend(value(a), b) == value(a + b)``.
`mask` is TF's and LevelDB's ``((crc >> 15) | (crc << 17)) + 0xa282ead8`` (mod 2**32): stored
checksums are masked because a CRC computed over bytes that themselves hold CRCs is weak.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF


@functools.cache
def _crc32c() -> Callable[..., int]:
    # The package's import loads its command-line tool too (tens of ms): the first checksum pays
    # for it, not every `import tensorweave` (tf_record imports this module).
    return importlib.import_module("crc32c").crc32c


def value(data: Any) -> int:
    return _crc32c()(data)


def extend(crc: int, data: Any) -> int:
    return _crc32c()(data, crc)


def mask(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _U32


def masked_value(data: Any) -> int:
    return mask(value(data))
