"""Alias of ``tensorflow.python.training.adam``: re-exports ``tf.train.AdamOptimizer``."""

from tensorweave.train.optimizers import AdamOptimizer
