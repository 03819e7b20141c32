"""Alias of ``tensorflow.python.training.basic_session_run_hooks``: re-exports the built-in
session-run hooks.
"""

from tensorweave.train.basic_session_run_hooks import *
