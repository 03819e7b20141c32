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
``SparseApplyFtrl``. The update is composed from graph ops (reads, then assigns), not one fused
kernel: every read of the step happens before any of its writes.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, init_ops, math_ops, state_ops
from tensorweave.api.control_flow_ops import group
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

    def _step(self, grad: Tensor, var: Tensor, accum: Tensor,
              linear: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The new ``(var, accum, linear)`` from their current values."""
        dtype = var.dtype
        lr, l1, l2 = (self._param(n, dtype) for n in ("learning_rate", "l1", "l2"))
        neg_power = math_ops.negative(self._param("learning_rate_power", dtype))
        shrunk = grad + 2.0 * self._param("l2_shrinkage", dtype) * var
        new_accum = accum + math_ops.square(grad)
        new_scale = math_ops.pow(new_accum, neg_power)
        new_linear = linear + shrunk - (new_scale - math_ops.pow(accum, neg_power)) / lr * var
        quadratic = new_scale / lr + 2.0 * l2
        shrunk_var = (math_ops.sign(new_linear) * l1 - new_linear) / quadratic
        new_var = array_ops.where(math_ops.greater(math_ops.abs(new_linear), l1), shrunk_var,
                                  array_ops.zeros_like(shrunk_var))
        return new_var, new_accum, new_linear

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        values = self._step(grad, var.value(), accum.value(), linear.value())
        with var.graph.control_dependencies(list(values)):
            return group(*(state_ops.assign(ref, value, use_locking=self._use_locking)
                           for ref, value in zip((var, accum, linear), values)))

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        rows = [array_ops.gather(v.value(), grad.indices) for v in (var, accum, linear)]
        values = self._step(grad.values, *rows)
        with var.graph.control_dependencies(list(values)):
            return group(*(state_ops.scatter_update(ref, grad.indices, value,
                                                    use_locking=self._use_locking)
                           for ref, value in zip((var, accum, linear), values)))
