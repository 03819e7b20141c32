"""Alias of ``tensorflow.python.ops.clip_ops``: re-exports tensorweave's clipping ops."""

from tensorweave.api.math_ops import clip_by_global_norm, clip_by_norm, clip_by_value, global_norm
from tensorweave.api.misc_ops import clip_by_average_norm
