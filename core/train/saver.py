"""`Saver`: saving variables to checkpoints and restoring them, as ``tf.compat.v1.train.Saver``.

Contract: a `Saver` maps checkpoint keys to variables (default: every global variable, keyed by
its op name). `save` fetches all of them in one step and writes a checkpoint in TF's V2 format
(`tensorweave.formats.tensor_bundle`: ``<path>.index`` and ``<path>.data-00000-of-00001``; with
`sharded`, one data file per device of the saved variables, in device-name order, and one index,
as TF's merged sharded saves), each file under a temporary name renamed into place, so a crash
mid-save leaves the previous checkpoint intact (saving over the same prefix replaces its files
one by one: `tensorweave.formats.atomic_file`); temporary files that crashed saves left in the
directory are removed first. Then it updates the directory's ``checkpoint`` state file and
deletes the oldest checkpoints beyond `max_to_keep` (``None`` or 0 keeps all), except one per
`keep_checkpoint_every_n_hours`. The shards of a partitioned variable (those with a
``_save_slice_info``, their optimizer slots too) are saved as TF saves them: slices of the full
variable under its full name; each restores its slice, so a checkpoint restores into any
partitioning. With `write_meta_graph` (the default, as TF) it also writes the graph's meta graph
to ``<path>.meta`` (`tensorweave.train.meta_graph`), deleted with its checkpoint.

The saver builds TF 1.15's save and restore ops (`tensorweave.train.saver_graph`: ``save/Const``,
``save/SaveV2``, ``save/RestoreV2``, ``save/Assign*``, ``save/restore_all``; sharded,
``ShardedFilename`` and ``MergeV2Checkpoints``), which `as_saver_def` names, so any reader of
the meta graph (TF's ``import_meta_graph``) can save and restore with them. In a local session
`save` writes the same files from Python (atomically, see above); in a session on a server it
runs the save ops, so the files are written where TF writes them, by the server (whose
``--file-root`` confines them); `restore` runs ``restore_all`` with the prefix fed: each
``Assign`` is colocated with its variable, so variables on other devices or ps tasks are
restored where they live. Before it runs, a missing key raises `NotFoundError`, a dtype or
shape mismatch `InvalidArgumentError` (naming the variable); a path that is not a checkpoint
raises `ValueError`, as TF. ``Saver(saver_def=...)`` (what `import_meta_graph` returns) adopts
the ops a `SaverDef` names in the default graph instead: its `save` and `restore` run them.

Saveable objects (`tensorweave.train.saveable_object`: lookup tables, dataset iterators) are
saved alongside: ``var_list`` may hold them (in a list, or as dict values), and the default
list is the global variables plus the ``GraphKeys.SAVEABLE_OBJECTS`` collection, as TF. Each
of a saveable's `SaveSpec`s is one checkpoint tensor under the spec's name (string tensors are
stored as TF stores them); their tensors are made when the saver is built, as
is the saveable's restore op, fed the checkpoint's values by ``save/RestoreV2``.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from typing import Any

import attrs
import numpy as np

from tensorweave.api.state_ops import assign
from tensorweave.api.variables import Variable, global_variables
from tensorweave.engine import device_spec, dtypes, errors
from tensorweave.engine.graph.graph import GraphKeys, Operation, Tensor, get_default_graph
from tensorweave.formats import atomic_file, slice_spec
from tensorweave.formats.tensor_bundle import (
    BundleReader,
    SavedTensor,
    index_path,
    write_bundle,
)
from tensorweave.train.checkpoint_management import (
    CheckpointState,
    checkpoint_exists,
    get_checkpoint_state,
    latest_checkpoint,
    list_variables,
    load_variable,
    update_checkpoint_state,
)
from tensorweave.train.saveable_object import SaveableObject
from tensorweave.train.saver_graph import SaveItem, SaverGraph, build_saver_graph

__all__ = [
    "CheckpointState", "Saver", "checkpoint_exists", "get_checkpoint_state",
    "latest_checkpoint", "list_variables", "load_variable", "update_checkpoint_state",
]


def _var_dict(var_list: Any) -> tuple[dict[str, Variable], list[SaveableObject], dict[str, str]]:
    """Checkpoint key -> variable: `var_list` itself if a dict, else each variable's op name (a
    `PartitionedVariable` stands for its shards, keyed by their op names); the saveable
    objects of `var_list` (a dict's key for one is ignored: its specs name its keys); and, for
    the shards of a `PartitionedVariable` that is a dict's value, the dict's key, under which
    they are saved (as TF does) instead of the variable's full name."""
    items = list(var_list.items()) if isinstance(var_list, dict) else [(None, v) for v in var_list]
    expanded: list[tuple[str | None, Any]] = []
    renamed: dict[str, str] = {}
    for key, v in items:
        if hasattr(v, "_get_variable_list"):
            expanded += [(None, shard) for shard in v]
            renamed.update({shard.op.name: key for shard in v if key is not None})
        else:
            expanded.append((key, v))
    out: dict[str, Variable] = {}
    saveables: list[SaveableObject] = []
    for key, v in expanded:
        if isinstance(v, SaveableObject):
            if any(s is v for s in saveables):
                raise ValueError(f"The same saveable will be restored with two names: {v.name}")
            saveables.append(v)
            continue
        if not isinstance(v, Variable):
            raise TypeError(f"Variable to save is not a Variable: {v!r}")
        key = v.op.name if key is None else key
        if key in out:
            raise ValueError(f"At least two variables have the same name: {key}")
        out[key] = v
    keys = set(out)
    for spec in (spec for saveable in saveables for spec in saveable.specs):
        if spec.name in keys:
            raise ValueError(f"At least two variables have the same name: {spec.name}")
        keys.add(spec.name)
    return out, saveables, renamed


class Saver:
    """Saves and restores variables; see the module docstring."""

    def __init__(self, var_list: Any = None, reshape: bool = False, sharded: bool = False,
                 max_to_keep: int | None = 5, keep_checkpoint_every_n_hours: float = 10000.0,
                 name: str | None = None, allow_empty: bool = False,
                 pad_step_number: bool = False, defer_build: bool = False,
                 saver_def: Any = None) -> None:
        if reshape:
            raise ValueError("Saver(reshape=True) is not supported: shapes must match.")
        self._var_list = var_list
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._next_keep_time = time.time() + keep_checkpoint_every_n_hours * 3600
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._last_checkpoints: list[tuple[str, float]] = []
        self._to_delete: list[tuple[str, float]] = []
        self._vars: dict[str, Variable] = {}
        self._renamed: dict[str, str] = {}
        self._saveables: list[SaveableObject] = []
        self._items: list[SaveItem] = []
        self._graph: SaverGraph | None = None
        self._saver_def = saver_def
        self._built = False
        if saver_def is not None:
            self._from_saver_def(saver_def)
        elif not defer_build:
            self.build()

    # -- graph --------------------------------------------------------------------------------

    def build(self) -> None:
        """Create the save and restore ops (once; `tensorweave.train.saver_graph`)."""
        if self._built:
            return
        if self._var_list is None:
            var_list = [*global_variables(),
                        *get_default_graph().get_collection(GraphKeys.SAVEABLE_OBJECTS)]
        else:
            var_list = self._var_list
        self._vars, self._saveables, self._renamed = _var_dict(var_list)
        self._built = True
        if not self._vars and not self._saveables:
            if self._allow_empty:
                return
            raise ValueError("No variables to save")
        graph = (next(iter(self._vars.values())).graph if self._vars
                 else _saveable_graph(self._saveables[0]))
        with graph.as_default():
            self._items = sorted(self._save_items(graph), key=lambda item: item.names[0])
        self._graph = build_saver_graph(graph, self._items, self._sharded,
                                        self._name or "save")

    def _from_saver_def(self, saver_def: Any) -> None:
        """Adopt the save and restore ops a `SaverDef` names in the default graph (TF's
        ``Saver(saver_def=...)``): `save` and `restore` run them."""
        graph = get_default_graph()
        prefix = f"{self._name}/" if self._name else ""
        try:
            self._graph = SaverGraph(
                graph.get_tensor_by_name(prefix + saver_def.filename_tensor_name),
                graph.get_tensor_by_name(prefix + saver_def.save_tensor_name),
                graph.get_operation_by_name(prefix + saver_def.restore_op_name))
        except (KeyError, ValueError) as exc:
            raise ValueError(f"The SaverDef names ops the graph does not hold: {exc}") from None
        self._sharded = saver_def.sharded
        self._max_to_keep = saver_def.max_to_keep
        self._keep_hours = saver_def.keep_checkpoint_every_n_hours
        self._next_keep_time = time.time() + self._keep_hours * 3600
        self._built = True

    def _save_items(self, graph: Any) -> list[SaveItem]:
        """What is saved, as TF orders it before sorting by name: the variables (a shard of a
        partitioned one as its slice of the full name), then the saveables."""
        items = []
        slices = self._slices()
        for key, var in self._vars.items():
            info = slices.get(key)

            def restore(tensors: list[Tensor], var: Variable = var) -> Operation:
                with graph.colocate_with(var.op):
                    return assign(var, tensors[0], name="Assign").op

            items.append(SaveItem((key if info is None else info.full_name,),
                                  ("" if info is None else info.spec,), (var._as_graph_element(),),
                                  var.device, restore))
        for saveable in self._saveables:
            def restore_saveable(tensors: list[Tensor], saveable: SaveableObject = saveable
                                 ) -> Operation:
                restore = saveable.restore(tensors, None)
                return restore if isinstance(restore, Operation) else restore.op

            specs = saveable.specs
            items.append(SaveItem(tuple(s.name for s in specs), ("",) * len(specs),
                                  tuple(s.tensor for s in specs), saveable.device or "",
                                  restore_saveable))
        return items

    @property
    def last_checkpoints(self) -> list[str]:
        return [path for path, _ in self._last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: list[tuple[str, float]]
                                       ) -> None:
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths: list[str]) -> None:
        """Adopt existing checkpoints (e.g. from a previous run) as this saver's own, so
        `max_to_keep` also removes them."""
        self._last_checkpoints = [(p, os.path.getmtime(index_path(p))) for p in checkpoint_paths
                                  if checkpoint_exists(p)]

    # -- save ---------------------------------------------------------------------------------

    @property
    def saver_def(self) -> Any:
        """TF's ``Saver.saver_def``: the `SaverDef`, or None while the build is deferred."""
        return self.as_saver_def() if self._built else None

    def as_saver_def(self) -> Any:
        """TF's ``SaverDef`` of this saver: its filename tensor, save tensor and restore op,
        and its retention settings."""
        from tensorweave.formats.meta_graph_proto import CHECKPOINT_V2, SaverDef

        self.build()
        if self._saver_def is not None:
            return self._saver_def
        ops = self._graph
        return SaverDef(filename_tensor_name=ops.filename.name if ops else "",
                        save_tensor_name=ops.save_tensor.name if ops else "",
                        restore_op_name=ops.restore_op.name if ops else "",
                        max_to_keep=self._max_to_keep or 0, sharded=self._sharded,
                        keep_checkpoint_every_n_hours=self._keep_hours, version=CHECKPOINT_V2)

    def export_meta_graph(self, filename: str | None = None, collection_list: Any = None,
                          as_text: bool = False, clear_devices: bool = False,
                          strip_default_attrs: bool = False) -> Any:
        from tensorweave.train.meta_graph import export_meta_graph

        return export_meta_graph(filename, saver_def=self.as_saver_def(),
                                 collection_list=collection_list, as_text=as_text,
                                 clear_devices=clear_devices,
                                 strip_default_attrs=strip_default_attrs)

    def save(self, sess: Any, save_path: str, global_step: Any = None,
             latest_filename: str | None = None, meta_graph_suffix: str = "meta",
             write_meta_graph: bool = True, write_state: bool = True,
             strip_default_attrs: bool = False) -> str | None:
        """Write a checkpoint; returns its path (``save_path-<step>`` with a global step)."""
        self.build()
        if self._graph is None:
            return None
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = int(sess.run(global_step))
            save_path = (f"{save_path}-{int(global_step):08d}" if self._pad_step_number
                         else f"{save_path}-{int(global_step)}")
        directory = os.path.dirname(save_path) or "."
        if not os.path.isdir(directory):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        atomic_file.remove_stale_temp_files(directory)
        # TF's saver of an imported graph runs its own ops; so does a saver whose session runs
        # on a server, as TF's: the files are written where its save ops run (on the server's
        # devices, within its --file-root), not by this client
        if self._saver_def is not None or getattr(sess, "sess_str", ""):
            sess.run(self._graph.save_tensor, {self._graph.filename: save_path})
        else:
            values = sess.run([list(item.tensors) for item in self._items])
            write_bundle(save_path, self._shards(values))
        if write_meta_graph:
            from tensorweave.train.meta_graph import export_meta_graph, save_meta_graph

            meta_path = f"{save_path}.{meta_graph_suffix}"
            if strip_default_attrs:
                export_meta_graph(meta_path, saver_def=self.as_saver_def(), graph=sess.graph,
                                  strip_default_attrs=True)
            else:
                save_meta_graph(meta_path, sess.graph, self.as_saver_def())
        if write_state:
            self._record(save_path)
            update_checkpoint_state(directory, save_path, self.last_checkpoints,
                                    latest_filename)
            self._delete_old()
        return save_path

    def _record(self, path: str) -> None:
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
        self._last_checkpoints.append((path, time.time()))
        if self._max_to_keep:
            while len(self._last_checkpoints) > self._max_to_keep:
                self._to_delete.append(self._last_checkpoints.pop(0))

    def _delete_old(self) -> None:
        while self._to_delete:
            path, saved_at = self._to_delete.pop(0)
            if saved_at > self._next_keep_time:
                self._next_keep_time += self._keep_hours * 3600
                continue
            for name in _checkpoint_files(path):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(name)

    def _shards(self, values: list[list[Any]]) -> list[list[SavedTensor]]:
        """The tensors of each data file, in the order the graph's ``SaveV2`` ops write them:
        one file, or with `sharded` one per device (`tensorweave.train.saver_graph`)."""
        by_device: dict[str, list[SavedTensor]] = {}
        for item, item_values in zip(self._items, values):
            device = device_spec.canonical(item.device or "") if self._sharded else ""
            for name, spec, value in zip(item.names, item.slice_specs, item_values):
                value = np.asarray(value)
                saved = SavedTensor(name, value)
                if spec:
                    saved = SavedTensor(name, value, *slice_spec.parse(spec))
                by_device.setdefault(device, []).append(saved)
        return [by_device[device] for device in sorted(by_device)]

    def _slices(self) -> dict[str, Any]:
        """Key -> `SaveSliceInfo` of each shard of a partitioned variable, its full name the one
        it is saved under."""
        out = {}
        for key, var in self._vars.items():
            info = getattr(var, "_save_slice_info", None)
            if info is not None:
                out[key] = attrs.evolve(info, full_name=self._renamed.get(key, info.full_name))
        return out

    # -- restore ------------------------------------------------------------------------------

    def restore(self, sess: Any, save_path: str | None) -> None:
        """Assign the values saved at `save_path` to this saver's variables."""
        self.build()
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if not checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        if self._graph is None:
            return
        if self._saver_def is None:
            self._check_saved(save_path)
        sess.run(self._graph.restore_op, {self._graph.filename: save_path})

    def _check_saved(self, save_path: str) -> None:
        """TF's errors for what the checkpoint lacks or holds of another dtype or shape, before
        the restore op runs (they name the variable)."""
        reader = BundleReader(save_path)
        slices = self._slices()
        for key, var in self._vars.items():
            info = slices.get(key)
            name = key if info is None else info.full_name
            _saved_dtype(reader, name, var.dtype, save_path)
            shape = list(reader.shape(name))
            if info is not None and shape != list(info.full_shape):
                raise errors.InvalidArgumentError(
                    None, None, f"Restoring {key}: the checkpoint holds {name} with shape "
                    f"{shape}, the partitioned variable has shape {list(info.full_shape)}")
            if info is None and not var.get_shape().is_compatible_with(shape):
                raise errors.InvalidArgumentError(
                    None, None, f"Restoring {key}: Assign requires shapes of both tensors to "
                    f"match. lhs shape= {var.get_shape().as_list()} rhs shape= {shape}")
        for saveable in self._saveables:
            for spec in saveable.specs:
                _saved_dtype(reader, spec.name, spec.dtype, save_path)


def _saved_dtype(reader: BundleReader, name: str, dtype: dtypes.DType, save_path: str) -> None:
    """TF's errors if the saved tensor `name` is missing or is not of `dtype`."""
    if name not in reader:
        raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint {save_path}")
    saved = reader.dtype(name)
    if saved != dtype.base_dtype:
        raise errors.InvalidArgumentError(
            None, None, f"tensor_name = {name}; expected dtype {dtype.base_dtype.name} does not "
            f"equal original dtype {saved.name}")


def _checkpoint_files(prefix: str) -> list[str]:
    """The files of the checkpoint `prefix`: its index, data files and meta graph."""
    directory, base = os.path.split(prefix)
    data = re.compile(re.escape(base) + r"\.data-\d{5}-of-\d{5}")
    names = [index_path(prefix), f"{prefix}.meta"]
    with contextlib.suppress(FileNotFoundError):
        names += [os.path.join(directory, n) for n in os.listdir(directory or ".")
                  if data.fullmatch(n)]
    return names


def _saveable_graph(saveable: SaveableObject) -> Any:
    op = saveable.op
    return op.graph if isinstance(op, (Operation, Tensor)) else get_default_graph()
