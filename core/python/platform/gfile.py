"""Alias of ``tensorflow.python.platform.gfile``: re-exports `tensorweave.gfile`."""

from tensorweave.platform.gfile import *
