"""Warm-starting an `Estimator`'s model from another checkpoint, as
``tf.compat.v1.estimator.WarmStartSettings``.

Contract: `WarmStartSettings` names a checkpoint (a file, or a directory meaning its newest
checkpoint) and which variables take their initial value from it: a regular expression over the
trainable variables' names (default ``".*"``: every trainable variable), a list of them over all
global variables, a list of `Variable`s, or ``None`` (none). `var_name_to_prev_var_name` maps a
variable to another name in the checkpoint. `warm_start_scaffold` returns a scaffold whose
``init_fn`` (run only when the model is initialized, never when it is restored from its own
checkpoint) runs the original ``init_fn``, then assigns the saved values. A selected variable
missing from the checkpoint raises ``ValueError`` when the graph is built. Vocabulary remapping
(`var_name_to_vocab_info`) is not implemented and raises ``ValueError``.
"""

from __future__ import annotations

import os
from collections import namedtuple
from typing import Any

from tensorweave.api.variables import Variable
from tensorweave.engine.graph.graph import GraphKeys, get_default_graph
from tensorweave.train.checkpoint_management import latest_checkpoint, list_variables
from tensorweave.train.monitored_session import Scaffold
from tensorweave.train.saver import Saver

__all__ = ["WarmStartSettings"]


class WarmStartSettings(namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
        "var_name_to_prev_var_name"])):
    """Which checkpoint and variables to warm-start from; see the module docstring."""

    __slots__ = ()

    def __new__(cls, ckpt_to_initialize_from: str, vars_to_warm_start: Any = ".*",
                var_name_to_vocab_info: dict[str, Any] | None = None,
                var_name_to_prev_var_name: dict[str, str] | None = None) -> WarmStartSettings:
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        if var_name_to_vocab_info:
            raise ValueError("var_name_to_vocab_info is not supported: tensorweave does not "
                             "remap vocabularies when warm-starting.")
        return super().__new__(cls, os.fspath(ckpt_to_initialize_from), vars_to_warm_start,
                               {}, dict(var_name_to_prev_var_name or {}))


def warm_start_settings(warm_start_from: Any) -> WarmStartSettings | None:
    """The settings an `Estimator`'s `warm_start_from` argument stands for."""
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        return WarmStartSettings(ckpt_to_initialize_from=path)
    if isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    raise ValueError("warm_start_from must be a string or a WarmStartSettings, instead got "
                     f"{type(warm_start_from)}")


def _selected(vars_to_warm_start: Any) -> list[Variable]:
    graph = get_default_graph()
    if vars_to_warm_start is None:
        return []
    if isinstance(vars_to_warm_start, str):
        return list(graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, vars_to_warm_start))
    if all(isinstance(v, str) for v in vars_to_warm_start):
        chosen: list[Variable] = []
        for pattern in vars_to_warm_start:
            chosen += [v for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES, pattern)
                       if v not in chosen]
        return chosen
    if all(isinstance(v, Variable) for v in vars_to_warm_start):
        return list(vars_to_warm_start)
    raise ValueError("If `vars_to_warm_start` is a list, it must be all `Variable` or all "
                     f"`str`.  Given types are {[type(v) for v in vars_to_warm_start]}")


def _checkpoint_path(ckpt: str) -> str:
    if os.path.isdir(ckpt):
        path = latest_checkpoint(ckpt)
        if path is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given "
                             f"directory {ckpt}")
        return path
    return ckpt


def warm_start_scaffold(scaffold: Scaffold, settings: WarmStartSettings | None) -> Scaffold:
    """`scaffold` with the warm start added to its ``init_fn``; see the module docstring."""
    if settings is None:
        return scaffold
    path = _checkpoint_path(settings.ckpt_to_initialize_from)
    saved = {name for name, _ in list_variables(path)}
    var_list: dict[str, Variable] = {}
    for var in _selected(settings.vars_to_warm_start):
        name = settings.var_name_to_prev_var_name.get(var.op.name, var.op.name)
        if name not in saved:
            raise ValueError(f"Tensor {name} is not found in {path} checkpoint")
        var_list[name] = var
    if not var_list:
        return scaffold
    saver = Saver(var_list=var_list, name="warm_start")
    original = scaffold.init_fn

    def init_fn(_: Scaffold, session: Any) -> None:
        if original is not None:
            original(session)
        saver.restore(session, path)

    return Scaffold(init_fn=init_fn, copy_from_scaffold=scaffold)
