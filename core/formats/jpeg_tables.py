"""Constants shared by tensorweave's JPEG decoder and encoder.

Contract: the fixed-point constants of libjpeg's accurate integer DCT (``jidctint.c`` and
``jfdctint.c`` share them): ``CONST_BITS`` fraction bits, ``PASS1_BITS`` extra bits kept between
the two 1-D passes, and ``F<digits>`` = round(x * 2**13) for the cosine products x = 0.298...,
0.390..., ... 3.072... their names start with.
"""

from __future__ import annotations

__all__ = ["CONST_BITS", "F0298", "F0390", "F0541", "F0765", "F0899", "F1175", "F1501", "F1847",
           "F1961", "F2053", "F2562", "F3072", "PASS1_BITS"]

CONST_BITS, PASS1_BITS = 13, 2
F0298, F0390, F0541, F0765 = 2446, 3196, 4433, 6270
F0899, F1175, F1501, F1847 = 7373, 9633, 12299, 15137
F1961, F2053, F2562, F3072 = 16069, 16819, 20995, 25172
