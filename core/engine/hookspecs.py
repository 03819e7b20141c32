"""The hook specifications a tensorweave plugin can implement.

Every built-in (standard ops, CPU kernels, the GPU plugin, CSE, constant folding, the partitioner,
the gRPC transport) is a plugin registered through the ``tensorweave`` entry-point group, exactly
like a third party's. A plugin is any importable object (usually a module) with functions marked
``@tensorweave.hookimpl``.

Hooks are called when the registries are built (once per process, lazily, then frozen) or when a
session or server creates its devices -- never per node or per step.

Registration hooks receive a view bound to the calling plugin, so conflicts can name both
plugins. Conflicts are settled by an explicit ``priority`` (higher wins); equal priorities raise
`tensorweave.engine.registry.PluginConflictError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from tensorweave.engine.registry import (
        GradientRegistration,
        KernelRegistration,
        OpRegistration,
    )
    from tensorweave.engine.runtime.device import Device, TaskSpec

hookspec = pluggy.HookspecMarker("tensorweave")


# -- registries: called once per process when the registries are first needed ---------------


@hookspec
def tensorweave_register_ops(registry: OpRegistration) -> None:
    """Declare op types.

    :param registry: add `OpDef`s with ``registry.add(op_def, priority=0)`` or
        ``registry.op(name, inputs, infer, attrs={...}, stateful=False)``.

    Returns nothing. Each registered op becomes callable as ``tw.raw_ops.Name(...)``.

    Example::

        @tensorweave.hookimpl
        def tensorweave_register_ops(registry):
            registry.op("Square2", ["x:T"], infer=lambda ctx: [ctx.inputs[0]],
                        attrs={"T": REQUIRED})
    """


@hookspec
def tensorweave_register_kernels(registry: KernelRegistration) -> None:
    """Declare kernels: the implementation of an op on a device type.

    :param registry: ``registry.add(op, device_type, fn, dtypes=None, priority=0,
        is_async=False, needs_step=False, expensive=False)``. ``device_type`` is ``"CPU"``,
        ``"GPU"``, another plugin's device type, or ``"*"`` for device-agnostic kernels.

    Returns nothing. See `tensorweave.engine.kernel` for the calling convention of ``fn``.

    Example::

        @tensorweave.hookimpl
        def tensorweave_register_kernels(registry):
            registry.add("Square2", "CPU", lambda ctx, x: ctx.xp.square(x))
    """


@hookspec
def tensorweave_register_gradients(registry: GradientRegistration) -> None:
    """Declare gradient functions for op types.

    :param registry: ``registry.add(op_name, fn, priority=0)``; ``fn(op, *output_grads)``
        returns one gradient tensor (or ``None``) per input of ``op``, built with the graph API.
        ``registry.add(op_name, None)`` declares the op not differentiable: gradients stop
        there. An op on a gradient path with no registration at all raises `LookupError`.

    Returns nothing.

    Example::

        @tensorweave.hookimpl
        def tensorweave_register_gradients(registry):
            registry.add("Square2", lambda op, g: [2.0 * op.inputs[0] * g])
    """


# -- devices: called when a session or server creates the devices of its task ------------------


@hookspec
def tensorweave_devices(task: TaskSpec, config: Any) -> list[Device]:
    """The devices this plugin offers to one task.

    :param task: the task (job, replica, task index) the devices belong to.
    :param config: the `ConfigProto` of the session or server (``device_count`` etc.).

    Returns a list of `tensorweave.engine.runtime.device.Device` (empty when the plugin has
    none, e.g. the GPU plugin without CUDA). Results of all plugins are concatenated.

    Example::

        @tensorweave.hookimpl
        def tensorweave_devices(task, config):
            return [Device.create(task, "CPU", 0, xp=numpy)]
    """


@hookspec(firstresult=True)
def tensorweave_copy_tensor(src: Device, dst: Device, value: Any) -> Any:
    """Copy `value` (an array of ``src``'s array module) onto device ``dst``.

    firstresult: the first plugin that returns something other than ``None`` wins, so a plugin
    returns ``None`` for device pairs it does not handle. Used by in-process Send/Recv between
    devices of different kinds (e.g. CPU<->GPU, GPU<->GPU peer copies).

    Example::

        @tensorweave.hookimpl
        def tensorweave_copy_tensor(src, dst, value):
            if src.device_type == "CPU" and dst.device_type == "GPU":
                return cupy.asarray(value)
            return None
    """


# -- pipeline: called when the registries are built -------------------------------------------


@hookspec
def tensorweave_graph_passes() -> list[Any]:
    """Graph optimization passes this plugin provides.

    Returns a list of `tensorweave.engine.runtime.passes.Pass` (name, phase, order, run). Phases are
    ``"pre_placement"``, ``"post_placement"`` and ``"post_partition"``; within a phase passes run
    by ascending ``order``. A pass returns a new graph and must keep results identical.

    Example::

        @tensorweave.hookimpl
        def tensorweave_graph_passes():
            return [Pass("cse", "pre_placement", 10, run=eliminate_common_subexpressions)]
    """


@hookspec(firstresult=True)
def tensorweave_partitioner() -> Any:
    """The partitioner: splits a placed graph into per-device partitions.

    firstresult: the first plugin returning one wins (order plugins with ``tryfirst``).
    Returns a callable ``partition(graph_def, incarnations, location=None) -> dict[location,
    GraphDef]`` that splits by ``location(node.device)`` (the device by default) and inserts
    ``_Send``/``_Recv`` pairs on crossing edges (see `tensorweave.plugins.partitioner`).
    """


@hookspec
def tensorweave_transports() -> list[Any]:
    """Rendezvous transports this plugin provides, each with a ``scheme`` (``"grpc"``, ...).

    Two plugins providing the same scheme are settled by the transport's ``priority`` attribute,
    or fail with both plugin names.
    """


# -- introspection: called by ``tensorweave plugins`` ------------------------------------------


@hookspec
def tensorweave_plugin_status() -> str | None:
    """A one-line note for ``tensorweave plugins`` (e.g. why a GPU plugin registered no device).

    Returns the note, or ``None`` for nothing to say.
    """
