"""Gradient functions of the complex-number ops, in TF's convention.

Contract: for a real-valued loss L, the gradient flowing into a complex tensor z is
``dL/dRe(z) + i * dL/dIm(z)`` (TF's ``math_grad.py``). So ``Real`` sends ``grad + 0j`` back,
``Imag`` sends ``0 + grad*1j``, ``Complex`` splits its gradient into the real and imaginary parts
(summed back to each operand's broadcast shape), ``Conj`` and ``ConjugateTranspose`` conjugate
it, and ``ComplexAbs``/``Angle`` give ``grad * z/|z|`` and ``-grad / (Im z + i Re z)``.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Operation, Tensor
from tensorweave.engine.graph.op_builder import apply
from tensorweave.plugins.standard_ops.grad_util import unbroadcast

Grads = list[Tensor | None]


def _complex(real: Tensor, imag: Tensor, like: dtypes.DType) -> Tensor:
    return apply("Complex", [real, imag], {"Tout": like})


def _part(op: str, z: Tensor) -> Tensor:
    return apply(op, [z], {"Tout": z.dtype.real_dtype})


def _complex_grad(op: Operation, grad: Tensor) -> Grads:
    x, y = op.inputs
    return list(unbroadcast(x, y, _part("Real", grad), _part("Imag", grad)))


def _real_grad(op: Operation, grad: Tensor) -> Grads:
    return [_complex(grad, array_ops.zeros_like(grad), op.inputs[0].dtype)]


def _imag_grad(op: Operation, grad: Tensor) -> Grads:
    return [_complex(array_ops.zeros_like(grad), grad, op.inputs[0].dtype)]


def _conj_grad(op: Operation, grad: Tensor) -> Grads:
    return [apply("Conj", [grad])]


def _complex_abs_grad(op: Operation, grad: Tensor) -> Grads:
    z, magnitude = op.inputs[0], op.outputs[0]
    zeros = array_ops.zeros_like(grad)
    # z / |z|, taken as 0 at z = 0 as TF does
    return [math_ops.div_no_nan(_complex(grad, zeros, z.dtype) * z,
                                _complex(magnitude, zeros, z.dtype))]


def _angle_grad(op: Operation, grad: Tensor) -> Grads:
    z = op.inputs[0]
    # d atan2(b, a) = (a db - b da) / (a^2 + b^2), written as one complex division
    turned = _complex(_part("Imag", z), _part("Real", z), z.dtype)
    return [-_complex(grad, array_ops.zeros_like(grad), z.dtype) * math_ops.reciprocal(turned)]


def _conjugate_transpose_grad(op: Operation, grad: Tensor) -> Grads:
    inverse = array_ops.invert_permutation(op.inputs[1])
    return [apply("ConjugateTranspose", [grad, inverse]), None]


def register_gradients(registry: Any) -> None:
    for name, fn in {
        "Complex": _complex_grad, "Real": _real_grad, "Imag": _imag_grad, "Conj": _conj_grad,
        "ComplexAbs": _complex_abs_grad, "Angle": _angle_grad,
        "ConjugateTranspose": _conjugate_transpose_grad,
    }.items():
        registry.add(name, fn)
