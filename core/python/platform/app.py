"""Alias of ``tensorflow.python.platform.app``: re-exports `tensorweave.app`."""

from tensorweave.platform.app import *
