"""Alias of ``tensorflow.python.training.coordinator``: re-exports ``tf.train.Coordinator``."""

from tensorweave.train.coordinator import *
