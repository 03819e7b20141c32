"""Alias of ``tensorflow.python.training.adagrad``: re-exports ``tf.train.AdagradOptimizer``."""

from tensorweave.train.optimizers import AdagradOptimizer
