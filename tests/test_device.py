"""Devices: canonical names, task names, per-node kernel state, the host device, attributes."""

from __future__ import annotations

import threading

import numpy as np

from tensorweave.engine.runtime.device import Device, DeviceAttributes, TaskSpec, host_device


def test_task_spec_name() -> None:
    assert TaskSpec().name == "/job:localhost/replica:0/task:0"
    assert TaskSpec("worker", 1, 3).name == "/job:worker/replica:1/task:3"


def test_create_names_the_device() -> None:
    dev = Device.create(TaskSpec("ps", 0, 2), "GPU", 1, np)
    assert dev.name == "/job:ps/replica:0/task:2/device:GPU:1"
    assert dev.device_type == "GPU"
    assert dev.index == 1
    assert dev.xp is np
    assert repr(dev) == "<Device /job:ps/replica:0/task:2/device:GPU:1>"


def test_task_name_strips_the_device() -> None:
    dev = Device.create(TaskSpec("worker", 0, 7), "CPU", 0, np)
    assert dev.task_name == "/job:worker/replica:0/task:7"


def test_spec_parses_the_name() -> None:
    spec = Device.create(TaskSpec("worker", 0, 4), "CPU", 2, np).spec
    assert (spec.job, spec.replica, spec.task) == ("worker", 0, 4)
    assert (spec.device_type, spec.device_index) == ("CPU", 2)


def test_create_passes_extra_fields() -> None:
    dev = Device.create(TaskSpec(), "CPU", 0, np, incarnation=42)
    assert dev.incarnation == 42


def test_incarnation_is_random_and_nonzero() -> None:
    incarnations = {Device.create(TaskSpec(), "CPU", 0, np).incarnation for _ in range(8)}
    assert 0 not in incarnations
    assert len(incarnations) > 1
    assert all(0 < i < 2**63 for i in incarnations)


def test_default_host_transfers_are_numpy() -> None:
    dev = Device.create(TaskSpec(), "CPU", 0, np)
    out = dev.to_host([1, 2])
    assert isinstance(out, np.ndarray) and out.tolist() == [1, 2]
    assert isinstance(dev.from_host(np.zeros(2)), np.ndarray)


def test_mutable_fields_are_per_device() -> None:
    a = Device.create(TaskSpec(), "CPU", 0, np)
    b = Device.create(TaskSpec(), "CPU", 0, np)
    a.resources["v"] = 1
    assert b.resources == {}
    assert a.lock is not b.lock
    assert a != b  # identity equality: two devices are never interchangeable


def test_kernel_state_is_shared_per_node() -> None:
    dev = Device.create(TaskSpec(), "CPU", 0, np)
    first = dev.kernel_state("node_a")
    first["seed"] = 7
    assert dev.kernel_state("node_a") is first
    assert dev.kernel_state("node_a")["seed"] == 7
    assert dev.kernel_state("node_b") == {}
    assert dev.kernel_state("node_b") is not first
    other = Device.create(TaskSpec(), "CPU", 0, np)
    assert other.kernel_state("node_a") == {}


def test_kernel_state_is_one_dict_across_threads() -> None:
    dev = Device.create(TaskSpec(), "CPU", 0, np)
    got: list[dict] = []
    threads = [threading.Thread(target=lambda: got.append(dev.kernel_state("n")))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8
    assert all(d is got[0] for d in got)


def test_host_device_is_a_singleton_numpy_cpu() -> None:
    host = host_device()
    assert host is host_device()
    assert host.name == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert host.device_type == "CPU"
    assert host.xp is np


def test_device_attributes_of() -> None:
    dev = Device.create(TaskSpec("worker", 0, 1), "CPU", 0, np, incarnation=99)
    attrs = DeviceAttributes.of(dev)
    assert attrs == DeviceAttributes("/job:worker/replica:0/task:1/device:CPU:0", "CPU", 99)
    assert hash(attrs) == hash(DeviceAttributes(dev.name, "CPU", 99))
