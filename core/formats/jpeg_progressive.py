"""Progressive JPEG scans as libjpeg(-turbo) writes them (jcparam.c's jpeg_simple_progression,
jcphuff.c's encoder).

Contract: ``simple_progression(ncomps)`` is libjpeg's scan script for grey (1) or YCbCr (3)
images: spectral selection plus successive approximation, DC first. ``encode_scan(scan, zigzag,
owner, slots)`` codes one scan of ``[blocks, 64]`` zigzag-order quantised coefficients (in the
scan's block order; `owner` gives each block's position in ``scan.comps``, `slots` each
component's table number) with optimal Huffman tables, as libjpeg always does for progressive
files: DC first passes send point-transformed DC differences, DC refinements one raw bit per
block, AC first passes runs with end-of-band runs (EOBRUN, at most 0x7FFF), AC refinements
newly significant coefficients with the correction bits of older ones buffered behind their
EOBRUN (forced out past 937 bits). It returns the DHT tables libjpeg emits before the scan
(class, index, table) and the entropy-coded bytes. ``scan_header(scan, idents, slots)`` is the
SOS body, with libjpeg's zero for the table field a scan does not use.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from tensorweave.formats.jpeg_huffman import HuffmanCode, optimal_table, pack_bits

__all__ = ["Scan", "encode_scan", "scan_header", "simple_progression"]

_MAX_EOBRUN = 0x7FFF
_MAX_CORRECTION_BITS = 1000 - 64 + 1  # jcphuff.c's MAX_CORR_BITS less one block's worth
_RAW = -1  # the table of raw bits


@attrs.frozen
class Scan:
    comps: tuple[int, ...]  # component indexes
    ss: int
    se: int
    ah: int
    al: int


def simple_progression(ncomps: int) -> list[Scan]:
    if ncomps == 3:
        all_dc = (0, 1, 2)
        return [Scan(all_dc, 0, 0, 0, 1), Scan((0,), 1, 5, 0, 2), Scan((2,), 1, 63, 0, 1),
                Scan((1,), 1, 63, 0, 1), Scan((0,), 6, 63, 0, 2), Scan((0,), 1, 63, 2, 1),
                Scan(all_dc, 0, 0, 1, 0), Scan((2,), 1, 63, 1, 0), Scan((1,), 1, 63, 1, 0),
                Scan((0,), 1, 63, 1, 0)]
    return [Scan((0,), 0, 0, 0, 1), Scan((0,), 1, 5, 0, 2), Scan((0,), 6, 63, 0, 2),
            Scan((0,), 1, 63, 2, 1), Scan((0,), 0, 0, 1, 0), Scan((0,), 1, 63, 1, 0)]


def scan_header(scan: Scan, idents: Sequence[int], slots: Sequence[int]) -> bytes:
    out = [len(scan.comps)]
    for c in scan.comps:
        dc = slots[c] if scan.ss == 0 and scan.ah == 0 else 0
        ac = slots[c] if scan.ss > 0 else 0
        out += [idents[c], dc << 4 | ac]
    return bytes([*out, scan.ss, scan.se, scan.ah << 4 | scan.al])


class _Events:
    """The scan's output in order: Huffman symbols (their table) and raw bit strings."""

    def __init__(self) -> None:
        self.table: list[int] = []
        self.value: list[int] = []
        self.length: list[int] = []

    def symbol(self, table: int, symbol: int) -> None:
        self.table.append(table)
        self.value.append(symbol)
        self.length.append(0)

    def bits(self, value: int, length: int) -> None:
        self.table.append(_RAW)
        self.value.append(value & ((1 << length) - 1))
        self.length.append(length)


def _dc_first(ev: _Events, blocks: list[list[int]], owner: list[int], tables: list[int],
              al: int) -> None:
    last = [0] * len(tables)
    for block, c in zip(blocks, owner, strict=True):
        value = block[0] >> al
        diff, last[c] = value - last[c], value
        size = abs(diff).bit_length()
        ev.symbol(tables[c], size)
        if size:
            ev.bits(diff - 1 if diff < 0 else diff, size)


class _EobRun:
    """A pending run of blocks with nothing left in the band, and the correction bits that
    follow its EOBRUN symbol."""

    def __init__(self, ev: _Events, table: int) -> None:
        self.ev, self.table = ev, table
        self.count = 0
        self.corrections: list[int] = []

    def flush(self) -> None:
        if self.count:
            size = self.count.bit_length() - 1
            self.ev.symbol(self.table, size << 4)
            if size:
                self.ev.bits(self.count, size)
            self.count = 0
            for bit in self.corrections:
                self.ev.bits(bit, 1)
            self.corrections = []


def _ac_first(ev: _Events, blocks: list[list[int]], table: int, scan: Scan) -> None:
    eob = _EobRun(ev, table)
    for block in blocks:
        run = 0
        for k in range(scan.ss, scan.se + 1):
            coef = block[k]
            # the point transform divides with rounding towards zero
            magnitude = (-coef if coef < 0 else coef) >> scan.al
            if not magnitude:
                run += 1
                continue
            eob.flush()
            while run > 15:
                ev.symbol(table, 0xF0)
                run -= 16
            size = magnitude.bit_length()
            ev.symbol(table, run << 4 | size)
            ev.bits(~magnitude if coef < 0 else magnitude, size)
            run = 0
        if run:
            eob.count += 1
            if eob.count == _MAX_EOBRUN:
                eob.flush()
    eob.flush()


def _ac_refine(ev: _Events, blocks: list[list[int]], table: int, scan: Scan) -> None:
    eob = _EobRun(ev, table)
    for block in blocks:
        magnitudes = [abs(block[k]) >> scan.al for k in range(scan.ss, scan.se + 1)]
        # the last coefficient that becomes significant in this pass
        last_new = max((i for i, m in enumerate(magnitudes) if m == 1), default=-1)
        run = 0
        corrections: list[int] = []
        for i, magnitude in enumerate(magnitudes):
            if not magnitude:
                run += 1
                continue
            while run > 15 and i <= last_new:
                eob.flush()
                ev.symbol(table, 0xF0)
                run -= 16
                for bit in corrections:
                    ev.bits(bit, 1)
                corrections = []
            if magnitude > 1:  # already significant: one correction bit
                corrections.append(magnitude & 1)
                continue
            eob.flush()
            ev.symbol(table, run << 4 | 1)
            ev.bits(0 if block[scan.ss + i] < 0 else 1, 1)
            for bit in corrections:
                ev.bits(bit, 1)
            corrections = []
            run = 0
        if run or corrections:
            eob.count += 1
            eob.corrections += corrections
            if eob.count == _MAX_EOBRUN or len(eob.corrections) > _MAX_CORRECTION_BITS:
                eob.flush()
    eob.flush()


def encode_scan(scan: Scan, zigzag: np.ndarray, owner: np.ndarray,
                slots: Sequence[int]) -> tuple[list[tuple[int, int, HuffmanCode]], bytes]:
    ev = _Events()
    blocks = zigzag.tolist()
    slot_of = [slots[c] for c in scan.comps]
    if scan.ss == 0 and scan.ah:
        for block in blocks:
            ev.bits(block[0] >> scan.al, 1)
    elif scan.ss == 0:
        _dc_first(ev, blocks, owner.tolist(), slot_of, scan.al)
    elif scan.ah:
        _ac_refine(ev, blocks, slot_of[0], scan)
    else:
        _ac_first(ev, blocks, slot_of[0], scan)
    table = np.array(ev.table, np.int64)
    value = np.array(ev.value, np.int64)
    length = np.array(ev.length, np.int64)
    dhts = []
    if not (scan.ss == 0 and scan.ah):
        kind = 0 if scan.ss == 0 else 1
        for slot in dict.fromkeys(slot_of):  # libjpeg's order: by component, each table once
            mine = table == slot
            code = optimal_table(np.bincount(value[mine], minlength=256))
            dhts.append((kind, slot, code))
            code_of, length_of = code.codes()
            length[mine] = length_of[value[mine]]
            value[mine] = code_of[value[mine]]
    return dhts, pack_bits(value, length)
