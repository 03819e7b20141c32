"""`simple_save`: a serving SavedModel in one call (``tf.compat.v1.saved_model.simple_save``).

Contract: writes `session`'s graph and variables to `export_dir` under the ``serve`` tag, with
one ``serving_default`` predict signature built from the `inputs` and `outputs` tensor dicts,
devices cleared, the graph's ``asset_filepaths`` collection as assets and `legacy_init_op` as the
main op; the builder's errors apply (an existing non-empty `export_dir` raises
``AssertionError``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tensorweave.engine.graph.graph import Operation
from tensorweave.saved_model import signature_constants, tag_constants
from tensorweave.saved_model.builder import SavedModelBuilder
from tensorweave.saved_model.signature_def_utils import predict_signature_def

__all__ = ["simple_save"]

ASSET_FILEPATHS = "asset_filepaths"  # tf.GraphKeys.ASSET_FILEPATHS


def simple_save(session: Any, export_dir: str, inputs: Mapping[str, Any],
                outputs: Mapping[str, Any], legacy_init_op: Operation | None = None) -> None:
    signature_def_map = {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                         predict_signature_def(inputs, outputs)}
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, tags=[tag_constants.SERVING], signature_def_map=signature_def_map,
        assets_collection=session.graph.get_collection(ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    builder.save()
