"""Alias of ``tensorflow.python.training.ftrl``: re-exports ``tf.train.FtrlOptimizer``."""

from tensorweave.train.ftrl import *
