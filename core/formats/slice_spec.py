"""TF's text form of a tensor slice, as ``SaveV2``/``RestoreV2``'s ``shape_and_slices`` and a
partitioned variable's ``SaveSliceInfo.spec`` write it (TF's ``ParseShapeAndSlice``).

Contract: ``"d0 d1 ... s0:s1:..."`` is the full shape ``[d0, d1, ...]`` and one extent per
dimension, each ``start,length`` or ``-`` (the whole dimension). `parse` gives the full shape and
the extents with every length resolved; a malformed text raises `ValueError`.
"""

from __future__ import annotations

from tensorweave.formats.tensor_bundle import Extent

__all__ = ["parse"]


def parse(spec: str) -> tuple[tuple[int, ...], tuple[Extent, ...]]:
    """The full shape and the extents (lengths resolved) that `spec` names."""
    *dims, extents = spec.split(" ")
    try:
        shape = tuple(int(d) for d in dims)
        out = []
        for part, size in zip(extents.split(":"), shape, strict=True):
            start, length = (0, size) if part == "-" else (int(n) for n in part.split(","))
            out.append(Extent(start, length))
    except ValueError:
        raise ValueError(f"Expected a shape and slice spec, got {spec!r}") from None
    if not shape:
        raise ValueError(f"Expected a shape and slice spec, got {spec!r}")
    return shape, tuple(out)
