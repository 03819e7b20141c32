"""Alias of ``tensorflow.python.training.rmsprop``: re-exports ``tf.train.RMSPropOptimizer``."""

from tensorweave.train.optimizers import RMSPropOptimizer
