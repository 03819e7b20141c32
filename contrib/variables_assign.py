"""``tf.contrib.framework``'s variable-assignment helpers (also ``tf.contrib.slim``'s): set
variables from a checkpoint or from given values, as an op plus feed dict or as an ``init_fn``.

Contract: a `var_list` is a list of variables (looked up in the checkpoint by their op name)
or a dict ``checkpoint name -> variable``. `assign_from_checkpoint` reads the values now and
returns ``(assign_op, feed_dict)``; a name missing from the checkpoint raises ``ValueError``.
`assign_from_checkpoint_fn` returns ``fn(session)`` restoring through a `Saver` (None when
`ignore_missing_vars` leaves nothing to restore). `assign_from_values` maps variable op names to
values (``ValueError`` for a name that names no global variable).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorweave.api.control_flow_ops import group
from tensorweave.api.state_ops import assign, placeholder
from tensorweave.contrib.framework import get_variables
from tensorweave.train.checkpoint_reader import NewCheckpointReader
from tensorweave.train.saver import Saver

__all__ = [
    "assign_from_checkpoint", "assign_from_checkpoint_fn", "assign_from_values",
    "assign_from_values_fn",
]

_log = logging.getLogger(__name__)

Feeds = dict[Any, np.ndarray]


def _by_name(var_list: Any) -> dict[str, Any]:
    if isinstance(var_list, dict):
        return dict(var_list)
    return {var.op.name: var for var in var_list}


def _assign_fed(pairs: list[tuple[Any, Any]]) -> tuple[Any, Feeds]:
    """One op assigning each variable of `pairs` the value fed for it."""
    assigns, feeds = [], {}
    for var, value in pairs:
        value = np.asarray(value, dtype=var.dtype.base_dtype.as_numpy_dtype)
        fed = placeholder(var.dtype.base_dtype, var.shape, name=f"{var.op.name}/placeholder")
        assigns.append(assign(var, fed))
        feeds[fed] = value.reshape(var.shape.as_list())
    return group(*assigns, name="assign_op"), feeds


def assign_from_checkpoint(model_path: str, var_list: Any, ignore_missing_vars: bool = False
                           ) -> tuple[Any, Feeds]:
    """``(assign_op, feed_dict)`` that sets the variables of `var_list` to their values in the
    checkpoint `model_path`."""
    reader = NewCheckpointReader(model_path)
    pairs = []
    for name, var in _by_name(var_list).items():
        if not reader.has_tensor(name):
            if ignore_missing_vars:
                _log.warning("Variable %s missing in checkpoint %s", name, model_path)
                continue
            raise ValueError(f"Checkpoint is missing variable [{name}]")
        pairs.append((var, reader.get_tensor(name)))
    return _assign_fed(pairs)


def assign_from_checkpoint_fn(model_path: str, var_list: Any, ignore_missing_vars: bool = False,
                              reshape_variables: bool = False
                              ) -> Callable[[Any], None] | None:
    """``fn(session)`` restoring `var_list` from `model_path` (for ``init_fn``)."""
    if not var_list:
        raise ValueError("var_list cannot be empty")
    if ignore_missing_vars:
        reader = NewCheckpointReader(model_path)
        available = {}
        for name, var in _by_name(var_list).items():
            if reader.has_tensor(name):
                available[name] = var
            else:
                _log.warning("Variable %s missing in checkpoint %s", name, model_path)
        var_list = available
    if not var_list:
        _log.warning("No Variables to restore")
        return None
    saver = Saver(var_list, reshape=reshape_variables)

    def callback(session: Any) -> None:
        saver.restore(session, model_path)

    return callback


def assign_from_values(var_names_to_values: dict[str, Any]) -> tuple[Any, Feeds]:
    """``(assign_op, feed_dict)`` that sets each named global variable to its value."""
    pairs = []
    for name, value in var_names_to_values.items():
        found = [v for v in get_variables(name) if v.op.name == name]
        if not found:
            raise ValueError(f"Variable {name} wasn't found")
        if len(found) > 1:
            raise ValueError(f"Variable {name} doesn't uniquely identify a variable")
        pairs.append((found[0], value))
    return _assign_fed(pairs)


def assign_from_values_fn(var_names_to_values: dict[str, Any]) -> Callable[[Any], None]:
    """``fn(session)`` running `assign_from_values`' op."""
    assign_op, feed_dict = assign_from_values(var_names_to_values)

    def callback(session: Any) -> None:
        session.run(assign_op, feed_dict)

    return callback
