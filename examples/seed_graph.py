"""The seed graph of the project: S += w * x + b, run for a few steps.

A plain TF1 graph-mode script; only the import differs from TensorFlow's
(``import tensorflow.compat.v1 as tf``). Fed x = 0..4 it prints S = 1, 4, 9, 16, 25.
"""

import tensorweave as tf


def main() -> None:
    x = tf.placeholder(tf.float32, shape=[], name="x")
    S = tf.Variable(0.0, name="S")
    w = tf.Variable(2.0, name="w")
    b = tf.Variable(1.0, name="b")
    update = tf.assign_add(S, w * x + b)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(5):
            print(f"step {step}: x = {step}, S = {sess.run(update, feed_dict={x: step}):g}")


if __name__ == "__main__":
    main()
