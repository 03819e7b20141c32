"""The save and restore subgraph of a `tf.train.Saver`, built as TF 1.15's ``BulkSaverBuilder``.

Contract: `build_saver_graph(graph, items, sharded, scope)` adds, in name scope `scope`
(``save``):

- ``Const``: the checkpoint prefix, a string scalar ``PlaceholderWithDefault`` over
  ``filename`` (itself defaulting to ``"model"``); the `SaverDef`'s ``filename_tensor_name``.
- not sharded: ``SaveV2`` of every item's tensors, and ``control_dependency``, the prefix after
  it (``save_tensor_name``); one ``RestoreV2`` on ``cpu:0`` reading all of them.
- sharded: per device of the items (canonical names, sorted), on that device's CPU, a
  ``ShardedFilename`` of ``<prefix>_temp_<uuid>/part`` and a ``SaveV2`` of its items; then a
  ``MergeV2Checkpoints`` of those prefixes into the prefix, and ``Identity``, the prefix after
  it (``save_tensor_name``); per device, a ``RestoreV2`` on its CPU and a ``restore_shard`` group.
- ``restore_all``: the group of every item's restore op (``restore_op_name``).

Items are restored from the ``RestoreV2`` outputs by their own `restore` callable (an ``Assign``
for a variable). Running the save tensor with the prefix fed writes the same checkpoint as
`Saver.save`; running ``restore_all`` with it fed restores it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

import attrs

from tensorweave.api.array_ops import stack
from tensorweave.api.control_flow_ops import group, identity
from tensorweave.api.state_ops import placeholder_with_default
from tensorweave.api.string_ops import string_join
from tensorweave.engine import device_spec, dtypes
from tensorweave.engine.graph.constant_op import constant
from tensorweave.engine.graph.graph import Graph, Operation, Tensor
from tensorweave.engine.graph.op_builder import make_op

__all__ = ["SaveItem", "SaverGraph", "build_saver_graph"]


@attrs.frozen
class SaveItem:
    """One object the saver checkpoints: its tensors to save, under `names` with
    `slice_specs` (``""``, or TF's ``"full shape offset,length:..."``), on `device`, and
    `restore`, which makes its restore op from the tensors read back (in the same order)."""

    names: tuple[str, ...]
    slice_specs: tuple[str, ...]
    tensors: tuple[Tensor, ...]
    device: str
    restore: Callable[[list[Tensor]], Operation]

    @property
    def dtypes(self) -> list[dtypes.DType]:
        return [t.dtype.base_dtype for t in self.tensors]


@attrs.frozen
class SaverGraph:
    """The names a `SaverDef` records."""

    filename: Tensor
    save_tensor: Tensor
    restore_op: Operation


def _cpu0(device: str) -> str:
    """TF's ``set_cpu0``: `device`'s task, its CPU 0."""
    spec = device_spec.DeviceSpec.from_string(device)
    return attrs.evolve(spec, device_type="CPU", device_index=0).to_string()


def _flat(items: Sequence[SaveItem]) -> tuple[list[str], list[str], list[Tensor]]:
    names = [n for item in items for n in item.names]
    specs = [s for item in items for s in item.slice_specs]
    return names, specs, [t for item in items for t in item.tensors]


def _save(filename: Tensor, items: Sequence[SaveItem]) -> Tensor:
    names, specs, tensors = _flat(items)
    save = make_op("SaveV2", [filename, constant(names, dtypes.string, name="tensor_names"),
                              constant(specs, dtypes.string, name="shape_and_slices"), tensors],
                   {"dtypes": [t.dtype.base_dtype for t in tensors]}, name="SaveV2")
    with filename.graph.control_dependencies([save]):
        return identity(filename, name="control_dependency")


def _restore(filename: Tensor, items: Sequence[SaveItem], name: str) -> Operation:
    names, specs, _ = _flat(items)
    with filename.graph.device("cpu:0"):
        restored = make_op("RestoreV2", [filename,
                                         constant(names, dtypes.string, name="tensor_names"),
                                         constant(specs, dtypes.string,
                                                  name="shape_and_slices")],
                           {"dtypes": [d for item in items for d in item.dtypes]},
                           name="RestoreV2").outputs
    ops, start = [], 0
    for item in items:
        ops.append(item.restore(list(restored[start:start + len(item.names)])))
        start += len(item.names)
    return group(*ops, name=name)


def _by_device(items: Sequence[SaveItem]) -> list[tuple[str, list[SaveItem]]]:
    out: dict[str, list[SaveItem]] = {}
    for item in items:
        out.setdefault(device_spec.canonical(item.device or ""), []).append(item)
    return sorted(out.items())


def build_saver_graph(graph: Graph, items: Sequence[SaveItem], sharded: bool,
                      scope: str) -> SaverGraph:
    """Add the saver's ops to `graph`; see the module docstring."""
    with graph.as_default(), graph.name_scope(scope):
        filename = placeholder_with_default(
            constant("model", dtypes.string, name="filename/input"), [], name="filename")
        filename = placeholder_with_default(filename, [], name="Const")
        if not sharded:
            return SaverGraph(filename, _save(filename, items),
                              _restore(filename, items, "restore_all"))
        per_device = _by_device(items)
        with graph.device("/device:CPU:*"):
            temp = string_join([filename, constant(f"_temp_{uuid.uuid4().hex}/part")])
        num_shards = constant(len(per_device), dtypes.int32, name="num_shards")
        prefixes, saves = [], []
        for shard, (device, shard_items) in enumerate(per_device):
            with graph.device(_cpu0(device)):
                prefixes.append(make_op("ShardedFilename", [temp, shard, num_shards],
                                        name="ShardedFilename").outputs[0])
                saves.append(_save(prefixes[-1], shard_items))
        with graph.control_dependencies([s.op for s in saves]), graph.device(
                _cpu0(per_device[-1][0])):
            merge = make_op("MergeV2Checkpoints", [stack(prefixes), filename],
                            {"delete_old_dirs": True}, name="MergeV2Checkpoints")
            with graph.control_dependencies([merge]):
                save_tensor = identity(filename, name="Identity")
        shards = []
        for device, shard_items in per_device:
            with graph.device(device):
                shards.append(_restore(filename, shard_items, "restore_shard"))
        return SaverGraph(filename, save_tensor, group(*shards, name="restore_all"))

