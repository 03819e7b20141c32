"""Alias of ``tensorflow.python.training.supervisor``: re-exports ``tf.train.Supervisor``."""

from tensorweave.train.supervisor import *
