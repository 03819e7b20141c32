"""GIF on giflib, as TF's ``gif_io.cc``: giflib (through `imagecodecs`; TF links giflib too)
reads the LZW image data, and the frames are composed here as TF composes them.

Why a walk over the blocks: `imagecodecs` hands back giflib's colour indices, but neither the
frames' rectangles nor their colour maps nor their transparent indices. The walk reads those
from the block structure (the headers only; image data is skipped by its sub-block lengths)
and gives giflib a copy in which every frame sits at the origin of a screen as large as the
largest frame, which is TF's canvas, so that giflib allocates no more than TF does.

Contract: ``decode(data)`` returns uint8 ``[frames, height, width, 3]``, height and width being
the largest frame's (not the logical screen's), as TF 2.21. Frame k starts as a copy of frame
k - 1 (frame 0 as zeros) and, within its rectangle clipped to the canvas, takes the colours of
its local colour map, else the global one, except where it holds its transparent index (from
the first graphic control extension before it), which leaves the pixel as it was; disposal
modes are ignored, as by TF. ``first_only`` composes frame 0 alone (TF's
``expand_animations=False``), so an error in a later frame's colours passes, while every
frame's image data is still read. Data that ends, or holds an unknown record, after a complete
image decodes the images before it (TF logs giflib's error and goes on). Raises
`InvalidArgumentError` (no node; the kernel adds it) with TF's reason for a file giflib
refuses (giflib's own message), one without images, a colour index outside the map that is not
the transparent one, a frame without a colour map, and a 0-pixel image. Data that ends inside an
image (its descriptor, colour map or LZW sub-blocks) drops that image, as TF 2.21 does at every
cut of every fixture file (``tests/data/gif/tf_cuts.npz``), so a cut inside the first image is
refused.
"""

from __future__ import annotations

import re
import struct

import attrs
import imagecodecs
import numpy as np

from tensorweave.engine import errors

__all__ = ["decode"]

_TRAILER, _EXTENSION, _IMAGE, _GRAPHIC_CONTROL = 0x3B, 0x21, 0x2C, 0xF9
_SCREEN = 13  # signature, screen width and height, flags, background, aspect ratio
_READ_FAILED = "Failed to read from given file"  # giflib's message when data runs out


@attrs.frozen
class _Frame:
    """One image: where its descriptor starts, its rectangle, its local colour map (if any)
    and its transparent index (-1: none)."""

    start: int
    left: int
    top: int
    height: int
    width: int
    colors: np.ndarray | None
    transparent: int


class _ShortDataError(Exception):
    """The data ends inside a record."""


def _invalid(reason: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, reason)


def _color_map(data: bytes, pos: int, flags: int) -> tuple[np.ndarray | None, int]:
    """The colour map that `flags` announce at `pos` (or None), and the position after it."""
    if not flags & 0x80:
        return None, pos
    size = 3 << ((flags & 7) + 1)
    if pos + size > len(data):
        raise _ShortDataError
    return np.frombuffer(data, np.uint8, size, pos).reshape(-1, 3), pos + size


def _skip_sub_blocks(data: bytes, pos: int) -> int:
    while pos < len(data):
        size = data[pos]
        pos += 1 + size
        if not size:
            return pos
    raise _ShortDataError


def _walk(data: bytes) -> tuple[list[_Frame], np.ndarray | None, int]:
    """The complete images of `data`, its global colour map, and where the records giflib
    keeps end: after the trailer, or where the data ends or turns to something giflib stops
    at (an unknown record; an image whose data is cut short, which TF's giflib drops). No
    images where the screen descriptor is incomplete."""
    try:
        global_map, pos = _color_map(data, _SCREEN, data[10])
    except (_ShortDataError, IndexError):
        return [], None, 0
    frames: list[_Frame] = []
    transparent, control_seen = -1, False
    try:
        while pos < len(data):
            kind = data[pos]
            if kind == _TRAILER:
                return frames, global_map, pos + 1
            if kind == _EXTENSION:
                block = pos + 2
                # giflib reads the first graphic control extension before an image; one whose
                # first sub-block is not 4 bytes long gives no transparency (DGifExtensionToGCB)
                if data[pos + 1] == _GRAPHIC_CONTROL and not control_seen and data[block]:
                    control_seen = True
                    if data[block] == 4 and data[block + 1] & 1:
                        transparent = data[block + 4]
                end = _skip_sub_blocks(data, block)
            elif kind == _IMAGE:
                left, top, width, height, flags = struct.unpack_from("<HHHHB", data, pos + 1)
                colors, body = _color_map(data, pos + 10, flags)
                if not width or not height:
                    raise _invalid(f"failed to slurp gif file: Unknown error (image "
                                   f"{len(frames)} is {width}x{height})")
                end = _skip_sub_blocks(data, body + 1)  # the LZW minimum code size, the data
                frames.append(_Frame(pos, left, top, height, width, colors, transparent))
                transparent, control_seen = -1, False
            else:
                break
            pos = end
    except (_ShortDataError, IndexError, struct.error):
        pass
    return frames, global_map, pos


def _giflib(data: bytes) -> np.ndarray:
    """giflib's colour indices of every image in `data`, ``[n, h, w]``."""
    try:
        indices = imagecodecs.gif_decode(data, asrgb=False)
    except imagecodecs.GifError as exc:
        match = re.search(r"(DGif\w+) returned '(.*)'", str(exc))
        stage, reason = match.groups() if match else ("DGifSlurp", str(exc))
        # imagecodecs names DGifCloseFile where DGifOpen failed (it closes in a finally)
        opening = stage in ("DGifOpen", "DGifCloseFile")
        raise _invalid(f"failed to {'open' if opening else 'slurp'} gif file: {reason}") from None
    return indices if indices.ndim == 3 else indices[None]


def _at_origin(data: bytes, frames: list[_Frame], end: int, height: int,
               width: int) -> bytes:
    """`data` up to `end` with a trailer, its screen `width` x `height` and every frame at
    (0, 0): giflib then places frame k's indices at ``[k, :h, :w]`` of a canvas that size."""
    out = bytearray(data[:end])
    if out[-1] != _TRAILER:  # every other record ends with an empty sub-block
        out.append(_TRAILER)
    struct.pack_into("<HH", out, 6, width, height)
    for frame in frames:
        struct.pack_into("<HH", out, frame.start + 1, 0, 0)
    return bytes(out)


def decode(data: bytes, first_only: bool = False) -> np.ndarray:
    """The frames of GIF file `data`; see the module docstring."""
    frames, global_map, end = _walk(data)
    if not frames:
        _giflib(data)  # giflib's reason, as TF reports it
        raise _invalid("gif file does not contain any image")
    height, width = max(f.height for f in frames), max(f.width for f in frames)
    indices = _giflib(_at_origin(data, frames, end, height, width))
    if len(indices) != len(frames):
        raise _invalid(f"failed to slurp gif file: giflib read {len(indices)} images, the "
                       f"block structure holds {len(frames)}")
    # frames are composed as packed RGB in uint32, one element a pixel: np.take, copies and
    # masked copies over those are several times faster than over [..., 3] uint8
    canvas = np.zeros((1 if first_only else len(frames), height, width), np.uint32)
    for k in range(len(canvas)):
        frame = frames[k]
        if k:
            canvas[k] = canvas[k - 1]
        colors = global_map if frame.colors is None else frame.colors
        if colors is None:
            raise _invalid(f"missing color map for frame {k}")
        rows, cols = min(frame.height, height - frame.top), min(frame.width, width - frame.left)
        if rows <= 0 or cols <= 0:
            continue
        index = indices[k, :rows, :cols]
        shown = index != frame.transparent if frame.transparent >= 0 else None
        if len(colors) < 256:  # a uint8 index cannot leave a full map
            outside = index >= len(colors)
            if shown is not None:
                outside &= shown
            if outside.any():
                raise _invalid(f"found color index {index.flat[np.flatnonzero(outside)[0]]} "
                               f"outside of color map range {len(colors)}")
        packed = np.zeros(256, np.uint32)
        wide = colors.astype(np.uint32)
        packed[:len(colors)] = wide[:, 0] | wide[:, 1] << 8 | wide[:, 2] << 16
        region = canvas[k, frame.top:frame.top + rows, frame.left:frame.left + cols]
        np.copyto(region, np.take(packed, index), where=True if shown is None else shown)
    out = np.empty(canvas.shape + (3,), np.uint8)
    for channel in range(3):
        out[..., channel] = canvas >> (8 * channel)  # the low byte: the cast drops the rest
    return out
