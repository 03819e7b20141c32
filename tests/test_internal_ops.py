"""The runtime's own ops: transfer keys, and `_Send`/`_Recv`/`_Arg`/`_Retval` kernels run
through a real `Rendezvous`, `StepContext` and `KernelContext`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import ANY_DEVICE, KernelContext
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.runtime.device import Device, TaskSpec
from tensorweave.engine.runtime.executor import StepContext
from tensorweave.engine.runtime.internal_ops import transfer_key
from tensorweave.engine.runtime.rendezvous import Rendezvous, create_key, parse_key

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"


def _transfer_attrs(send_device: str = CPU1, incarnation: int = 0x1F,
                    tensor_name: str = "edge_3_a:0") -> dict[str, Any]:
    return {"tensor_name": tensor_name, "send_device": send_device,
            "send_device_incarnation": incarnation, "recv_device": CPU0,
            "client_terminated": False}


def _ctx(op: str, attrs: dict[str, Any], device: Device | None = None) -> KernelContext:
    device = device or Device.create(TaskSpec(), "CPU", 0, np)
    return KernelContext(node_name=f"{op}_node", op=op, attrs=attrs, device=device, xp=np,
                         output_dtypes=[dtypes.float32], output_shapes=[None])


def _kernel(op: str):
    kernel = get_registries().kernels.lookup(op, "CPU", dtypes.float32)
    assert kernel is not None
    return kernel


class Done:
    """The `done` callback of an async kernel: records every call."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def __call__(self, result: Any) -> None:
        self.calls.append(result)


def test_transfer_key_format_from_attrs() -> None:
    ctx = _ctx("_Recv", {**_transfer_attrs(), "tensor_type": dtypes.float32})
    key = transfer_key(ctx)
    assert key == f"{CPU1};000000000000001f;{CPU0};edge_3_a:0;0:0"
    assert key == create_key(CPU1, 0x1F, CPU0, "edge_3_a:0")
    parsed = parse_key(key)
    assert (parsed.src_device, parsed.src_incarnation, parsed.dst_device, parsed.edge_name) == (
        CPU1, 0x1F, CPU0, "edge_3_a:0")


def test_transfer_key_is_cached_in_node_state() -> None:
    ctx = _ctx("_Send", _transfer_attrs())
    key = transfer_key(ctx)
    assert ctx.state["key"] == key
    ctx.attrs["tensor_name"] = "changed:0"  # built once per node, never per step
    assert transfer_key(ctx) == key


def test_internal_ops_are_registered_stateful_on_any_device() -> None:
    reg = get_registries()
    for op in ("_Arg", "_Retval", "_Send", "_Recv"):
        assert reg.ops.get(op).stateful
        assert reg.kernels.device_types_for(op) == [ANY_DEVICE]
        assert reg.kernels.lookup(op, "CPU", None).needs_step
    assert reg.kernels.lookup("_Recv", "GPU", None).is_async
    assert not reg.kernels.lookup("_Send", "GPU", None).is_async


def test_recv_gets_a_value_sent_before() -> None:
    rendezvous = Rendezvous()
    step = StepContext(step_id=1, rendezvous=rendezvous)
    value = np.arange(3, dtype=np.float32)
    send_ctx = _ctx("_Send", _transfer_attrs())
    _kernel("_Send").fn(send_ctx, step, value)

    done = Done()
    recv_ctx = _ctx("_Recv", {**_transfer_attrs(), "tensor_type": dtypes.float32})
    _kernel("_Recv").fn(recv_ctx, step, done)
    assert len(done.calls) == 1
    assert done.calls[0] is value  # CPU to CPU in one process: never copied


def test_recv_gets_a_value_sent_after() -> None:
    step = StepContext(step_id=1, rendezvous=Rendezvous())
    done = Done()
    recv_ctx = _ctx("_Recv", {**_transfer_attrs(), "tensor_type": dtypes.float32})
    _kernel("_Recv").fn(recv_ctx, step, done)
    assert done.calls == []  # waits, does not block
    value = np.ones((2, 2), dtype=np.float32)
    _kernel("_Send").fn(_ctx("_Send", _transfer_attrs()), step, value)
    assert len(done.calls) == 1 and done.calls[0] is value


def test_recv_of_another_tensor_keeps_waiting() -> None:
    step = StepContext(step_id=1, rendezvous=Rendezvous())
    done = Done()
    _kernel("_Recv").fn(_ctx("_Recv", {**_transfer_attrs(tensor_name="a:0"),
                                       "tensor_type": dtypes.float32}), step, done)
    _kernel("_Send").fn(_ctx("_Send", _transfer_attrs(tensor_name="b:0")), step, np.ones(1))
    assert done.calls == []


def test_recv_reports_an_aborted_step() -> None:
    rendezvous = Rendezvous()
    step = StepContext(step_id=1, rendezvous=rendezvous)
    done = Done()
    _kernel("_Recv").fn(_ctx("_Recv", {**_transfer_attrs(), "tensor_type": dtypes.float32}),
                        step, done)
    abort = errors.CancelledError(None, None, "step cancelled")
    rendezvous.start_abort(abort)
    assert done.calls == [abort]


def test_recv_from_another_device_type_copies() -> None:
    copies: list[tuple[str, Device]] = []

    def copy_tensor(src: str, dst: Device, value: Any) -> Any:
        copies.append((src, dst))
        return np.array(value, copy=True)

    step = StepContext(step_id=1, rendezvous=Rendezvous(), copy_tensor=copy_tensor)
    recv_ctx = _ctx("_Recv", {**_transfer_attrs(send_device=GPU0),
                              "tensor_type": dtypes.float32})
    done = Done()
    _kernel("_Recv").fn(recv_ctx, step, done)
    value = np.arange(4, dtype=np.float32)
    _kernel("_Send").fn(_ctx("_Send", _transfer_attrs(send_device=GPU0)), step, value)
    assert copies == [(GPU0, recv_ctx.device)]
    assert len(done.calls) == 1
    assert done.calls[0] is not value
    np.testing.assert_array_equal(done.calls[0], value)


def test_recv_reports_a_failed_copy_as_internal_error() -> None:
    def copy_tensor(src: str, dst: Device, value: Any) -> Any:
        raise RuntimeError("no route")

    step = StepContext(step_id=1, rendezvous=Rendezvous(), copy_tensor=copy_tensor)
    done = Done()
    _kernel("_Recv").fn(_ctx("_Recv", {**_transfer_attrs(send_device=GPU0),
                                       "tensor_type": dtypes.float32}), step, done)
    _kernel("_Send").fn(_ctx("_Send", _transfer_attrs(send_device=GPU0)), step, np.ones(1))
    assert len(done.calls) == 1
    err = done.calls[0]
    assert isinstance(err, errors.InternalError)
    assert "no route" in str(err) and "copy for" in str(err)


def test_arg_and_retval() -> None:
    feed = np.array([7.0], dtype=np.float32)
    step = StepContext(step_id=1, rendezvous=Rendezvous(), args=[None, feed], retvals=[None])
    got = _kernel("_Arg").fn(_ctx("_Arg", {"T": dtypes.float32, "index": 1}), step)
    assert got is feed
    _kernel("_Retval").fn(_ctx("_Retval", {"T": dtypes.float32, "index": 0}), step, [1, 2])
    assert isinstance(step.retvals[0], np.ndarray)
    assert step.retvals[0].tolist() == [1, 2]


def test_send_after_abort_raises() -> None:
    rendezvous = Rendezvous()
    rendezvous.start_abort(errors.AbortedError(None, None, "gone"))
    step = StepContext(step_id=1, rendezvous=rendezvous)
    with pytest.raises(errors.AbortedError):
        _kernel("_Send").fn(_ctx("_Send", _transfer_attrs()), step, np.ones(1))
