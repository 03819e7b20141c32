"""Conv2D and its filter gradient as one matrix product over the image's windows (im2col).

Contract: images are NHWC and already padded so that every window lies inside them; filters
are HWIO. `rows` copies every window once into a ``(N*OH*OW, KH*KW*C)`` matrix, so
`filter_gradient` is ``rows.T @ dy``, one GEMM (BLAS on numpy, cuBLAS on cupy). `correlate`
is ``rows @ filter`` where a window's row is short; where it is long (``KW*C >= 256``) it copies
only each window row once, ``(H, N*OW, KW*C)``, and sums ``KH`` GEMMs over row offsets, whose
operands are contiguous slices of that copy: a ``KH`` times smaller copy, for products that
stay large enough to run at BLAS speed. Every size may be 0 (an empty batch gives an empty
result of the right shape). All of it runs on ``xp`` (numpy or cupy).
"""

from __future__ import annotations

import math
from typing import Any


def windows(xp: Any, image: Any, out_hw: tuple[int, ...], window: tuple[int, ...],
            strides: tuple[int, ...], dilations: tuple[int, ...]) -> Any:
    """A read-only view ``(N, OH, OW, KH, KW, C)`` of a padded `image`'s windows."""
    sn, sh, sw, sc = image.strides
    shape = (image.shape[0], *out_hw, *window, image.shape[3])
    steps = (sn, sh * strides[0], sw * strides[1], sh * dilations[0], sw * dilations[1], sc)
    return xp.lib.stride_tricks.as_strided(image, shape, steps)


def rows(xp: Any, image: Any, out_hw: tuple[int, ...], window: tuple[int, ...],
         strides: tuple[int, ...], dilations: tuple[int, ...]) -> Any:
    """Each window of a padded `image` as one row: ``(N*OH*OW, KH*KW*C)``, C- or F-ordered."""
    view = windows(xp, image, out_hw, window, strides, dilations)
    m, k = math.prod(view.shape[:3]), math.prod(view.shape[3:])
    # The copy runs fastest along the longest stretch that is contiguous in the image: a
    # window's row (KW*C values) when it is long, else a row of outputs (OW values), which
    # the transposed, column-per-window layout makes the innermost one.
    if window[1] * image.shape[3] >= out_hw[1] or dilations[1] != 1 or strides[1] != 1:
        return xp.ascontiguousarray(view).reshape(m, k)
    return xp.ascontiguousarray(view.transpose(3, 4, 5, 0, 1, 2)).reshape(k, m).T


def correlate(xp: Any, image: Any, kernel: Any, out_hw: tuple[int, ...],
              strides: tuple[int, ...], dilations: tuple[int, ...]) -> Any:
    """Conv2D (TF's cross-correlation) of a padded `image` with an HWIO `kernel`:
    ``(N, OH, OW, O)`` in the operands' common dtype."""
    kh, kw, c, o = kernel.shape
    if kw * c >= WINDOW_ROW:
        return _correlate_by_window_rows(xp, image, kernel, out_hw, strides, dilations)
    matrix = rows(xp, image, out_hw, (kh, kw), strides, dilations)
    return (matrix @ kernel.reshape(kh * kw * c, o)).reshape(image.shape[0], *out_hw, o)


# The window-row length from which `correlate` sums KH products over window rows: at the
# benchmark CNN's sizes one product over whole windows wins at 160 values (its second conv),
# the window rows at 320 (that conv's input gradient, as a correlation of 64 channels).
WINDOW_ROW = 256


def _correlate_by_window_rows(xp: Any, image: Any, kernel: Any, out_hw: tuple[int, ...],
                              strides: tuple[int, ...], dilations: tuple[int, ...]) -> Any:
    n, height = image.shape[:2]
    kh, kw, c, o = kernel.shape
    oh, ow = out_hw
    sn, sh, sw, sc = image.strides
    # Image rows outermost, so that the rows one filter row meets form one contiguous block.
    view = xp.lib.stride_tricks.as_strided(
        image, (height, n, ow, kw, c), (sh, sn, sw * strides[1], sw * dilations[1], sc))
    window_rows = xp.ascontiguousarray(view).reshape(height, n * ow, kw * c)
    out = xp.empty((oh * n * ow, o), dtype=xp.result_type(image, kernel))
    for i in range(kh):
        start = i * dilations[0]
        # An empty output takes an empty slice (its stop could otherwise count from the end).
        stop = start + (oh - 1) * strides[0] + 1 if oh else start
        block = xp.ascontiguousarray(window_rows[start:stop:strides[0]])
        a, b = block.reshape(oh * n * ow, kw * c), kernel[i].reshape(kw * c, o)
        if i:
            out += a @ b
        else:
            xp.matmul(a, b, out=out)
    return xp.ascontiguousarray(out.reshape(oh, n, ow, o).transpose(1, 0, 2, 3))


def filter_gradient(xp: Any, image: Any, dy: Any, window: tuple[int, ...],
                    strides: tuple[int, ...], dilations: tuple[int, ...]) -> Any:
    """d(loss)/d(filter) of a Conv2D of the padded `image` whose output gradient is `dy`:
    ``(KH, KW, C, O)``."""
    n, oh, ow, o = dy.shape
    matrix = rows(xp, image, (oh, ow), window, strides, dilations)
    return (matrix.T @ dy.reshape(n * oh * ow, o)).reshape(*window, image.shape[3], o)
