"""tensorweave.python: TF's private module paths re-export tensorweave's own objects."""

from __future__ import annotations

import importlib
import json
import pkgutil

import numpy as np
import pytest

import tensorweave as tw
import tensorweave.python as shim


def _shim_modules() -> list[str]:
    # package_alias is the aliasing machinery itself, not a TF path
    return [m.name for m in pkgutil.walk_packages(shim.__path__, "tensorweave.python.")
            if m.name != "tensorweave.python.package_alias"]


@pytest.mark.parametrize("name", _shim_modules())
def test_every_shim_module_imports(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__ and "tensorflow.python" in module.__doc__


@pytest.mark.parametrize("path, name, public", [
    ("framework.ops", "Graph", lambda: tw.Graph),
    ("framework.ops", "name_scope", lambda: tw.name_scope),
    ("framework.ops", "RegisterGradient", lambda: tw.RegisterGradient),
    ("framework.dtypes", "float32", lambda: tw.float32),
    ("framework.dtypes", "bool", lambda: tw.bool),
    ("framework.tensor_shape", "TensorShape", lambda: tw.TensorShape),
    ("framework.constant_op", "constant", lambda: tw.constant),
    ("framework.tensor_util", "make_tensor_proto", lambda: tw.make_tensor_proto),
    ("framework.tensor_util", "MakeNdarray", lambda: tw.make_ndarray),
    ("framework.graph_util", "convert_variables_to_constants",
     lambda: tw.graph_util.convert_variables_to_constants),
    ("framework.importer", "import_graph_def", lambda: tw.import_graph_def),
    ("framework.errors", "NotFoundError", lambda: tw.errors.NotFoundError),
    ("framework.errors_impl", "OpError", lambda: tw.errors.OpError),
    ("framework.sparse_tensor", "SparseTensor", lambda: tw.SparseTensor),
    ("framework.random_seed", "set_random_seed", lambda: tw.set_random_seed),
    ("ops.array_ops", "reshape", lambda: tw.reshape),
    ("ops.array_ops", "placeholder", lambda: tw.placeholder),
    ("ops.math_ops", "matmul", lambda: tw.matmul),
    ("ops.math_ops", "segment_sum", lambda: tw.segment_sum),
    ("ops.nn", "relu", lambda: tw.nn.relu),
    ("ops.nn_ops", "conv2d", lambda: tw.nn.conv2d),
    ("ops.init_ops", "zeros_initializer", lambda: tw.zeros_initializer),
    ("ops.variable_scope", "get_variable", lambda: tw.get_variable),
    ("ops.variables", "Variable", lambda: tw.Variable),
    ("ops.control_flow_ops", "cond", lambda: tw.cond),
    ("ops.control_flow_ops", "Assert", lambda: tw.Assert),
    ("ops.state_ops", "assign", lambda: tw.assign),
    ("ops.rnn", "dynamic_rnn", lambda: tw.nn.dynamic_rnn),
    ("ops.rnn_cell_impl", "LSTMCell", lambda: tw.nn.rnn_cell.LSTMCell),
    ("ops.clip_ops", "clip_by_global_norm", lambda: tw.clip_by_global_norm),
    ("ops.functional_ops", "map_fn", lambda: tw.map_fn),
    ("ops.data_flow_ops", "FIFOQueue", lambda: tw.FIFOQueue),
    ("ops.embedding_ops", "embedding_lookup", lambda: tw.nn.embedding_lookup),
    ("ops.sparse_ops", "sparse_tensor_to_dense", lambda: tw.sparse_tensor_to_dense),
    ("ops.tensor_array_ops", "TensorArray", lambda: tw.TensorArray),
    ("ops.image_ops", "resize_images", lambda: tw.image.resize_images),
    ("ops.special_math_ops", "einsum", lambda: tw.einsum),
    ("ops.gradients_impl", "gradients", lambda: tw.gradients),
    ("ops.metrics", "accuracy", lambda: tw.metrics.accuracy),
    ("ops.losses.losses", "mean_squared_error", lambda: tw.losses.mean_squared_error),
    ("training.training", "AdamOptimizer", lambda: tw.train.AdamOptimizer),
    ("training.adam", "AdamOptimizer", lambda: tw.train.AdamOptimizer),
    ("training.saver", "Saver", lambda: tw.train.Saver),
    ("training.saver", "import_meta_graph", lambda: tw.train.import_meta_graph),
    ("training.checkpoint_utils", "load_variable", lambda: tw.train.load_variable),
    ("training.monitored_session", "MonitoredTrainingSession",
     lambda: tw.train.MonitoredTrainingSession),
    ("training.queue_runner_impl", "QueueRunner", lambda: tw.train.QueueRunner),
    ("client.session", "Session", lambda: tw.Session),
    ("platform.gfile", "GFile", lambda: tw.gfile.GFile),
    ("platform.tf_logging", "info", lambda: tw.logging.info),
    ("platform.flags", "FLAGS", lambda: tw.flags.FLAGS),
    ("summary.summary", "FileWriter", lambda: tw.summary.FileWriter),
    ("util.compat", "as_bytes", lambda: tw.compat.as_bytes),
    ("layers.core", "dense", lambda: tw.layers.dense),
    ("layers.convolutional", "Conv2D", lambda: tw.layers.Conv2D),
    ("layers.normalization", "batch_normalization", lambda: tw.layers.batch_normalization),
    ("data.ops.dataset_ops", "Dataset", lambda: tw.data.Dataset),
])
def test_names_are_the_public_objects(path: str, name: str, public) -> None:
    module = importlib.import_module(f"tensorweave.python.{path}")
    assert getattr(module, name) is public()


def test_alias_packages_are_the_real_modules() -> None:
    import tensorweave.python.keras.layers as layers
    from tensorweave.python.estimator import estimator
    from tensorweave.python.keras import backend
    from tensorweave.python.saved_model import builder, tag_constants
    assert backend is importlib.import_module("tensorweave.keras.backend")
    assert layers is importlib.import_module("tensorweave.keras.layers")
    assert estimator.Estimator is tw.estimator.Estimator
    assert builder.SavedModelBuilder is tw.saved_model.Builder
    assert tag_constants.SERVING == tw.saved_model.SERVING
    # the real package keeps its own identity
    assert tw.keras.__spec__.name == "tensorweave.keras"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tensorweave.python.keras.no_such_module")


def test_device_lib_lists_the_local_cpu() -> None:
    from tensorweave.python.client import device_lib

    devices = device_lib.list_local_devices()
    cpus = [d for d in devices if d.device_type == "CPU"]
    assert [d.name for d in cpus] == ["/device:CPU:0"]
    assert cpus[0].memory_limit > 0 and cpus[0].incarnation != 0
    two = device_lib.list_local_devices(tw.ConfigProto(device_count={"CPU": 2}))
    assert [d.name for d in two if d.device_type == "CPU"] == ["/device:CPU:0", "/device:CPU:1"]


def test_timeline_writes_a_chrome_trace() -> None:
    from tensorweave.python.client import timeline

    with tw.Graph().as_default():
        x = tw.placeholder(tw.float32, [4, 4])  # fed, so constant folding leaves the matmul
        y = tw.matmul(x, x, name="mm")
        meta = tw.RunMetadata()
        with tw.Session() as sess:
            sess.run(y, {x: np.ones((4, 4), np.float32)},
                     options=tw.RunOptions(trace_level=tw.RunOptions.FULL_TRACE),
                     run_metadata=meta)
    trace = json.loads(timeline.Timeline(meta.step_stats).generate_chrome_trace_format())
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert any(e["args"]["name"] == "mm" and e["name"] == "MatMul" for e in slices)
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in slices)
    with pytest.raises(ValueError, match="step stats"):
        timeline.Timeline(tw.RunMetadata().step_stats).generate_chrome_trace_format()


def test_inspect_checkpoint_prints_saved_tensors(tmp_path, capsys) -> None:
    from tensorweave.python.tools import inspect_checkpoint

    with tw.Graph().as_default():
        tw.Variable(np.array([1.5, -2.0], np.float32), name="w")
        tw.Variable(np.int64(7), name="b")
        with tw.Session() as sess:
            sess.run(tw.global_variables_initializer())
            path = tw.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    inspect_checkpoint.print_tensors_in_checkpoint_file(path, "", all_tensors=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["tensor_name:  b", "7", "tensor_name:  w", str(np.array([1.5, -2.0]))]
    inspect_checkpoint.print_tensors_in_checkpoint_file(path, "w", all_tensors=False)
    assert capsys.readouterr().out.splitlines() == ["tensor_name:  w", "[ 1.5 -2. ]"]
    inspect_checkpoint.print_tensors_in_checkpoint_file(path, None, False, all_tensor_names=True)
    assert capsys.readouterr().out.splitlines() == ["tensor_name:  b", "tensor_name:  w"]
    with pytest.raises(tw.errors.NotFoundError):
        inspect_checkpoint.print_tensors_in_checkpoint_file(path, "nope", False)


def test_nest_flattens_and_packs_like_tf() -> None:
    from collections import namedtuple

    from tensorweave.python.util import nest

    pair = namedtuple("pair", "a b")
    structure = {"z": [1, (2, 3)], "a": pair(4, None)}
    assert nest.flatten(structure) == [4, None, 1, 2, 3]
    packed = nest.pack_sequence_as(structure, ["a", "b", "c", "d", "e"])
    assert packed == {"z": ["c", ("d", "e")], "a": pair("a", "b")}
    assert list(packed) == ["z", "a"] and isinstance(packed["a"], pair)
    assert nest.map_structure(lambda x, y: x * y, [1, (2,)], [3, (4,)]) == [3, (8,)]
    with pytest.raises(ValueError, match="2 elements"):
        nest.pack_sequence_as([1, 2], [1])
    with pytest.raises(ValueError):
        nest.assert_same_structure([1, 2], [1, [2]])
    with pytest.raises(TypeError):
        nest.assert_same_structure([1, 2], (1, 2))
    nest.assert_same_structure([1, 2], (1, 2), check_types=False)
    assert nest.is_sequence((1,)) and not nest.is_sequence("ab")


def test_a_script_using_only_private_paths_trains() -> None:
    from tensorweave.python.client import session
    from tensorweave.python.framework import dtypes, ops
    from tensorweave.python.ops import array_ops, init_ops, math_ops, variable_scope, variables
    from tensorweave.python.training import gradient_descent, training_util

    rng = np.random.default_rng(0)
    xs = rng.normal(size=(64, 3)).astype(np.float32)
    ys = xs @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 0.25
    with ops.Graph().as_default():
        x = array_ops.placeholder(dtypes.float32, [None, 3])
        y = array_ops.placeholder(dtypes.float32, [None, 1])
        w = variable_scope.get_variable("w", [3, 1], initializer=init_ops.zeros_initializer())
        b = variable_scope.get_variable("b", [1], initializer=init_ops.zeros_initializer())
        loss = math_ops.reduce_mean(math_ops.square(math_ops.matmul(x, w) + b - y))
        step = training_util.get_or_create_global_step()
        train = gradient_descent.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        with session.Session() as sess:
            sess.run(variables.global_variables_initializer())
            for _ in range(200):
                sess.run(train, {x: xs, y: ys})
            final, w_val, b_val, steps = sess.run([loss, w, b, step], {x: xs, y: ys})
    assert final < 1e-6 and steps == 200
    np.testing.assert_allclose(w_val.ravel(), [2.0, -1.0, 0.5], atol=1e-3)
    np.testing.assert_allclose(b_val, [0.25], atol=1e-3)
