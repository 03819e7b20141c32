"""The plugin system: entry points, blocking, failures, conflicts and priorities."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import errors, plugin_manager
from tensorweave.engine.plugin_manager import PluginLoadWarning
from tensorweave.engine.registry import PluginConflictError, PluginError
from tests.plugin_dist import install_plugin

CUSTOM_OP = '''
import tensorweave as tw
from tensorweave.engine.op_def import REQUIRED


@tw.hookimpl
def tensorweave_register_ops(registry):
    registry.op("TimesThreePlusOne", ["x:T"], infer=lambda ctx: [ctx.inputs[0]],
                attrs={"T": REQUIRED})


@tw.hookimpl
def tensorweave_register_kernels(registry):
    registry.add("TimesThreePlusOne", "CPU", lambda ctx, x: x * ctx.xp.asarray(3, x.dtype) + 1)
'''

REPLACE_ADD = '''
import tensorweave as tw


@tw.hookimpl
def tensorweave_register_kernels(registry):
    registry.add("AddV2", "CPU", lambda ctx, x, y: ctx.xp.add(x, y) + 100, priority=PRIORITY)
'''


@pytest.fixture(autouse=True)
def fresh_registries(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TENSORWEAVE_DISABLE_PLUGINS", raising=False)
    monkeypatch.delenv("TENSORWEAVE_STRICT_PLUGINS", raising=False)
    plugin_manager.reset()
    yield
    monkeypatch.undo()
    plugin_manager.reset()


def test_builtins_register_through_entry_points():
    infos = {p.name: p for p in plugin_manager.get_registries().plugins}
    for name in ("standard_ops", "cpu", "partitioner", "cse", "constant_folding", "grpc"):
        assert infos[name].status == "loaded"
        assert infos[name].module == f"tensorweave.plugins.{name}"
    assert plugin_manager.get_registries().ops.plugin_of("AddV2") == "standard_ops"


def test_third_party_op_runs_through_public_api(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_times_three", CUSTOM_OP)
    x = tf.placeholder(tf.int32, [3])
    y = tf.raw_ops.TimesThreePlusOne(x=x)
    assert y.dtype == tf.int32 and y.shape.as_list() == [3]
    with tf.Session() as sess:
        out = sess.run(y, {x: [1, 2, 3]})
    np.testing.assert_array_equal(out, [4, 7, 10])
    assert out.dtype == np.int32
    info = {p.name: p for p in plugin_manager.get_registries().plugins}["tw_times_three"]
    assert info.version == "1.2.3" and info.status == "loaded"


def test_third_party_kernel_replaces_builtin_by_priority(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_fast_add", REPLACE_ADD.replace("PRIORITY", "10"))
    with tf.Session() as sess:
        assert sess.run(tf.constant(1.0) + tf.constant(2.0)) == 103.0


def test_equal_priority_conflict_names_both_plugins(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_rival_add", REPLACE_ADD.replace("PRIORITY", "0"))
    with pytest.raises(PluginConflictError, match="'cpu'.*'tw_rival_add'|'tw_rival_add'.*'cpu'"):
        plugin_manager.get_registries()


def test_op_name_conflict_names_both_plugins(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_dup_op", '''
        import tensorweave as tw

        @tw.hookimpl
        def tensorweave_register_ops(registry):
            registry.op("AddV2", ["x:T", "y:T"], infer=lambda ctx: [ctx.inputs[0]])
    ''')
    with pytest.raises(PluginConflictError,
                       match="standard_ops.*tw_dup_op|tw_dup_op.*standard_ops"):
        plugin_manager.get_registries()


def test_broken_plugin_warns_and_the_rest_load(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_broken", "raise RuntimeError('boom')\n")
    with pytest.warns(PluginLoadWarning, match="tw_broken.*boom"):
        registries = plugin_manager.get_registries()
    status = {p.name: p.status for p in registries.plugins}
    assert status["tw_broken"].startswith("failed")
    assert status["cpu"] == "loaded"
    with tf.Session() as sess:
        assert sess.run(tf.constant(2.0) * 3.0) == 6.0


def test_strict_mode_turns_a_broken_plugin_into_an_error(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_broken2", "raise RuntimeError('boom')\n")
    monkeypatch.setenv("TENSORWEAVE_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="tw_broken2"):
        plugin_manager.get_registries()


def test_disabled_plugin_is_never_imported(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_never", "raise RuntimeError('imported')\n")
    monkeypatch.setenv("TENSORWEAVE_DISABLE_PLUGINS", "tw_never, cse")
    registries = plugin_manager.get_registries()  # no warning: never imported
    status = {p.name: p.status for p in registries.plugins}
    assert status["tw_never"] == "disabled" and status["cse"] == "disabled"
    assert all(p.name != "cse" for p in registries.passes)


def test_blocking_cpu_gives_a_clear_missing_kernel_error(monkeypatch):
    monkeypatch.setenv("TENSORWEAVE_DISABLE_PLUGINS", "cpu")
    plugin_manager.reset()
    y = tf.constant(1.0) + tf.constant(2.0)
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                             match="No kernel for op .* on device type CPU"):
        sess.run(y)


def test_registries_are_built_once_and_frozen():
    first = plugin_manager.get_registries()
    assert plugin_manager.get_registries() is first
    with pytest.raises(PluginError, match="frozen"):
        first.ops.bind("late").op("Late", [], infer=lambda ctx: [])
    with pytest.raises(PluginError, match="frozen"):
        first.kernels.bind("late").add("Late", "CPU", lambda ctx: None)


def test_no_hook_is_called_per_step(monkeypatch):
    registries = plugin_manager.get_registries()
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0 + 1.0
    with tf.Session() as sess:
        sess.run(y, {x: 1.0})
        calls = []
        monkeypatch.setattr(registries.manager, "hook", _Recorder(calls))
        for i in range(5):
            assert sess.run(y, {x: float(i)}) == 2.0 * i + 1.0
    assert calls == []


class _Recorder:
    def __init__(self, calls: list) -> None:
        self._calls = calls

    def __getattr__(self, name: str):
        self._calls.append(name)
        raise AssertionError(f"hook {name} called during a step")


MISSPELLED = '''
import tensorweave as tw


@tw.hookimpl
def tensorweave_register_op(registry):  # the spec is tensorweave_register_ops
    pass
'''


def test_a_misspelled_hook_fails_the_plugin_naming_it(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_typo", MISSPELLED)
    with pytest.warns(PluginLoadWarning, match="tw_typo.*'tensorweave_register_op'.*no hook spec"):
        registries = plugin_manager.get_registries()
    status = {p.name: p.status for p in registries.plugins}
    assert status["tw_typo"].startswith("failed") and "tensorweave_register_op" in status["tw_typo"]
    assert "tw_typo" not in dict(registries.manager.list_name_plugin())
    monkeypatch.setenv("TENSORWEAVE_STRICT_PLUGINS", "1")
    plugin_manager.reset()
    with pytest.raises(PluginError, match="tw_typo.*tensorweave_register_op"):
        plugin_manager.get_registries()


RAISING_HOOK = '''
import tensorweave as tw


@tw.hookimpl
def tensorweave_register_ops(registry):
    registry.op("HalfRegistered", [], infer=lambda ctx: [])
    raise ValueError("registration went wrong")  # the plugin's own line
'''


def test_a_plugin_whose_hook_raises_is_left_out(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_raises", RAISING_HOOK)
    with pytest.warns(PluginLoadWarning, match="tw_raises.*tensorweave_register_ops.*went wrong"
                      ) as caught:
        registries = plugin_manager.get_registries()
    assert caught[0].filename.endswith("tw_raises.py") and caught[0].lineno == 8
    status = {p.name: p.status for p in registries.plugins}
    assert status["tw_raises"].startswith("failed")
    assert "HalfRegistered" not in registries.ops  # nothing of it stays
    with tf.Session() as sess:  # the rest serve
        assert sess.run(tf.constant(2.0) * 3.0) == 6.0
    monkeypatch.setenv("TENSORWEAVE_STRICT_PLUGINS", "1")
    plugin_manager.reset()
    with pytest.raises(PluginError, match="tw_raises"):
        plugin_manager.get_registries()


RAISING_DEVICES = '''
import tensorweave as tw


@tw.hookimpl
def tensorweave_devices(task, config):
    raise OSError("no such device")
'''


def test_a_raising_devices_hook_is_reported_and_sessions_still_run(tmp_path, monkeypatch):
    from tensorweave.cli import describe_plugins

    install_plugin(tmp_path, monkeypatch, "tw_nodev", RAISING_DEVICES)
    with pytest.warns(PluginLoadWarning, match="tw_nodev.*tensorweave_devices.*no such device"):
        with tf.Session() as sess:
            assert sess.run(tf.constant(1.0) + 1.0) == 2.0
    lines = describe_plugins(plugin_manager.get_registries())
    i = next(i for i, line in enumerate(lines) if line.startswith("tw_nodev"))
    assert "failed: tensorweave_devices: OSError('no such device')" in lines[i + 1]


REPLACING_PASS = '''
import tensorweave as tw
from tensorweave.engine.runtime.passes import Pass

RUNS = []


def run(graph_def, ctx):
    RUNS.append(len(graph_def.node))
    return graph_def


@tw.hookimpl
def tensorweave_graph_passes():
    return [Pass("my_cse", "pre_placement", 10, run, replaces=NAME)]
'''


def test_a_pass_that_replaces_a_builtin_runs_instead_of_it(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_my_cse", REPLACING_PASS.replace("NAME", '"cse"'))
    registries = plugin_manager.get_registries()
    names = [p.name for p in registries.passes]
    assert "my_cse" in names and "cse" not in names
    import tw_my_cse

    a = tf.constant([1.0, 2.0])
    with tf.Session() as sess:
        assert list(sess.run(tf.exp(a) + tf.exp(a))) == pytest.approx(list(2 * np.exp([1, 2])))
    assert tw_my_cse.RUNS  # it ran in the pipeline


def test_two_plugins_replacing_one_pass_conflict_naming_both(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_cse_a", REPLACING_PASS.replace("NAME", '"cse"'))
    install_plugin(tmp_path, monkeypatch, "tw_cse_b", REPLACING_PASS.replace("NAME", '"cse"'))
    with pytest.raises(PluginConflictError, match="'cse'.*tw_cse_a.*tw_cse_b"):
        plugin_manager.get_registries()


COUNTING_COPY = '''
import tensorweave as tw

CALLS = []


@tw.hookimpl
def tensorweave_copy_tensor(src, dst, value):
    CALLS.append((src.name, dst.name))
    return value.copy()
'''


def test_the_copy_hook_is_resolved_once_per_device_pair(tmp_path, monkeypatch):
    install_plugin(tmp_path, monkeypatch, "tw_copies", COUNTING_COPY)
    import tw_copies

    registries = plugin_manager.get_registries()
    from tensorweave.engine.client.config import ConfigProto
    from tensorweave.engine.runtime.device import TaskSpec
    from tensorweave.engine.runtime.worker import Worker

    worker = Worker(TaskSpec(), ConfigProto(device_count={"CPU": 2}), registries)
    cpu0, cpu1 = worker.devices[:2]
    hook = registries.manager.hook
    calls = []
    monkeypatch.setattr(registries.manager, "hook", _Recorder(calls))
    with pytest.raises(AssertionError):  # the first copy of the pair resolves through the hook
        worker.copy_tensor(cpu0.name, cpu1, np.ones(3))
    monkeypatch.setattr(registries.manager, "hook", hook)
    first = worker.copy_tensor(cpu0.name, cpu1, np.ones(3))
    monkeypatch.setattr(registries.manager, "hook", _Recorder(calls))
    for _ in range(3):  # later copies of the pair call the chosen implementation directly
        assert list(worker.copy_tensor(cpu0.name, cpu1, np.arange(3.0))) == [0.0, 1.0, 2.0]
    assert list(first) == [1.0, 1.0, 1.0]
    assert tw_copies.CALLS == [(cpu0.name, cpu1.name)] * 4
    worker.close()


def test_the_engine_runs_a_graph_of_its_own_ops_without_standard_ops(monkeypatch):
    monkeypatch.setenv("TENSORWEAVE_DISABLE_PLUGINS", "standard_ops")
    plugin_manager.reset()
    registries = plugin_manager.get_registries()
    assert "AddV2" not in registries.ops
    assert {"Const", "Placeholder", "Identity", "NoOp", "_Send", "_Recv"} <= set(
        registries.ops.names())
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        y = tf.identity(x)
        with tf.control_dependencies([tf.no_op()]):
            z = tf.identity(tf.constant(3.0))
        with tf.Session() as sess:
            assert sess.run(z) == 3.0
            assert list(sess.run(y, {x: [1.0, 2.0]})) == [1.0, 2.0]
