"""`FtrlOptimizer`: Follow-The-Regularized-Leader, as ``tf.compat.v1.train.FtrlOptimizer``.

Contract: two slots per variable, ``accum`` (starting at `initial_accumulator_value`) and
``linear`` (zeros); one step with gradient ``g`` (``g_s = g + 2 * l2_shrinkage * var``) is TF's
``ApplyFtrlV2`` (``ApplyFtrl`` when the shrinkage is 0)::

    new_accum = accum + g**2
    linear += g_s - (new_accum**-p - accum**-p) / lr * var          # p = learning_rate_power
    quadratic = new_accum**-p / lr + 2 * l2
    var = (sign(linear) * l1 - linear) / quadratic if |linear| > l1 else 0
    accum = new_accum

An `IndexedSlices` gradient applies the same rule to its (deduplicated) rows only, as
``SparseApplyFtrl`` (``V2``). The update is TF's fused kernel, which changes the variable and
its slots in place.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import init_ops
from tensorweave.api.indexed_slices import IndexedSlices
from tensorweave.api.variables import Variable
from tensorweave.engine.graph.graph import Tensor
from tensorweave.train.optimizers import Optimizer

__all__ = ["FtrlOptimizer"]


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal; see the module docstring."""

    def __init__(self, learning_rate: Any, learning_rate_power: float = -0.5,
                 initial_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False,
                 name: str = "Ftrl", accum_name: str | None = None,
                 linear_name: str | None = None,
                 l2_shrinkage_regularization_strength: float = 0.0) -> None:
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs to "
                             "be be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} needs to be negative "
                             "or zero")
        for what, value in (("l1_regularization_strength", l1_regularization_strength),
                            ("l2_regularization_strength", l2_regularization_strength),
                            ("l2_shrinkage_regularization_strength",
                             l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"{what} {value} needs to be positive or zero")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name

    def _hyper_args(self) -> dict[str, Any]:
        return {"learning_rate": self._learning_rate,
                "learning_rate_power": self._learning_rate_power,
                "l1": self._l1, "l2": self._l2, "l2_shrinkage": self._l2_shrinkage}

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._slot(v, "accum", init_ops.constant_initializer(
                self._initial_accumulator_value))
            self._slot(v, "linear")

    def _update(self, op: str, var: Variable, grad: Tensor, indices: Tensor | None) -> Any:
        """The fused update: ``ApplyFtrl`` when the shrinkage is 0, else ``ApplyFtrlV2``, as
        TF; ``SparseApply*`` with `indices`."""
        dtype = var.dtype
        scalars = [self._param(n, dtype) for n in ("learning_rate", "l1", "l2")]
        if self._l2_shrinkage > 0.0:
            op += "V2"
            scalars.append(self._param("l2_shrinkage", dtype))
        scalars.append(self._param("learning_rate_power", dtype))
        refs = [var._ref(), self.get_slot(var, "accum")._ref(),
                self.get_slot(var, "linear")._ref()]
        grads = [grad] if indices is None else [grad, indices]
        return self._fused(op, var, refs + grads + scalars, self._attrs())

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        return self._update("ApplyFtrl", var, grad, None)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        return self._update("SparseApplyFtrl", var, grad.values, grad.indices)
