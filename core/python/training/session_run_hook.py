"""Alias of ``tensorflow.python.training.session_run_hook``: re-exports
``tf.train.SessionRunHook``.
"""

from tensorweave.train.session_run_hook import *
