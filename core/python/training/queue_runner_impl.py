"""Alias of ``tensorflow.python.training.queue_runner_impl``: re-exports ``tf.train.QueueRunner``.
"""

from tensorweave.train.queue_runner import *
