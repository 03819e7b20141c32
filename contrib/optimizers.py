"""``tf.contrib.layers.optimize_loss``: a training op from a loss in one call.

Contract: under the variable scope ``<name or "OptimizeLoss">``, the loss first waits on
`update_ops` (``UPDATE_OPS`` by default); a float learning rate becomes the non-trainable
variable ``learning_rate`` (a scalar tensor is used as given), passed through
`learning_rate_decay_fn(lr, global_step)` if given. The optimizer is a name from
`OPTIMIZER_CLS_NAMES`, an `Optimizer` subclass or instance, or a callable returning one (called
with the learning rate, or with nothing when there is none). Gradients of `variables` (all
trainable ones by default) get truncated-normal noise times `gradient_noise_scale`, then
`gradient_multipliers` (by variable or name), then clipping (a float: by global norm; a
callable: applied to the ``(gradient, variable)`` list); `summaries` picks the summaries of
`OPTIMIZER_SUMMARIES` (loss, learning rate and global gradient norm by default). The result is
the loss, computed after the update (which increments `global_step` when
`increment_global_step`). Errors are TF's `ValueError`s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, init_ops, math_ops, random_ops, summary_ops
from tensorweave.api.control_flow_ops import identity
from tensorweave.api.indexed_slices import IndexedSlices
from tensorweave.api.scopes import control_dependencies
from tensorweave.api.variable_scope import get_variable, variable_scope
from tensorweave.api.variables import trainable_variables
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Tensor, get_default_graph
from tensorweave.train.ftrl import FtrlOptimizer
from tensorweave.train.optimizers import (
    AdagradOptimizer,
    AdamOptimizer,
    GradientDescentOptimizer,
    MomentumOptimizer,
    Optimizer,
    RMSPropOptimizer,
)
from tensorweave.train.training_util import _check as _check_global_step
from tensorweave.train.training_util import get_global_step

__all__ = ["OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES", "optimize_loss"]

OPTIMIZER_CLS_NAMES: dict[str, Callable[..., Optimizer]] = {
    "Adagrad": AdagradOptimizer,
    "Adam": AdamOptimizer,
    "Ftrl": FtrlOptimizer,
    "Momentum": lambda learning_rate: MomentumOptimizer(learning_rate, momentum=0.9),
    "RMSProp": RMSPropOptimizer,
    "SGD": GradientDescentOptimizer,
}
OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm",
                       "global_gradient_norm"]

Pairs = list[tuple[Any, Any]]


def _learning_rate(learning_rate: Any) -> Any:
    if learning_rate is None:
        return None
    if isinstance(learning_rate, Tensor) and learning_rate.shape.ndims == 0:
        return learning_rate
    if isinstance(learning_rate, float):
        if learning_rate < 0.0:
            raise ValueError(f"Invalid learning_rate {learning_rate}.")
        return get_variable("learning_rate", [], trainable=False,
                            initializer=init_ops.constant_initializer(learning_rate))
    raise ValueError(f"Learning rate should be 0d Tensor or float. Got {learning_rate} of type "
                     f"{type(learning_rate)}")


def _optimizer(optimizer: Any, lr: Any, has_learning_rate: bool) -> Optimizer:
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError("Learning rate is None, but should be specified if optimizer is "
                             f"string ({optimizer}).")
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}"
                             f"], you provided {optimizer}.")
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, Optimizer):
        if lr is None:
            raise ValueError("Learning rate is None, but should be specified if optimizer is "
                             f"class ({optimizer}).")
        return optimizer(learning_rate=lr)
    if isinstance(optimizer, Optimizer):
        return optimizer
    if callable(optimizer):
        made = optimizer(lr) if has_learning_rate else optimizer()
        if not isinstance(made, Optimizer):
            raise ValueError(f"Unrecognized optimizer: function should return subclass of "
                             f"Optimizer. Got {made}.")
        return made
    raise ValueError("Unrecognized optimizer: should be string, subclass of Optimizer, instance "
                     f"of subclass of Optimizer or function with one argument. Got {optimizer}.")


def _scaled(gradient: Any, factor: Callable[[Tensor], Tensor]) -> Any:
    """`gradient` (dense or `IndexedSlices`) with `factor` applied to its values."""
    if isinstance(gradient, IndexedSlices):
        return IndexedSlices(factor(gradient.values), gradient.indices, gradient.dense_shape)
    return factor(gradient)


def _add_noise(pairs: Pairs, scale: float) -> Pairs:
    """Each gradient plus truncated-normal noise times `scale` (sparse ones made dense)."""
    def noisy(gradient: Any) -> Tensor:
        dense = convert_to_tensor(gradient)
        return dense + random_ops.truncated_normal(array_ops.shape(dense),
                                                   dtype=dense.dtype) * scale

    return [(None if g is None else noisy(g), v) for g, v in pairs]


def _multiply(pairs: Pairs, multipliers: dict[Any, float]) -> Pairs:
    def multiplier(variable: Any) -> Any:
        for key, value in multipliers.items():
            if key is variable or (isinstance(key, str) and key == variable.name):
                return value
        return None

    out = []
    for g, v in pairs:
        m = multiplier(v)
        if g is not None and m is not None:
            g = _scaled(g, lambda x, m=m: x * math_ops.cast(m, x.dtype))
        out.append((g, v))
    return out


def _gradient_values(pairs: Pairs) -> list[Any]:
    return [g.values if isinstance(g, IndexedSlices) else g for g, _ in pairs]


def _summaries(summaries: list[str] | None) -> list[str]:
    if summaries is None:
        return ["loss", "learning_rate", "global_gradient_norm"]
    for summary in summaries:
        if summary not in OPTIMIZER_SUMMARIES:
            raise ValueError(f"Summaries should be one of [{', '.join(OPTIMIZER_SUMMARIES)}], "
                             f"you provided {summary}.")
    return list(summaries)


def optimize_loss(loss: Any, global_step: Any, learning_rate: Any, optimizer: Any,
                  gradient_noise_scale: float | None = None,
                  gradient_multipliers: dict[Any, float] | None = None,
                  clip_gradients: Any = None,
                  learning_rate_decay_fn: Callable[[Any, Any], Any] | None = None,
                  update_ops: Any = None, variables: list[Any] | None = None,
                  name: str | None = None, summaries: list[str] | None = None,
                  colocate_gradients_with_ops: bool = False,
                  increment_global_step: bool = True) -> Tensor:
    """The loss after one optimizer update; see the module docstring."""
    loss = convert_to_tensor(loss)
    if loss.shape.ndims not in (None, 0):
        raise ValueError(f"Expected scalar shape for {loss.name}, saw shape: {loss.shape}.")
    global_step = get_global_step() if global_step is None else _check_global_step(global_step)
    with variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = get_default_graph().get_collection(GraphKeys.UPDATE_OPS)
        if update_ops:
            with control_dependencies(list(update_ops)):
                loss = identity(loss)
        lr = _learning_rate(learning_rate)
        summaries = _summaries(summaries)
        if learning_rate is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
            if "learning_rate" in summaries:
                summary_ops.scalar("learning_rate", lr)
        opt = _optimizer(optimizer, lr, learning_rate is not None)
        pairs = opt.compute_gradients(
            loss, trainable_variables() if variables is None else variables,
            colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gradient_noise_scale is not None:
            pairs = _add_noise(pairs, gradient_noise_scale)
        if gradient_multipliers is not None:
            pairs = _multiply(pairs, gradient_multipliers)
            if not pairs:
                raise ValueError("Empty list of (gradient, var) pairs encountered. This is most "
                                 "likely to be caused by an improper value of "
                                 "gradient_multipliers.")
        norms = "global_gradient_norm" in summaries or "gradient_norm" in summaries
        if norms:
            summary_ops.scalar("global_norm/gradient_norm",
                               math_ops.global_norm(_gradient_values(pairs)))
        if isinstance(clip_gradients, float):
            clipped, _ = math_ops.clip_by_global_norm([g for g, _ in pairs], clip_gradients)
            pairs = list(zip(clipped, [v for _, v in pairs]))
        elif callable(clip_gradients):
            pairs = clip_gradients(pairs)
        elif clip_gradients is not None:
            raise ValueError(f"Unknown type {type(clip_gradients)} for clip_gradients")
        if "loss" in summaries:
            summary_ops.scalar("loss", loss)
        for values, (_, variable) in zip(_gradient_values(pairs), pairs):
            if values is None:
                continue
            var_name = variable.name.replace(":", "_")
            if "gradients" in summaries:
                summary_ops.histogram(f"gradients/{var_name}", values)
            if "gradient_norm" in summaries:
                summary_ops.scalar(f"gradient_norm/{var_name}", math_ops.global_norm([values]))
        if clip_gradients is not None and norms:
            summary_ops.scalar("global_norm/clipped_gradient_norm",
                               math_ops.global_norm(_gradient_values(pairs)))
        update = opt.apply_gradients(
            pairs, global_step=global_step if increment_global_step else None, name="train")
        with control_dependencies([update]):
            return identity(loss)
