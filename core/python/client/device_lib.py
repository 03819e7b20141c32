"""Alias of ``tensorflow.python.client.device_lib``: the devices a local session would get.

Contract: `list_local_devices(session_config=None)` returns one `LocalDevice` per device that the
plugins offer a local task under `session_config` (a `ConfigProto`), in the order a session
lists them, each with TF's ``name`` (``/device:CPU:0``), ``device_type``, ``memory_limit``
(bytes: the host's physical memory for host devices, the card's total memory for CUDA devices)
and ``incarnation``.
"""

from __future__ import annotations

import os
from typing import Any

import attrs

from tensorweave.engine.client.config import ConfigProto
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.engine.runtime.worker import create_devices


@attrs.frozen
class LocalDevice:
    """TF's ``DeviceAttributes`` of one local device."""

    name: str
    device_type: str
    memory_limit: int
    incarnation: int
    physical_device_desc: str = ""


def _local(device: Device) -> LocalDevice:
    memory = device.memory_limit or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return LocalDevice(name=f"/device:{device.device_type}:{device.index}",
                       device_type=device.device_type, memory_limit=memory,
                       incarnation=device.incarnation, physical_device_desc=device.description)


def list_local_devices(session_config: Any = None) -> list[LocalDevice]:
    """The local devices; see the module docstring."""
    config = session_config if session_config is not None else ConfigProto()
    return [_local(d) for d in create_devices(TaskSpec(), config, get_registries())]
