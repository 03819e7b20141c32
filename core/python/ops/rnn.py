"""Alias of ``tensorflow.python.ops.rnn``: re-exports ``tf.nn.dynamic_rnn`` and friends."""

from tensorweave.api.rnn import *
