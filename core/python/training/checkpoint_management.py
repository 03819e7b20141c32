"""Alias of ``tensorflow.python.training.checkpoint_management``: re-exports the checkpoint-state
helpers.
"""

from tensorweave.train.checkpoint_management import *
