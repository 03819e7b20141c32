"""JPEG decoding in numpy that gives libjpeg-turbo's pixels for TensorFlow's ``DecodeJpeg``
defaults.

Contract: ``read_jpeg_header(data)`` reads markers up to the first scan, as libjpeg's
``jpeg_read_header``, and returns the frame's `JpegHeader` (height, width, components).
``decode_jpeg(data, channels, fancy_upscaling, recover_truncated, fast_idct)`` decodes 8-bit
Huffman-coded baseline, extended sequential and progressive JPEGs with 1 or 3 components,
each sampling factor 1 or half the largest (4:4:4, 4:2:2, 4:4:0, 4:2:0, ...), restart
intervals included, into uint8 ``[height, width, channels]``: `channels` 0 keeps the file's
(1, or 3 for colour), 1 takes the luma (grey from an RGB file with libjpeg's weights), 3
converts YCbCr with libjpeg's fixed-point tables or repeats grey. Samples come from
libjpeg's accurate integer IDCT (``jidctint``; ``jidctfst`` with `fast_idct`) and, with
`fancy_upscaling`, its triangle upsampling, else sample replication (``jpeg_pixels``). The
colour space follows libjpeg's rules (JFIF marker, Adobe transform flag, component ids).
Data that ends before the EOI marker raises `JpegError` unless `recover_truncated`, which, as
TF's source manager that appends an EOI, decodes the missing entropy-coded bits as zeros.
An output of 2**29 samples or more raises `JpegError` before decoding, as TF's limit.
Malformed data raises `JpegError` with libjpeg's reason; valid files tensorweave does not
decode (arithmetic coding, lossless, 12-bit, CMYK/YCCK or other component counts, sampling
ratios other than 1 and 2) raise its subclass `JpegUnsupportedError`.
"""

from __future__ import annotations

import re
import struct

import attrs
import numpy as np

from tensorweave.formats.jpeg_entropy import (
    NATURAL,
    HuffmanTable,
    JpegError,
    Mcu,
    Segment,
    ac_first,
    ac_refine,
    dc_first,
    dc_refine,
    sequential,
)
from tensorweave.formats.jpeg_pixels import idct_ifast, idct_islow, upsample, ycc_to_rgb

__all__ = ["JpegError", "JpegHeader", "JpegUnsupportedError", "decode_jpeg", "read_jpeg_header"]

_SOI, _EOI, _SOS, _DHT, _DQT, _DRI = 0xD8, 0xD9, 0xDA, 0xC4, 0xDB, 0xDD
_SEQUENTIAL, _PROGRESSIVE = (0xC0, 0xC1), 0xC2
_OTHER_SOF = (0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF)
_SCAN_END = re.compile(rb"\xff+[^\x00\xd0-\xd7\xff]")
_RESTART = re.compile(rb"\xff+[\xd0-\xd7]")
# libjpeg's rgb_gray_convert weights: FIX(0.299), FIX(0.587), FIX(0.114) with 16 bits
_GREY_WEIGHTS = (19595, 38470, 7471)


class JpegUnsupportedError(JpegError):
    """A valid JPEG of a kind tensorweave does not decode."""


class _TruncatedError(JpegError):
    """The data ends before the EOI marker."""


@attrs.frozen
class JpegHeader:
    height: int
    width: int
    components: int


@attrs.define
class _Component:
    ident: int
    h: int
    v: int
    tq: int
    blocks_wide: int = 0
    blocks_high: int = 0
    coefs: list[int] = attrs.field(factory=list)
    quant: np.ndarray | None = None


@attrs.define
class _Frame:
    progressive: bool
    height: int
    width: int
    components: list[_Component]
    max_h: int
    max_v: int
    mcus_wide: int
    mcus_high: int

    def size(self, comp: _Component) -> tuple[int, int]:
        """The component's downsampled height and width."""
        return (-(-self.height * comp.v // self.max_v), -(-self.width * comp.h // self.max_h))


class _Parser:
    def __init__(self, data: bytes) -> None:
        if len(data) < 2 or data[0] != 0xFF or data[1] != _SOI:
            first, second = (data + b"\0\0")[:2]
            raise JpegError(f"Not a JPEG file: starts with 0x{first:02x} 0x{second:02x}")
        self.data, self.pos = data, 2
        self.frame: _Frame | None = None
        self.quant: dict[int, np.ndarray] = {}
        self.dc: dict[int, HuffmanTable] = {}
        self.ac: dict[int, HuffmanTable] = {}
        self.restart = 0
        self.jfif = False
        self.adobe_transform: int | None = None

    def _marker(self) -> int:
        data, pos = self.data, self.pos
        # libjpeg skips garbage before a marker (with a warning) and any 0xFF fill bytes
        while pos < len(data) and data[pos] != 0xFF:
            pos += 1
        while pos < len(data) and data[pos] == 0xFF:
            pos += 1
        if pos >= len(data):
            raise _TruncatedError("Premature end of JPEG file")
        self.pos = pos + 1
        return data[pos]

    def _segment(self) -> bytes:
        if self.pos + 2 > len(self.data):
            raise _TruncatedError("Premature end of JPEG file")
        (length,) = struct.unpack(">H", self.data[self.pos:self.pos + 2])
        if length < 2:
            raise JpegError("Bogus marker length")
        end = self.pos + length
        if end > len(self.data):
            raise _TruncatedError("Premature end of JPEG file")
        body, self.pos = self.data[self.pos + 2:end], end
        return body

    def next_scan(self) -> bytes | None:
        """Read markers up to the next SOS and return its header, or None at EOI."""
        while True:
            marker = self._marker()
            if marker == _EOI:
                if self.frame is None:
                    raise JpegError("JPEG datastream contains no image")
                return None
            if 0xD0 <= marker <= 0xD7 or marker in (0x01, _SOI):
                continue
            body = self._segment()
            if marker == _SOS:
                if self.frame is None:
                    raise JpegError("Invalid JPEG file structure: SOS before SOF")
                return body
            if marker in _SEQUENTIAL or marker == _PROGRESSIVE:
                self._start_frame(marker, body)
            elif marker in _OTHER_SOF:
                raise JpegUnsupportedError(f"Unsupported JPEG process: SOF type 0x{marker:02x}")
            elif marker == _DHT:
                self._huffman(body)
            elif marker == _DQT:
                self._quantization(body)
            elif marker == _DRI:
                if len(body) != 2:
                    raise JpegError("Bogus marker length")
                (self.restart,) = struct.unpack(">H", body)
            elif marker == 0xE0 and body.startswith(b"JFIF\0"):
                self.jfif = True
            elif marker == 0xEE and body.startswith(b"Adobe") and len(body) >= 12:
                self.adobe_transform = body[11]

    def _start_frame(self, marker: int, body: bytes) -> None:
        if self.frame is not None:
            raise JpegError("Invalid JPEG file structure: two SOF markers")
        if len(body) < 6:
            raise JpegError("Bogus marker length")
        precision, height, width, count = struct.unpack(">BHHB", body[:6])
        if len(body) != 6 + 3 * count:
            raise JpegError("Bogus marker length")
        if precision != 8:
            raise JpegUnsupportedError(f"Unsupported JPEG data precision {precision}")
        if height == 0 or width == 0 or count == 0:
            raise JpegError("Empty JPEG image (DNL not supported)")
        components = []
        for i in range(count):
            ident, sampling, tq = body[6 + 3 * i:9 + 3 * i]
            h, v = sampling >> 4, sampling & 15
            if not (1 <= h <= 4 and 1 <= v <= 4) or tq > 3:
                raise JpegError("Bogus sampling factors")
            components.append(_Component(ident, h, v, tq))
        if count not in (1, 3):
            raise JpegUnsupportedError(f"JPEG images with {count} components (CMYK/YCCK) are not "
                                  "supported, only 1 or 3")
        max_h = max(c.h for c in components)
        max_v = max(c.v for c in components)
        if any(max_h % c.h or max_h // c.h > 2 or max_v % c.v or max_v // c.v > 2
               for c in components):
            raise JpegUnsupportedError("Sampling factors other than 1 and 2 times a component's "
                                  "are not supported")
        mcus_wide = -(-width // (8 * max_h))
        mcus_high = -(-height // (8 * max_v))
        for comp in components:
            comp.blocks_wide, comp.blocks_high = mcus_wide * comp.h, mcus_high * comp.v
        self.frame = _Frame(marker == _PROGRESSIVE, height, width, components, max_h, max_v,
                            mcus_wide, mcus_high)

    def _huffman(self, body: bytes) -> None:
        pos = 0
        while pos < len(body):
            if pos + 17 > len(body):
                raise JpegError("Bogus DHT marker length")
            kind, index = body[pos] >> 4, body[pos] & 15
            counts = body[pos + 1:pos + 17]
            total = sum(counts)
            symbols = body[pos + 17:pos + 17 + total]
            if kind > 1 or index > 3 or len(symbols) != total:
                raise JpegError("Bogus DHT index or length")
            (self.ac if kind else self.dc)[index] = HuffmanTable(counts, symbols, not kind)
            pos += 17 + total

    def _quantization(self, body: bytes) -> None:
        pos = 0
        while pos < len(body):
            wide, index = body[pos] >> 4, body[pos] & 15
            size = 128 if wide else 64
            if index > 3 or pos + 1 + size > len(body):
                raise JpegError("Bogus DQT index or length")
            values = np.frombuffer(body[pos + 1:pos + 1 + size], ">u2" if wide else np.uint8)
            table = np.zeros(64, np.int64)
            table[NATURAL[:64]] = values
            self.quant[index] = table
            pos += 1 + size

    def scan_data(self) -> tuple[list[bytes], bool]:
        """The entropy-coded segments after an SOS header (split at restart markers) and
        whether the data ended before any marker followed them."""
        found = _SCAN_END.search(self.data, self.pos)
        end = found.start() if found else len(self.data)
        body = self.data[self.pos:end].rstrip(b"\xff") if not found else self.data[self.pos:end]
        self.pos = end
        return _RESTART.split(body), found is None


def _grey(rgb: np.ndarray) -> np.ndarray:
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    wr, wg, wb = _GREY_WEIGHTS
    return ((wr * r + wg * g + wb * b + (1 << 15)) >> 16).astype(np.uint8)


class _Decoder:
    def __init__(self, data: bytes) -> None:
        self.parser = _Parser(data)

    def header(self) -> tuple[_Frame, bytes | None]:
        scan = self.parser.next_scan()
        if self.parser.frame is None or scan is None:
            raise JpegError("JPEG datastream contains no image")
        return self.parser.frame, scan

    def coefficients(self, channels: int, recover: bool) -> _Frame:
        try:
            frame, scan = self.header()
        except _TruncatedError:
            raise JpegError("Premature end of JPEG file") from None
        # TF refuses outputs of 2**29 samples or more before decoding
        samples = frame.height * frame.width * (channels or len(frame.components))
        if samples >= 1 << 29:
            raise JpegError(f"Image too large: {samples}")
        for comp in frame.components:
            comp.coefs = [0] * (comp.blocks_wide * comp.blocks_high * 64)
        while scan is not None:
            ended = self._scan(frame, scan, recover)
            if ended:
                break
            try:
                scan = self.parser.next_scan()
            except _TruncatedError:
                if not recover:
                    raise JpegError("Premature end of JPEG file") from None
                break
        return frame

    def _scan(self, frame: _Frame, header: bytes, recover: bool) -> bool:
        """Decode one scan; True when the data ended inside it (recovering)."""
        parser = self.parser
        count = header[0] if header else 0
        if not 1 <= count <= 4 or len(header) != 4 + 2 * count:
            raise JpegError("Bogus SOS marker length")
        by_id = {c.ident: c for c in frame.components}
        comps, dcs, acs = [], [], []
        for i in range(count):
            ident, tables = header[1 + 2 * i], header[2 + 2 * i]
            if ident not in by_id:
                raise JpegError(f"Invalid component ID {ident} in SOS")
            comps.append(by_id[ident])
            dcs.append(tables >> 4)
            acs.append(tables & 15)
        ss, se, approx = header[1 + 2 * count:4 + 2 * count]
        ah, al = approx >> 4, approx & 15
        self._check_scan(frame, count, ss, se, ah, al)
        for comp in comps:
            if comp.quant is None:
                if comp.tq not in parser.quant:
                    raise JpegError(f"Quantization table 0x{comp.tq:02x} was not defined")
                comp.quant = parser.quant[comp.tq]
        needs_dc = not frame.progressive or (ss == 0 and ah == 0)
        needs_ac = not frame.progressive or ss > 0
        dc = [self._table(parser.dc, t) if needs_dc else [] for t in dcs]
        ac = [self._table(parser.ac, t) if needs_ac else [] for t in acs]
        segments, truncated = parser.scan_data()
        if truncated and not recover:
            raise JpegError("Premature end of JPEG file")
        mcus = self._mcus(frame, comps)
        per = parser.restart or len(mcus)
        for i in range(0, len(mcus), per):
            index = i // per
            seg = Segment(segments[index] if index < len(segments) else b"")
            part = mcus[i:i + per]
            if not frame.progressive:
                sequential(seg, part, dc, ac)
            elif ss == 0:
                if ah:
                    dc_refine(seg, part, al)
                else:
                    dc_first(seg, part, dc, al)
            elif ah:
                ac_refine(seg, part, ac[0], ss, se, al)
            else:
                ac_first(seg, part, ac[0], ss, se, al)
        return truncated

    @staticmethod
    def _check_scan(frame: _Frame, count: int, ss: int, se: int, ah: int, al: int) -> None:
        if frame.progressive:
            bad = (ss > se or se > 63 or al > 13 or (ah and ah != al + 1)
                   or (ss == 0 and se != 0) or (ss > 0 and count != 1))
            if bad:
                raise JpegError(f"Invalid progressive parameters Ss={ss} Se={se} Ah={ah} "
                                f"Al={al}")

    @staticmethod
    def _table(tables: dict[int, HuffmanTable], index: int) -> list[int]:
        if index not in tables:
            raise JpegError(f"Huffman table 0x{index:02x} was not defined")
        return tables[index].lookup

    @staticmethod
    def _mcus(frame: _Frame, comps: list[_Component]) -> list[Mcu]:
        if len(comps) == 1:
            comp = comps[0]
            rows, cols = (-(-n // 8) for n in frame.size(comp))
            coefs, wide = comp.coefs, comp.blocks_wide
            return [[(coefs, (r * wide + c) * 64, 0)] for r in range(rows) for c in range(cols)]
        mcus = []
        for my in range(frame.mcus_high):
            for mx in range(frame.mcus_wide):
                mcu = []
                for slot, comp in enumerate(comps):
                    for by in range(comp.v):
                        row = (my * comp.v + by) * comp.blocks_wide + mx * comp.h
                        mcu.extend((comp.coefs, (row + bx) * 64, slot) for bx in range(comp.h))
                mcus.append(mcu)
        return mcus


def _plane(frame: _Frame, comp: _Component, fancy: bool, fast: bool) -> np.ndarray:
    quant = comp.quant if comp.quant is not None else np.zeros(64, np.int64)
    idct = idct_ifast if fast else idct_islow
    blocks = idct(np.array(comp.coefs, np.int64).reshape(-1, 64), quant)
    plane = blocks.reshape(comp.blocks_high, comp.blocks_wide, 8, 8).transpose(0, 2, 1, 3)
    plane = plane.reshape(comp.blocks_high * 8, comp.blocks_wide * 8)
    height, width = frame.size(comp)
    return upsample(plane[:height, :width], frame.max_h // comp.h, frame.max_v // comp.v,
                    frame.height, frame.width, fancy)


def _is_rgb(parser: _Parser, frame: _Frame) -> bool:
    """libjpeg's guess that three components are RGB rather than YCbCr."""
    if parser.jfif:
        return False
    if parser.adobe_transform is not None:
        return parser.adobe_transform == 0
    return [c.ident for c in frame.components] == [82, 71, 66]


def read_jpeg_header(data: bytes) -> JpegHeader:
    """Height, width and component count of a JPEG, read as far as its first scan."""
    try:
        frame, _ = _Decoder(data).header()
    except _TruncatedError:
        raise JpegError("Premature end of JPEG file") from None
    return JpegHeader(frame.height, frame.width, len(frame.components))


def decode_jpeg(data: bytes, channels: int = 0, fancy_upscaling: bool = True,
                recover_truncated: bool = False, fast_idct: bool = False) -> np.ndarray:
    """uint8 ``[height, width, channels]`` pixels of JPEG `data`; `fast_idct` picks
    libjpeg's JDCT_IFAST over JDCT_ISLOW."""
    decoder = _Decoder(data)
    frame = decoder.coefficients(channels, recover_truncated)
    channels = channels or len(frame.components)
    comps = frame.components
    if len(comps) == 1:
        grey = _plane(frame, comps[0], fancy_upscaling, fast_idct)
        return np.repeat(grey[..., None], channels, axis=2)
    if channels == 1 and not _is_rgb(decoder.parser, frame):
        return _plane(frame, comps[0], fancy_upscaling, fast_idct)[..., None]
    planes = [_plane(frame, c, fancy_upscaling, fast_idct) for c in comps]
    rgb = np.stack(planes, axis=-1) if _is_rgb(decoder.parser, frame) else ycc_to_rgb(*planes)
    return _grey(rgb)[..., None] if channels == 1 else rgb
