"""Copies between host memory and CUDA devices, and between CUDA devices.

Contract: each function returns a new array on the destination and returns only once the copy is
complete, so the value can be handed to any consumer on any stream. Copies run asynchronously on
the device's copy streams (`CudaDevice.stream`) after the work already queued on the current
stream. Arrays of at least `PINNED_MIN_BYTES` go through page-locked host memory: uploads are
staged through two pinned buffers of `CHUNK_BYTES` in turn, so filling one overlaps the DMA of the
other; downloads land directly in a new pinned numpy array from cupy's pinned pool. Device to
device copies are peer DMA (``cudaMemcpyPeerAsync``) where CUDA reports peer access, and staged
through host memory otherwise.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tensorweave.plugins.gpu.cuda import CudaDevice, active

PINNED_MIN_BYTES = 1 << 20
CHUNK_BYTES = 8 << 20
_PEER_ACCESS_ALREADY_ENABLED = 704  # cudaErrorPeerAccessAlreadyEnabled

_peer: dict[tuple[int, int], bool] = {}
_peer_lock = threading.Lock()


def _empty_pinned(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    import cupyx

    return cupyx.empty_pinned(shape, dtype)


def host_to_device(gpu: CudaDevice, value: Any, pinned: bool = False) -> Any:
    """`value` (anything `numpy.asarray` takes) as a new cupy array on `gpu`.

    :param pinned: the caller knows `value` already lies in page-locked memory, so it is copied
        from directly instead of being staged.
    """
    host = np.asarray(value)
    if not host.flags.c_contiguous:
        host = np.ascontiguousarray(host)
    cupy = gpu.cupy
    with active(cupy, gpu.ordinal):
        out = cupy.empty(host.shape, host.dtype)
        if host.nbytes == 0:
            return out
        stream = gpu.stream("h2d")
        stream.wait_event(gpu.mark_current())
        if pinned or host.nbytes < PINNED_MIN_BYTES:
            # cupy documents pinned memory here; CUDA also takes pageable memory and stages it
            # itself before returning, which for a small array is cheaper than pinning it.
            out.data.copy_from_host_async(host.ctypes.data, host.nbytes, stream)
        else:
            _staged_upload(gpu, host, out, stream)
        gpu.finish(stream)
    return out


def _staged_upload(gpu: CudaDevice, host: np.ndarray, out: Any, stream: Any) -> None:
    """Copy pageable `host` into `out` through two pinned buffers used in turn."""
    source = host.reshape(-1).view(np.uint8)
    total = source.size
    buffers = [_empty_pinned((min(CHUNK_BYTES, total),), np.uint8)
               for _ in range(1 if total <= CHUNK_BYTES else 2)]
    in_flight: list[Any] = [None] * len(buffers)
    for i, start in enumerate(range(0, total, CHUNK_BYTES)):
        slot = i % len(buffers)
        if in_flight[slot] is not None:
            in_flight[slot].synchronize()  # this buffer's previous DMA must be done reading it
        size = min(CHUNK_BYTES, total - start)
        buffer = buffers[slot]
        np.copyto(buffer[:size], source[start:start + size])
        (out.data + start).copy_from_host_async(buffer.ctypes.data, size, stream)
        event = gpu.cupy.cuda.Event(disable_timing=True)
        event.record(stream)
        in_flight[slot] = event


def device_to_host(gpu: CudaDevice, value: Any) -> np.ndarray:
    """`value` (a cupy array on `gpu`) as a new numpy array; large ones are page-locked."""
    cupy = gpu.cupy
    if not isinstance(value, cupy.ndarray):
        return np.asarray(value)
    with active(cupy, gpu.ordinal):
        source = value if value.flags.c_contiguous else cupy.ascontiguousarray(value)
        nbytes = source.nbytes
        out = (_empty_pinned(source.shape, source.dtype) if nbytes >= PINNED_MIN_BYTES
               else np.empty(source.shape, source.dtype))
        if nbytes:
            # Into pageable memory (small arrays) CUDA returns only once the copy is done.
            stream = gpu.stream("d2h")
            stream.wait_event(gpu.mark_current())
            source.data.copy_to_host_async(out.ctypes.data, nbytes, stream)
            gpu.finish(stream)
    return out


def peer_accessible(src: CudaDevice, dst: CudaDevice) -> bool:
    """Whether `dst` can reach `src`'s memory directly; enables the access the first time."""
    key = (src.ordinal, dst.ordinal)
    known = _peer.get(key)
    if known is None:
        with _peer_lock:
            known = _peer.get(key)
            if known is None:
                runtime = dst.cupy.cuda.runtime
                known = (bool(runtime.deviceCanAccessPeer(dst.ordinal, src.ordinal))
                         and _enable_peer_access(dst, src.ordinal))
                _peer[key] = known
    return known


def _enable_peer_access(device: CudaDevice, peer: int) -> bool:
    """Whether `device` now reaches `peer`'s memory (CUDA may refuse, e.g. too many peers)."""
    runtime = device.cupy.cuda.runtime
    with active(device.cupy, device.ordinal):
        try:
            runtime.deviceEnablePeerAccess(peer)
        except runtime.CUDARuntimeError as exc:  # another library may have enabled it first
            return exc.status == _PEER_ACCESS_ALREADY_ENABLED
    return True


def device_to_device(src: CudaDevice, dst: CudaDevice, value: Any) -> Any:
    """`value` (a cupy array on `src`) as a new cupy array on `dst`."""
    cupy = dst.cupy
    if not isinstance(value, cupy.ndarray):  # a host value: nothing to read on `src`
        return host_to_device(dst, value)
    if src.ordinal == dst.ordinal:
        return value
    if not peer_accessible(src, dst):
        host = device_to_host(src, value)
        return host_to_device(dst, host, pinned=host.nbytes >= PINNED_MIN_BYTES)
    with active(cupy, src.ordinal):
        source = value if value.flags.c_contiguous else cupy.ascontiguousarray(value)
        produced = src.mark_current()
    with active(cupy, dst.ordinal):
        out = cupy.empty(source.shape, source.dtype)
        if source.nbytes == 0:
            return out
        stream = dst.stream("d2d")
        stream.wait_event(produced)
        stream.wait_event(dst.mark_current())
        cupy.cuda.runtime.memcpyPeerAsync(out.data.ptr, dst.ordinal, source.data.ptr,
                                          src.ordinal, source.nbytes, stream.ptr)
        dst.finish(stream)
    return out
