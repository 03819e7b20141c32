"""``tf.contrib.data`` (TF 1.15): the iterator checkpointing helper
(`tensorweave.api.iterator_checkpoint`)."""

from tensorweave.api.iterator_checkpoint import make_saveable_from_iterator

__all__ = ["make_saveable_from_iterator"]
