"""Alias of ``tensorflow.python.ops.math_ops``: re-exports tensorweave's math ops."""

from tensorweave.api.complex_ops import *
from tensorweave.api.math_ops import *
from tensorweave.api.misc_ops import accumulate_n
from tensorweave.api.segment_ops import *
