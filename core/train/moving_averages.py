"""`ExponentialMovingAverage`: shadow variables tracking the moving averages of others, as
``tf.compat.v1.train.ExponentialMovingAverage``.

Contract: `apply(var_list)` creates, once per variable ``v``, a non-trainable shadow variable
``v/ExponentialMovingAverage`` (under the current variable scope, colocated with ``v``) starting
at ``v``'s initial value, adds ``v`` to ``MOVING_AVERAGE_VARIABLES``, and returns one op that
updates every shadow with ``shadow -= (1 - decay) * (shadow - v)``. With `num_updates`, the decay
is ``min(decay, (1 + num_updates) / (10 + num_updates))``. A tensor (not a variable) gets a shadow
starting at zero, debiased as in Adam when `zero_debias` is set. Only float variables are
accepted (`TypeError`). `variables_to_restore` maps checkpoint names to variables so a `Saver`
loads the averages into the variables themselves.

TF starts a shadow at ``v.initialized_value()`` (the current value when ``v`` is already
initialized); here it starts at ``v.initial_value``, which is the same when both initializers run
in one step, as with ``global_variables_initializer``.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import init_ops, math_ops, state_ops
from tensorweave.api.control_flow_ops import group
from tensorweave.api.variable_scope import get_variable, variable_scope
from tensorweave.api.variables import (
    Variable,
    global_variables,
    moving_average_variables,
    trainable_variables,
)
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Operation, Tensor, get_default_graph

__all__ = ["ExponentialMovingAverage"]

_FLOAT_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64)
_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def assign_moving_average(variable: Variable, value: Any, decay: Any, zero_debias: bool = True,
                          name: str | None = None) -> Tensor:
    """``variable -= (1 - decay) * (variable - value)`` (TF's ``assign_moving_average``), or
    with `zero_debias` the debiased average of a zero-initialized `variable`."""
    graph = get_default_graph()
    with graph.name_scope(name or "AssignMovingAvg") as scope, graph.colocate_with(variable.op):
        one_minus_decay = convert_to_tensor(1.0 - decay, name="decay")
        if one_minus_decay.dtype != variable.dtype:
            one_minus_decay = math_ops.cast(one_minus_decay, variable.dtype)
        if zero_debias:
            return _zero_debias(variable, value, one_minus_decay, scope)
        return state_ops.assign_sub(variable, (variable - value) * one_minus_decay,
                                    name=scope)


def _zero_debias(unbiased: Variable, value: Any, one_minus_decay: Tensor, scope: str) -> Tensor:
    """Track the biased average in ``<unbiased>/biased`` and the update count in
    ``<unbiased>/local_step``; `unbiased` gets ``biased / (1 - decay ** count)``."""
    with variable_scope(unbiased.op.name, values=[unbiased, value]):
        biased = get_variable("biased", shape=unbiased.get_shape(), dtype=unbiased.dtype,
                              initializer=init_ops.zeros_initializer(), trainable=False)
        local_step = get_variable("local_step", shape=[], dtype=unbiased.dtype,
                                  initializer=init_ops.zeros_initializer(), trainable=False)
    update_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
    update_local_step = state_ops.assign_add(local_step, 1.0)
    bias_factor = 1.0 - math_ops.pow(1.0 - one_minus_decay, update_local_step)
    return state_ops.assign(unbiased, update_biased / bias_factor, name=scope)


class ExponentialMovingAverage:
    """Maintains moving averages of variables; see the module docstring."""

    def __init__(self, decay: Any, num_updates: Any = None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage") -> None:
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[Any, Variable] = {}  # variable or tensor -> its shadow

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list: list[Any] | None = None) -> Operation:
        """Create the shadows not made yet; returns the op updating all of `var_list`'s."""
        if var_list is None:
            var_list = trainable_variables()
        graph = get_default_graph()
        zero_debiased: set[int] = set()
        for var in var_list:
            if var.dtype not in _FLOAT_DTYPES:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                continue
            # Shadows are built outside any control dependencies of the caller.
            with graph.control_dependencies(None):
                if isinstance(var, Variable):
                    average = self._create_shadow(var, colocate=True,
                                                  initializer=var.initial_value)
                    graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                else:
                    average = self._create_shadow(var, colocate=var.op.type in _VARIABLE_OPS,
                                                  initializer=init_ops.zeros_initializer(),
                                                  shape=var.get_shape(), dtype=var.dtype)
                    if self._zero_debias:
                        zero_debiased.add(id(average))
            self._averages[var] = average
        with graph.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32,
                                            name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = [assign_moving_average(self._averages[var], var, decay,
                                             zero_debias=id(self._averages[var]) in zero_debiased)
                       for var in var_list]
            return group(*updates, name=scope)

    def _create_shadow(self, primary: Any, colocate: bool, **kwargs: Any) -> Variable:
        """The shadow ``<primary>/<name>`` (made unique), like TF's slot variables."""
        graph = get_default_graph()
        with variable_scope(None, default_name=f"{primary.op.name}/{self._name}"), \
                graph.colocate_with(primary.op if colocate else None):
            return get_variable("", trainable=False, **kwargs)

    def average(self, var: Any) -> Variable | None:
        """The shadow of `var`, or ``None`` if `apply` did not make one."""
        return self._averages.get(var)

    def average_name(self, var: Any) -> str:
        """The op name of `var`'s shadow: the one `apply` made, or would make."""
        if var in self._averages:
            return self._averages[var].op.name
        return get_default_graph().unique_name(f"{var.op.name}/{self._name}",
                                               mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables: list[Any] | None = None
                             ) -> dict[str, Variable]:
        """Checkpoint name -> variable: the shadow's name for each variable with an average
        (default: trainable and ``MOVING_AVERAGE_VARIABLES``), the own name for the others."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        with_average = list(dict.fromkeys(moving_avg_variables))
        name_map = {self.average_name(v): v for v in with_average}
        names = {v.name for v in with_average}
        for v in global_variables():
            if v.name not in names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
