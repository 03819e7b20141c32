"""Alias of ``tensorflow.python.training.input``: re-exports the queue-based input pipeline."""

from tensorweave.train.input import *
