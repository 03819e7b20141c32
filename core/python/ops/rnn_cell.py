"""Alias of ``tensorflow.python.ops.rnn_cell``: re-exports ``tf.nn.rnn_cell``."""

from tensorweave.api.rnn_cell import *
