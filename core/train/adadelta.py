"""`AdadeltaOptimizer`, as ``tf.compat.v1.train.AdadeltaOptimizer`` (Zeiler, 2012).

Contract: two zero-initialized slots per variable, ``accum`` (running mean of squared
gradients) and ``accum_update`` (running mean of squared updates); one step with gradient ``g``
is TF's ``ApplyAdadelta``::

    accum = rho * accum + (1 - rho) * g**2
    update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * g     # the new accum
    accum_update = rho * accum_update + (1 - rho) * update**2
    var -= lr * update

An `IndexedSlices` gradient applies the same rule to its (deduplicated) rows only, as
``SparseApplyAdadelta``. The update is composed from graph ops (reads, then assigns): every read
of the step happens before any of its writes.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops, state_ops
from tensorweave.api.control_flow_ops import group
from tensorweave.api.indexed_slices import IndexedSlices
from tensorweave.api.variables import Variable
from tensorweave.engine.graph.graph import Tensor
from tensorweave.train.optimizers import Optimizer

__all__ = ["AdadeltaOptimizer"]


class AdadeltaOptimizer(Optimizer):
    """Adadelta; see the module docstring."""

    def __init__(self, learning_rate: Any = 0.001, rho: Any = 0.95, epsilon: Any = 1e-8,
                 use_locking: bool = False, name: str = "Adadelta") -> None:
        super().__init__(use_locking, name)
        self._learning_rate, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _hyper_args(self) -> dict[str, Any]:
        return {"learning_rate": self._learning_rate, "rho": self._rho,
                "epsilon": self._epsilon}

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._slot(v, "accum")
            self._slot(v, "accum_update")

    def _step(self, grad: Tensor, var: Tensor, accum: Tensor,
              accum_update: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The new ``(var, accum, accum_update)`` from their current values."""
        dtype = var.dtype
        lr, rho, eps = (self._param(n, dtype) for n in ("learning_rate", "rho", "epsilon"))
        new_accum = rho * accum + (1.0 - rho) * math_ops.square(grad)
        update = math_ops.sqrt(accum_update + eps) * math_ops.rsqrt(new_accum + eps) * grad
        new_accum_update = rho * accum_update + (1.0 - rho) * math_ops.square(update)
        return var - lr * update, new_accum, new_accum_update

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        slots = [self.get_slot(var, n) for n in ("accum", "accum_update")]
        values = self._step(grad, var.value(), *(s.value() for s in slots))
        with var.graph.control_dependencies(list(values)):
            return group(*(state_ops.assign(ref, value, use_locking=self._use_locking)
                           for ref, value in zip((var, *slots), values)))

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        refs = [var] + [self.get_slot(var, n) for n in ("accum", "accum_update")]
        rows = [array_ops.gather(v.value(), grad.indices) for v in refs]
        values = self._step(grad.values, *rows)
        with var.graph.control_dependencies(list(values)):
            return group(*(state_ops.scatter_update(ref, grad.indices, value,
                                                    use_locking=self._use_locking)
                           for ref, value in zip(refs, values)))
