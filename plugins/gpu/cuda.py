"""CUDA through cupy, imported lazily: whether it is usable, and one handle per CUDA device.

Contract: `probe()` imports cupy once per process and asks CUDA how many devices it sees; it never
raises, and when CUDA is unusable its `reason` says why ("cupy is not installed", "no CUDA device
visible: ..."). `cuda_device(ordinal)` is the process-wide `CudaDevice` of one CUDA ordinal, shared
by every session's ``GPU`` device on it. `active(cupy, ordinal)` makes an ordinal the calling
thread's current CUDA device for a block and restores the previous one afterwards (cupy's own
``Device`` context keeps its stack on the instance, so one instance cannot be shared by threads).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Any

import attrs


@attrs.frozen
class CudaStatus:
    """What `probe` found: the cupy module and the CUDA devices, or why there are none."""

    cupy: Any = None
    device_names: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def available(self) -> bool:
        return self.cupy is not None and bool(self.device_names)


@functools.cache
def probe() -> CudaStatus:
    """Import cupy and count the CUDA devices, once per process."""
    try:
        import cupy
    except ModuleNotFoundError as exc:
        if exc.name == "cupy":
            return CudaStatus(reason="cupy is not installed")
        return CudaStatus(reason=f"cupy failed to import: {exc}")
    except Exception as exc:  # a broken CUDA installation surfaces as any error at import
        return CudaStatus(reason=f"cupy failed to import: {exc!r}")
    runtime = cupy.cuda.runtime
    try:
        count = runtime.getDeviceCount()
        names = tuple(_device_name(runtime, i) for i in range(count))
    except Exception as exc:  # CUDARuntimeError: no driver, no device, driver too old
        return CudaStatus(reason=f"no CUDA device visible: {exc}")
    if not names:
        return CudaStatus(reason="no CUDA device visible: CUDA reports 0 devices")
    return CudaStatus(cupy=cupy, device_names=names)


def _device_name(runtime: Any, ordinal: int) -> str:
    name = runtime.getDeviceProperties(ordinal)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


@contextlib.contextmanager
def active(cupy: Any, ordinal: int) -> Iterator[None]:
    """Run a block with `ordinal` as this thread's current CUDA device."""
    runtime = cupy.cuda.runtime
    previous = runtime.getDevice()
    if previous == ordinal:
        yield
        return
    runtime.setDevice(ordinal)
    try:
        yield
    finally:
        runtime.setDevice(previous)


@attrs.define(eq=False)
class CudaDevice:
    """One CUDA device of this process: its ordinal and its copy streams.

    Copies run on their own non-blocking streams, one per direction, so uploads, downloads and
    kernels can overlap. Ordering with the kernels is explicit: a copy first waits for the work
    queued so far on the current (compute) stream, and the host waits for the copy's own event
    before the value is handed over.
    """

    cupy: Any
    ordinal: int
    name: str
    _streams: dict[str, Any] = attrs.field(factory=dict)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def stream(self, purpose: str) -> Any:
        """The stream of one kind of copy (``"h2d"``, ``"d2h"``, ``"d2d"``), made on first use."""
        stream = self._streams.get(purpose)
        if stream is None:
            with self._lock:
                stream = self._streams.get(purpose)
                if stream is None:
                    with active(self.cupy, self.ordinal):
                        stream = self._streams[purpose] = self.cupy.cuda.Stream(
                            non_blocking=True)
        return stream

    def mark_current(self) -> Any:
        """An event after the work queued so far on this thread's current stream.

        Call with this device active. A copy waits for it both because its source may still be
        being computed and because cupy's pool may hand the copy a block that kernels queued on
        the current stream still read.
        """
        event = self.cupy.cuda.Event(disable_timing=True)
        event.record(self.cupy.cuda.get_current_stream())
        return event

    def finish(self, stream: Any) -> None:
        """Block until the work queued so far on `stream` is done (not other threads' later)."""
        event = self.cupy.cuda.Event(disable_timing=True)
        event.record(stream)
        event.synchronize()


_devices: dict[int, CudaDevice] = {}
_devices_lock = threading.Lock()


def cuda_device(ordinal: int) -> CudaDevice:
    """The process-wide handle of CUDA device `ordinal` (CUDA must be available)."""
    device = _devices.get(ordinal)
    if device is None:
        status = probe()
        with _devices_lock:
            device = _devices.setdefault(
                ordinal, CudaDevice(status.cupy, ordinal, status.device_names[ordinal]))
    return device
