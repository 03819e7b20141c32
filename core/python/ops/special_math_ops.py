"""Alias of ``tensorflow.python.ops.special_math_ops``: re-exports the special functions and
``tf.einsum``.
"""

from tensorweave.api.linalg_ops import einsum
from tensorweave.api.special_math_ops import *
