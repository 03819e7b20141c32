"""Conv2D and its filter gradient as one matrix product over the image's windows (im2col).

Contract: images are NHWC and already padded so that every window lies inside them; filters
are HWIO. `rows` copies every window once into a contiguous ``(N*OH*OW, KH*KW*C)`` matrix, so
`correlate` is ``rows @ filter`` and `filter_gradient` is ``rows.T @ dy``: one GEMM each (BLAS
on numpy, cuBLAS on cupy) instead of a tensordot over a strided view, whose reshape copies the
same values through numpy's generic strided loop and then runs the product on transposed
operands. Every size may be 0 (an empty batch gives an empty result of the right shape).
All of it runs on ``xp`` (numpy or cupy).
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
    matrix = rows(xp, image, out_hw, (kh, kw), strides, dilations)
    return (matrix @ kernel.reshape(kh * kw * c, o)).reshape(image.shape[0], *out_hw, o)


def filter_gradient(xp: Any, image: Any, dy: Any, window: tuple[int, ...],
                    strides: tuple[int, ...], dilations: tuple[int, ...]) -> Any:
    """d(loss)/d(filter) of a Conv2D of the padded `image` whose output gradient is `dy`:
    ``(KH, KW, C, O)``."""
    n, oh, ow, o = dy.shape
    matrix = rows(xp, image, (oh, ow), window, strides, dilations)
    return (matrix.T @ dy.reshape(n * oh * ow, o)).reshape(*window, image.shape[3], o)
