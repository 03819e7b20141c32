"""The two string hashes TF's hash-bucket ops use, bit for bit.

Contract: `fingerprint64(data)` is farmhash's ``Fingerprint64`` (``farmhashna::Hash64``), which
TF's ``Fingerprint64`` and ``StringToHashBucketFast`` use; `siphash24(k0, k1, data)` is
SipHash-2-4 keyed with the two 64-bit words ``k0``, ``k1`` (TF's ``StrongKeyedHash``, used by
``StringToHashBucketStrong``); `hash64(data)` is TF's own ``Hash64`` (a MurmurHash64A variant
seeded 0xDECAFCAFFE, used by the legacy ``StringToHashBucket``). All return an unsigned 64-bit
Python int. Pure Python: strings
are hashed one at a time, which is fine for the bucketing of features TF scripts do.
"""

from __future__ import annotations

MASK = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F


def _fetch64(data: bytes, i: int) -> int:
    return int.from_bytes(data[i:i + 8], "little")


def _fetch32(data: bytes, i: int) -> int:
    return int.from_bytes(data[i:i + 4], "little")


def _rotate(value: int, shift: int) -> int:
    """Right rotation of a 64-bit word, as farmhash's ``Rotate``."""
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & MASK


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _hash_len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & MASK
    b ^= b >> 47
    return (b * mul) & MASK


def _hash_len0to16(s: bytes) -> int:
    n = len(s)
    if n >= 8:
        mul = K2 + n * 2
        a = (_fetch64(s, 0) + K2) & MASK
        b = _fetch64(s, n - 8)
        c = (_rotate(b, 37) * mul + a) & MASK
        d = ((_rotate(a, 25) + b) * mul) & MASK
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = K2 + n * 2
        return _hash_len16(n + (_fetch32(s, 0) << 3), _fetch32(s, n - 4), mul)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * K2) ^ (z * K0)) & MASK) * K2) & MASK
    return K2


def _hash_len17to32(s: bytes) -> int:
    n = len(s)
    mul = K2 + n * 2
    a = (_fetch64(s, 0) * K1) & MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & MASK
    d = (_fetch64(s, n - 16) * K2) & MASK
    return _hash_len16((_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK,
                       (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)


def _hash_len33to64(s: bytes) -> int:
    n = len(s)
    mul = K2 + n * 2
    a = (_fetch64(s, 0) * K2) & MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & MASK
    d = (_fetch64(s, n - 16) * K2) & MASK
    y = (_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK
    z = _hash_len16(y, (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)
    e = (_fetch64(s, 16) * mul) & MASK
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & MASK
    h = ((z + _fetch64(s, n - 24)) * mul) & MASK
    return _hash_len16((_rotate((e + f) & MASK, 43) + _rotate(g, 30) + h) & MASK,
                       (e + _rotate((f + a) & MASK, 18) + g) & MASK, mul)


def _weak_hash_len32_with_seeds(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = (_fetch64(s, i + k) for k in (0, 8, 16, 24))
    a = (a + w) & MASK
    b = _rotate((b + a + z) & MASK, 21)
    c = a
    a = (a + x + y) & MASK
    b = (b + _rotate(a, 44)) & MASK
    return (a + z) & MASK, (b + c) & MASK


def fingerprint64(s: bytes) -> int:
    """farmhash ``Fingerprint64(s)``."""
    n = len(s)
    if n <= 16:
        return _hash_len0to16(s)
    if n <= 32:
        return _hash_len17to32(s)
    if n <= 64:
        return _hash_len33to64(s)
    seed = 81
    x = seed
    y = (seed * K1 + 113) & MASK
    z = (_shift_mix((y * K2 + 113) & MASK) * K2) & MASK
    v = (0, 0)
    w = (0, 0)
    x = (x * K2 + _fetch64(s, 0)) & MASK
    end = ((n - 1) // 64) * 64  # the loop leaves 1 to 64 bytes, hashed as the last 64
    last64 = n - 64
    i = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & MASK, 37) * K1) & MASK
        y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & MASK, 42) * K1) & MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, i + 40)) & MASK
        z = (_rotate((z + w[0]) & MASK, 33) * K1) & MASK
        v = _weak_hash_len32_with_seeds(s, i, (v[1] * K1) & MASK, (x + w[0]) & MASK)
        w = _weak_hash_len32_with_seeds(s, i + 32, (z + w[1]) & MASK,
                                        (y + _fetch64(s, i + 16)) & MASK)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = K1 + ((z & 0xFF) << 1)
    i = last64
    w0 = (w[0] + ((n - 1) & 63)) & MASK
    v0 = (v[0] + w0) & MASK
    w = ((w0 + v0) & MASK, w[1])
    v = (v0, v[1])
    x = (_rotate((x + y + v[0] + _fetch64(s, i + 8)) & MASK, 37) * mul) & MASK
    y = (_rotate((y + v[1] + _fetch64(s, i + 48)) & MASK, 42) * mul) & MASK
    x ^= (w[1] * 9) & MASK
    y = (y + v[0] * 9 + _fetch64(s, i + 40)) & MASK
    z = (_rotate((z + w[0]) & MASK, 33) * mul) & MASK
    v = _weak_hash_len32_with_seeds(s, i, (v[1] * mul) & MASK, (x + w[0]) & MASK)
    w = _weak_hash_len32_with_seeds(s, i + 32, (z + w[1]) & MASK,
                                    (y + _fetch64(s, i + 16)) & MASK)
    z, x = x, z
    return _hash_len16((_hash_len16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & MASK,
                       (_hash_len16(v[1], w[1], mul) + x) & MASK, mul)


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (64 - shift))) & MASK


def _sip_rounds(v: list[int], count: int) -> None:
    v0, v1, v2, v3 = v
    for _ in range(count):
        v0 = (v0 + v1) & MASK
        v1 = _rotl(v1, 13) ^ v0
        v0 = _rotl(v0, 32)
        v2 = (v2 + v3) & MASK
        v3 = _rotl(v3, 16) ^ v2
        v0 = (v0 + v3) & MASK
        v3 = _rotl(v3, 21) ^ v0
        v2 = (v2 + v1) & MASK
        v1 = _rotl(v1, 17) ^ v2
        v2 = _rotl(v2, 32)
    v[:] = [v0, v1, v2, v3]


def siphash24(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 of `data` under the key words `k0`, `k1` (taken modulo 2**64)."""
    k0 &= MASK
    k1 &= MASK
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]
    full = len(data) - len(data) % 8
    words = [int.from_bytes(data[i:i + 8], "little") for i in range(0, full, 8)]
    words.append(int.from_bytes(data[full:], "little") | ((len(data) & 0xFF) << 56))
    for m in words:
        v[3] ^= m
        _sip_rounds(v, 2)
        v[0] ^= m
    v[2] ^= 0xFF
    _sip_rounds(v, 4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


_MURMUR_MUL = 0xC6A4A7935BD1E995
_HASH64_SEED = 0xDECAFCAFFE


def hash64(data: bytes, seed: int = _HASH64_SEED) -> int:
    """TF's ``Hash64(data, n, seed)``: 8-byte little-endian words are mixed in, then the 1..7
    trailing bytes as one little-endian word, then a final avalanche."""
    n = len(data)
    h = (seed ^ (n * _MURMUR_MUL)) & MASK
    whole = n - n % 8
    for i in range(0, whole, 8):
        k = (_fetch64(data, i) * _MURMUR_MUL) & MASK
        k = ((k ^ (k >> 47)) * _MURMUR_MUL) & MASK
        h = ((h ^ k) * _MURMUR_MUL) & MASK
    if n % 8:
        h = ((h ^ int.from_bytes(data[whole:], "little")) * _MURMUR_MUL) & MASK
    h = ((h ^ (h >> 47)) * _MURMUR_MUL) & MASK
    return h ^ (h >> 47)
