"""``tf.train.init_from_checkpoint`` and ``tf.train.load_checkpoint``: start variables from a
checkpoint without a `Saver`.

Contract: ``init_from_checkpoint(ckpt_dir_or_file, assignment_map)`` replaces the initializer of
the variables `assignment_map` names, so that running it (``global_variables_initializer``, or
``var.initializer``) assigns the checkpoint's value instead of the variable's own initial value.
Each key of `assignment_map` names a checkpoint tensor or, ending in ``/``, a checkpoint scope;
each value is a variable, a list of a partitioned variable's shards, a variable's full name in
the default graph's variable store (a partitioned variable's name stands for its
``name/part_<i>`` shards), or, for a scope key, a scope of the store (``'old/': 'new/'`` maps
``new/x`` to ``old/x``; ``'/'`` is the root on either side). A shard receives its slice of the
saved full tensor. TF's `ValueError`s: a tensor missing from the checkpoint, a shape mismatch,
and a scope key mapped to a name that is not a scope. Values are read from the checkpoint when
this function is called (TF reads them when the initializer runs) and held by the initializer
as constants colocated with their variable.

``load_checkpoint(ckpt_dir_or_file)`` is a `CheckpointReader` of the file, or of a directory's
newest checkpoint (`ValueError` when the directory has none).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from tensorweave.api.state_ops import assign
from tensorweave.api.variable_scope import _variable_store
from tensorweave.api.variables import Variable
from tensorweave.engine.graph.constant_op import constant
from tensorweave.train.checkpoint_management import _resolve
from tensorweave.train.checkpoint_reader import CheckpointReader

__all__ = ["init_from_checkpoint", "load_checkpoint"]

_log = logging.getLogger(__name__)


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A reader of the checkpoint `ckpt_dir_or_file` (a directory's newest one)."""
    return CheckpointReader(_resolve(ckpt_dir_or_file))


def _is_variable_or_shards(value: Any) -> bool:
    return isinstance(value, Variable) or (
        isinstance(value, (list, tuple)) and bool(value)
        and all(isinstance(v, Variable) for v in value))


def _shards_of(name: str, store: dict[str, Variable]) -> list[Variable] | None:
    """The shards ``name/part_0``, ``name/part_1``, ... of the store, or None if there are none."""
    shards = []
    while (shard := store.get(f"{name}/part_{len(shards)}")) is not None:
        shards.append(shard)
    return shards or None


def _lookup(name: str, store: dict[str, Variable]) -> Variable | list[Variable] | None:
    found = store.get(name)
    return found if found is not None else _shards_of(name, store)


def _set_initializer(var: Variable, value: np.ndarray) -> None:
    """Make `var`'s initializer assign `value`."""
    graph = var.graph
    with graph.as_default(), graph.name_scope(None), graph.control_dependencies(None), \
            graph.colocate_with(var.op):
        restored = constant(value.astype(var.dtype.base_dtype.as_numpy_dtype, copy=False),
                            name=f"{var.op.name}/checkpoint_initializer")
        var._initial_value = restored
        var._initializer_op = assign(var, restored, name=f"{var.op.name}/Assign_ckpt").op


def _initialize(target: Variable | list[Variable], reader: CheckpointReader,
                tensor_name: str) -> None:
    """Initialize `target` (a variable, or the shards of one) from the checkpoint tensor."""
    saved = reader.get_tensor(tensor_name)
    if isinstance(target, Variable):
        info = getattr(target, "_save_slice_info", None)
        if info is None:
            if not target.get_shape().is_compatible_with(saved.shape):
                raise ValueError(f"Shape of variable {target.name} ({target.get_shape()}) "
                                 f"doesn't match with shape of tensor {tensor_name} "
                                 f"({list(saved.shape)}) from checkpoint reader.")
            _set_initializer(target, saved)
            return
        target = [target]
    for shard in target:
        info = getattr(shard, "_save_slice_info", None)
        if info is None:
            raise ValueError(f"Slices must all be from the same partitioned variable: "
                             f"{shard.name} is not partitioned.")
        if list(saved.shape) != list(info.full_shape):
            raise ValueError(f"Shape of partitioned variable {info.full_name} "
                             f"({list(info.full_shape)}) doesn't match with shape of tensor "
                             f"{tensor_name} ({list(saved.shape)}) from checkpoint reader.")
        _set_initializer(shard, saved[info.slices])


def _target_name(target: Variable | list[Variable]) -> str:
    if isinstance(target, Variable):
        return target.name
    return ",".join(v.name for v in target)


def _scope_targets(scope: str, store: dict[str, Variable]
                   ) -> dict[str, Variable | list[Variable]]:
    """Name -> variable (or shards) of the store under `scope` ("" for all), a partitioned
    variable once under its full name, in name order."""
    targets: dict[str, Variable | list[Variable]] = {}
    for name in sorted(store):
        if scope and not name.startswith(scope + "/"):
            continue
        if "/part_" in name:
            targets.setdefault(name[:name.index("/part_")], []).append(store[name])
        else:
            targets[name] = store[name]
    return dict(sorted(targets.items()))


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: dict[str, Any]) -> None:
    """Initialize the variables of `assignment_map` from the checkpoint; see the module
    docstring."""
    reader = load_checkpoint(ckpt_dir_or_file)
    saved = reader.get_variable_to_shape_map()
    store = _variable_store().vars
    for tensor_name, current in sorted(assignment_map.items(), key=lambda kv: kv[0]):
        target = current if _is_variable_or_shards(current) else _lookup(current, store)
        if target is not None:
            if tensor_name not in saved:
                raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} "
                                 f"checkpoint {saved}")
            _initialize(target, reader, tensor_name)
            _log.debug("Initialize variable %s from checkpoint %s with %s",
                       _target_name(target), ckpt_dir_or_file, tensor_name)
            continue
        scope = current[:current.rindex("/")] if "/" in current else ""
        if not tensor_name.endswith("/"):
            raise ValueError(f"Assignment map with scope only name {scope} should map to scope "
                             f"only {tensor_name}. Should be 'scope/': 'other_scope/'.")
        for var_name, scoped in _scope_targets(scope, store).items():
            suffix = var_name[len(scope):]
            if current != "/":
                suffix = suffix[1:]
            full_tensor_name = suffix if tensor_name == "/" else tensor_name + suffix
            full_tensor_name = full_tensor_name.removesuffix("/")
            if full_tensor_name not in saved:
                raise ValueError(f"Tensor {full_tensor_name} ({var_name[len(scope) + 1:]} in "
                                 f"{tensor_name}) is not found in {ckpt_dir_or_file} checkpoint")
            _initialize(scoped, reader, full_tensor_name)
