"""``tw.metrics``: the streaming metrics of ``tf.compat.v1.metrics``, each returning
``(value, update_op)`` over local variables."""

from tensorweave.api.metrics import *  # noqa: F403
