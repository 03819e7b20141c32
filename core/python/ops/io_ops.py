"""Alias of ``tensorflow.python.ops.io_ops``: re-exports the readers and ``tf.read_file``."""

from tensorweave.api.image_io_ops import read_file, write_file
from tensorweave.api.io_ops import *
