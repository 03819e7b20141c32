"""Alias of ``tensorflow.python.training.optimizer``: re-exports ``tf.train.Optimizer``."""

from tensorweave.train.optimizers import Optimizer
