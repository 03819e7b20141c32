"""`AdadeltaOptimizer`, as ``tf.compat.v1.train.AdadeltaOptimizer`` (Zeiler, 2012).

Contract: two zero-initialized slots per variable, ``accum`` (running mean of squared
gradients) and ``accum_update`` (running mean of squared updates); one step with gradient ``g``
is TF's ``ApplyAdadelta``::

    accum = rho * accum + (1 - rho) * g**2
    update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * g     # the new accum
    accum_update = rho * accum_update + (1 - rho) * update**2
    var -= lr * update

An `IndexedSlices` gradient applies the same rule to its (deduplicated) rows only, as
``SparseApplyAdadelta``. The update is TF's fused kernel, which changes the variable and its
slots in place.
"""

from __future__ import annotations

from typing import Any

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

    def _update(self, op: str, var: Variable, grads: list[Tensor]) -> Any:
        refs = [var._ref()] + [self.get_slot(var, n)._ref() for n in ("accum", "accum_update")]
        scalars = [self._param(n, var.dtype) for n in ("learning_rate", "rho", "epsilon")]
        return self._fused(op, var, refs + scalars + grads, self._attrs())

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        return self._update("ApplyAdadelta", var, [grad])

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        return self._update("SparseApplyAdadelta", var, [grad.values, grad.indices])
