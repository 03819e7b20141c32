"""Optimizers, as ``tf.compat.v1.train``: `Optimizer` and its gradient-descent family.

Contract: ``minimize(loss, global_step, var_list)`` is `compute_gradients` (``tw.gradients`` of
the loss with respect to each trainable variable, as ``(grad, var)`` pairs) then
`apply_gradients`, which creates the slots, adds one fused update op (``ApplyAdam``, ...) per
variable with a gradient, named ``<Name>/update_<var>/...`` and colocated with the variable, groups
them in the op ``<Name>`` and, given a global step, increments it after the updates (the returned
op is then that increment). Slot variables (momentum accumulators, Adam moments, ...) are named
``<var>/<Name>`` (``_1``, ``_2`` for more), not trainable, and colocated with their variable, so
they live where the variable lives (a ps task in a cluster); Adam's ``beta1_power`` and
``beta2_power`` are colocated with the first variable by name. Update formulas are TF1's (see
`tensorweave.plugins.kernels.training`). Hyper-parameters may be numbers, tensors or callables
returning either; they are converted to each variable's dtype. A resource variable gets
resource slots and the ``Resource`` form of each fused update (``ResourceApplyAdam``, ...,
taking handles and returning nothing), and its composite updates are resource assignments.

Sparse gradients: an `IndexedSlices` gradient (a variable read by a gather or
``embedding_lookup``) updates only its rows, as TF1's ``_apply_sparse_duplicate_indices``:
repeated indices are summed first (``Unique`` + ``UnsortedSegmentSum``), then
`_apply_sparse` runs the ``SparseApply*`` op (Momentum, Adagrad, RMSProp), while
GradientDescent subtracts ``lr * values`` with ``ScatterSub`` directly and Adam is TF1's
composite (``m`` and ``v`` decay in every row, the gradient is scatter-added into the touched
rows, and the variable moves by ``lr_t * m / (sqrt(v) + epsilon)`` everywhere). A subclass that
redefines `_apply_dense` without redefining the sparse path gets the gradient densified and
applied by its `_apply_dense`, so its own rule holds. The slices' values and indices are what a
worker sends to the variable's ps.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable
from typing import Any

import attrs

from tensorweave.api import array_ops, init_ops, math_ops, resource_variable_ops, state_ops
from tensorweave.api.control_flow_ops import group
from tensorweave.api.gradients import gate, gradients
from tensorweave.api.indexed_slices import IndexedSlices, convert_to_tensor_or_indexed_slices
from tensorweave.api.variables import Variable, trainable_variables
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor, is_tensor_like
from tensorweave.engine.graph.graph import Graph, GraphKeys, Operation, Tensor
from tensorweave.engine.graph.op_builder import apply, make_op

__all__ = [
    "AdagradOptimizer", "AdamOptimizer", "GradientDescentOptimizer", "MomentumOptimizer",
    "Optimizer", "RMSPropOptimizer",
]

_FLOATS = (dtypes.float16, dtypes.float32, dtypes.float64)


def _deduplicate(grad: IndexedSlices) -> IndexedSlices:
    """`grad` with the rows of each repeated index summed into one (TF's
    ``_deduplicate_indexed_slices``)."""
    unique, positions = array_ops.unique(grad.indices)
    summed = array_ops.unsorted_segment_sum(grad.values, positions,
                                            array_ops.shape(unique)[0])
    return IndexedSlices(summed, unique, grad.dense_shape)


def _owner(cls: type, *names: str) -> type:
    """The most derived class of `cls`'s MRO that defines one of `names`."""
    return next(k for k in cls.__mro__ if any(n in vars(k) for n in names))


def _check_dtypes(tensors: Iterable[Any]) -> None:
    for t in tensors:
        if t.dtype not in _FLOATS:
            raise ValueError(f"Invalid type {t.dtype!r} for {t.name}, expected: "
                             f"{list(_FLOATS)}.")


class Optimizer(abc.ABC):
    """Base class: subclasses define `_apply_dense`, and `_apply_sparse` (or
    `_apply_sparse_duplicate_indices`), `_hyper_args`, `_create_slots` and `_finish` where they
    need them."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str) -> None:
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict[Variable, Variable]] = {}
        self._non_slots: dict[tuple[str, Graph], Variable] = {}
        self._hyper_tensors: dict[tuple[str, dtypes.DType], Tensor] = {}

    def get_name(self) -> str:
        return self._name

    # -- the public protocol ------------------------------------------------------------------

    def minimize(self, loss: Tensor, global_step: Any = None, var_list: Any = None,
                 gate_gradients: int = GATE_OP, aggregation_method: int | None = None,
                 colocate_gradients_with_ops: bool = False, name: str | None = None,
                 grad_loss: Tensor | None = None) -> Operation:
        """`compute_gradients` then `apply_gradients`; returns the training op."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if not any(g is not None for g, _ in grads_and_vars):
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {[str(v) for _, v in grads_and_vars]} "
                f"and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss: Tensor, var_list: Any = None,
                          gate_gradients: int = GATE_OP, aggregation_method: int | None = None,
                          colocate_gradients_with_ops: bool = False,
                          grad_loss: Tensor | None = None) -> list[tuple[Any, Any]]:
        """``(gradient, variable)`` pairs; the gradient is ``None`` where the loss does not
        depend on the variable, and an `IndexedSlices` where the loss reads it by a gather."""
        if gate_gradients not in (self.GATE_NONE, self.GATE_OP, self.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        loss = convert_to_tensor(loss)
        _check_dtypes([loss])
        if grad_loss is not None:
            _check_dtypes([convert_to_tensor(grad_loss)])
        with loss.graph.as_default():
            var_list = trainable_variables() if var_list is None else list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(loss, var_list, grad_ys=grad_loss,
                          gate_gradients=gate_gradients == self.GATE_OP,
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == self.GATE_GRAPH:
            grads = gate(grads)
        pairs = list(zip(grads, var_list))
        _check_dtypes(v for g, v in pairs if g is not None)
        return pairs

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Any]], global_step: Any = None,
                        name: str | None = None) -> Operation:
        """Apply the gradients; see the module docstring."""
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in pairs:
            if not isinstance(v, Variable):
                raise TypeError(f"Can not apply gradients to {v!r}: not a tf.Variable")
            if g is not None:
                try:
                    g = convert_to_tensor_or_indexed_slices(g)
                except (TypeError, ValueError) as exc:
                    raise TypeError(f"Gradient must be convertible to a Tensor or "
                                    f"IndexedSlices, or None: {g!r}") from exc
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[str(v) for _, v in converted]}.")
        graph = var_list[0].graph
        with graph.as_default():
            with graph.control_dependencies(None):  # slots are state, created unconditionally
                self._create_slots(var_list)
            with graph.name_scope(name or self._name) as scope:
                self._prepare({v.dtype for v in var_list})
                updates = []
                for grad, var in converted:
                    if grad is None:
                        continue
                    with graph.name_scope(f"update_{var.op.name}"), \
                            graph.colocate_with(var.op):
                        update = self._apply(grad, var)
                        if var.constraint is not None:  # TF1: project after the update
                            with graph.control_dependencies([update]):
                                update = var.assign(var.constraint(var))
                        updates.append(update)
                if global_step is None:
                    train_op = self._finish(updates, scope)
                else:
                    with graph.control_dependencies([self._finish(updates, "update")]), \
                            graph.colocate_with(global_step.op):
                        train_op = global_step.assign_add(1, name=scope, read_value=False) \
                            if isinstance(global_step, Variable) \
                            else apply("AssignAdd", [global_step, 1], name=scope).op
            collection = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if train_op not in collection:
                collection.append(train_op)
        return train_op

    def _apply(self, grad: Tensor | IndexedSlices, var: Variable) -> Any:
        if not isinstance(grad, IndexedSlices):
            return self._apply_dense(grad, var)
        cls = type(self)
        sparse = _owner(cls, "_apply_sparse", "_apply_sparse_duplicate_indices")
        if not issubclass(sparse, _owner(cls, "_apply_dense")):
            return self._apply_dense(convert_to_tensor(grad), var)
        return self._apply_sparse_duplicate_indices(grad, var)

    # -- slots --------------------------------------------------------------------------------

    def get_slot_names(self) -> list[str]:
        return sorted(self._slots)

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        return self._slots.get(name, {}).get(var)

    def variables(self) -> list[Variable]:
        """The slot and non-slot variables this optimizer created, sorted by name."""
        out = list(self._non_slots.values())
        out += [v for slots in self._slots.values() for v in slots.values()]
        return sorted(out, key=lambda v: v.name)

    def _slot(self, var: Variable, slot_name: str,
              initializer: init_ops.Initializer | None = None) -> Variable:
        """The slot `slot_name` of `var`, created (zeros by default) on first use."""
        slots = self._slots.setdefault(slot_name, {})
        if var in slots:
            return slots[var]
        shape = var.get_shape()
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot create slot '{slot_name}' for variable {var.name} of "
                             f"shape {shape}: its shape must be fully defined")
        init = initializer or init_ops.zeros_initializer()
        graph = var.graph
        is_resource = resource_variable_ops.is_resource_variable(var)  # slots follow their var
        with graph.name_scope(None):
            name = graph.unique_name(f"{var.op.name}/{self._name}", mark_as_used=False)
            with graph.colocate_with(var.op):
                slot = Variable(lambda: init(shape.as_list(), dtype=var.dtype), name=name,
                                trainable=False, use_resource=is_resource)
        info = getattr(var, "_save_slice_info", None)
        if info is not None:
            # A partitioned variable's slot is partitioned alike and checkpointed as TF does:
            # slices of "<full name>/<slot name>" (e.g. "w/Adam" for "w/part_0/Adam").
            slot._save_slice_info = attrs.evolve(
                info, full_name=f"{info.full_name}/{slot.op.name[len(var.op.name) + 1:]}")
        slots[var] = slot
        return slot

    def _non_slot(self, initial_value: float, name: str, colocate_with: Variable) -> Variable:
        key = (name, colocate_with.graph)
        variable = self._non_slots.get(key)
        if variable is None:
            with colocate_with.graph.colocate_with(colocate_with.op):
                variable = Variable(initial_value, name=name, trainable=False,
                                    dtype=colocate_with.dtype, use_resource=resource_variable_ops
                                    .is_resource_variable(colocate_with))
            self._non_slots[key] = variable
        return variable

    # -- hyper-parameters ---------------------------------------------------------------------

    def _prepare(self, var_dtypes: set[dtypes.DType]) -> None:
        """Hyper-parameter tensors (callables called now), one per variable dtype."""
        self._hyper_tensors = {}
        for name, value in self._hyper_args().items():
            value = value() if callable(value) else value
            tensor = convert_to_tensor(value) if is_tensor_like(value) else None
            for dtype in sorted(var_dtypes, key=lambda d: d.name):
                if tensor is None:
                    self._hyper_tensors[(name, dtype)] = convert_to_tensor(value, dtype, name)
                elif tensor.dtype == dtype:
                    self._hyper_tensors[(name, dtype)] = tensor
                else:
                    self._hyper_tensors[(name, dtype)] = math_ops.cast(tensor, dtype, name=name)

    def _hyper_args(self) -> dict[str, Any]:
        """Hyper-parameter name -> value (number, tensor or callable)."""
        return {}

    def _param(self, name: str, dtype: dtypes.DType) -> Tensor:
        return self._hyper_tensors[(name, dtype)]

    # -- what subclasses define -----------------------------------------------------------------

    def _create_slots(self, var_list: list[Variable]) -> None:  # noqa: B027 - optional hook
        """Create the slots of each variable (none by default)."""

    @abc.abstractmethod
    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        """The update of `var` by `grad` (an op or its output)."""

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Any:
        """The update of `var` by the rows of `grad`, repeated indices summed first."""
        return self._apply_sparse(_deduplicate(grad), var)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        """The update of `var` by the rows of `grad`, whose indices are unique."""
        raise NotImplementedError(f"{type(self).__name__} has no sparse update")

    def _finish(self, update_ops: list[Any], name_scope: str) -> Operation:
        return group(*update_ops, name=name_scope)

    def _fused(self, op_type: str, var: Variable, inputs: list[Any],
               attrs: dict[str, Any]) -> Tensor | Operation:
        """The fused update `op_type` (``ApplyAdam``, ...) of `var`: its output, or for a
        resource variable (whose ``_ref`` and its slots' are handles) the ``Resource`` op."""
        if resource_variable_ops.is_resource_variable(var):
            return make_op(f"Resource{op_type}", inputs, attrs)
        return apply(op_type, inputs, attrs)

    def _attrs(self, **extra: Any) -> dict[str, Any]:
        return {"use_locking": self._use_locking, **extra}


class GradientDescentOptimizer(Optimizer):
    """``var -= learning_rate * grad``."""

    def __init__(self, learning_rate: Any, use_locking: bool = False,
                 name: str = "GradientDescent") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _hyper_args(self) -> dict[str, Any]:
        return {"learning_rate": self._learning_rate}

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        return self._fused("ApplyGradientDescent", var,
                     [var._ref(), self._param("learning_rate", var.dtype), grad], self._attrs())

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Tensor:
        # ScatterSub sums repeated indices itself.
        delta = math_ops.multiply(grad.values, self._param("learning_rate", var.dtype))
        return state_ops.scatter_sub(var, grad.indices, delta, use_locking=self._use_locking)


class MomentumOptimizer(Optimizer):
    """``accum = momentum * accum + grad; var -= lr * accum`` (Nesterov:
    ``var -= lr * grad + lr * momentum * accum``)."""

    def __init__(self, learning_rate: Any, momentum: Any, use_locking: bool = False,
                 name: str = "Momentum", use_nesterov: bool = False) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _hyper_args(self) -> dict[str, Any]:
        return {"learning_rate": self._learning_rate, "momentum": self._momentum}

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._slot(v, "momentum")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        accum = self.get_slot(var, "momentum")
        return self._fused("ApplyMomentum", var,
                     [var._ref(), accum._ref(), self._param("learning_rate", var.dtype), grad,
                      self._param("momentum", var.dtype)],
                     self._attrs(use_nesterov=self._use_nesterov))

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        accum = self.get_slot(var, "momentum")
        return self._fused("SparseApplyMomentum", var,
                     [var._ref(), accum._ref(), self._param("learning_rate", var.dtype),
                      grad.values, grad.indices, self._param("momentum", var.dtype)],
                     self._attrs(use_nesterov=self._use_nesterov))


class AdamOptimizer(Optimizer):
    """Adam (Kingma & Ba), with TF1's bias correction through the ``beta1_power`` and
    ``beta2_power`` variables."""

    def __init__(self, learning_rate: Any = 0.001, beta1: Any = 0.9, beta2: Any = 0.999,
                 epsilon: Any = 1e-8, use_locking: bool = False, name: str = "Adam") -> None:
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _hyper_args(self) -> dict[str, Any]:
        return {"learning_rate": self._lr, "beta1": self._beta1, "beta2": self._beta2,
                "epsilon": self._epsilon}

    def _beta_accumulators(self, graph: Graph) -> tuple[Variable, Variable]:
        return self._non_slots[("beta1_power", graph)], self._non_slots[("beta2_power", graph)]

    def _create_slots(self, var_list: list[Variable]) -> None:
        first = min(var_list, key=lambda v: v.name)
        for name, value in (("beta1_power", self._beta1), ("beta2_power", self._beta2)):
            self._non_slot(value() if callable(value) else value, name, first)
        for v in var_list:
            self._slot(v, "m")
            self._slot(v, "v")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        beta1_power, beta2_power = self._beta_accumulators(var.graph)
        dtype = var.dtype
        powers = [p.value() if p.dtype == dtype else math_ops.cast(p.value(), dtype)
                  for p in (beta1_power, beta2_power)]
        return self._fused("ApplyAdam", var, [
            var._ref(), self.get_slot(var, "m")._ref(), self.get_slot(var, "v")._ref(),
            *powers, self._param("learning_rate", dtype), self._param("beta1", dtype),
            self._param("beta2", dtype), self._param("epsilon", dtype), grad,
        ], self._attrs())

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Operation:
        """TF1's sparse Adam: both moments decay in every row, the gradient lands in its rows,
        and the whole variable moves by the bias-corrected ratio."""
        dtype = var.dtype
        beta1_power, beta2_power = (p.value() if p.dtype == dtype
                                    else math_ops.cast(p.value(), dtype)
                                    for p in self._beta_accumulators(var.graph))
        beta1, beta2 = self._param("beta1", dtype), self._param("beta2", dtype)
        lr = self._param("learning_rate", dtype) * math_ops.sqrt(1.0 - beta2_power) \
            / (1.0 - beta1_power)
        moments = []
        for name, beta, rows in (("m", beta1, grad.values),
                                 ("v", beta2, math_ops.square(grad.values))):
            slot = self.get_slot(var, name)
            decayed = state_ops.assign(slot, slot * beta, use_locking=self._use_locking)
            with var.graph.control_dependencies([decayed]):
                moments.append(state_ops.scatter_add(slot, grad.indices, rows * (1.0 - beta),
                                                     use_locking=self._use_locking))
        m_t, v_t = moments
        step = lr * m_t / (math_ops.sqrt(v_t) + self._param("epsilon", dtype))
        update = state_ops.assign_sub(var, step, use_locking=self._use_locking)
        return group(update, m_t, v_t)

    def _finish(self, update_ops: list[Any], name_scope: str) -> Operation:
        graph = update_ops[0].graph
        beta1_power, beta2_power = self._beta_accumulators(graph)
        with graph.control_dependencies(update_ops), graph.colocate_with(beta1_power.op):
            updates = [
                power.assign(power * self._param(beta, power.dtype),
                             use_locking=self._use_locking)
                for power, beta in ((beta1_power, "beta1"), (beta2_power, "beta2"))
            ]
        return group(*update_ops, *updates, name=name_scope)


class AdagradOptimizer(Optimizer):
    """``accum += grad**2; var -= lr * grad / sqrt(accum)``."""

    def __init__(self, learning_rate: Any, initial_accumulator_value: float = 0.1,
                 use_locking: bool = False, name: str = "Adagrad") -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _hyper_args(self) -> dict[str, Any]:
        return {"learning_rate": self._learning_rate}

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._slot(v, "accumulator",
                       init_ops.constant_initializer(self._initial_accumulator_value))

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        return self._fused("ApplyAdagrad", var,
                           [var._ref(), self.get_slot(var, "accumulator")._ref(),
                            self._param("learning_rate", var.dtype), grad], self._attrs())

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        return self._fused("SparseApplyAdagrad", var,
                     [var._ref(), self.get_slot(var, "accumulator")._ref(),
                      self._param("learning_rate", var.dtype), grad.values, grad.indices],
                     self._attrs())


class RMSPropOptimizer(Optimizer):
    """RMSProp as TF1: ``ms = decay * ms + (1 - decay) * grad**2``, ``mom = momentum * mom +
    lr * grad / sqrt(ms + epsilon)``, ``var -= mom``; `centered` also tracks the mean gradient
    ``mg`` and divides by ``sqrt(ms - mg**2 + epsilon)``. The ``rms`` slot starts at ones."""

    def __init__(self, learning_rate: Any, decay: Any = 0.9, momentum: Any = 0.0,
                 epsilon: Any = 1e-10, use_locking: bool = False, centered: bool = False,
                 name: str = "RMSProp") -> None:
        super().__init__(use_locking, name)
        self._learning_rate, self._decay = learning_rate, decay
        self._momentum, self._epsilon = momentum, epsilon
        self._centered = centered

    def _hyper_args(self) -> dict[str, Any]:
        return {"learning_rate": self._learning_rate, "decay": self._decay,
                "momentum": self._momentum, "epsilon": self._epsilon}

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._slot(v, "rms", init_ops.ones_initializer())
            if self._centered:
                self._slot(v, "mg")
            self._slot(v, "momentum")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Tensor:
        dtype = var.dtype
        hyper = [self._param(k, dtype) for k in ("learning_rate", "decay", "momentum",
                                                  "epsilon")]
        refs = [self.get_slot(var, "rms")._ref(), self.get_slot(var, "momentum")._ref()]
        if self._centered:
            return self._fused("ApplyCenteredRMSProp", var,
                         [var._ref(), self.get_slot(var, "mg")._ref(), *refs, *hyper, grad],
                         self._attrs())
        return self._fused("ApplyRMSProp", var, [var._ref(), *refs, *hyper, grad],
                           self._attrs())

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Tensor:
        dtype = var.dtype
        hyper = [self._param(k, dtype) for k in ("learning_rate", "decay", "momentum",
                                                  "epsilon")]
        refs = [self.get_slot(var, "rms")._ref(), self.get_slot(var, "momentum")._ref()]
        if self._centered:
            refs.insert(0, self.get_slot(var, "mg")._ref())
        return self._fused("SparseApplyCenteredRMSProp" if self._centered
                           else "SparseApplyRMSProp", var,
                     [var._ref(), *refs, *hyper, grad.values, grad.indices], self._attrs())

