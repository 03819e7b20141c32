"""The standard kernels bound to ``GPU``: the CPU plugin's kernel modules, run on cupy.

Contract: `register_kernels(registry)` hands every module of
`tensorweave.plugins.kernels.device_kernel_modules()` (so a new module is picked up with no
change here) a registration view that registers each kernel for ``"GPU"`` wrapped so that it
runs with its device's CUDA ordinal current: cupy allocates and launches on the current device,
and the executor's threads serve every device of the task. Ops in `GPU_DTYPES` get a GPU kernel
only for the dtypes cupy can run them in, and no GPU kernel takes `string` (object arrays live
in host memory only); placement puts the other dtypes on the CPU (docs/gpu.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import attrs

from tensorweave.engine import dtypes
from tensorweave.engine.kernel import KernelContext
from tensorweave.plugins.gpu.cuda import active
from tensorweave.plugins.gpu.devices import cuda_device_of
from tensorweave.plugins.kernels import device_kernel_modules

# cupy's ufunc.at is built on CUDA atomics, which exist for these dtypes only.
_ATOMIC_ADD = frozenset({dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int32})
_ATOMIC_MAX = frozenset({dtypes.float32, dtypes.float64, dtypes.int32})
GPU_DTYPES: dict[str, frozenset[dtypes.DType]] = {
    "ScatterNd": _ATOMIC_ADD,  # add.at
    "UnsortedSegmentSum": _ATOMIC_ADD,  # add.at
    "UnsortedSegmentMax": _ATOMIC_MAX,  # maximum.at
    "ScatterAdd": _ATOMIC_ADD,  # add.at
    "ScatterSub": _ATOMIC_ADD,  # add.at
    "ScatterMax": _ATOMIC_MAX,  # maximum.at
    "ScatterMin": _ATOMIC_MAX,  # minimum.at
    "ScatterNdAdd": _ATOMIC_ADD,  # add.at
    "ScatterNdSub": _ATOMIC_ADD,  # add.at
    "SegmentSum": _ATOMIC_ADD,  # add.at
    "SegmentMean": _ATOMIC_ADD,  # add.at
    "SegmentMax": _ATOMIC_MAX,  # maximum.at
    "SegmentMin": _ATOMIC_MAX,  # minimum.at
    "UnsortedSegmentMin": _ATOMIC_MAX,  # minimum.at
    "SparseTensorDenseMatMul": _ATOMIC_ADD,  # add.at
    "SparseReduceSum": _ATOMIC_ADD,  # add.at
    "SparseTensorDenseAdd": _ATOMIC_ADD,  # add.at
    "SparseAdd": _ATOMIC_ADD,  # add.at
    "TensorScatterAdd": _ATOMIC_ADD,  # add.at
    "TensorScatterSub": _ATOMIC_ADD,  # add.at
    "SparseSoftmax": _ATOMIC_MAX,  # maximum.at, add.at
    "SparseReduceMax": _ATOMIC_MAX,  # maximum.at
    "SparseReduceMaxSparse": _ATOMIC_MAX,  # maximum.at
    "SparseReduceSumSparse": _ATOMIC_ADD,  # add.at
    **{f"SparseSegment{kind}{suffix}": _ATOMIC_ADD  # add.at
       for kind in ("Sum", "Mean", "SqrtN") for suffix in ("", "WithNumSegments", "Grad")
       if not (kind == "Sum" and suffix == "Grad")},
}

# every dtype with a fixed-size representation: `dtypes.string` is deliberately absent
DEVICE_DTYPES = frozenset(dtypes.ALL)


def on_its_device(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` run with the CUDA device of ``ctx.device`` current (restored afterwards)."""

    @functools.wraps(fn)
    def kernel(ctx: KernelContext, *args: Any) -> Any:
        gpu = cuda_device_of(ctx.device)
        if gpu is None:  # a GPU device of another plugin: its own business
            return fn(ctx, *args)
        with active(gpu.cupy, gpu.ordinal):
            return fn(ctx, *args)

    return kernel


@attrs.frozen
class GpuKernelRegistration:
    """The registration view kernel modules see: every kernel goes on its CUDA device."""

    registry: Any

    def add(self, op: str, device_type: str, fn: Callable[..., Any], **kwargs: Any) -> None:
        limit = GPU_DTYPES.get(op, DEVICE_DTYPES)
        given = kwargs.get("dtypes")
        kwargs["dtypes"] = limit if given is None else limit & frozenset(given)
        self.registry.add(op, device_type, on_its_device(fn), **kwargs)


def register_kernels(registry: Any) -> None:
    """Register the standard kernels for device type ``"GPU"``."""
    view = GpuKernelRegistration(registry)
    for module in device_kernel_modules():
        module.register(view, "GPU")
