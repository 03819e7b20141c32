"""``tw.lookup``: ``tf.compat.v1.lookup`` (TF 1.15): static hash and vocabulary tables and their
initializers; the tables themselves live in `tensorweave.api.lookup_ops`."""

from tensorweave.api.lookup_ops import (
    KeyValueTensorInitializer,
    StaticHashTable,
    StaticVocabularyTable,
    TextFileIndex,
    TextFileInitializer,
)

__all__ = [
    "KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable", "TextFileIndex",
    "TextFileInitializer",
]
