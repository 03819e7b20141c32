"""Host kernels of the checkpoint ops: ``SaveV2``, ``RestoreV2``, ``MergeV2Checkpoints``,
``ShardedFilename`` and ``ShardedFilespec``, over `tensorweave.formats.tensor_bundle`.

Contract (TF 1.15's ``save_restore_v2_ops.cc``): ``SaveV2`` writes the checkpoint `prefix`
(one data file and its index, creating the directory) holding each tensor under its name; a
``shape_and_slices`` entry ``"d0 d1 ... start,length:...:-"`` saves the tensor as that slice of
a tensor of shape ``[d0, d1, ...]`` (``-``: the whole dimension). ``RestoreV2`` reads them back:
a missing checkpoint or name is `NotFoundError`, a saved dtype other than the ``dtypes`` attr is
`InvalidArgumentError`, corrupt data is `DataLossError` naming the file; a slice entry reads that
slice. ``MergeV2Checkpoints`` renames the data files of every checkpoint in
``checkpoint_prefixes`` to ``destination_prefix``'s, numbered in that order, writes one index of
all their entries, deletes their indexes and, with ``delete_old_dirs``, their directories when
empty. ``ShardedFilename`` is ``"%s-%05d-of-%05d"``, ``ShardedFilespec`` ``"%s-?????-of-%05d"``.
Every error names the node. On a device with a file root (a server's ``--file-root``) every file
the three touch must be under it (`file_access.checked_path`: `PermissionDeniedError`), checked
before any is touched. ``SaveV2`` first removes the temporary files that crashed saves left in
its directory (`atomic_file.remove_stale_temp_files`), as `Saver.save` does where it writes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.formats import atomic_file, slice_spec
from tensorweave.formats.tensor_bundle import (
    BundleReader,
    Extent,
    SavedTensor,
    data_path,
    index_path,
    merge_entries,
    write_bundle,
    write_index,
)
from tensorweave.plugins.kernels.file_access import checked_path


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _strings(value: Any) -> list[str]:
    return [_text(v) for v in np.asarray(value, dtype=object).reshape(-1)]


def _scalar_out(text: str) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = text.encode()
    return out


def parse_slice_spec(ctx: KernelContext, spec: str) -> tuple[tuple[int, ...], tuple[Extent, ...]]:
    """The full shape and the extents of a ``shape_and_slices`` entry."""
    try:
        return slice_spec.parse(spec)
    except ValueError as exc:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op, str(exc)) from None


def _rewrap(ctx: KernelContext, call: Callable[[], Any]) -> Any:
    """`call()`, its `OpError`s naming this node."""
    try:
        return call()
    except errors.OpError as exc:
        if exc.node_def is not None:
            raise
        raise type(exc)(ctx.node_name, ctx.op, exc.message) from None


def _check_lengths(ctx: KernelContext, names: list[str], specs: list[str], count: int) -> None:
    if not len(names) == len(specs) == count:
        raise errors.InvalidArgumentError(
            ctx.node_name, ctx.op, f"tensor_names ({len(names)}), shape_and_slices "
            f"({len(specs)}) and the tensors ({count}) must have the same number of elements")


def _checked_files(ctx: KernelContext, prefix: str, num_shards: int) -> None:
    """`PermissionDeniedError` unless the checkpoint's index and data files may be touched."""
    checked_path(ctx, index_path(prefix))
    for shard in range(max(num_shards, 1)):
        checked_path(ctx, data_path(prefix, shard, max(num_shards, 1)))


def save_v2(ctx: KernelContext, prefix: Any, tensor_names: Any, shape_and_slices: Any,
            *tensors: Any) -> None:
    path = _text(np.asarray(prefix, dtype=object).item())
    _checked_files(ctx, path, 1)
    names, specs = _strings(tensor_names), _strings(shape_and_slices)
    _check_lengths(ctx, names, specs, len(tensors))
    saved = []
    for name, spec, value in zip(names, specs, tensors):
        if spec:
            full_shape, extents = parse_slice_spec(ctx, spec)
            saved.append(SavedTensor(name, np.asarray(value), full_shape, extents))
        else:
            saved.append(SavedTensor(name, np.asarray(value)))
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    atomic_file.remove_stale_temp_files(directory or ".")
    try:
        _rewrap(ctx, lambda: write_bundle(path, [saved]))
    except (TypeError, ValueError) as exc:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op, str(exc)) from None


def restore_v2(ctx: KernelContext, prefix: Any, tensor_names: Any,
               shape_and_slices: Any) -> np.ndarray | tuple[np.ndarray, ...]:
    path = _text(np.asarray(prefix, dtype=object).item())
    names, specs = _strings(tensor_names), _strings(shape_and_slices)
    want = list(ctx.attrs["dtypes"])
    _check_lengths(ctx, names, specs, len(want))
    checked_path(ctx, index_path(path))
    reader = _rewrap(ctx, lambda: BundleReader(path))
    _checked_files(ctx, path, reader.num_shards)
    out = []
    for name, spec, dtype in zip(names, specs, want):
        saved = _rewrap(ctx, lambda n=name: reader.dtype(n))
        if saved != dtype:
            raise errors.InvalidArgumentError(
                ctx.node_name, ctx.op, f"tensor_name = {name}; expected dtype {dtype.name} does "
                f"not equal original dtype {saved.name}")
        if spec:
            full_shape, extents = parse_slice_spec(ctx, spec)
            if tuple(reader.shape(name)) != full_shape:
                raise errors.InvalidArgumentError(
                    ctx.node_name, ctx.op, f"tensor_name = {name}; shape in shape_and_slice "
                    f"spec {list(full_shape)} does not match the shape stored in checkpoint: "
                    f"{list(reader.shape(name))}")
            out.append(_rewrap(ctx, lambda n=name, e=extents: reader.read_slice(n, e)))
        else:
            out.append(_rewrap(ctx, lambda n=name: reader.read(n)))
    return out[0] if len(out) == 1 else tuple(out)  # the executor takes one output as is


def merge_v2_checkpoints(ctx: KernelContext, checkpoint_prefixes: Any,
                         destination_prefix: Any) -> None:
    sources = _strings(checkpoint_prefixes)
    destination = _text(np.asarray(destination_prefix, dtype=object).item())
    for source in sources:
        checked_path(ctx, index_path(source))
    readers = [_rewrap(ctx, lambda p=p: BundleReader(p)) for p in sources]
    total = sum(max(r.num_shards, 1) for r in readers)
    for source, reader in zip(sources, readers):
        _checked_files(ctx, source, reader.num_shards)
    _checked_files(ctx, destination, total)
    renames, shards, first = [], [], 0
    for reader in readers:
        count = max(reader.num_shards, 1)
        renames += [(data_path(reader.prefix, i, count), data_path(destination, first + i, total))
                    for i in range(count)]
        # as TF: a sliced tensor's own entry holds no data, so keeps its shard id
        shards.append({key: entry if entry.slices
                       else attrs.evolve(entry, shard_id=first + entry.shard_id)
                       for key, entry in reader.entries.items()})
        first += count
    try:
        merged = merge_entries(shards)
    except ValueError as exc:
        raise errors.InvalidArgumentError(ctx.node_name, ctx.op, str(exc)) from None
    directory = os.path.dirname(destination)
    if directory:
        os.makedirs(directory, exist_ok=True)
    for old, new in renames:
        try:
            os.replace(old, new)
        except FileNotFoundError:
            raise errors.NotFoundError(ctx.node_name, ctx.op,
                                       f"Checkpoint data file {old} not found") from None
    write_index(index_path(destination), merged, total)
    for prefix in sources:
        with contextlib.suppress(FileNotFoundError):
            os.remove(index_path(prefix))
        if ctx.attrs.get("delete_old_dirs", True):
            with contextlib.suppress(OSError):  # as TF: only an empty directory goes
                os.rmdir(os.path.dirname(prefix) or ".")


def _int(value: Any) -> int:
    return int(np.asarray(value).item())


def sharded_filename(ctx: KernelContext, basename: Any, shard: Any, num_shards: Any
                     ) -> np.ndarray:
    base = _text(np.asarray(basename, dtype=object).item())
    return _scalar_out(f"{base}-{_int(shard):05d}-of-{_int(num_shards):05d}")


def sharded_filespec(ctx: KernelContext, basename: Any, num_shards: Any) -> np.ndarray:
    base = _text(np.asarray(basename, dtype=object).item())
    return _scalar_out(f"{base}-?????-of-{_int(num_shards):05d}")


HOST_ONLY = True  # file I/O: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("SaveV2", device_type, save_v2)
    registry.add("RestoreV2", device_type, restore_v2)
    registry.add("MergeV2Checkpoints", device_type, merge_v2_checkpoints)
    registry.add("ShardedFilename", device_type, sharded_filename)
    registry.add("ShardedFilespec", device_type, sharded_filespec)
