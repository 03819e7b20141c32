"""The seed graph on a cluster: S += w * x + b with S, w and b on a parameter server.

Starts 1 ps and 2 worker processes on loopback (``tensorweave server`` on free ports), then, as
in TF1's between-graph replication, builds one graph per worker: the variables go to
``/job:ps/task:0`` through `replica_device_setter`, the arithmetic to that worker. The two
workers take turns; since they share the ps-held variables, fed x = 0..5 the sum runs
S = 1, 4, 9, 16, 25, 36 whichever worker did the step. The servers are stopped on exit, on an
error and on Ctrl-C.
"""

import tensorweave as tf
from tensorweave.train.local_cluster import LocalCluster

STEPS = 6


def build(cluster: tf.train.ClusterSpec, worker: int) -> tuple[tf.Graph, object, object, object]:
    """The graph worker `worker` runs: its variables on the ps, its arithmetic on itself."""
    graph = tf.Graph()
    with graph.as_default(), tf.device(tf.train.replica_device_setter(
            cluster=cluster, worker_device=f"/job:worker/task:{worker}")):
        x = tf.placeholder(tf.float32, shape=[], name="x")
        S = tf.Variable(0.0, name="S")
        w = tf.Variable(2.0, name="w")
        b = tf.Variable(1.0, name="b")
        update = tf.assign_add(S, w * x + b)
        init = tf.global_variables_initializer()
    return graph, x, update, init


def main() -> None:
    with LocalCluster({"ps": 1, "worker": 2}) as local:
        print(f"cluster: {local.cluster.as_dict()}")
        sessions, inits = [], []
        for worker in range(2):
            graph, x, update, init = build(local.cluster, worker)
            sessions.append((tf.Session(local.target("worker", worker), graph=graph), x, update))
            inits.append(init)
        try:
            sessions[0][0].run(inits[0])  # the ps holds one copy of S, w, b for both workers
            for step in range(STEPS):
                sess, x, update = sessions[step % 2]
                print(f"step {step} on /job:worker/task:{step % 2}: x = {step}, "
                      f"S = {sess.run(update, feed_dict={x: step}):g}")
        finally:
            for sess, _, _ in sessions:
                sess.close()


if __name__ == "__main__":
    main()
