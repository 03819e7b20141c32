"""The hook specifications a tensorweave plugin can implement.

Every built-in (standard ops, CPU kernels, the GPU plugin, CSE, constant folding, the partitioner,
the gRPC transport) is a plugin registered through the ``tensorweave`` entry-point group, exactly
like a third party's. A plugin is any importable object (usually a module) with functions marked
``@tensorweave.hookimpl``.

Each spec says where it is called. None runs per node or per step: the registration hooks run
once, when `plugin_manager.get_registries` first builds the registries; the devices hook when a
session or server creates its task's devices; the copy hook once per pair of devices in a worker
(its answer then serves every copy of that pair). A hook implementation whose name no spec here
has fails its plugin's load; a hook that raises leaves its plugin out (see `plugin_manager`).

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

    Called: once per process, when the registries are built (`plugin_manager`). Per step: no.

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

    Called: once per process, when the registries are built. Per step: no (the kernels are).

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

    Called: once per process, when the registries are built. Per step: no.

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

    Called: by `Worker` (`create_devices`) when a session, server or ``list_local_devices``
    creates a task's devices; also by ``tensorweave plugins``. Per step: no.

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

    Called: by `Worker.copy_tensor`, through the hook only for the first copy between a pair of
    devices; the implementation that answered it is then called directly for every later copy
    of that pair, so an implementation must answer a pair the same way every time (return
    ``None`` for a pair, always). Per step: its function is, once per crossing tensor; the hook
    machinery is not.

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

    Returns a list of `tensorweave.engine.runtime.passes.Pass` (name, phase, order, run,
    replaces). Phases are ``"pre_placement"``, ``"post_placement"`` and ``"post_partition"``;
    within a phase passes run by ascending ``order``. A pass returns a new graph and must keep
    results identical. A pass with ``replaces="cse"`` takes the place of the pass named ``cse``;
    two plugins claiming one place raise `PluginConflictError` naming both.

    Called: once per process, when the registries are built. Per step: no (a pass runs once per
    new (feeds, fetches, targets) signature, when the master compiles it).

    Example::

        @tensorweave.hookimpl
        def tensorweave_graph_passes():
            return [Pass("my_cse", "pre_placement", 10, run=my_cse, replaces="cse")]
    """


@hookspec(firstresult=True)
def tensorweave_partitioner() -> Any:
    """The partitioner: splits a placed graph into per-device partitions.

    firstresult: the first plugin returning one wins (order plugins with ``tryfirst``).
    Returns a callable ``partition(graph_def, incarnations, location=None) -> dict[location,
    GraphDef]`` that splits by ``location(node.device)`` (the device by default) and inserts
    ``_Send``/``_Recv`` pairs on crossing edges (see `tensorweave.plugins.partitioner`).

    Called: once per process, when the registries are built. Per step: no (the partitioner runs
    when a graph is registered on a worker).
    """


@hookspec
def tensorweave_transports() -> list[Any]:
    """Rendezvous transports this plugin provides, each with a ``scheme`` (``"grpc"``, ...).

    Two plugins providing the same scheme are settled by the transport's ``priority`` attribute,
    or fail with both plugin names. A transport offers ``connect_master(target, config)`` (a
    session's master, e.g. `tensorweave.engine.distributed.master_client.RemoteMaster` over a
    `tensorweave.engine.distributed.transport.Channel`) and ``create_server(cluster, job_name,
    task_index, config, options)``.

    Called: once per process, when the registries are built. Per step: no.
    """


# -- introspection: called by ``tensorweave plugins`` ------------------------------------------


@hookspec
def tensorweave_plugin_status() -> str | None:
    """A one-line note for ``tensorweave plugins`` (e.g. why a GPU plugin registered no device).

    Returns the note, or ``None`` for nothing to say.
    """
