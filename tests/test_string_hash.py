"""farmhash Fingerprint64 and SipHash-2-4 against published test vectors."""

from __future__ import annotations

import pytest

from tensorweave.plugins.kernels.string_hash import MASK, fingerprint64, hash64, siphash24

# TF's string_to_hash_bucket_op_test.py (length 1), Guava's FarmHashFingerprint64Test
# ("test" * n: the 0-16, 17-32 and > 64 byte paths) and known outputs of other ports
# (every length class, the 33-64 byte one included).
FINGERPRINTS = {
    b"a": 12917804110809363939,
    b"b": 11795596070477164822,
    b"c": 11430444447143000872,
    b"d": 4470636696479570465,
    b"": 11160318154034397263,
    b"Q": 13816109650407654260,
    b"e#p8": 252499459662674074,
    b"test": 8581389452482819506,
    b"K6Pjv<>ad": 16506019169567922731,
    b"M)(iJ1-nf>5XCc0L?": 9968500208262240300,
    b"test" * 8: -4196240717365766262 & MASK,
    b"ECCD828C-5D7A-4C8B-9A1B-F244747E96C3": 9693850515132481856,
    b"fDVY|(%&aF#3<l>b?1Y Hqt)qY(0%b@VIk#Rlofs": 1687730506231245221,
    b"F7479877-4690-4A44-AFC9-8FE987EA512F:some_other_id": 6862335115798125349,
    b"test" * 64: 3500507768004279527,
}


@pytest.mark.parametrize("data", list(FINGERPRINTS))
def test_fingerprint64_matches_farmhash(data: bytes) -> None:
    assert fingerprint64(data) == FINGERPRINTS[data]


def test_siphash24_matches_the_reference_vectors_and_tf() -> None:
    key0 = int.from_bytes(bytes(range(8)), "little")
    key1 = int.from_bytes(bytes(range(8, 16)), "little")
    # the SipHash paper's key 00..0f: empty message, and the 15-byte message 00..0e
    assert siphash24(key0, key1, b"") == 0x726FDB47DD0E0E31
    assert siphash24(key0, key1, bytes(range(15))) == 0xA129CA6149BE45E5
    # TF's StrongKeyedHash with key [98765, 132]
    assert [siphash24(98765, 132, s) for s in (b"a", b"b", b"c")] == [
        7157389809176466784, 15805638358933211562, 18100027895074076528]
    assert siphash24(-1, 0, b"x") == siphash24(MASK, 0, b"x")  # int64 attrs as uint64


def _hash64_by_the_switch(data: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TF's hash.cc ``Hash64`` transcribed step by step: the tail bytes are xor-ed in one by one
    (the C switch's fall-through), each shifted by 8 * its position."""
    m = 0xC6A4A7935BD1E995
    n = len(data)
    h = (seed ^ (n * m)) & MASK
    pos = 0
    while n - pos >= 8:
        k = sum(data[pos + j] << (8 * j) for j in range(8))
        k = (k * m) & MASK
        k ^= k >> 47
        k = (k * m) & MASK
        h ^= k
        h = (h * m) & MASK
        pos += 8
    tail = data[pos:]
    for j in reversed(range(len(tail))):
        h ^= tail[j] << (8 * j)
    if tail:
        h = (h * m) & MASK
    h ^= h >> 47
    h = (h * m) & MASK
    return h ^ (h >> 47)


def test_hash64_matches_tf_and_the_transcribed_algorithm() -> None:
    # TF's string_to_hash_bucket_op_test.py quotes these three.
    assert [hash64(c) for c in (b"a", b"b", b"c")] == [
        2996632905371535868, 5795986006276551370, 14899841994519054197]
    for n in range(0, 40):
        data = bytes((7 * i + 200) % 256 for i in range(n))
        assert hash64(data) == _hash64_by_the_switch(data)
        assert hash64(data, seed=12345) == _hash64_by_the_switch(data, 12345)
