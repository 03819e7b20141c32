"""Alias of ``tensorflow.python.ops.image_ops``: re-exports `tensorweave.image`."""

from tensorweave.namespaces.image import *
