"""``tw.layers.Layer``: the base class of ``tf.compat.v1.layers``' layer objects and of the RNN
cells.

Contract: a layer owns one variable scope, opened by its first call: the `scope` argument of
that call if given, else the layer's ``_scope`` (what the functional layers pass: their `name`),
opened as it is; else, with ``_reuse`` (the functional layers' `reuse`), its base name, reused;
else its `name` or its class name in snake case (``dense``), made unique in the enclosing
variable scope (``dense_1``). Every later call, made
anywhere, re-enters that scope with ``reuse=True``, so a layer called twice shares its
variables. `build(input_shape)` runs once, inside the scope, before the first `call`;
`add_weight` (``add_variable``) gets a variable there through `get_variable`.

The variables got in the layer's scope during its calls (its own and its sub-layers') are
tracked, in order, as `trainable_weights` (``trainable_variables``) and
`non_trainable_weights`; `weights` (``variables``) is both. `losses` holds the regularization
losses its calls added to ``REGULARIZATION_LOSSES`` (weight regularizers when a variable is
created, activity regularizers per call) and `updates` the ops they added to ``UPDATE_OPS``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.scopes import name_scope
from tensorweave.api.variable_scope import VariableScope, get_variable, variable_scope
from tensorweave.api.variables import Variable
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Tensor, get_default_graph
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["Layer"]


def snake_case(name: str) -> str:
    """TF's layer base names: ``BasicLSTMCell`` -> ``basic_lstm_cell``."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and (name[i - 1].islower()
                                   or i + 1 < len(name) and name[i + 1].islower()):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


@contextlib.contextmanager
def _reentered(scope: VariableScope, **kwargs: Any) -> Iterator[VariableScope]:
    """Back into `scope` as TF's layers go: no new name scope, the ops in the name scope the
    variable scope was first opened with (``Conv/Conv2D``, not ``Conv/Conv/Conv2D``)."""
    with variable_scope(scope, auxiliary_name_scope=False, **kwargs) as captured:
        with name_scope(scope.original_name_scope or None):
            yield captured


class Layer:
    """A callable object with its own variables; see the module docstring. Subclasses define
    `build` and `call`."""

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        allowed = {"_scope", "_reuse", "input_shape", "batch_input_shape", "activity_regularizer"}
        unknown = set(kwargs) - allowed
        if unknown:
            raise TypeError(f"Keyword argument not understood: {sorted(unknown)[0]}")
        self.trainable = trainable
        self._base_name = name or snake_case(type(self).__name__)
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._given_scope = kwargs.get("_scope")
        self._reuse = kwargs.get("_reuse")
        self._activity_regularizer = kwargs.get("activity_regularizer")
        self._scope: VariableScope | None = None
        self._trainable_weights: list[Variable] = []
        self._non_trainable_weights: list[Variable] = []
        self._losses: list[Any] = []
        self._updates: list[Any] = []
        self.built = False

    # -- what a subclass defines ---------------------------------------------------------------

    def build(self, input_shape: Any) -> None:
        """Create the variables for inputs of `input_shape` (a `TensorShape`, or a nest of them
        for several inputs)."""
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """The layer's computation; by default the identity."""
        return inputs

    # -- calling -------------------------------------------------------------------------------

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """`call` on `inputs` in the layer's scope, building the layer first if needed.
        `scope` (a keyword) names the scope of the first call."""
        inputs = self._checked(inputs)
        with self._scoped(kwargs.pop("scope", None), inputs):
            if not self.built:
                if self._dtype is None:
                    self._dtype = convert_to_tensor(_flatten(inputs)[0]).dtype
                self.build(_shapes_of(inputs))
                self.built = True
            outputs = self.call(inputs, *args, **kwargs)
            if self._activity_regularizer is not None:
                _activity_loss(self._activity_regularizer, outputs)
            return outputs

    def apply(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return self(inputs, *args, **kwargs)

    def _checked(self, inputs: Any) -> Any:
        """`inputs` as the layer takes them, checked (TF's input spec); by default as given."""
        return inputs

    @contextlib.contextmanager
    def _scoped(self, scope: Any, inputs: Any) -> Iterator[None]:
        """The layer's variable scope (see the module docstring), recording the variables, losses
        and updates of the calls made in it."""
        graph = get_default_graph()
        losses = len(graph.get_collection(GraphKeys.REGULARIZATION_LOSSES))
        updates = len(graph.get_collection(GraphKeys.UPDATE_OPS))
        values = [t for t in _flatten(inputs) if hasattr(t, "graph")]
        if self._scope is not None:
            opened = _reentered(self._scope, reuse=True, values=values)
        elif isinstance(self._given_scope, VariableScope):
            opened = _reentered(self._given_scope, reuse=self._reuse,
                                custom_getter=self._track, values=values)
        elif self._reuse:
            opened = variable_scope(scope or self._given_scope or self._base_name,
                                    reuse=self._reuse, custom_getter=self._track, values=values)
        else:
            opened = variable_scope(scope or self._given_scope, default_name=self._base_name,
                                    custom_getter=self._track, values=values)
        with opened as captured:
            self._scope = captured
            yield
        self._losses.extend(graph.get_collection(GraphKeys.REGULARIZATION_LOSSES)[losses:])
        self._updates.extend(graph.get_collection(GraphKeys.UPDATE_OPS)[updates:])

    def _track(self, getter: Callable[..., Variable], name: str, *args: Any,
               **kwargs: Any) -> Variable:
        variable = getter(name, *args, **kwargs)
        if variable not in self.weights:
            weights = self._trainable_weights if variable.trainable else \
                self._non_trainable_weights
            weights.append(variable)
        return variable

    def add_weight(self, name: str, shape: Any, dtype: Any = None, initializer: Any = None,
                   regularizer: Any = None, trainable: bool | None = None,
                   constraint: Any = None, **kwargs: Any) -> Variable:
        """A variable of the layer's scope (see `get_variable`); trainable if the layer is,
        unless `trainable` says otherwise."""
        trainable = self.trainable if trainable is None else trainable and self.trainable
        return get_variable(name, shape=shape, dtype=dtype or self._dtype or dtypes.float32,
                            initializer=initializer, regularizer=regularizer,
                            trainable=trainable, constraint=constraint, **kwargs)

    add_variable = add_weight

    # -- properties ----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The last part of the layer's scope name once called, else its base name."""
        if self._scope is None:
            return self._base_name
        return self._scope.name.rsplit("/", 1)[-1]

    @property
    def scope_name(self) -> str:
        if self._scope is None:
            raise ValueError(f"No name available for layer scope because the layer "
                             f"\"{self._base_name}\" has not been used yet. The scope name is "
                             "determined the first time the layer instance is called.")
        return self._scope.name

    @property
    def dtype(self) -> dtypes.DType | None:
        return self._dtype

    @property
    def trainable_weights(self) -> list[Variable]:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list[Variable]:
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self) -> list[Variable]:
        return self.trainable_weights + self.non_trainable_weights

    @property
    def trainable_variables(self) -> list[Variable]:
        return self.trainable_weights

    @property
    def non_trainable_variables(self) -> list[Variable]:
        return self.non_trainable_weights

    @property
    def variables(self) -> list[Variable]:
        return self.weights

    @property
    def losses(self) -> list[Any]:
        return list(self._losses)

    @property
    def updates(self) -> list[Any]:
        return list(self._updates)

    def count_params(self) -> int:
        """The number of scalars in the layer's weights (all shapes must be known)."""
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on {self.name}, but the layer "
                             "isn't built.")
        return sum(int(v.shape.num_elements()) for v in self.weights)


def _activity_loss(regularizer: Any, outputs: Tensor) -> None:
    """TF's batch-size-agnostic activity regularization: ``regularizer(outputs) / batch``."""
    with name_scope("ActivityRegularizer"):
        loss = convert_to_tensor(regularizer(outputs))
        batch = math_ops.cast(array_ops.shape(outputs)[0], loss.dtype)
        get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES,
                                              math_ops.truediv(loss, batch))


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flatten(v)]
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _flatten(value[k])]
    return [value]


def _shapes_of(inputs: Any) -> Any:
    """The static shape of `inputs`, or a list of them for a list of inputs."""
    if isinstance(inputs, (list, tuple)):
        return [_shapes_of(x) for x in inputs]
    return TensorShape(convert_to_tensor(inputs).shape)
