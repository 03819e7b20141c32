"""Loading a SavedModel into a session (``tf.compat.v1.saved_model.loader``).

Contract: `load(sess, tags, export_dir, import_scope=None, **saver_kwargs)` picks the meta graph
whose tag set equals `tags` (else ``RuntimeError`` in TF's words, listing the available tag
sets), imports it into ``sess.graph`` (`import_meta_graph`: names prefixed with `import_scope`,
collections restored; `saver_kwargs` such as ``clear_devices`` go to it), restores the
variables from ``variables/variables``, runs the meta graph's main op (or legacy init op) with
each asset tensor fed the path of its copy under ``assets/`` (the meta graph's
``asset_file_def``, else its ``saved_model_assets`` collection, as TF's v1 builder writes it),
and returns the `MetaGraphDef`, whose ``signature_def`` names the tensors to feed and fetch.

``saved_model.pb`` is read, else ``saved_model.pbtxt`` (text format, as TF); neither raises
``OSError`` ("SavedModel file does not exist at: ..."), a file that does not parse raises
``OSError`` ("Cannot parse file ..."). The variables are a checkpoint in TF's V2 format
(`tensorweave.train.saver`), restored by the meta graph's own restore op (its ``SaverDef``'s),
so a SavedModel whose saver chose its own checkpoint keys or shards loads too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import DecodeError

from tensorweave.engine.graph.graph import Graph, Operation, Tensor
from tensorweave.formats.meta_graph_proto import merge_text
from tensorweave.formats.saved_model_proto import (
    MetaGraphDef,
    SavedModel,
    asset_file_def_from_any,
)
from tensorweave.saved_model import constants
from tensorweave.saved_model.builder import variables_path
from tensorweave.train.meta_graph import import_meta_graph

__all__ = ["load", "maybe_saved_model_directory"]


def maybe_saved_model_directory(export_dir: str) -> bool:
    """Whether `export_dir` holds a ``saved_model.pb`` or ``saved_model.pbtxt``."""
    return any(os.path.isfile(os.path.join(export_dir, name))
               for name in (constants.SAVED_MODEL_FILENAME_PBTXT,
                            constants.SAVED_MODEL_FILENAME_PB))


def parse_saved_model(export_dir: str) -> SavedModel:
    """The `SavedModel` in `export_dir`'s ``saved_model.pb``, else its ``saved_model.pbtxt``."""
    path = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    as_text = not os.path.isfile(path)
    if as_text:
        path = os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
        if not os.path.isfile(path):
            raise OSError(f"SavedModel file does not exist at: {export_dir}{os.sep}"
                          f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|"
                          f"{constants.SAVED_MODEL_FILENAME_PB}}}")
    with open(path, "rb") as f:
        data = f.read()
    try:
        return merge_text(data, SavedModel()) if as_text else SavedModel.FromString(data)
    except (DecodeError, text_format.ParseError, UnicodeDecodeError) as exc:
        raise OSError(f"Cannot parse file {path}: {exc}.") from None


def meta_graph_def_from_tags(saved_model: SavedModel, tags: Sequence[str]) -> MetaGraphDef:
    """The meta graph whose tag set equals `tags`."""
    available = []
    for meta in saved_model.meta_graphs:
        available.append(set(meta.meta_info_def.tags))
        if set(meta.meta_info_def.tags) == set(tags):
            return meta
    raise RuntimeError(f"MetaGraphDef associated with tags {str(tags).strip('[]')} could not be "
                       "found in SavedModel. To inspect available tag-sets in the SavedModel, "
                       f"please use the SavedModel CLI: `saved_model_cli`\navailable_tags: "
                       f"{available}")


def _init_op(meta: MetaGraphDef, graph: Graph, prefix: str) -> Operation | None:
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        collection = meta.collection_def.get(key)
        if collection is None:
            continue
        names = list(collection.node_list.value)
        if len(names) != 1:
            raise RuntimeError(f"Expected exactly one SavedModel main op. Found: {names}")
        return graph.as_graph_element(prefix + names[0])
    return None


def _asset_feeds(meta: MetaGraphDef, graph: Graph, export_dir: str,
                 prefix: str) -> dict[Tensor, str]:
    assets_dir = os.path.join(export_dir, constants.ASSETS_DIRECTORY)
    assets = list(meta.asset_file_def)
    collection = meta.collection_def.get(constants.ASSETS_KEY)
    if not assets and collection is not None:  # TF's v1 builder's
        assets = [asset_file_def_from_any(value) for value in collection.any_list.value]
    return {graph.get_tensor_by_name(prefix + asset.tensor_info.name):
            os.path.join(assets_dir, asset.filename) for asset in assets}


def _restore_variables(sess: Any, saver: Any, export_dir: str) -> None:
    path = variables_path(export_dir)
    if saver is None:  # the meta graph has no variables
        return
    saver.restore(sess, path)


def load(sess: Any, tags: Sequence[str], export_dir: str, import_scope: str | None = None,
         **saver_kwargs: Any) -> MetaGraphDef:
    """Load the meta graph tagged `tags` from `export_dir` into `sess`; see the module
    docstring."""
    export_dir = os.fsdecode(export_dir)  # Estimator.export_saved_model returns bytes
    meta = meta_graph_def_from_tags(parse_saved_model(export_dir), tags)
    graph = sess.graph
    prefix = f"{import_scope}/" if import_scope else ""
    with graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
        _restore_variables(sess, saver, export_dir)
        init_op = _init_op(meta, graph, prefix)
        if init_op is not None:
            sess.run(init_op, feed_dict=_asset_feeds(meta, graph, export_dir, prefix))
    return meta
