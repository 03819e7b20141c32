"""What TF's JPEG decoder reads from a file whose data ends inside its scan: the rows
``DecodeJpeg`` keeps without ``try_recover_truncated`` before blacking out the rest
(`rows_read`), and the bytes libjpeg decodes with it (`recovered_scan`).

TF's source manager (``jpeg_handle.cc``) hands libjpeg the whole file at once; when libjpeg asks
for more, it suspends (returns FALSE) while the source's *saved* position still has bytes left,
and fails outright (``ERREXIT``) when the saved position is at the end. libjpeg-turbo's Huffman
decoder saves its position into the source only after each whole MCU, and its bit reader
fetches bytes until it holds 57 bits (``jpeg_fill_bit_buffer``) whenever a Huffman lookup finds
fewer than 8, or a value fewer than its size; so the data "runs out" in the first MCU during
which such a fill meets the end of the data. This module replays that bit reader over the
entropy-coded data (both of libjpeg-turbo's paths: ``decode_mcu_fast``, taken while at least
512 bytes per block of the MCU remain and there is no restart interval, and
``decode_mcu_slow``), restart markers included, and finds that MCU. Then:

- the MCU starts where the saved position is at the end of the data: libjpeg fails (no rows);
- otherwise the rows are those libjpeg's main controller emits from the ``k`` complete iMCU
  rows before that MCU (each ``max_v_samp * min_DCT_scaled_size`` rows, ``8 / ratio`` being
  ``min_DCT_scaled_size``): all of them (``jdmainct.c``'s simple controller), or one row group
  (``max_v_samp`` rows) fewer when the upsampler needs context rows (``jdsample.c``: fancy
  h2v2 upsampling of a component at least 3 samples wide, or fancy h1v2, of a component the
  output needs, with the per-component IDCT scaling of ``jdmaster.c``), because then the last
  row group of each iMCU row waits for the next one. That is 16k - 2 rows for fancy 4:2:0 and
  multiples of 8 for 4:4:4, 4:2:2, grey, or 4:2:0 decoded to grey or without fancy upsampling;
- if every MCU decodes, all rows are produced, and ``jpeg_finish_decompress`` then looks for
  the end marker: it fails if the saved position is at the end of the data, else succeeds.

A file with more than one scan (progressive, or sequential non-interleaved) has its scans read
by ``jpeg_start_decompress``, which suspends; TF then calls ``jpeg_read_scanlines`` in the wrong
state and libjpeg fails, so it gives no rows; so do arithmetic-coded and lossless files (not
modelled here).

Checked against TF 2.21 on ``tests/data/jpeg/tf_cuts.npz``: every fixture file cut at every
length inside its scan, at TF's default, ``fancy_upscaling=False``, ``ratio`` 2/4/8 and
``channels=1`` (``tests/test_formats_jpeg_cuts.py``).

With ``try_recover_truncated`` TF's source answers a fill that meets the end differently: with
TRUE and its saved position unchanged, so the bit reader reads the bytes since the MCU in
progress began again, until an MCU ends where the data ends; only the fill after that gets a
fake end marker, after which libjpeg reads nothing more. `recovered_scan` replays that reading
(same bit reader, same MCUs, the marker reader looking for restart markers on the same source)
and writes the bytes in the order read, then the end marker, so that a plain decode of them is
TF's; libjpeg's marker reader fails after the rows when the bytes read again hold a marker it
refuses (another header, an unknown one). Checked on ``tests/data/jpeg/tf_recover.npz``
(every one-scan file but the largest, four cuts each, four variants: all pixel-equal, and
refused where TF refuses) and once on every 7th cut of the two files with restart markers
(1096 cuts, all equal).

Cost: the replay is Python over the entropy-coded data, and runs only for cut files: about a
second for a 1024x1024 file cut at two thirds, 80 to 140 times TurboJPEG's decode of the whole
file measured in the same runs.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from tensorweave.engine import errors

__all__ = ["recovered_scan", "rows_read"]

_MIN_GET_BITS = 57  # libjpeg-turbo's bit buffer on 64-bit machines: 64 - 7
_FAST_BYTES_PER_BLOCK = 512  # jdhuff.c's BUFSIZE: DCTSIZE2 * 8
_SOF_HUFFMAN = (0xC0, 0xC1)  # baseline and extended sequential, Huffman-coded
_RST0 = 0xD0
_EOI = b"\xff\xd9"
# markers read_markers takes in its stride whose segments it reads (DHT, DAC, DQT, DRI, DNL,
# APPn, COM) or skips (RSTn, TEM), reading on from the source
_READ_AT_FINISH = frozenset({0xC4, 0xCC, 0xDB, 0xDD, 0xDC, *range(0xE0, 0xF0), 0xFE,
                             *range(0xD0, 0xD8), 0x01})


class _ExhaustedError(Exception):
    """A fill met the end of the data while the source's saved position had `left` bytes."""

    def __init__(self, left: int) -> None:
        super().__init__(left)
        self.left = left


class _EndReachedError(Exception):
    """TF's source, recovering, has handed libjpeg its fake end marker."""


class _UnmodelledError(Exception):
    """The file is one TF's decoder refuses when cut (more than one scan, arithmetic coding)."""


@attrs.frozen
class _Table:
    """A Huffman table as ``jpeg_make_d_derived_tbl`` derives it."""

    lookup: tuple[tuple[int, int], ...]  # 8-bit lookahead -> (code length or 9, symbol)
    maxcode: tuple[int, ...]  # by length 0..17, the last a sentinel
    valoffset: tuple[int, ...]
    values: bytes


def _table(counts: bytes, values: bytes) -> _Table:
    lookup = [(9, 0)] * 256
    maxcode, valoffset = [-1] * 18, [0] * 18
    code, index = 0, 0
    for length in range(1, 17):
        count = counts[length - 1]
        if count:
            valoffset[length] = index - code
            for _ in range(count):
                if length <= 8:
                    shift = 8 - length
                    for low in range(1 << shift):
                        lookup[(code << shift) | low] = (length, values[index])
                code += 1
                index += 1
            maxcode[length] = code - 1
        code <<= 1
    maxcode[17] = 0xFFFFF
    return _Table(tuple(lookup), tuple(maxcode), tuple(valoffset), values)


@attrs.frozen
class _Layout:
    """What the scan and the frame say: image size, sampling, blocks and their tables."""

    height: int
    width: int
    sampling: tuple[tuple[int, int], ...]  # (h, v) per frame component
    blocks: tuple[tuple[_Table, _Table], ...]  # (DC, AC) per block of an MCU
    mcus_per_row: int
    mcu_rows: int
    mcu_rows_per_imcu: int  # 1 interleaved; the component's v for a one-component scan
    restart_interval: int
    scan: int  # offset of the entropy-coded data


def _layout(data: bytes) -> _Layout:
    """Parse the markers up to the first scan (the header reader succeeded already)."""
    dc: dict[int, _Table] = {}
    ac: dict[int, _Table] = {}
    frame: dict[int, tuple[int, int]] = {}
    height = width = restart = 0
    pos = 2
    while True:
        while data[pos] != 0xFF or data[pos + 1] == 0xFF:
            pos += 1
        marker = data[pos + 1]
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        body = data[pos + 4:pos + 2 + length]
        pos += 2 + length
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if marker not in _SOF_HUFFMAN:
                raise _UnmodelledError
            height, width = int.from_bytes(body[1:3], "big"), int.from_bytes(body[3:5], "big")
            for i in range(body[5]):
                ident, factors = body[6 + 3 * i], body[7 + 3 * i]
                frame[ident] = (factors >> 4, factors & 15)
        elif marker == 0xC4:
            at = 0
            while at < len(body):
                kind, counts = body[at], body[at + 1:at + 17]
                values = body[at + 17:at + 17 + sum(counts)]
                (ac if kind >> 4 else dc)[kind & 15] = _table(counts, values)
                at += 17 + sum(counts)
        elif marker == 0xDD:
            restart = int.from_bytes(body[:2], "big")
        elif marker == 0xDA:
            break
    comps = [(body[1 + 2 * i], body[2 + 2 * i]) for i in range(body[0])]
    if len(comps) != len(frame):
        raise _UnmodelledError  # one scan per component: read whole by jpeg_start_decompress
    sampling = tuple(frame.values())
    max_h, max_v = max(h for h, _ in sampling), max(v for _, v in sampling)
    try:
        tables = [(frame[ident], dc[sel >> 4], ac[sel & 15]) for ident, sel in comps]
    except KeyError:
        raise errors.InvalidArgumentError(None, None, "Huffman table not defined") from None
    if len(comps) == 1:
        (h, v), dc_table, ac_table = tables[0]
        comp_width = -(-width * h // max_h)
        comp_height = -(-height * v // max_v)
        return _Layout(height, width, sampling, ((dc_table, ac_table),), -(-comp_width // 8),
                       -(-comp_height // 8), v, restart, pos)
    blocks = tuple((d, a) for (h, v), d, a in tables for _ in range(h * v))
    return _Layout(height, width, sampling, blocks, -(-width // (8 * max_h)),
                   -(-height // (8 * max_v)), 1, restart, pos)


class _Reader:
    """libjpeg-turbo's bit reader (``jdhuff.c``) over cut data; `saved` is the source's
    position, which the decoder updates after each MCU."""

    def __init__(self, data: bytes, pos: int) -> None:
        self.data, self.end = data, len(data)
        self.pos = self.saved = pos
        self.saved_end = self.end  # where the source's buffer ends
        self.buffer = self.bits = 0
        self.marker = 0
        self.insufficient = False

    def left(self) -> int:
        """The source's ``bytes_in_buffer``."""
        return self.saved_end - self.saved

    def save(self) -> None:
        """An MCU is complete: the decoder writes its position back into the source."""
        self.saved = self.pos

    # -- jpeg_fill_bit_buffer and the slow path ------------------------------------------------

    def _byte(self) -> int:
        if self.pos >= self.end:
            raise _ExhaustedError(self.end - self.saved)
        value = self.data[self.pos]
        self.pos += 1
        return value

    def fill(self, nbits: int) -> None:
        if self.marker == 0:
            while self.bits < _MIN_GET_BITS:
                c = self._byte()
                if c == 0xFF:
                    while c == 0xFF:
                        c = self._byte()
                    if c != 0:
                        self.marker = c
                        break
                    c = 0xFF
                self.buffer = (self.buffer << 8) | c
                self.bits += 8
            else:
                return
        if nbits > self.bits:  # at a marker: zero bits, as libjpeg stuffs them
            self.insufficient = True
            self.buffer <<= _MIN_GET_BITS - self.bits
            self.bits = _MIN_GET_BITS

    def get(self, nbits: int) -> int:
        self.bits -= nbits
        value = self.buffer >> self.bits
        self.buffer &= (1 << self.bits) - 1
        return value

    def check(self, nbits: int) -> None:
        if self.bits < nbits:
            self.fill(nbits)

    def _huff_slow(self, table: _Table, length: int) -> int:
        self.check(length)
        code = self.get(length)
        while code > table.maxcode[length]:
            self.check(1)
            code = (code << 1) | self.get(1)
            length += 1
        return 0 if length > 16 else table.values[(code + table.valoffset[length]) & 0xFF]

    def huff(self, table: _Table) -> int:
        if self.bits < 8:
            self.fill(0)
            if self.bits < 8:
                return self._huff_slow(table, 1)
        length, symbol = table.lookup[self.buffer >> (self.bits - 8)]
        if length > 8:
            return self._huff_slow(table, 9)
        self.get(length)
        return symbol

    def block_slow(self, dc: _Table, ac: _Table) -> None:
        self._block(dc, ac, self.huff, self.check)

    def _block(self, dc: _Table, ac: _Table, huff: Callable[[_Table], int],
               ready: Callable[[int], None]) -> None:
        """One block's DC and AC codes, read by `huff`; `ready(size)` makes `size` bits
        readable before each coefficient's bits are taken (the two decode paths differ only
        in these)."""
        size = huff(dc)
        if size:
            ready(size)
            self.get(size)
        k = 1
        while k < 64:
            symbol = huff(ac)
            run, size = symbol >> 4, symbol & 15
            if size:
                k += run
                ready(size)
                self.get(size)
            elif run != 15:
                break
            else:
                k += 15
            k += 1

    # -- decode_mcu_fast ----------------------------------------------------------------------

    def _fill_fast(self) -> None:
        if self.bits > 16:
            return
        data = self.data
        for _ in range(6):
            c0 = data[self.pos]
            c1 = data[self.pos + 1] if self.pos + 1 < self.end else 0
            self.pos += 1
            self.buffer = (self.buffer << 8) | c0
            self.bits += 8
            if c0 == 0xFF:
                self.pos += 1
                if c1 != 0:
                    self.marker = c1
                    self.pos -= 2
                    self.buffer &= ~0xFF

    def _huff_fast(self, table: _Table) -> int:
        self._fill_fast()
        length, symbol = table.lookup[self.buffer >> (self.bits - 8)]
        if length <= 8:
            self.get(length)
            return symbol
        code = self.get(length)
        while code > table.maxcode[length]:
            code = (code << 1) | self.get(1)
            length += 1
        return 0 if length > 16 else table.values[(code + table.valoffset[length]) & 0xFF]

    def block_fast(self, dc: _Table, ac: _Table) -> None:
        self._block(dc, ac, self._huff_fast, lambda _size: self._fill_fast())

    # -- the marker reader (jdmarker.c's next_marker, on the source itself) -------------------

    def next_marker(self) -> int:
        """The next marker's code; the source is synchronised after each discarded byte."""
        pos, synced = self.saved, self.saved

        def byte() -> int:
            nonlocal pos
            if pos >= self.end:
                raise _ExhaustedError(self.end - synced)
            pos += 1
            return self.data[pos - 1]

        while True:
            c = byte()
            while c != 0xFF:
                synced = pos
                c = byte()
            while c == 0xFF:
                c = byte()
            if c != 0:
                self.pos = self.saved = pos
                return c
            synced = pos


class _RecoveringReader(_Reader):
    """The bit reader under TF's source manager with ``try_recover_truncated``: where the data
    runs out, the source answers a fill with what its saved position still holds (the bytes
    since the current MCU began, read again), and only when that is nothing with a fake end
    marker. `segments` are the stretches of the data read, in order."""

    def __init__(self, data: bytes, pos: int) -> None:
        super().__init__(data + _EOI, pos)
        self.end = self.saved_end = self.limit = len(data)
        self.segments: list[tuple[int, int]] = []
        self.start = pos

    def _byte(self) -> int:
        if self.pos >= self.limit:
            self.segments.append((self.start, self.pos))
            if not self.left():
                # TF's fake end-of-image: once libjpeg has it, it reads nothing more (markers
                # stop the bit reader; restart resynchronisation keeps an end marker)
                self.start = self.pos
                raise _EndReachedError
            self.pos, self.limit = self.saved, self.saved_end
            self.start = self.pos
        value = self.data[self.pos]
        self.pos += 1
        return value

    def save(self) -> None:
        super().save()
        self.saved_end = self.limit

    def next_marker(self) -> int:
        """jdmarker.c's next_marker on TF's source, which is synchronised after each
        discarded byte and answers a read past the end with the bytes since then."""
        if (self.pos, self.limit) != (self.saved, self.saved_end):
            self.segments.append((self.start, self.pos))
            self.pos, self.limit = self.saved, self.saved_end
            self.start = self.pos
        while True:
            c = self._byte()
            while c != 0xFF:
                self.save()
                c = self._byte()
            rewinds = len(self.segments)
            while c == 0xFF:
                c = self._byte()
                if len(self.segments) > rewinds + 1:
                    raise _UnmodelledError  # TF reads the same 0xff bytes again and again
            self.save()
            if c != 0:
                return c

    def stream(self) -> bytes:
        """The bytes read, in reading order, then the (fake) end marker."""
        read = b"".join(self.data[a:b] for a, b in [*self.segments, (self.start, self.pos)])
        return read + _EOI


def _decode_mcus(layout: _Layout, reader: _Reader) -> int | None:
    """The index of the MCU during which the data runs out, or None when every MCU decodes."""
    fast_bytes = _FAST_BYTES_PER_BLOCK * len(layout.blocks)
    restarts_to_go, next_restart = layout.restart_interval, 0
    for mcu in range(layout.mcus_per_row * layout.mcu_rows):
        try:
            if layout.restart_interval and restarts_to_go == 0:
                reader.bits = reader.buffer = 0
                if reader.marker == 0:
                    reader.marker = reader.next_marker()
                if reader.marker != _RST0 + next_restart:
                    raise _UnmodelledError  # libjpeg's resynchronisation: not met in cut files
                reader.marker = 0
                next_restart = (next_restart + 1) & 7
                restarts_to_go = layout.restart_interval
                reader.insufficient = False
            fast = (not layout.restart_interval and reader.marker == 0
                    and reader.left() >= fast_bytes)
            if not reader.insufficient:
                state = (reader.pos, reader.buffer, reader.bits)
                if fast:
                    for dc, ac in layout.blocks:
                        reader.block_fast(dc, ac)
                    if reader.marker:  # a marker inside: this MCU again on the slow path
                        reader.marker = 0
                        reader.pos, reader.buffer, reader.bits = state
                        fast = False
                if not fast:
                    for dc, ac in layout.blocks:
                        reader.block_slow(dc, ac)
                reader.save()
        except _ExhaustedError as exc:
            if exc.left == 0:
                raise
            return mcu
        restarts_to_go -= 1
    return None


def _context_rows(layout: _Layout, ratio: int, fancy: bool, grey: bool) -> bool:
    """Whether libjpeg's upsampler needs context rows (``jinit_upsampler``), with each
    component's IDCT scaling as ``jpeg_calc_output_dimensions`` chooses it."""
    smallest = 8 // ratio
    max_h = max(h for h, _ in layout.sampling)
    max_v = max(v for _, v in layout.sampling)
    fancy = fancy and smallest > 1
    needed = layout.sampling[:1] if grey and len(layout.sampling) == 3 else layout.sampling
    for h, v in needed:
        size = smallest
        while (size < 8 and (max_h * smallest) % (h * size * 2) == 0
               and (max_v * smallest) % (v * size * 2) == 0):
            size *= 2
        h_in, v_in = h * size // smallest, v * size // smallest
        width = -(-layout.width * h * size // (max_h * 8))
        if fancy and h_in * 2 == max_h and v_in * 2 == max_v and width > 2:
            return True
        if fancy and h_in == max_h and v_in * 2 == max_v:
            return True
    return False


def rows_read(data: bytes, ratio: int = 1, fancy_upsampling: bool = True,
              grey: bool = False) -> int | None:
    """The rows of output (at scale 1 / `ratio`; `grey` when decoding to one channel) that
    TF's decoder produces from cut JPEG `data` before its data runs out, or None where libjpeg
    fails instead (see the module docstring). `data` must have a readable header."""
    try:
        layout = _layout(data)
        reader = _Reader(data, layout.scan)
        stopped = _decode_mcus(layout, reader)
    except (_ExhaustedError, _UnmodelledError):
        return None
    if stopped is None:
        try:
            if reader.marker == 0:
                reader.next_marker()  # jpeg_finish_decompress: suspends, or fails at the end
        except _ExhaustedError as exc:
            if exc.left == 0:
                return None
        return -(-layout.height // ratio)
    max_v = max(v for _, v in layout.sampling)
    imcu_rows = stopped // layout.mcus_per_row // layout.mcu_rows_per_imcu
    rows = imcu_rows * max_v * (8 // ratio)
    if imcu_rows and _context_rows(layout, ratio, fancy_upsampling, grey):
        rows -= max_v
    return min(rows, -(-layout.height // ratio))


def recovered_scan(data: bytes) -> bytes | None:
    """Cut JPEG `data` as TF's decoder reads it with ``try_recover_truncated``: the headers,
    then the entropy-coded bytes in the order its bit reader meets them (see
    `_RecoveringReader`), then an end marker; decoding that as a whole file gives TF's pixels.
    None for files this does not model (more than one scan, arithmetic coding, a marker met in
    the bytes read again whose segment libjpeg would read, or a restart marker out of order,
    which libjpeg resynchronises). Raises
    `InvalidArgumentError` where that marker makes libjpeg fail at the end of the decode."""
    try:
        layout = _layout(data)
    except _UnmodelledError:
        return None
    reader = _RecoveringReader(data, layout.scan)
    try:
        _decode_mcus(layout, reader)
        if reader.marker == 0:
            reader.marker = reader.next_marker()  # jpeg_finish_decompress
    except _EndReachedError:
        return data[:layout.scan] + reader.stream()
    except _UnmodelledError:
        return None
    marker = reader.marker
    if marker in _READ_AT_FINISH:
        return None  # jpeg_finish_decompress reads its segment from the source: not modelled
    if marker not in (0, _EOI[1]):
        # met in the bytes read again: jpeg_finish_decompress's read_markers refuses it
        # (another frame, image or scan header, or a marker libjpeg does not know)
        raise errors.InvalidArgumentError(
            None, None, f"Unsupported or unexpected marker 0x{marker:02x} in the recovered data")
    return data[:layout.scan] + reader.stream()
