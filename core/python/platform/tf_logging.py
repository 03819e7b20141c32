"""Alias of ``tensorflow.python.platform.tf_logging``: re-exports `tensorweave.logging`."""

from tensorweave.platform.tf_logging import *
