"""`SyncReplicasOptimizer`: synchronous data-parallel training, as
``tf.compat.v1.train.SyncReplicasOptimizer``.

Contract: every worker builds the same graph and calls `apply_gradients(grads_and_vars,
global_step)` (or `minimize`). Each variable gets a `ConditionalAccumulator` on the variable's
device, shared by name (``<var name>/grad_accum``, e.g. ``w:0/grad_accum``, as in TF), and the
worker's train op applies its gradients there, stamped with the worker's local step (a local
variable, ``sync_rep_local_step``, on the worker), then waits for a token from the sync token
queue (``sync_token_q``, a FIFO queue of global steps on the global step's device) and sets its
local step to it. The chief runs one more op in a loop, from `get_chief_queue_runner`: take
the mean of `replicas_to_aggregate` gradients from every accumulator, apply them with the
wrapped optimizer, increment the global step, and push ``max(total_num_replicas,
replicas_to_aggregate)`` tokens of the new global step.
A gradient computed from a step older than the accumulator's global step is stale and dropped,
so a slow worker never moves the model backwards; the global step advances once per
aggregation, not once per worker step.

`make_session_run_hook(is_chief, num_tokens)` gives the hook that makes this run under a
`MonitoredTrainingSession`: after the session is created it sets the local step to the global
step, and on the chief also sets every accumulator's global step, enqueues the initial tokens
(`get_init_tokens_op`: by default `replicas_to_aggregate`, so the first steps of the workers do
not wait) and starts the chief queue runner's thread with the session's coordinator.

An `IndexedSlices` gradient (a variable read by a gather) goes to a
`SparseConditionalAccumulator` of the same shared name instead, as in TF, so the workers send
and the chief applies only the touched rows: each row aggregated is the mean over the gradients
that touched it. Unlike TF's (shape ``()``), that accumulator has the variable's shape, so the
aggregated slices keep the variable's dense shape and bad indices fail on the ps.

With `variable_averages` (an `ExponentialMovingAverage`), the chief's op also updates the
averages of `variables_to_average` after pushing the tokens.

As in TF, the chief's queue-runner thread waits in its take while no gradients come: a monitored
session closing on the chief waits `stop_grace_period_secs` for it, closes, and the thread then
ends with the session's error, raised in the thread because the coordinator was joined (TF logs
the same). Closing a remote session does not cancel the steps it has in flight, so on a cluster
the thread waits until the task running its take goes away.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from tensorweave.api.accumulators import (
    ConditionalAccumulator,
    ConditionalAccumulatorBase,
    SparseConditionalAccumulator,
)
from tensorweave.api.array_ops import fill
from tensorweave.api.control_flow_ops import group, no_op
from tensorweave.api.data_flow_ops import FIFOQueue
from tensorweave.api.indexed_slices import IndexedSlices
from tensorweave.api.state_ops import assign
from tensorweave.api.variables import Variable, global_variables, report_uninitialized_variables
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Operation, Tensor, get_default_graph
from tensorweave.train.monitored_session import _ready
from tensorweave.train.optimizers import Optimizer
from tensorweave.train.queue_runner import QueueRunner
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]

_log = logging.getLogger(__name__)


class SyncReplicasOptimizer(Optimizer):
    """Aggregates the gradients of `replicas_to_aggregate` worker steps and applies their mean
    with `opt` once; see the module docstring."""

    def __init__(self, opt: Optimizer, replicas_to_aggregate: int,
                 total_num_replicas: int | None = None, variable_averages: Any = None,
                 variables_to_average: Any = None, use_locking: bool = False,
                 name: str = "sync_replicas") -> None:
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        _log.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                  replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step: Any = None
        self._local_step: Variable | None = None
        self._sync_token_queue: FIFOQueue | None = None
        self._chief_queue_runner: QueueRunner | None = None
        self._accumulator_list: list[tuple[ConditionalAccumulatorBase, str]] = []
        self.local_step_init_op: Tensor | None = None
        self.chief_init_op: Operation | None = None
        self.ready_for_local_init_op: Tensor | None = None

    def compute_gradients(self, *args: Any, **kwargs: Any) -> list[tuple[Tensor | None, Any]]:
        """The wrapped optimizer's gradients (aggregation happens in `apply_gradients`)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Any]], global_step: Any = None,
                        name: str | None = None) -> Tensor:
        """The worker's train op: apply the gradients to the accumulators, then wait for a
        token and make it the local step. Builds the chief's ops on the way."""
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = get_default_graph()
        step_dtype = global_step.dtype.base_dtype

        # The local step lives on this worker: colocated with an op the device scope puts there.
        local_anchor = no_op()
        with graph.colocate_with(local_anchor):
            self._local_step = Variable(0, trainable=False, dtype=step_dtype,
                                        collections=[GraphKeys.LOCAL_VARIABLES],
                                        name="sync_rep_local_step")
        self.local_step_init_op = assign(self._local_step, global_step)
        chief_init_ops: list[Any] = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

        train_ops, aggregated, var_list = [], [], []
        with graph.name_scope(self._name):
            for grad, var in pairs:
                var_list.append(var)
                with graph.device(var.device):
                    if grad is None:
                        aggregated.append(None)  # passed on to the optimizer as it is
                        continue
                    accumulator: ConditionalAccumulatorBase
                    if isinstance(grad, IndexedSlices):
                        accumulator = SparseConditionalAccumulator(
                            grad.dtype, shape=var.get_shape(),
                            shared_name=f"{var.name}/grad_accum")
                        train_ops.append(accumulator.apply_indexed_slices_grad(
                            grad, local_step=self._local_step))
                        aggregated.append(accumulator.take_indexed_slices_grad(
                            self._replicas_to_aggregate))
                    else:
                        grad = convert_to_tensor(grad)
                        accumulator = ConditionalAccumulator(
                            grad.dtype, shape=var.get_shape(),
                            shared_name=f"{var.name}/grad_accum")
                        train_ops.append(accumulator.apply_grad(grad,
                                                                local_step=self._local_step))
                        aggregated.append(accumulator.take_grad(self._replicas_to_aggregate))
                    self._accumulator_list.append((accumulator, var.device))

            with graph.device(global_step.device), graph.name_scope(None):
                update_op = self._opt.apply_gradients(list(zip(aggregated, var_list)),
                                                      global_step)
                self._sync_token_queue = FIFOQueue(-1, step_dtype, shapes=(),
                                                   name="sync_token_q",
                                                   shared_name="sync_token_q")
                # The chief's queue runner needs a queue to close; the token queue must stay
                # open, as a runner never reopens a queue it closed on a ps task.
                dummy_queue = FIFOQueue(1, dtypes.int32, shapes=(), name="dummy_queue",
                                        shared_name="dummy_queue")
                # A worker waits for a token before it may start its next step.
                with graph.control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = assign(self._local_step, token)
                with graph.control_dependencies([update_op]):
                    tokens = fill([self._tokens_per_step], global_step)
                    sync_op: Any = self._sync_token_queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with graph.control_dependencies([sync_op]):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                self._chief_queue_runner = QueueRunner(dummy_queue, [sync_op])

            for accumulator, device in self._accumulator_list:
                with graph.device(device):
                    chief_init_ops.append(
                        accumulator.set_global_step(global_step, name="SetGlobalStep"))
            self.chief_init_op = group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def get_chief_queue_runner(self) -> QueueRunner:
        """The runner whose thread, on the chief, aggregates and applies the gradients."""
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        assert self._chief_queue_runner is not None
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens: int = -1) -> Operation:
        """An op that enqueues `num_tokens` tokens of the global step (-1:
        `replicas_to_aggregate`), letting the workers' first steps through."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) vs "
                             f"{tokens_needed} (needed)")
        graph = get_default_graph()
        if num_tokens <= 0:
            return no_op(name="no_init_tokens")
        assert self._sync_token_queue is not None
        with graph.device(self._global_step.device), graph.name_scope(None):
            tokens = fill([num_tokens], self._global_step)
            return self._sync_token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1) -> SessionRunHook:
        """The hook that initializes the local step (and, on the chief, the accumulators and
        tokens) and starts the chief queue runner."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    # -- the wrapped optimizer's state ------------------------------------------------------------

    def get_slot(self, *args: Any, **kwargs: Any) -> Variable | None:
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args: Any, **kwargs: Any) -> list[str]:
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self) -> list[Variable]:
        return self._opt.variables()

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        raise NotImplementedError("SyncReplicasOptimizer applies gradients through the "
                                  "optimizer it wraps")


class _SyncReplicasOptimizerHook(SessionRunHook):
    """Runs the optimizer's init ops once the session exists, and the chief's queue runner."""

    def __init__(self, sync_optimizer: SyncReplicasOptimizer, is_chief: bool,
                 num_tokens: int) -> None:
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens
        self._local_init_op: Any = None
        self._ready_for_local_init_op: Any = None
        self._q_runner: QueueRunner | None = None
        self._init_tokens_op: Operation | None = None

    def begin(self) -> None:
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op

    def after_create_session(self, session: Any, coord: Any) -> None:
        ready, msg = _ready(self._ready_for_local_init_op, session,
                            "Model is not ready for SyncReplicasOptimizer local init.")
        if not ready:
            raise RuntimeError("Init operations did not make model ready for "
                               f"SyncReplicasOptimizer local_init. Init op: "
                               f"{self._local_init_op.name}, error: {msg}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
