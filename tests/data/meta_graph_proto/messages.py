"""Representative meta graph family messages, built from whichever classes are passed in: TF's
(`make_expected.py`) or tensorweave's (`tests/test_meta_graph_proto.py`), so the same field
settings give the bytes and text that ``expected.json`` holds. No TF import here.

`build(classes)` takes ``{message name: class}`` for ``SavedModel``, ``MetaGraphDef``,
``SaverDef``, ``VariableDef``, ``QueueRunnerDef``, ``CheckpointState``, ``AssetFileDef`` and
``TensorInfo``, and returns ``{name: message}``.
"""

from __future__ import annotations

from typing import Any


def _meta_graph(c: dict[str, Any]) -> Any:
    meta = c["MetaGraphDef"]()
    info = meta.meta_info_def
    info.meta_graph_version = "v1"
    info.tags.extend(["serve", "train"])
    info.tensorflow_version = "1.15.0"
    info.tensorflow_git_version = "git"
    info.stripped_default_attrs = True
    info.function_aliases["f"] = "g"
    op = info.stripped_op_list.op.add(name="MatMul")
    op.input_arg.add(name="a", type_attr="T")
    op.output_arg.add(name="product", type_attr="T")
    op.attr.add(name="transpose_a", type="bool").default_value.b = False
    op.attr.add(name="T", type="type")
    asset = c["AssetFileDef"](filename="vocab.txt")
    asset.tensor_info.name = "Const:0"
    info.any_info.Pack(asset)
    node = meta.graph_def.node.add(name="x", op="Placeholder")
    node.attr["dtype"].type = 1  # DT_FLOAT
    meta.graph_def.versions.producer = 27
    saver = meta.saver_def
    saver.filename_tensor_name = "save/Const:0"
    saver.save_tensor_name = "save/control_dependency:0"
    saver.restore_op_name = "save/restore_all"
    saver.max_to_keep = 5
    saver.sharded = True
    saver.keep_checkpoint_every_n_hours = 10000.0
    saver.version = 2  # V2
    meta.collection_def["nodes"].node_list.value.extend(["x:0", "train"])
    meta.collection_def["bytes"].bytes_list.value.extend([b"\x00\x01", b"b"])
    meta.collection_def["ints"].int64_list.value.extend([3, -1, 1 << 40])
    meta.collection_def["floats"].float_list.value.extend([0.5, -2.0])
    meta.collection_def["saved_model_assets"].any_list.value.add().Pack(asset)
    signature = meta.signature_def["serving_default"]
    signature.method_name = "tensorflow/serving/predict"
    x = signature.inputs["x"]
    x.name, x.dtype = "x:0", 1
    x.tensor_shape.dim.add(size=-1)
    x.tensor_shape.dim.add(size=3)
    sparse = signature.inputs["sp"]
    sparse.dtype = 9  # DT_INT64
    sparse.coo_sparse.values_tensor_name = "v:0"
    sparse.coo_sparse.indices_tensor_name = "i:0"
    sparse.coo_sparse.dense_shape_tensor_name = "s:0"
    sparse.tensor_shape.unknown_rank = True
    ragged = signature.outputs["r"]
    ragged.composite_tensor.type_spec.type_spec_class = 3  # RAGGED_TENSOR_SPEC
    ragged.composite_tensor.type_spec.type_spec_class_name = "RaggedTensorSpec"
    ragged.composite_tensor.type_spec.num_flat_components = 2
    ragged.composite_tensor.components.add(name="values:0", dtype=1)
    scalar = signature.outputs["y"]
    scalar.name, scalar.dtype = "y:0", 2  # DT_DOUBLE
    scalar.tensor_shape.SetInParent()  # a scalar: a present, empty shape
    signature.defaults["x"].dtype = 1
    signature.defaults["x"].float_val.append(1.5)
    meta.asset_file_def.append(asset)
    return meta


def build(c: dict[str, Any]) -> dict[str, Any]:
    model = c["SavedModel"](saved_model_schema_version=1)
    model.meta_graphs.append(_meta_graph(c))
    model.meta_graphs.add().meta_info_def.tags.append("gpu")
    variable = c["VariableDef"](variable_name="w/part_1:0", initializer_name="w/part_1/Assign",
                                snapshot_name="w/part_1/read:0", initial_value_name="zeros:0",
                                is_resource=True, trainable=True, synchronization=3,
                                aggregation=2)
    slice_info = variable.save_slice_info_def
    slice_info.full_name = "w"
    slice_info.full_shape.extend([4, 3])
    slice_info.var_offset.extend([2, 0])
    slice_info.var_shape.extend([2, 3])
    runner = c["QueueRunnerDef"](queue_name="q", enqueue_op_name=["e1", "e2"],
                                 close_op_name="q_Close", cancel_op_name="q_Close_1",
                                 queue_closed_exception_types=[11, 1])  # OUT_OF_RANGE, CANCELLED
    state = c["CheckpointState"](model_checkpoint_path="model.ckpt-200",
                                 all_model_checkpoint_paths=["model.ckpt-100", "model.ckpt-200"],
                                 all_model_checkpoint_timestamps=[1.5, 2.25],
                                 last_preserved_timestamp=0.5)
    return {"saved_model": model, "variable_def": variable, "queue_runner_def": runner,
            "checkpoint_state": state}
