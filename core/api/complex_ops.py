"""Complex-number ops: ``tf.complex``, ``tf.real``, ``tf.imag``, ``tf.angle`` and ``tf.conj``.

Contract: as ``tf.compat.v1``. `complex` takes two float32 (-> complex64) or two float64
(-> complex128) operands, broadcasting them, and raises `TypeError` for any other pair. On a
real input `real` returns it unchanged, `imag` gives zeros, `angle` gives pi where it is
negative and 0 elsewhere, and `conj` returns it unchanged (`TypeError` for a non-numeric one).
Each builds its ops under a name scope named as TF's (``Complex``, ``Real``, ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.api.scopes import name_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import apply

__all__ = ["angle", "complex", "conj", "imag", "real"]

_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def complex(real: Any, imag: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """``real + imag * 1j``, elementwise with broadcasting."""
    with name_scope(name, "Complex", [real, imag]) as scope:
        re = convert_to_tensor(real, name="real")
        im = convert_to_tensor(imag, name="imag")
        if re.dtype != im.dtype or re.dtype not in _COMPLEX_OF:
            raise TypeError(f"real and imag have incorrect types: {re.dtype.name} "
                            f"{im.dtype.name}")
        return apply("Complex", [re, im], {"Tout": _COMPLEX_OF[re.dtype]}, name=scope)


def _part(op: str, x: Tensor, scope: str) -> Tensor:
    return apply(op, [x], {"Tout": x.dtype.real_dtype}, name=scope)


def real(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The real part of each element (a real `input` itself)."""
    with name_scope(name, "Real", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        return _part("Real", x, scope) if x.dtype.is_complex else x


def imag(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The imaginary part of each element (zeros for a real `input`)."""
    with name_scope(name, "Imag", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        return _part("Imag", x, scope) if x.dtype.is_complex else array_ops.zeros_like(x)


def angle(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The argument of each element, in (-pi, pi] (pi or 0 for a real `input`)."""
    with name_scope(name, "Angle", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        if x.dtype.is_complex:
            return _part("Angle", x, scope)
        return array_ops.where(math_ops.less(x, 0), np.pi * array_ops.ones_like(x),
                               array_ops.zeros_like(x), name=scope)


def conj(x: Any, name: str | None = None) -> Tensor:
    """The complex conjugate of each element (a real numeric `x` itself)."""
    with name_scope(name, "Conj", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            return apply("Conj", [x], name=scope)
        if not x.dtype.is_numeric:
            raise TypeError(f"Expected numeric tensor, got dtype {x.dtype!r}")
        return x
