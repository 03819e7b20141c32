"""``tf.contrib.lookup`` (TF 1.15): hash, vocabulary and mutable tables, their initializers and
the ``index_table_from_*`` / ``index_to_string_table_from_*`` helpers, all from
`tensorweave.api.lookup_ops` (``MutableDenseHashTable`` is not provided)."""

from tensorweave.api.lookup_ops import (
    FastHashSpec,
    HasherSpec,
    HashTable,
    IdTableWithHashBuckets,
    InitializableLookupTableBase,
    KeyValueTensorInitializer,
    LookupInterface,
    MutableHashTable,
    StrongHashSpec,
    TableInitializerBase,
    TextFileIdTableInitializer,
    TextFileIndex,
    TextFileInitializer,
    TextFileStringTableInitializer,
    index_table_from_file,
    index_table_from_tensor,
    index_to_string,
    index_to_string_table_from_file,
    index_to_string_table_from_tensor,
    string_to_index,
)

__all__ = [
    "FastHashSpec", "HashTable", "HasherSpec", "IdTableWithHashBuckets",
    "InitializableLookupTableBase", "KeyValueTensorInitializer", "LookupInterface",
    "MutableHashTable", "StrongHashSpec", "TableInitializerBase", "TextFileIdTableInitializer",
    "TextFileIndex", "TextFileInitializer", "TextFileStringTableInitializer",
    "index_table_from_file", "index_table_from_tensor", "index_to_string",
    "index_to_string_table_from_file", "index_to_string_table_from_tensor", "string_to_index",
]
