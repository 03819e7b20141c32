"""Alias of ``tensorflow.python.platform.flags``: re-exports `tensorweave.flags`."""

from tensorweave.platform.flags import *
