"""`SavedModelBuilder`: writes a SavedModel directory (``tf.compat.v1.saved_model.Builder``).

Contract: a SavedModel directory holds

    saved_model.pb       a `SavedModel` proto (``saved_model.pbtxt`` with ``save(as_text=True)``)
    variables/variables  every global variable, a checkpoint in TF's V2 format
                         (``variables.index`` + ``variables.data-*``)
    assets/              copies of the asset files, if any

`SavedModelBuilder(export_dir)` creates `export_dir`; a directory that exists and is not empty
raises ``AssertionError`` as TF. `add_meta_graph_and_variables` must come first and only once: it
saves the session's variables and assets and records the session graph's meta graph (with its
``SaverDef``) under `tags`, with `signature_def_map`. `add_meta_graph` records the default
graph's meta graph under other tags, sharing those variables. `save` writes the proto file and
returns its path (bytes, as TF).

As TF's v1 builder, a `main_op` (or `legacy_init_op`) is added to the graph's
``saved_model_main_op`` collection, so later meta graphs of the same graph carry it too; a second
one raises ``ValueError``. Assets (string ``Const`` tensors naming files) are recorded as the meta
graph's ``asset_file_def`` entries (TF's loaders read those as well as the v1 ``Any``
collection); two files with the same base name and different contents get ``name_1``, ... .
"""

from __future__ import annotations

import filecmp
import logging
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Graph, GraphKeys, Operation, Tensor, get_default_graph
from tensorweave.formats.atomic_file import write_atomic
from tensorweave.formats.meta_graph_proto import to_text
from tensorweave.formats.saved_model_proto import (
    AssetFileDef,
    SavedModel,
    SignatureDef,
    TensorInfo,
)
from tensorweave.saved_model import constants
from tensorweave.train.meta_graph import export_meta_graph
from tensorweave.train.saver import Saver

__all__ = ["SavedModelBuilder"]

_log = logging.getLogger(__name__)


def variables_path(export_dir: str) -> str:
    """The checkpoint path of a SavedModel's variables."""
    return os.path.join(export_dir, constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME)


def _validate_tensor_info(info: TensorInfo | None) -> None:
    if info is None:
        raise AssertionError("All TensorInfo protos used in the SignatureDefs must have the "
                             "name and dtype fields set.")
    if info.WhichOneof("encoding") is None:
        raise AssertionError("All TensorInfo protos used in the SignatureDefs must have one of "
                             f"the 'encoding' fields (e.g., name or coo_sparse) set: {info}")
    if info.WhichOneof("encoding") != "composite_tensor" and not info.dtype:  # DT_INVALID
        raise AssertionError("All TensorInfo protos used in the SignatureDefs must have the "
                             f"dtype field set: {info}")


def _validate_signature_def_map(signature_def_map: Mapping[str, SignatureDef]) -> None:
    for key, signature in signature_def_map.items():
        if not isinstance(signature, SignatureDef):
            raise TypeError(f"signature_def_map[{key!r}] must be a SignatureDef, got "
                            f"{type(signature).__name__}")
        for info in [*signature.inputs.values(), *signature.outputs.values()]:
            _validate_tensor_info(info)
    for reserved, what in ((constants.INIT_OP_SIGNATURE_KEY, "initialization"),
                           (constants.TRAIN_OP_SIGNATURE_KEY, "the train op")):
        if reserved in signature_def_map:
            raise KeyError(f'SignatureDef map key "{reserved}" is reserved for {what}. Please '
                           "use a different key.")


def _check_tags(tags: Any) -> list[str]:
    if isinstance(tags, (str, bytes)) or not all(isinstance(t, str) for t in tags):
        raise TypeError(f"tags must be a list of strings, got {tags!r}")
    return list(tags)


def _asset_path(tensor: Any) -> str:
    """The file a string ``Const`` asset tensor names (TF's checks and messages)."""
    if not isinstance(tensor, Tensor):
        raise TypeError("Asset path tensor must be a Tensor.")
    if tensor.op.type != "Const":
        raise TypeError("Asset path tensor must be of type constant.")
    if tensor.dtype != dtypes.string:
        raise TypeError("Asset path tensor must be of type string.")
    value = tensor.op.get_attr("value")
    if value.size != 1:
        raise TypeError("Asset path tensor must be a scalar.")
    path = value.reshape(-1)[0]
    path = path.decode() if isinstance(path, bytes) else str(path)
    if not path:
        raise ValueError(f"Invalid asset filepath tensor {tensor}")
    return path


class SavedModelBuilder:
    """Builds a SavedModel directory; see the module docstring."""

    def __init__(self, export_dir: str) -> None:
        export_dir = os.fspath(export_dir)
        if os.path.exists(export_dir):
            if os.listdir(export_dir):
                raise AssertionError(
                    "Export directory already exists, and isn't empty. Please choose a "
                    "different export directory, or delete all the contents of the specified "
                    f"directory: {export_dir}")
        else:
            os.makedirs(export_dir)
        self._export_dir = export_dir
        self._saved_model = SavedModel(
            saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._has_saved_variables = False
        self._assets: dict[str, str] = {}  # file name under assets/ -> source path

    # -- meta graphs --------------------------------------------------------------------------

    def add_meta_graph_and_variables(
            self, sess: Any, tags: Sequence[str],
            signature_def_map: Mapping[str, SignatureDef] | None = None,
            assets_collection: Iterable[Tensor] | None = None,
            legacy_init_op: Operation | None = None, clear_devices: bool = False,
            main_op: Operation | None = None, strip_default_attrs: bool = False,
            saver: Saver | None = None) -> None:
        """Save `sess`'s variables and its graph's meta graph under `tags`."""
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already been "
                                 "saved. Please invoke `add_meta_graph()` instead.")
        graph = sess.graph
        tags = _check_tags(tags)
        signature_def_map = dict(signature_def_map or {})
        _validate_signature_def_map(signature_def_map)
        assets = self._add_assets(assets_collection)
        self._add_main_op(graph, legacy_init_op if main_op is None else main_op)
        saver = saver or self._create_saver(graph)
        os.makedirs(os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY), exist_ok=True)
        saver.save(sess, variables_path(self._export_dir), write_meta_graph=False,
                   write_state=False)
        self._add(graph, saver, tags, signature_def_map, assets, clear_devices,
                  strip_default_attrs)
        self._has_saved_variables = True

    def add_meta_graph(self, tags: Sequence[str],
                       signature_def_map: Mapping[str, SignatureDef] | None = None,
                       assets_collection: Iterable[Tensor] | None = None,
                       legacy_init_op: Operation | None = None, clear_devices: bool = False,
                       main_op: Operation | None = None, strip_default_attrs: bool = False,
                       saver: Saver | None = None) -> None:
        """Record the default graph's meta graph under `tags`, sharing the saved variables."""
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been saved "
                                 "yet. Please invoke `add_meta_graph_and_variables()` first.")
        graph = get_default_graph()
        tags = _check_tags(tags)
        signature_def_map = dict(signature_def_map or {})
        _validate_signature_def_map(signature_def_map)
        assets = self._add_assets(assets_collection)
        self._add_main_op(graph, legacy_init_op if main_op is None else main_op)
        saver = saver or self._create_saver(graph)
        self._add(graph, saver, tags, signature_def_map, assets, clear_devices,
                  strip_default_attrs)

    def save(self, as_text: bool = False) -> bytes:
        """Write ``saved_model.pb`` (or ``saved_model.pbtxt``); returns its path."""
        os.makedirs(self._export_dir, exist_ok=True)
        if as_text:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            data = to_text(self._saved_model).encode()
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString(deterministic=True)
        write_atomic(path, data)
        _log.info("SavedModel written to: %s", path)
        return os.fsencode(path)

    # -- parts --------------------------------------------------------------------------------

    @staticmethod
    def _create_saver(graph: Graph) -> Saver:
        return Saver(graph.get_collection(GraphKeys.GLOBAL_VARIABLES), sharded=True,
                     allow_empty=True)

    @staticmethod
    def _add_main_op(graph: Graph, main_op: Operation | None) -> None:
        if main_op is None:
            return
        if not isinstance(main_op, Operation):
            raise TypeError(f"main_op needs to be an Operation: {main_op!r}")
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            if graph.get_collection(key):
                raise ValueError("Graph already contains one or more main ops under the "
                                 f"collection {key}.")
        graph.add_to_collection(constants.MAIN_OP_KEY, main_op)

    def _asset_filename(self, source: str) -> str:
        name = base = os.path.basename(source)
        suffix = 1
        while name in self._assets and self._assets[name] != source and not filecmp.cmp(
                self._assets[name], source, shallow=False):
            name = f"{base}_{suffix}"
            suffix += 1
        return name

    def _add_assets(self, assets_collection: Iterable[Tensor] | None) -> list[AssetFileDef]:
        """Copy the asset files under ``assets/``; their `AssetFileDef`s."""
        defs = []
        for tensor in assets_collection or ():
            source = _asset_path(tensor)
            filename = self._asset_filename(source)
            destination = os.path.join(self._export_dir, constants.ASSETS_DIRECTORY, filename)
            if filename not in self._assets:
                os.makedirs(os.path.dirname(destination), exist_ok=True)
                shutil.copyfile(source, destination)
                self._assets[filename] = source
            defs.append(AssetFileDef(tensor_info=TensorInfo(name=tensor.name),
                                     filename=filename))
        return defs

    def _add(self, graph: Graph, saver: Saver, tags: list[str],
             signature_def_map: dict[str, SignatureDef], assets: list[AssetFileDef],
             clear_devices: bool, strip_default_attrs: bool) -> None:
        meta = export_meta_graph(graph=graph, saver_def=saver.as_saver_def(),
                                 clear_devices=clear_devices,
                                 strip_default_attrs=strip_default_attrs)
        meta.meta_info_def.tags.extend(tags)
        for key, signature in signature_def_map.items():
            meta.signature_def[key].CopyFrom(signature)
        meta.asset_file_def.extend(assets)
        self._saved_model.meta_graphs.append(meta)
