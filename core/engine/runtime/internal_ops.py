"""The engine's own ops: ``_Arg``/``_Retval`` (feeds and fetches of a step), ``_Send``/``_Recv``
(crossing edges), and the OpDefs of ``Const``, ``Placeholder``, ``Identity`` and ``NoOp``, which
a graph needs to run at all. Registered by the core itself, so they cannot be disabled. The
transfer kernels are device-agnostic; the kernels of the other four come with each device's
plugin (``cpu``, ``gpu``), which knows the dtypes its device holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import ANY_DEVICE, KernelContext
from tensorweave.engine.op_def import REQUIRED, InferContext, TensorSpec
from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.engine.runtime.rendezvous import create_key, parse_key
from tensorweave.engine.runtime.variables_store import FetchedRef, VariableRef
from tensorweave.engine.tensor_shape import TensorShape

_TRANSFER_ATTRS = {
    "tensor_name": REQUIRED, "send_device": REQUIRED, "send_device_incarnation": 0,
    "recv_device": REQUIRED, "client_terminated": False,
}


def _arg_spec(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("T"), ctx.attrs.get("_shape"))]


def _recv_spec(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("tensor_type"), ctx.attrs.get("_shape"))]


def _const_spec(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("dtype"), TensorShape(ctx.attr("value").shape))]


def _placeholder_spec(ctx: InferContext) -> list[TensorSpec]:
    return [TensorSpec(ctx.attr("dtype"), ctx.attr("shape"))]


@hookimpl
def tensorweave_register_ops(registry: Any) -> None:
    registry.op("_Arg", [], _arg_spec, attrs={"T": REQUIRED, "index": REQUIRED}, stateful=True)
    registry.op("_Retval", ["input:T"], lambda ctx: [],
                attrs={"T": REQUIRED, "index": REQUIRED}, stateful=True, ref_inputs=(0,))
    registry.op("_Send", ["tensor:T"], lambda ctx: [], attrs={"T": REQUIRED, **_TRANSFER_ATTRS},
                stateful=True)
    registry.op("_Recv", [], _recv_spec, attrs={"tensor_type": REQUIRED, **_TRANSFER_ATTRS},
                stateful=True)
    registry.op("Const", [], _const_spec, attrs={"value": REQUIRED, "dtype": REQUIRED})
    registry.op("Placeholder", [], _placeholder_spec,
                attrs={"dtype": REQUIRED, "shape": TensorShape(None)})
    registry.op("Identity", ["input:T"], lambda ctx: [ctx.inputs[0]], attrs={"T": REQUIRED})
    registry.op("NoOp", [], lambda ctx: [])


def transfer_key(ctx: KernelContext) -> str:
    key = ctx.state.get("key")
    if key is None:
        a = ctx.attrs
        key = ctx.state["key"] = create_key(
            a["send_device"], a["send_device_incarnation"], a["recv_device"], a["tensor_name"])
    return key


def _arg(ctx: KernelContext, step: Any) -> Any:
    return step.args[ctx.attrs["index"]]


def _bind_arg(ctx: KernelContext, input_dtypes: list[Any]) -> Callable[[Any], Any]:
    index = ctx.attrs["index"]
    return lambda step: step.args[index]


_arg.bind = _bind_arg  # type: ignore[attr-defined]


def _retval(ctx: KernelContext, step: Any, value: Any) -> None:
    if ctx.attrs["T"] == dtypes.resource:  # a handle is device state, not a value
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, "Cannot fetch a resource handle: its value lives on "
            f"{ctx.device.name}; fetch a read of the variable instead")
    if type(value) is VariableRef:  # a fetched variable: read once the step has finished
        value = FetchedRef(value, ctx.node_name, ctx.device)
    else:
        value = ctx.device.to_host(value)
    step.retvals[ctx.attrs["index"]] = value


def _bind_retval(ctx: KernelContext,
                 input_dtypes: list[Any]) -> Callable[[Any, Any], None] | None:
    """`_retval` with its attrs read once (none for a resource: the kernel refuses it)."""
    if ctx.attrs["T"] == dtypes.resource:
        return None
    index, name, device, to_host = ctx.attrs["index"], ctx.node_name, ctx.device, \
        ctx.device.to_host

    def retval(step: Any, value: Any) -> None:
        step.retvals[index] = FetchedRef(value, name, device) if type(value) is VariableRef \
            else to_host(value)

    return retval


_retval.bind = _bind_retval  # type: ignore[attr-defined]


def _send(ctx: KernelContext, step: Any, value: Any) -> None:
    step.rendezvous.send(transfer_key(ctx), value)


def _recv(ctx: KernelContext, step: Any, done: Any) -> None:
    key = transfer_key(ctx)

    def on_value(error: BaseException | None, value: Any) -> None:
        if error is not None:
            done(error)
            return
        src_type = ctx.attrs["send_device"].rsplit(":", 2)[-2]
        # Only CPU devices share memory: any other pair (GPU:0 -> GPU:1 too) needs a copy.
        if src_type != ctx.device.device_type or src_type != "CPU":
            try:
                value = step.copy_tensor(parse_key(key).src_device, ctx.device, value)
            except Exception as exc:  # reported as the Recv node's error
                done(errors.InternalError(None, None, f"copy for {key} failed: {exc!r}"))
                return
        done(value)

    step.rendezvous.recv_async(key, on_value)


@hookimpl
def tensorweave_register_kernels(registry: Any) -> None:
    registry.add("_Arg", ANY_DEVICE, _arg, needs_step=True)
    registry.add("_Retval", ANY_DEVICE, _retval, needs_step=True)
    registry.add("_Send", ANY_DEVICE, _send, needs_step=True)
    registry.add("_Recv", ANY_DEVICE, _recv, needs_step=True, is_async=True)
