"""The ``gpu`` plugin: CUDA devices through cupy, the standard kernels on them, and the copies.

Contract: importing the plugin never needs cupy or CUDA; cupy is imported on first use
(`tensorweave.plugins.gpu.cuda.probe`). Where cupy imports and CUDA sees devices, a task gets one
``GPU`` device per visible CUDA device (`devices`), the standard kernels are registered for
``GPU`` (`kernels`), and values move between host and devices and between devices with
asynchronous copies (`copies`), for in-process ``_Send``/``_Recv`` through
``tensorweave_copy_tensor`` and for feeds, fetches and the wire through each device's
`to_host`/`from_host`. Elsewhere the plugin provides nothing and `tensorweave plugins` says why.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.plugins.gpu import copies, devices, kernels
from tensorweave.plugins.gpu.cuda import probe


@hookimpl
def tensorweave_devices(task: TaskSpec, config: Any) -> list[Device]:
    return devices.create_devices(task, config)


@hookimpl
def tensorweave_register_kernels(registry: Any) -> None:
    # Without a device, GPU kernels would only make `tensorweave plugins` claim what it lacks.
    if probe().available:
        kernels.register_kernels(registry)


@hookimpl
def tensorweave_copy_tensor(src: Device, dst: Device, value: Any) -> Any:
    src_gpu, dst_gpu = devices.cuda_device_of(src), devices.cuda_device_of(dst)
    if src_gpu is not None and dst_gpu is not None:
        return copies.device_to_device(src_gpu, dst_gpu, value)
    if dst_gpu is not None:
        return copies.host_to_device(dst_gpu, src.to_host(value))
    if src_gpu is not None:
        return dst.from_host(copies.device_to_host(src_gpu, value))
    return None


@hookimpl
def tensorweave_plugin_status() -> str | None:
    status = probe()
    if not status.available:
        return status.reason
    names = ", ".join(f"{i}: {name}" for i, name in enumerate(status.device_names))
    return f"cupy {status.cupy.__version__}, CUDA devices: {names}"
