"""``tw.keras.optimizers``: Keras's `SGD`, `Adam`, `RMSprop` and `Adagrad` with Keras's
argument names and defaults (``learning_rate``, ``lr`` as its old alias; epsilon 1e-7), as
``tw.train`` optimizers, and `get`, which resolves an optimizer given by name (``"adam"``), by
Keras optimizer or by any ``tw.train.Optimizer``.

The update rules are Keras's: SGD with momentum ``v = momentum * v - lr * g; var += v``
(``ApplyMomentum``), Adam as TF1's ``ApplyAdam``, RMSprop's ``rms`` accumulator starting at
zeros and, without momentum, ``var -= lr * g / (sqrt(rms) + epsilon)``, and Adagrad's
``var -= lr * g / (sqrt(accum) + epsilon)``.

A numeric learning rate lives in a non-trainable float variable, ``lr`` (alias
``learning_rate``), named ``<optimizer name>/learning_rate`` and created in the graph that first
reads it (the model's, when its train op is built), so callbacks change it between steps with
``backend.set_value`` as in TF 1.15; a tensor or callable rate is used as given. `get_config`
gives a Keras optimizer's constructor arguments and `get` also takes ``{"class_name",
"config"}``.
"""

from __future__ import annotations

import numbers
import weakref
from typing import Any

from tensorweave.api import math_ops, state_ops
from tensorweave.api.control_flow_ops import group
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Graph, Tensor, get_default_graph
from tensorweave.keras.serialization import serialize_arguments
from tensorweave.train import optimizers as tf_optimizers
from tensorweave.train.optimizers import Optimizer

__all__ = ["SGD", "Adagrad", "Adam", "Optimizer", "RMSprop", "get"]


def _rate(learning_rate: Any, kwargs: dict[str, Any]) -> Any:
    """`learning_rate`, or its deprecated alias ``lr``; other keyword arguments are refused as
    Keras refuses them."""
    rate = kwargs.pop("lr", learning_rate)
    for key in kwargs:
        if key not in ("clipnorm", "clipvalue", "decay"):
            raise TypeError(f"Unexpected keyword argument passed to optimizer: {key}")
        raise ValueError(f"tensorweave's Keras optimizers do not support `{key}`")
    return rate


class _RateVariable:
    """The learning rate as a variable per graph (see the module docstring), and the
    optimizer's configuration: its constructor's arguments."""

    _name: str

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        optimizer = super().__new__(cls)
        optimizer._init_arguments = (args, dict(kwargs))
        return optimizer

    def get_config(self) -> dict[str, Any]:
        args, kwargs = self._init_arguments
        return serialize_arguments(type(self).__init__, args, kwargs)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)

    def _keep_rate(self, rate: Any) -> Any:
        """What the ``tw.train`` optimizer gets as its rate: a callable reading `lr` for a
        number, else `rate` itself."""
        self._initial_rate = rate
        self._rate_variables: weakref.WeakKeyDictionary[Graph, Variable] = \
            weakref.WeakKeyDictionary()
        return (lambda: self.lr) if isinstance(rate, numbers.Real) else rate

    @property
    def lr(self) -> Any:
        if not isinstance(self._initial_rate, numbers.Real):
            return self._initial_rate
        graph = get_default_graph()
        variable = self._rate_variables.get(graph)
        if variable is None:
            with graph.control_dependencies(None), graph.name_scope(f"{self._name}/"):
                variable = Variable(float(self._initial_rate), trainable=False,
                                    name="learning_rate", dtype=dtypes.float32)
            self._rate_variables[graph] = variable
        return variable

    learning_rate = lr


class SGD(_RateVariable, tf_optimizers.MomentumOptimizer):
    """Gradient descent, with momentum (and Nesterov momentum) when `momentum` > 0."""

    def __init__(self, learning_rate: Any = 0.01, momentum: float = 0.0,
                 nesterov: bool = False, name: str = "SGD", **kwargs: Any) -> None:
        if momentum < 0 or momentum > 1:
            raise ValueError("`momentum` must be between [0, 1].")
        super().__init__(self._keep_rate(_rate(learning_rate, kwargs)), momentum, name=name,
                         use_nesterov=nesterov)

    def _create_slots(self, var_list: list[Variable]) -> None:
        if self._momentum:
            super()._create_slots(var_list)

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        if self._momentum:
            return super()._apply_dense(grad, var)
        return self._fused("ApplyGradientDescent",
                           var, [var._ref(), self._param("learning_rate", var.dtype), grad],
                           self._attrs())


class Adam(_RateVariable, tf_optimizers.AdamOptimizer):
    """Adam (Kingma & Ba) with TF's bias correction."""

    def __init__(self, learning_rate: Any = 0.001, beta_1: Any = 0.9, beta_2: Any = 0.999,
                 epsilon: Any = 1e-7, amsgrad: bool = False, name: str = "Adam",
                 **kwargs: Any) -> None:
        if amsgrad:
            raise ValueError("tensorweave's Keras Adam does not support amsgrad")
        super().__init__(self._keep_rate(_rate(learning_rate, kwargs)), beta_1, beta_2, epsilon,
                         name=name)


class RMSprop(_RateVariable, tf_optimizers.RMSPropOptimizer):
    """RMSprop with Keras's zero-initialized ``rms`` accumulator."""

    def __init__(self, learning_rate: Any = 0.001, rho: Any = 0.9, momentum: Any = 0.0,
                 epsilon: Any = 1e-7, centered: bool = False, name: str = "RMSprop",
                 **kwargs: Any) -> None:
        super().__init__(self._keep_rate(_rate(learning_rate, kwargs)), rho, momentum, epsilon,
                         centered=centered, name=name)

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._slot(v, "rms")
            if self._centered:
                self._slot(v, "mg")
            self._slot(v, "momentum")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        if self._momentum:
            return super()._apply_dense(grad, var)
        dtype = var.dtype
        lr, rho, epsilon = (self._param(k, dtype) for k in ("learning_rate", "decay", "epsilon"))
        rms = self.get_slot(var, "rms")
        rms_t = state_ops.assign(rms, rho * rms + (1.0 - rho) * math_ops.square(grad))
        denominator = rms_t
        if self._centered:
            mg = self.get_slot(var, "mg")
            mg_t = state_ops.assign(mg, rho * mg + (1.0 - rho) * grad)
            denominator = rms_t - math_ops.square(mg_t)
        return state_ops.assign_sub(var, lr * grad / (math_ops.sqrt(denominator) + epsilon))


class Adagrad(_RateVariable, tf_optimizers.AdagradOptimizer):
    """Adagrad: ``accum += g**2; var -= lr * g / (sqrt(accum) + epsilon)``."""

    def __init__(self, learning_rate: Any = 0.001, initial_accumulator_value: float = 0.1,
                 epsilon: Any = 1e-7, name: str = "Adagrad", **kwargs: Any) -> None:
        super().__init__(self._keep_rate(_rate(learning_rate, kwargs)),
                         initial_accumulator_value, name=name)
        self._epsilon = epsilon

    def _hyper_args(self) -> dict[str, Any]:
        return {"learning_rate": self._learning_rate, "epsilon": self._epsilon}

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        dtype = var.dtype
        lr, epsilon = self._param("learning_rate", dtype), self._param("epsilon", dtype)
        accum = state_ops.assign_add(self.get_slot(var, "accumulator"), math_ops.square(grad))
        return group(state_ops.assign_sub(var, lr * grad / (math_ops.sqrt(accum) + epsilon)))


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad}


def get(identifier: Any) -> Optimizer:
    """The optimizer `identifier` is, or a new one with Keras's defaults for a name
    (case-insensitive: ``"sgd"``, ``"adam"``, ``"rmsprop"``, ``"adagrad"``)."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(str(identifier.get("class_name")).lower())
        if cls is None:
            raise ValueError(f"Unknown optimizer: {identifier.get('class_name')}")
        return cls.from_config(identifier.get("config", {}))
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"Unknown optimizer: {identifier}")
        return cls()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")

