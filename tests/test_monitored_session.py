"""`Scaffold`, `SessionManager`, `MonitoredSession` and `MonitoredTrainingSession`, with real
sessions and checkpoint files; the last tests train on a real local ps/worker cluster."""

from __future__ import annotations

import glob
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.api.variables import uninitialized_variable_names
from tensorweave.engine import errors
from tensorweave.namespaces.summary import FileWriterCache
from tensorweave.train import monitored_session
from tensorweave.train.local_cluster import LocalCluster, free_ports
from tensorweave.train.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
    SessionManager,
    SingularMonitoredSession,
    WorkerSessionCreator,
)
from tensorweave.train.session_run_hook import SessionRunArgs, SessionRunHook
from tests.training import model, scalar_summaries, train_until_stopped

FEATURES = 4


@pytest.fixture(autouse=True)
def closed_writer_cache() -> Iterator[None]:
    """Training sessions with a summary directory open cached writers: close them."""
    yield
    FileWriterCache.clear()


# -- readiness and the scaffold ---------------------------------------------------------------

def test_report_uninitialized_variables_lists_positions_mapped_to_names() -> None:
    a = tf.Variable(1.0, name="a")
    tf.Variable(2.0, name="b")
    local = tf.Variable(3.0, name="c", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    report = tf.report_uninitialized_variables()
    only_a = tf.report_uninitialized_variables([a], name="only_a")
    assert report.dtype == tf.int64 and report.shape.as_list() == [None]
    with tf.Session() as sess:
        value = sess.run(report)
        assert value.dtype == np.int64 and value.tolist() == [0, 1, 2]
        sess.run([a.initializer, local.initializer])
        assert sess.run(report).tolist() == [1]
        assert uninitialized_variable_names(report, sess.run(report)) == ["b"]
        assert monitored_session._ready(report, sess, "not ready") == \
            (False, "Variables not initialized: b")
        assert monitored_session._ready(only_a, sess, "not ready") == (True, None)
    with tf.Graph().as_default(), tf.Session() as sess:
        empty = sess.run(tf.report_uninitialized_variables())
        assert empty.shape == (0,) and empty.dtype == np.int64


def test_scaffold_builds_defaults_into_collections_and_finalizes_the_graph() -> None:
    model()
    scaffold = Scaffold().finalize()
    graph = tf.get_default_graph()
    assert graph.finalized
    assert tf.get_collection(tf.GraphKeys.READY_OP) == [scaffold.ready_op]
    assert tf.get_collection(tf.GraphKeys.INIT_OP) == [scaffold.init_op]
    assert tf.get_collection(tf.GraphKeys.LOCAL_INIT_OP) == [scaffold.local_init_op]
    assert tf.get_collection(tf.GraphKeys.READY_FOR_LOCAL_INIT_OP) == \
        [scaffold.ready_for_local_init_op]
    assert tf.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]
    with pytest.raises(RuntimeError, match="Graph is finalized and cannot be modified."):
        tf.constant(1.0)
    assert Scaffold().finalize().saver is scaffold.saver  # taken from the collections
    assert scaffold.summary_op is None  # merge_all() of no summaries


def test_scaffold_summary_op_defaults_to_merge_all() -> None:
    m = model()
    tf.summary.scalar("objective", m["loss"])
    tf.summary.histogram("weight", m["w"])
    scaffold = Scaffold().finalize()
    assert scaffold.summary_op.op.type == "MergeSummary"
    assert [t.op.name for t in scaffold.summary_op.op.inputs] == ["objective", "weight"]
    assert tf.get_collection(tf.GraphKeys.SUMMARY_OP) == [scaffold.summary_op]
    assert Scaffold().finalize().summary_op is scaffold.summary_op
    given = tf.get_collection(tf.GraphKeys.SUMMARIES)[0]
    assert Scaffold(summary_op=given).finalize().summary_op is given


def test_scaffold_takes_given_ops_and_copies() -> None:
    model()
    init = tf.global_variables_initializer()
    saver = tf.train.Saver()
    base = Scaffold(init_op=init, saver=saver, init_feed_dict={"x": 1})
    copy = Scaffold(copy_from_scaffold=base, local_init_feed_dict={"y": 2})
    assert copy.init_op is init and copy.saver is saver and copy.init_feed_dict == {"x": 1}
    assert copy.local_init_feed_dict == {"y": 2}
    with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold"):
        Scaffold(copy_from_scaffold=object())  # type: ignore[arg-type]
    tf.add_to_collection(tf.GraphKeys.READY_OP, tf.report_uninitialized_variables())
    tf.add_to_collection(tf.GraphKeys.READY_OP, tf.report_uninitialized_variables())
    with pytest.raises(RuntimeError, match='More than one item in the collection "ready_op"'):
        Scaffold().finalize()


def test_init_fn_gets_the_scaffold_and_the_session() -> None:
    m = model()
    assign = tf.assign(m["w"], 2.0)  # built before the graph is finalized
    seen = []

    def init_fn(scaffold: Scaffold, sess: tf.Session) -> None:
        seen.append((scaffold, sess))
        sess.run(assign)

    scaffold = Scaffold(init_fn=init_fn)
    with SingularMonitoredSession(scaffold=scaffold) as sess:
        assert sess.run(m["w"]) == 2.0  # after the init op, init_fn ran
        assert seen == [(scaffold, sess.raw_session())]


# -- session manager --------------------------------------------------------------------------

def test_prepare_session_needs_something_to_initialize_with() -> None:
    tf.Variable(1.0)
    manager = SessionManager()
    with pytest.raises(RuntimeError, match="Model is not initialized and no init_op"):
        manager.prepare_session("")
    with pytest.raises(ValueError, match="must also pass a local_init_op"):
        SessionManager(ready_for_local_init_op=tf.report_uninitialized_variables())
    ready = tf.report_uninitialized_variables()
    with pytest.raises(RuntimeError, match="did not make model ready.*Variables not "
                                           "initialized: Variable"):
        SessionManager(ready_op=ready).prepare_session("", init_op=tf.no_op())


def test_wait_for_session_gives_up_at_its_deadline(caplog: pytest.LogCaptureFixture) -> None:
    tf.Variable(1.0, name="never_initialized")
    manager = SessionManager(ready_op=tf.report_uninitialized_variables(),
                             recovery_wait_secs=0.02)
    start = time.monotonic()
    with caplog.at_level(logging.INFO), \
            pytest.raises(errors.DeadlineExceededError, match="not ready after waiting"):
        manager.wait_for_session("", max_wait_secs=0.1)
    assert time.monotonic() - start < 2.0
    assert "Variables not initialized: never_initialized" in caplog.text


def test_recover_session_says_whether_it_restored(tmp_path: Path) -> None:
    m = model()
    saver = tf.train.Saver()
    manager = SessionManager(ready_op=tf.report_uninitialized_variables())
    sess, restored = manager.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert restored is False
    sess.run(tf.global_variables_initializer())
    sess.run(tf.assign(m["w"], 1.5))
    saver.save(sess, str(tmp_path / "model.ckpt"), global_step=3)
    sess.close()
    sess, restored = manager.recover_session("", saver=saver, checkpoint_dir=str(tmp_path))
    assert restored is True and sess.run(m["w"]) == 1.5
    with pytest.raises(ValueError, match="Can not provide both"):
        manager.recover_session("", saver=saver, checkpoint_dir=str(tmp_path),
                                checkpoint_filename_with_path=str(tmp_path / "model.ckpt-3"))


# -- monitored sessions -----------------------------------------------------------------------

def test_training_session_resumes_from_its_checkpoint_dir(tmp_path: Path) -> None:
    finals = []
    for _ in range(2):
        with tf.Graph().as_default():
            m = model()
            hooks = [tf.train.StopAtStepHook(num_steps=5)]
            with MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                          save_checkpoint_steps=2) as sess:
                steps = train_until_stopped(sess, [m["train"], m["global_step"]])
                assert len(steps) == 5
            finals.append(tf.train.load_variable(str(tmp_path), "global_step"))
            assert not tf.get_default_graph().finalized  # un-finalized on close
    assert finals == [5, 10]
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-10")
    np.testing.assert_allclose(tf.train.load_variable(str(tmp_path), "w"), 5.0 * 0.8 ** 10,
                               rtol=1e-5)


def test_training_session_defaults_checkpoint_every_600_secs(tmp_path: Path) -> None:
    m = model()
    with MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                  hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        train_until_stopped(sess, m["train"])
    names = sorted(n.removesuffix(".index") for n in os.listdir(tmp_path)
                   if n.startswith("model.ckpt-") and n.endswith(".index"))
    assert names == ["model.ckpt-0", "model.ckpt-3"]  # at creation and at the end


def test_training_session_writes_summaries_and_steps_per_second(tmp_path: Path) -> None:
    m = model()
    tf.summary.scalar("objective", m["loss"])
    with MonitoredTrainingSession(checkpoint_dir=str(tmp_path), save_summaries_steps=2,
                                  log_step_count_steps=2,
                                  hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
        train_until_stopped(sess, m["train"])
    got = scalar_summaries(tmp_path)  # one event file: both hooks use the cached writer
    objective = [(step, value) for step, tag, value in got if tag == "objective"]
    assert [step for step, _ in objective] == [1, 3, 5]
    np.testing.assert_allclose([value for _, value in objective],
                               [25.0, 25.0 * 0.8 ** 4, 25.0 * 0.8 ** 8], rtol=1e-6)
    rates = [(step, value) for step, tag, value in got if tag == "global_step/sec"]
    assert [step for step, _ in rates] == [3, 5] and all(value > 0 for _, value in rates)


def test_training_session_summary_defaults_and_switches(tmp_path: Path) -> None:
    m = model()
    tf.summary.scalar("objective", m["loss"])
    summaries, checkpoints = tmp_path / "summaries", tmp_path / "checkpoints"
    # By default: summaries every 100 steps (so only at the first one here), to summary_dir.
    with MonitoredTrainingSession(checkpoint_dir=str(checkpoints), summary_dir=str(summaries),
                                  hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        train_until_stopped(sess, m["train"])
    assert scalar_summaries(summaries) == [(1, "objective", 25.0)]
    assert not glob.glob(str(checkpoints / "events.*"))
    # save_summaries_secs alone replaces the step default (each session here starts at step
    # 0: there is no checkpoint); both None and no step counting write nothing.
    quiet = tmp_path / "quiet"
    with MonitoredTrainingSession(summary_dir=str(tmp_path / "hourly"),
                                  save_summaries_secs=3600, log_step_count_steps=None,
                                  hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        train_until_stopped(sess, m["train"])
    assert [step for step, *_ in scalar_summaries(tmp_path / "hourly")] == [1]
    with MonitoredTrainingSession(summary_dir=str(quiet), save_summaries_steps=None,
                                  save_summaries_secs=None, log_step_count_steps=None,
                                  hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        train_until_stopped(sess, m["train"])
    assert not quiet.exists()


def test_chief_only_hooks_run_first_and_only_on_the_chief(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(monitored_session, "RECOVERY_WAIT_SECS", 0.02)
    m = model()
    calls: list[str] = []

    class Named(SessionRunHook):
        def __init__(self, name: str) -> None:
            self.name = name

        def begin(self) -> None:
            calls.append(self.name)

    with MonitoredTrainingSession(hooks=[Named("hook")],
                                  chief_only_hooks=[Named("chief")]) as sess:
        sess.run(m["train"])
    # A non-chief on its own in-process master: nobody initializes its variables.
    with pytest.raises(errors.DeadlineExceededError):
        MonitoredTrainingSession(is_chief=False, hooks=[Named("worker hook")],
                                 chief_only_hooks=[Named("ignored")], max_wait_secs=0.1)
    assert calls == ["chief", "hook", "worker hook"]


def test_clean_ends_are_swallowed_and_call_end_but_errors_do_not() -> None:
    ends: list[Any] = []

    class EndHook(SessionRunHook):
        def end(self, session: Any) -> None:
            ends.append(session)

    v = tf.Variable(1.0)
    with MonitoredSession(hooks=[EndHook()]) as sess:
        sess.run(v)
        raise errors.OutOfRangeError(None, None, "input exhausted")
    assert len(ends) == 1 and isinstance(ends[0], tf.Session)
    with pytest.raises(KeyError), MonitoredSession(hooks=[EndHook()]) as sess:
        raise KeyError("boom")
    assert len(ends) == 1
    assert sess.should_stop() and sess._is_closed()
    with pytest.raises(RuntimeError, match="Session is already closed."):
        sess.close()


def test_run_after_a_stop_request_raises_and_feeds_of_two_hooks_may_not_overlap() -> None:
    x = tf.placeholder(tf.float32, [])

    class Stopper(SessionRunHook):
        def after_run(self, run_context: Any, run_values: Any) -> None:
            run_context.request_stop()

    class Feeder(SessionRunHook):
        def before_run(self, run_context: Any) -> SessionRunArgs:
            return SessionRunArgs(None, {x: 1.0})

    with MonitoredSession(hooks=[Stopper()]) as sess:
        assert sess.run(x, {x: 2.0}) == 2.0
        assert sess.should_stop()
        with pytest.raises(RuntimeError, match="Run called even after should_stop"):
            sess.run(x, {x: 2.0})
    with MonitoredSession(hooks=[Feeder(), Feeder()]) as sess, \
            pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
        sess.run(x)


def test_hook_run_options_are_merged_into_the_run() -> None:
    v = tf.Variable(1.0)
    seen = []

    class Tracer(SessionRunHook):
        def before_run(self, run_context: Any) -> SessionRunArgs:
            return SessionRunArgs(None, options=tf.RunOptions(output_partition_graphs=True))

        def after_run(self, run_context: Any, run_values: Any) -> None:
            seen.append((run_values.options.output_partition_graphs,
                         len(run_values.run_metadata.partition_graphs)))

    with MonitoredSession(hooks=[Tracer()]) as sess:
        sess.run(v)
    assert seen == [(True, 1)]


def test_singular_session_gives_its_raw_session_and_runs_step_fns() -> None:
    m = model()
    with SingularMonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=2)]) as sess:
        raw = sess.raw_session()
        assert isinstance(raw, tf.Session) and sess.graph is tf.get_default_graph()

        def step_fn(step_context: Any) -> Any:
            assert step_context.session is raw
            return step_context.run_with_hooks(m["train"]), step_context.session.run(m["w"])

        assert sess.run_step_fn(step_fn)[1] == pytest.approx(4.0)
        with pytest.raises(ValueError, match="`step_fn` may either have one `step_context`"):
            sess.run_step_fn(lambda ctx: None)

        def stop_fn(step_context: Any) -> None:
            step_context.request_stop()

        sess.run_step_fn(stop_fn)  # StopIteration: ends the with block cleanly
    assert sess.graph is None


class AbortOnceHook(SessionRunHook):
    """Fails the `fail_at`-th run (counting from 1) with `AbortedError`, as a lost ps would."""

    def __init__(self, fail_at: int) -> None:
        self.fail_at = fail_at
        self.runs = 0
        self.sessions: list[Any] = []

    def after_create_session(self, session: Any, coord: Any) -> None:
        self.sessions.append(session)

    def before_run(self, run_context: Any) -> None:
        self.runs += 1
        if self.runs == self.fail_at:
            raise errors.AbortedError(None, None, "ps task restarted")


def test_a_preempted_session_is_recreated_from_the_checkpoint(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    m = model()
    abort = AbortOnceHook(fail_at=6)
    hooks = [abort, tf.train.StopAtStepHook(last_step=8)]
    with caplog.at_level(logging.INFO), \
            MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks,
                                     save_checkpoint_steps=3) as sess:
        steps = train_until_stopped(sess, [m["train"], m["global_step"]])
    assert len(abort.sessions) == 2 and abort.sessions[0] is not abort.sessions[1]
    assert abort.sessions[0]._closed
    # Runs 1-5 reach step 5; the 6th run fails before running; the new session restores
    # step 3 (the last checkpoint) and trains on to 8 (a fetched step is read after its update).
    assert [int(s) for _, s in steps] == [1, 2, 3, 4, 5, 4, 5, 6, 7, 8]
    assert "The current session will be closed and a new session will be created" \
        in caplog.text
    assert tf.train.load_variable(str(tmp_path), "global_step") == 8


def test_a_singular_session_does_not_recover() -> None:
    model()
    with SingularMonitoredSession(hooks=[AbortOnceHook(fail_at=1)]) as sess, \
            pytest.raises(errors.AbortedError, match="ps task restarted"):
        sess.run(tf.train.get_global_step())


def test_a_coordinator_error_is_raised_by_should_stop() -> None:
    v = tf.Variable(1.0)

    class Reporter(SessionRunHook):
        def after_create_session(self, session: Any, coord: Any) -> None:
            self.coord = coord

    reporter = Reporter()
    with pytest.raises(ValueError, match="from a thread"), \
            MonitoredSession(hooks=[reporter]) as sess:
        sess.run(v)
        reporter.coord.request_stop(ValueError("from a thread"))
        sess.should_stop()


# -- a real cluster ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster() -> Any:
    with LocalCluster({"ps": 1, "worker": 2}) as local:
        yield local


def regression_graph(task: int, spec: Any) -> tuple[tf.Graph, dict[str, Any]]:
    """Worker `task`'s graph: linear regression, variables on the ps."""
    rng = np.random.default_rng(0)
    data = rng.normal(size=(64, FEATURES)).astype(np.float32)
    target = data @ np.arange(1, FEATURES + 1, dtype=np.float32)
    graph = tf.Graph()
    with graph.as_default(), tf.device(tf.train.replica_device_setter(
            cluster=spec, worker_device=f"/job:worker/task:{task}")):
        global_step = tf.train.get_or_create_global_step()
        w = tf.Variable(tf.zeros([FEATURES]), name="w")
        prediction = tf.reduce_sum(data * w, axis=1)
        loss = tf.reduce_mean(tf.square(prediction - target))
        train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)
    return graph, {"loss": loss, "train": train, "global_step": global_step,
                   "initial_loss": float(np.mean(target ** 2))}  # with w = 0


def test_chief_and_worker_train_together_on_a_cluster(
        cluster: LocalCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(monitored_session, "RECOVERY_WAIT_SECS", 0.05)
    last_step = 40
    losses: dict[int, list[float]] = {0: [], 1: []}
    finals: dict[int, dict[str, Any]] = {}
    failures: list[BaseException] = []
    worker_ready = threading.Event()

    class Rendezvous(SessionRunHook):
        """Holds the chief's first step until the worker has its session, so both train."""

        def __init__(self, task: int) -> None:
            self.task = task

        def after_create_session(self, session: Any, coord: Any) -> None:
            if self.task == 1:
                worker_ready.set()
            else:
                assert worker_ready.wait(30)

    def worker(task: int) -> None:
        try:
            graph, m = regression_graph(task, cluster.cluster)
            with graph.as_default():
                final = tf.train.FinalOpsHook({"step": m["global_step"], "loss": m["loss"]})
                hooks = [Rendezvous(task), tf.train.StopAtStepHook(last_step=last_step), final]
                with MonitoredTrainingSession(
                        master=cluster.target("worker", task), is_chief=task == 0,
                        checkpoint_dir=str(tmp_path) if task == 0 else None,
                        hooks=hooks) as sess:
                    while not sess.should_stop():
                        loss, _ = sess.run([m["loss"], m["train"]])
                        losses[task].append(float(loss))
                finals[task] = final.final_ops_values
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            failures.append(exc)

    with caplog.at_level(logging.INFO, logger="tensorweave.train.monitored_session"):
        non_chief = threading.Thread(target=worker, args=(1,))
        non_chief.start()
        deadline = time.monotonic() + 20
        while "Waiting for model to be ready" not in caplog.text:  # the worker waits...
            assert time.monotonic() < deadline and not failures, failures
            time.sleep(0.01)
        chief = threading.Thread(target=worker, args=(0,))  # ...until the chief initializes
        chief.start()
        for thread in (chief, non_chief):
            thread.join(60)
    assert not failures, failures
    assert losses[0] and losses[1]  # both trained
    final = max(int(f["step"]) for f in finals.values())
    # Each worker stops once it sees the step at `last_step`; the other may be a step or two
    # further by then (asynchronous training), as in TF.
    assert last_step <= final <= last_step + 2
    assert len(losses[0]) + len(losses[1]) == final
    # the chief's last checkpoint is its final step
    assert tf.train.load_variable(str(tmp_path), "global_step") == finals[0]["step"]
    initial = regression_graph(0, cluster.cluster)[1]["initial_loss"]
    assert max(losses[0][0], losses[1][0]) == pytest.approx(initial, rel=1e-5)
    # the last loss either one fetched is of a trained model (the chief, starved on a loaded
    # machine, may have run only the first steps, before the other did the rest)
    assert min(losses[0][-1], losses[1][-1]) < initial / 10
    assert all(f["loss"] < initial / 10 for f in finals.values())  # as each worker ended


def test_non_chief_gives_up_when_no_chief_initializes(
        cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(monitored_session, "RECOVERY_WAIT_SECS", 0.05)
    graph, _ = regression_graph(1, cluster.cluster)
    with graph.as_default():
        # fresh variable names: the ps still holds the previous test's initialized ones
        with tf.device("/job:ps/task:0"):
            tf.Variable(1.0, name="never_initialized_on_ps")
        creator = WorkerSessionCreator(master=cluster.target("worker", 1), max_wait_secs=0.3)
        with pytest.raises(errors.DeadlineExceededError, match="not ready after waiting"):
            MonitoredSession(session_creator=creator)
    assert isinstance(ChiefSessionCreator(), monitored_session.SessionCreator)


def test_training_survives_a_parameter_server_restart(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ps_port, worker_port = free_ports(2)
    spec = tf.train.ClusterSpec({"ps": [f"localhost:{ps_port}"],
                                 "worker": [f"localhost:{worker_port}"]})
    servers = {"ps": tf.train.Server(spec, "ps", 0)}
    worker = tf.train.Server(spec, "worker", 0)
    restarted = threading.Event()

    def restart_ps() -> None:
        time.sleep(0.2)  # the chief's runs fail meanwhile, and so do its new sessions
        servers["ps"] = tf.train.Server(spec, "ps", 0)
        restarted.set()

    with tf.device(tf.train.replica_device_setter(cluster=spec)):
        m = model()
    steps = []
    restarter = threading.Thread(target=restart_ps)
    try:
        with caplog.at_level(logging.INFO, logger="tensorweave.train.monitored_session"), \
                MonitoredTrainingSession(master=worker.target, checkpoint_dir=str(tmp_path),
                                         save_checkpoint_steps=3,
                                         hooks=[tf.train.StopAtStepHook(last_step=8)]) as sess:
            while not sess.should_stop():
                steps.append(int(sess.run([m["train"], m["global_step"]])[1]))
                if len(steps) == 5:  # the ps loses its variables
                    servers["ps"].stop()
                    servers["ps"].join(5)
                    restarter.start()
    finally:
        if restarter.is_alive():
            restarter.join(10)
        for server in (*servers.values(), worker):
            server.stop()
    assert restarted.is_set()
    # steps 1-5 ran (each fetched after its update); the new session restored the checkpoint
    # of step 3 from the new ps
    assert steps == [1, 2, 3, 4, 5, 4, 5, 6, 7, 8]
    assert "The current session will be closed and a new session will be created" in caplog.text
    assert tf.train.load_variable(str(tmp_path), "global_step") == 8
    np.testing.assert_allclose(tf.train.load_variable(str(tmp_path), "w"), 5.0 * 0.8 ** 8,
                               rtol=1e-5)
