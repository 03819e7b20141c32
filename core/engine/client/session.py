"""`Session`: the client's handle on a master, as in ``tf.compat.v1.Session``.

Contract: ``Session(target="")`` runs a master and one local worker in this process, called
directly with no serialization; ``Session("grpc://host:port")`` reaches a remote master through
the transport registered for the scheme. `run` accepts any fetch structure (see `FetchMapper`),
feeds for any feedable tensor (values converted to the tensor's dtype, shapes checked against its
static shape, `ValueError` otherwise; a key of a type registered in `conversions`, such as the
library's `SparseTensor` and `RaggedTensor`, is fed as the component tensors its feed function
gives), and fills the caller's `RunMetadata` message in place when given one (its old contents
cleared, as TF's parse of the step's metadata replaces them). New graph ops are sent to the
master before each run (TF's ExtendSession). Errors are the typed `OpError`s; the session stays
usable after one.

Per step, the Python around the master is kept small: the `FetchMapper` of a fetch structure
made of tensors, operations, names and variables (in lists, tuples and dicts) is built once and
reused while the structure is the same, and each feed key is resolved to its tensor, dtype and
shape check once (`CACHE_ENTRIES`, 0 turns the caches off). A signature that has run once (the
same fetch structure and feed keys, on a local master, without options or metadata) is
resolved to its compiled step, as TF's callable handles are: later runs of it, and of a
`make_callable` callable, only convert the feeds, run that step and rebuild the fetches,
while the graph has not grown. A run that compiles (new ops, or a
new step signature) pauses Python's cyclic garbage collector (`PAUSE_GC_TO_COMPILE`): its full
collections walk every object of a large graph again and again while the pipeline allocates.

Exit never waits on a remote master: when the interpreter exits, the remote sessions still open
send their CloseSession all at once and are given `EXIT_CLOSE_SECONDS` in all, live masters or
dead. A session collected unclosed sends its CloseSession without waiting, and one collected
during interpreter shutdown sends nothing (no thread may start then; the master reclaims it).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import sys
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.client.config import ConfigProto, RunMetadata, RunOptions
from tensorweave.engine.client.conversions import conversion_of
from tensorweave.engine.client.error_origin import user_error
from tensorweave.engine.client.fetches import FetchMapper
from tensorweave.engine.client.partial_run import PartialRun
from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.engine.distributed.master_client import RemoteMaster
from tensorweave.engine.graph.graph import Graph, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.string_array import to_string_array
from tensorweave.engine.plugin_manager import get_registries
from tensorweave.engine.proto.run_metadata import fill_run_metadata
from tensorweave.engine.runtime.device import TaskSpec
from tensorweave.engine.runtime.master import MasterSession
from tensorweave.engine.runtime.worker import Worker

_default = threading.local()
CACHE_ENTRIES = 256  # fetch structures and feed keys remembered per session (0: none)
PAUSE_GC_TO_COMPILE = True
COLLECT_AFTER_PAUSE = 100_000  # new objects after which a compile's pause ends with a collection
EXIT_CLOSE_SECONDS = 0.5  # what exit gives all open remote sessions together to close
_open_remote: weakref.WeakSet[Session] = weakref.WeakSet()


@atexit.register
def _close_remote_sessions() -> None:
    """Close every remote session still open, concurrently, within `EXIT_CLOSE_SECONDS`."""
    sessions = [s for s in list(_open_remote) if not s._closed]
    closing = []
    for session in sessions:
        session._closed = True
        closing.append(session._master.start_close())
    deadline = time.monotonic() + EXIT_CLOSE_SECONDS
    for done in closing:
        done.wait(max(0.0, deadline - time.monotonic()))
    for session in sessions:
        session._master.close(timeout=0.0)


class _GcPause:
    """Pauses the cyclic garbage collector (process-wide) while any holder is inside; it is
    turned back on by the last one out, and only if it was on when the first came in."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._resume = False

    def __enter__(self) -> None:
        with self._lock:
            if self._holders == 0:
                self._resume = gc.isenabled()
                gc.disable()
            self._holders += 1

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self._resume:
                gc.enable()
                # Left to the collector, the objects the pause let pile up (a large graph's
                # plans) would be walked by its next collection, in a later step, and that
                # one would be a full collection (they grow the old generation by more than
                # its quarter): the compile pays for it instead.
                if gc.get_count()[0] >= COLLECT_AFTER_PAUSE:
                    gc.collect()


_gc_pause = _GcPause()


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
    # only this process's master calls the worker: no call can come for a step after its cleanup
    worker = Worker(task, config, registries, remembered_steps=0)
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
        if isinstance(self._master, RemoteMaster):
            _open_remote.add(self)
        self._lock = threading.Lock()
        self._mappers: dict[Any, FetchMapper] = {}
        self._feed_targets: dict[Any, _FeedTarget] = {}
        self._compiled: set[tuple[Any, ...]] = set()  # signatures run since the last extend
        self._partial_runs: dict[str, PartialRun] = {}
        # (fetch structure key, feed keys) -> its resolved step; None: it has none
        self._calls: dict[Any, _StepCall | None] = {}
        self._local = isinstance(self._master, MasterSession)

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self) -> Any:
        """The session's graph as a `GraphDef` (TF's ``Session.graph_def``)."""
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    # -- running ------------------------------------------------------------------------------

    def _extend(self) -> None:
        ops = self._graph._ops
        if self._sent_ops < len(ops):
            with self._lock:
                new = ops[self._sent_ops:]
                self._master.extend([op._engine_node_def for op in new])
                self._sent_ops += len(new)
                self._compiled.clear()
                self._calls.clear()  # all stale now: let their compiled steps go

    def _feeds(self, feed_dict: dict[Any, Any] | None) -> dict[str, np.ndarray]:
        feeds: dict[str, np.ndarray] = {}
        for key, value in (feed_dict or {}).items():
            conversion = conversion_of(key)
            if conversion is not None and conversion.feed is not None:
                feeds.update(self._feeds(dict(conversion.feed(key, value))))
                continue
            if isinstance(key, tuple):  # a nest of tensors (an LSTM state) fed a nest like it
                got = len(value) if isinstance(value, (tuple, list)) else 1
                if got != len(key):
                    raise ValueError(f"Could not flatten dictionary. Key had {len(key)} "
                                     f"elements, but value had {got} elements.")
                feeds.update(self._feeds(dict(zip(key, value))))
                continue
            target = self._feed_target(key)
            if target is not None:
                feeds[target.name] = target.convert(value)
            else:
                tensor = self._feed_tensor(key)
                feeds[tensor.name] = self._converted(tensor, value)
        return feeds

    def _feed_target(self, key: Any) -> _FeedTarget | None:
        """The resolved feed of a hashable key (a tensor, a name), cached; None otherwise."""
        try:
            target = self._feed_targets.get(key)
        except TypeError:  # an unhashable key: resolved (and refused) the slow way
            return None
        if target is None:
            if not CACHE_ENTRIES:
                return None
            if len(self._feed_targets) >= CACHE_ENTRIES:
                self._feed_targets.clear()
            target = self._feed_targets[key] = _FeedTarget(self, self._feed_tensor(key))
        return target

    def _converted(self, tensor: Tensor, value: Any) -> np.ndarray:
        """`value` as a feed of `tensor`, or the `TypeError`/`ValueError` TF raises."""
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
            array = to_string_array(value) if tensor.dtype.is_string \
                else np.asarray(value, dtype=tensor.dtype.np_type)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"Cannot feed value {value!r} to Tensor '{tensor.name}' of "
                             f"dtype {tensor.dtype.name}: {exc}") from None
        if not tensor.shape.is_compatible_with(array.shape):
            raise ValueError(
                f"Cannot feed value of shape {array.shape} for Tensor '{tensor.name}', "
                f"which has shape '{tensor.shape}'")
        return array

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
        key = None
        if options is None and run_metadata is None and self._local and CACHE_ENTRIES:
            fetch_key = structure_key(fetches)
            if fetch_key is not None:
                key = (fetch_key, tuple(feed_dict) if feed_dict else ())
                call = self._calls.get(key)
                if self._ready(call):
                    return self._call(call, feed_dict.values() if feed_dict else ())
        mapper = self._mapper(fetches)
        feeds = self._feeds(feed_dict)
        result = self._run(mapper, feeds, options, run_metadata)
        if key is not None:
            if len(self._calls) >= CACHE_ENTRIES:
                self._calls.clear()
            targets = [self._plain_feed_target(k) for k in feed_dict or ()]
            self._calls[key] = self._step_call(mapper, targets, feeds)
        return result

    def _plain_feed_target(self, key: Any) -> _FeedTarget | None:
        """The cached feed target of a key `_feeds` feeds as one tensor (not a composite or a
        nest), or None."""
        conversion = conversion_of(key)
        if (conversion is not None and conversion.feed is not None) or isinstance(key, tuple):
            return None
        return self._feed_target(key)

    def _step_call(self, mapper: FetchMapper, targets: Sequence[_FeedTarget | None],
                   feeds: dict[str, np.ndarray]) -> _StepCall | None:
        """The resolved step of a signature that has just run (a `_StepCall`), or None where
        its feeds are not one plain tensor per key each (a composite, a nest, a tensor fed
        twice) or the master has no step compiled for it."""
        if not self._local or any(t is None for t in targets) or len(feeds) != len(targets):
            return None
        sent = self._sent_ops  # (read first: the step found is of these ops, or of more)
        compiled = self._master.cached(list(feeds), mapper.tensor_names, mapper.target_names)
        if compiled is None:
            return None
        return _StepCall(mapper, list(targets), compiled, sent)

    def _ready(self, call: _StepCall | None) -> bool:
        """Whether `call` still runs this graph's step: no op added since it was resolved, and
        the master's compiled step still current."""
        return call is not None and call.ops == len(self._graph._ops) \
            and self._master.current(call.compiled)

    def _call(self, call: _StepCall, values: Iterable[Any]) -> Any:
        """One step of a resolved signature: `values` are its feeds' values in order. The same
        checks, errors and results as `_run`, with only the work that differs per step."""
        arrays = [target.convert(value) for target, value in zip(call.targets, values)]
        try:
            fetched, _ = self._master.run_compiled(call.compiled, arrays)
        except errors.OpError as exc:
            raise user_error(exc, self._graph).with_traceback(exc.__traceback__) from None
        return call.mapper.build([_as_fetched(v) for v in fetched])

    def _mapper(self, fetches: Any) -> FetchMapper:
        key = structure_key(fetches) if CACHE_ENTRIES else None
        if key is None:
            return FetchMapper(self._graph, fetches)
        mapper = self._mappers.get(key)
        if mapper is None:
            if len(self._mappers) >= CACHE_ENTRIES:
                self._mappers.clear()
            mapper = self._mappers[key] = FetchMapper(self._graph, fetches)
        return mapper

    def _run(self, mapper: FetchMapper, feeds: dict[str, np.ndarray],
             options: RunOptions | None, run_metadata: RunMetadata | None,
             done: Collection[str] = ()) -> Any:
        """One step; `done` names the ops a partial run already ran."""
        ran = sorted(done)
        signature = (tuple(feeds), tuple(mapper.tensor_names), tuple(mapper.target_names),
                     tuple(ran))
        if not PAUSE_GC_TO_COMPILE or (self._sent_ops == len(self._graph._ops)
                                       and signature in self._compiled):
            return self._step(mapper, feeds, options, run_metadata, ran)
        with _gc_pause:
            result = self._step(mapper, feeds, options, run_metadata, ran)
        if len(self._compiled) >= CACHE_ENTRIES:
            self._compiled.clear()
        self._compiled.add(signature)
        return result

    def _step(self, mapper: FetchMapper, feeds: dict[str, np.ndarray],
              options: RunOptions | None, run_metadata: RunMetadata | None,
              ran: list[str]) -> Any:
        self._extend()
        trace = options is not None and options.trace_level > RunOptions.NO_TRACE
        timeout = options.timeout_in_ms / 1000.0 if options and options.timeout_in_ms > 0 \
            else None
        try:
            values, stats, compiled = self._master.run(feeds, mapper.tensor_names,
                                                       mapper.target_names, trace, timeout,
                                                       ran=ran)
        except errors.OpError as exc:
            raise user_error(exc, self._graph).with_traceback(exc.__traceback__) from None
        if run_metadata is not None:
            partitions = compiled.partitions if options is not None \
                and options.output_partition_graphs else ()
            fill_run_metadata(run_metadata, stats if trace else {}, partitions, compiled.records)
        return mapper.build([_as_fetched(v) for v in values])

    def partial_run_setup(self, fetches: Any, feeds: Sequence[Any] | None = None) -> str:
        """Declare the fetches and feeds of a partial run; its handle (see `PartialRun`)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        mapper = FetchMapper(self._graph, fetches)
        feed_names = frozenset(self._feed_tensor(key).name for key in feeds or ())
        handle = f"{id(self):x};{len(self._partial_runs)}"
        self._partial_runs[handle] = PartialRun(
            frozenset(mapper.tensor_names) | frozenset(mapper.target_names), feed_names)
        return handle

    def partial_run(self, handle: str, fetches: Any,
                    feed_dict: dict[Any, Any] | None = None) -> Any:
        """Run more of the partial run `handle`: feed some of its feeds, fetch some of its
        fetches (see `PartialRun`)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        state = self._partial_runs.get(handle)
        if state is None:
            raise errors.InvalidArgumentError(
                None, None, "Must run 'setup' before performing partial runs!")
        mapper = self._mapper(fetches)
        feeds = self._feeds(feed_dict)
        names = [*mapper.tensor_names, *mapper.target_names]
        state.check(feeds, names)
        plan = state.plan(self._graph, feeds, names)
        # The step fetches the tensors plainly, with those later calls may need, so that their
        # values can be fed to later calls.
        fetched = [*mapper.tensor_names, *plan.keep]
        flat = self._mapper([self._graph.as_graph_element(n) for n in
                             [*mapper.tensor_names, *plan.keep, *mapper.target_names]])
        values = self._run(flat, {**state.values, **feeds}, None, None, done=state.ran)
        state.record(feeds, names, {name: np.asarray(value) for name, value in
                                    zip(fetched, values)}, plan)
        return mapper.build(values[:len(mapper.tensor_names)])

    def make_callable(self, fetches: Any, feed_list: Sequence[Any] | None = None,
                      accept_options: bool = False) -> Callable[..., Any]:
        """A callable that runs `fetches`, taking the values of `feed_list` positionally. Once
        it has run, a call without options runs the resolved step (`_call`) while the graph
        and its compiled step stay as they are."""
        mapper = FetchMapper(self._graph, fetches)
        keys = list(feed_list or ())
        feeders = [self._feeder(k) for k in keys]
        plain = [self._plain_feed_target(k) for k in keys]
        resolved: list[_StepCall | None] = [None]

        def call(*args: Any, options: RunOptions | None = None,
                 run_metadata: RunMetadata | None = None) -> Any:
            if len(args) != len(feeders):
                raise ValueError(f"Expected {len(feeders)} feed values, got {len(args)}")
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            fast = options is None and run_metadata is None
            if fast and self._ready(resolved[0]):
                return self._call(resolved[0], args)
            feeds: dict[str, np.ndarray] = {}
            for feeder, value in zip(feeders, args):
                feeds.update(feeder(value))
            result = self._run(mapper, feeds, options, run_metadata)
            if fast:
                resolved[0] = self._step_call(mapper, plain, feeds)
            return result

        return call

    def _feeder(self, key: Any) -> Callable[[Any], dict[str, np.ndarray]]:
        """The feeds of one value for `key`, checked as `run` checks them."""
        conversion = conversion_of(key)
        if conversion is not None and conversion.feed is not None:
            feed = conversion.feed
            return lambda value: self._feeds(dict(feed(key, value)))
        target = _FeedTarget(self, self._feed_tensor(key))
        return lambda value: {target.name: target.convert(value)}

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
        if sys.is_finalizing() or getattr(self, "_closed", True):
            return  # a thread started now never runs, and waiting on it hangs the exit
        try:
            if isinstance(self._master, RemoteMaster):
                self._closed = True
                self._master.start_close()
            else:
                self.close()
        except Exception:  # noqa: BLE001 - a collected session has no caller to tell
            pass


class InteractiveSession(Session):
    """A `Session` that installs itself as the default session on creation, until closed.
    As TF 1.15's, it makes its graph the default graph only when one is given explicitly:
    over the global default graph it is no graph context, so `reset_default_graph` still
    works while it is open."""

    def __init__(self, target: str = "", graph: Graph | None = None,
                 config: ConfigProto | None = None) -> None:
        super().__init__(target, graph, config)
        _session_stack().append(self)
        self._graph_context = graph.as_default() if graph is not None else None
        if self._graph_context is not None:
            self._graph_context.__enter__()

    def close(self) -> None:
        if not self._closed:
            # Interactive sessions need not nest: each leaves the stacks wherever it is.
            stack = _session_stack()
            if self in stack:
                stack.remove(self)
            if getattr(self, "_graph_context", None) is not None:
                with contextlib.suppress(ValueError):
                    self._graph_context.__exit__(None, None, None)
        super().close()


class _StepCall:
    """A step signature of a session resolved once: its fetch mapping, its feeds' targets in
    order and the master's compiled step, valid while the graph has `ops` ops and the step is
    `current` (TF's callable handle: `Session.run` with the same signature reaches it too)."""

    __slots__ = ("compiled", "mapper", "ops", "targets")

    def __init__(self, mapper: FetchMapper, targets: list[_FeedTarget], compiled: Any,
                 ops: int) -> None:
        self.mapper = mapper
        self.targets = targets
        self.compiled = compiled
        self.ops = ops


class _FeedTarget:
    """A feedable tensor, resolved once: converts a value with `Session._converted`'s rules,
    checking a fast path first (an array already of the dtype and a compatible shape)."""

    __slots__ = ("dims", "name", "np_type", "session", "tensor")

    def __init__(self, session: Session, tensor: Tensor) -> None:
        self.session = session
        self.tensor = tensor
        self.name = tensor.name
        self.np_type = np.dtype(tensor.dtype.np_type)
        dims = tensor.shape.dims
        self.dims = None if dims is None else tuple(dims)

    def convert(self, value: Any) -> np.ndarray:
        # (object arrays always take the slow path: their elements must be checked)
        kind = type(value)
        if kind is np.ndarray and value.dtype == self.np_type and value.dtype.kind != "O":
            dims, shape = self.dims, value.shape
            if dims is None or shape == dims or (len(shape) == len(dims) and all(
                    d is None or d == n for d, n in zip(dims, shape))):
                return value
        # a Python float fed to a float scalar: what the slow path makes of it, without checks
        # it would pass (an int takes the slow path, which checks its range)
        elif kind is float and self.np_type.kind == "f" and not self.dims:
            return np.asarray(value, dtype=self.np_type)
        return self.session._converted(self.tensor, value)


def structure_key(fetches: Any) -> Any:
    """A hashable key equal for equal fetch structures of graph elements (lists, tuples,
    namedtuples, dicts; tensors, operations, names, variables), or None for anything else."""
    kind = type(fetches)
    if kind is Tensor or kind is Operation:  # (the commonest fetch first; hashed by identity)
        return fetches
    if kind is list or kind is tuple or isinstance(fetches, tuple):
        keys = tuple(structure_key(f) for f in fetches)
        return None if None in keys else (kind, keys)
    if kind is dict:
        try:
            keys = tuple((k, structure_key(v)) for k, v in fetches.items())
            hash(keys)
        except TypeError:
            return None
        return None if any(k is None for _, k in keys) else (kind, keys)
    if kind is str or isinstance(fetches, (Tensor, Operation)) \
            or conversion_of(fetches) is not None or hasattr(fetches, "_as_graph_element"):
        try:
            hash(fetches)
        except TypeError:
            return None
        return fetches
    return None


def _as_fetched(value: Any) -> Any:
    """Fetched values as TF returns them: numpy scalars for 0-d, writable arrays."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value[()]
        if not value.flags.writeable:
            return value.copy()
    return value
