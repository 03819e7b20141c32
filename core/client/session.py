"""`Session`: the client's handle on a master, as in ``tf.compat.v1.Session``.

Contract: ``Session(target="")`` runs a master and one local worker in this process, called
directly with no serialization; ``Session("grpc://host:port")`` reaches a remote master through
the transport registered for the scheme. `run` accepts any fetch structure (see `FetchMapper`),
feeds for any feedable tensor (values converted to the tensor's dtype, shapes checked against its
static shape, `ValueError` otherwise), and fills `RunMetadata` when asked. New graph ops are sent
to the master before each run (TF's ExtendSession). Errors are the typed `OpError`s; the session
stays usable after one.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave.client.config import (
    ConfigProto,
    DeviceStepStats,
    RunMetadata,
    RunOptions,
    StepStats,
)
from tensorweave.client.fetches import FetchMapper
from tensorweave.device_spec import DeviceSpec
from tensorweave.framework.graph import Graph, Tensor, get_default_graph
from tensorweave.plugin_manager import get_registries
from tensorweave.runtime.device import TaskSpec
from tensorweave.runtime.master import MasterSession
from tensorweave.runtime.worker import Worker

_default = threading.local()


def _session_stack() -> list[Session]:
    if not hasattr(_default, "stack"):
        _default.stack = []
    return _default.stack


def get_default_session() -> Session | None:
    stack = _session_stack()
    return stack[-1] if stack else None


def get_default_session_or_raise() -> Session:
    session = get_default_session()
    if session is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                         "registered. Use `with sess.as_default()` or pass an explicit session "
                         "to `eval(session=sess)`")
    return session


def local_master(config: ConfigProto) -> tuple[MasterSession, list[Worker]]:
    registries = get_registries()
    task = TaskSpec("localhost", 0, 0)
    worker = Worker(task, config, registries)
    master = MasterSession({task.name: worker}, DeviceSpec(job="localhost", replica=0, task=0),
                           config, registries)
    return master, [worker]


class Session:
    """A connection to a master, running steps of one graph."""

    def __init__(self, target: str = "", graph: Graph | None = None,
                 config: ConfigProto | None = None) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config or ConfigProto()
        self._target = target
        self._workers: list[Worker] = []
        if not target:
            self._master, self._workers = local_master(self._config)
        else:
            scheme = target.split("://", 1)[0] if "://" in target else "grpc"
            transport = get_registries().transports.get(scheme)
            if transport is None:
                raise ValueError(f"No transport registered for target '{target}' "
                                 f"(scheme '{scheme}'); is the plugin for it installed?")
            self._master = transport.connect_master(target, self._config)
        self._sent_ops = 0
        self._closed = False
        self._lock = threading.Lock()

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def sess_str(self) -> str:
        return self._target

    # -- running ------------------------------------------------------------------------------

    def _extend(self) -> None:
        ops = self._graph._ops
        if self._sent_ops < len(ops):
            with self._lock:
                new = ops[self._sent_ops:]
                self._master.extend([op.node_def for op in new])
                self._sent_ops += len(new)

    def _feeds(self, feed_dict: dict[Any, Any] | None) -> dict[str, np.ndarray]:
        feeds: dict[str, np.ndarray] = {}
        for key, value in (feed_dict or {}).items():
            tensor = self._feed_tensor(key)
            if isinstance(value, Tensor):
                raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable "
                                "feed values include Python scalars, strings, lists, numpy "
                                "ndarrays, or TensorHandles.")
            if isinstance(value, int) and not isinstance(value, bool) \
                    and tensor.dtype.is_integer \
                    and not tensor.dtype.min <= value <= tensor.dtype.max:
                raise TypeError(
                    f"Type of feed value {value} with type {type(value)} is not compatible with "
                    f"Tensor type {tensor.dtype.name}. Try explicitly setting the type of the "
                    "feed tensor to a larger type (e.g. int64).")
            try:
                array = np.asarray(value, dtype=tensor.dtype.np_type)
            except (TypeError, ValueError, OverflowError) as exc:
                raise ValueError(f"Cannot feed value {value!r} to Tensor '{tensor.name}' of "
                                 f"dtype {tensor.dtype.name}: {exc}") from None
            if not tensor.shape.is_compatible_with(array.shape):
                raise ValueError(
                    f"Cannot feed value of shape {array.shape} for Tensor '{tensor.name}', "
                    f"which has shape '{tensor.shape}'")
            feeds[tensor.name] = array
        return feeds

    def _feed_tensor(self, key: Any) -> Tensor:
        if hasattr(key, "_as_graph_element") and not isinstance(key, Tensor):
            key = key._as_graph_element()
        try:
            element = self._graph.as_graph_element(key, allow_operation=False)
        except (KeyError, ValueError, TypeError) as exc:  # TF reports all of them as TypeError
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {exc}") from None
        return element

    def run(self, fetches: Any, feed_dict: dict[Any, Any] | None = None,
            options: RunOptions | None = None, run_metadata: RunMetadata | None = None) -> Any:
        """Run the graph for `fetches`; see the module docstring."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        mapper = FetchMapper(self._graph, fetches)
        return self._run(mapper, self._feeds(feed_dict), options, run_metadata)

    def _run(self, mapper: FetchMapper, feeds: dict[str, np.ndarray],
             options: RunOptions | None, run_metadata: RunMetadata | None) -> Any:
        self._extend()
        trace = options is not None and options.trace_level > RunOptions.NO_TRACE
        timeout = options.timeout_in_ms / 1000.0 if options and options.timeout_in_ms > 0 \
            else None
        values, stats, compiled = self._master.run(feeds, mapper.tensor_names,
                                                   mapper.target_names, trace, timeout)
        if run_metadata is not None:
            if trace:
                run_metadata.step_stats = StepStats(
                    [DeviceStepStats(device, list(nodes)) for device, nodes in stats.items()])
            if options is not None and options.output_partition_graphs:
                run_metadata.partition_graphs = list(compiled.partitions)
            run_metadata.pass_records = list(compiled.records)
        return mapper.build([_as_fetched(v) for v in values])

    def make_callable(self, fetches: Any, feed_list: Sequence[Any] | None = None,
                      accept_options: bool = False) -> Callable[..., Any]:
        """A callable that runs `fetches`, taking the values of `feed_list` positionally."""
        mapper = FetchMapper(self._graph, fetches)
        feed_tensors = [self._feed_tensor(k) for k in feed_list or ()]

        def call(*args: Any, options: RunOptions | None = None,
                 run_metadata: RunMetadata | None = None) -> Any:
            if len(args) != len(feed_tensors):
                raise ValueError(f"Expected {len(feed_tensors)} feed values, got {len(args)}")
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            feeds = self._feeds(dict(zip(feed_tensors, args))) if feed_tensors else {}
            return self._run(mapper, feeds, options, run_metadata)

        return call

    # -- lifecycle ----------------------------------------------------------------------------

    def list_devices(self) -> list[Any]:
        return self._master.devices

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._master.close()
        for worker in self._workers:
            worker.close()

    @contextlib.contextmanager
    def as_default(self) -> Iterator[Session]:
        stack = _session_stack()
        stack.append(self)
        try:
            with self._graph.as_default():
                yield self
        finally:
            stack.remove(self)

    def __enter__(self) -> Session:
        self._context = self.as_default()
        self._context.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._context.__exit__(*exc)
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class InteractiveSession(Session):
    """A `Session` that installs itself as the default session on creation."""

    def __init__(self, target: str = "", graph: Graph | None = None,
                 config: ConfigProto | None = None) -> None:
        super().__init__(target, graph, config)
        self._context = self.as_default()
        self._context.__enter__()

    def close(self) -> None:
        if not self._closed and hasattr(self, "_context"):
            try:
                self._context.__exit__(None, None, None)
            except ValueError:
                pass
        super().close()


def _as_fetched(value: Any) -> Any:
    """Fetched values as TF returns them: numpy scalars for 0-d, writable arrays."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value[()]
        if not value.flags.writeable:
            return value.copy()
    return value
