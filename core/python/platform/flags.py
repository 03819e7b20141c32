"""Alias of ``tensorflow.python.platform.flags``: re-exports `tensorweave.flags`."""

from tensorweave.flags import *
