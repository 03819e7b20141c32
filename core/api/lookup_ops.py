"""TF 1.15's lookup tables (``tf.compat.v1.lookup`` and ``tf.contrib.lookup``): static hash
tables filled by an initializer, vocabulary tables with out-of-vocabulary hash buckets, mutable
hash tables and the ``index_table_from_*`` / ``index_to_string_table_from_*`` helpers.

Contract: a table object wraps the string handle of its table op (`resource_handle`), built
outside any control dependencies; every method builds ops on that handle, which the placer
keeps on the table's device (tables are host-only, as in TF). A static table's initializer op
goes to ``GraphKeys.TABLE_INITIALIZERS`` (so `tw.tables_initializer()` runs it) and is the
table's `initializer` (``init`` for ``HashTable``); a text-file initializer's constant filename
also goes to ``GraphKeys.ASSET_FILEPATHS``, so a SavedModel carries the file. A
`StaticHashTable`'s shared name is TF's: ``hash_table_<file>_<vocab_size>_<key>_<value>`` for a
text file (tables of one file are one table, and a second initialization from it is harmless),
else a fresh uuid. `lookup` takes a `Tensor` (a Python value is converted to the key dtype) or a
`SparseTensor` (its values are looked up); a key dtype other than the table's is TF's
`TypeError` ("Signature mismatch. ..."), as are initializers whose dtypes do not fit the table.
Vocabulary tables give out-of-vocabulary keys the id ``vocab_size +
string_to_hash_bucket_fast(as_string(key), num_oov_buckets)`` (or the strong / keyed hash of a
`StrongHashSpec`). Constructor errors are TF's `ValueError`/`TypeError` texts; run-time
semantics and errors are those of `tensorweave.plugins.kernels.lookup`. A
`MutableHashTable(checkpoint=True)` shares its table by node name and adds a saveable to
``GraphKeys.SAVEABLE_OBJECTS``, so a default `Saver` checkpoints its contents as
``<table op name>-keys`` / ``-values`` (its export) and restores them with
``LookupTableImportV2``, which replaces the table's contents; static tables are not saved.
"""

from __future__ import annotations

import collections
import contextlib
import uuid
from typing import Any

from tensorweave.api import array_ops, math_ops, string_ops
from tensorweave.api.control_flow_ops import no_op
from tensorweave.api.scopes import colocate_with, name_scope
from tensorweave.api.sparse_tensor import SparseTensor
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import GraphKeys, Operation, Tensor, get_default_graph
from tensorweave.engine.graph.op_builder import make_op
from tensorweave.engine.tensor_shape import TensorShape
from tensorweave.train.saveable_object import SaveableObject, SaveSpec

__all__ = [
    "FastHashSpec", "HasherSpec", "HashTable", "IdTableWithHashBuckets",
    "InitializableLookupTableBase", "KeyValueTensorInitializer", "LookupInterface",
    "MutableHashTable", "StaticHashTable", "StaticVocabularyTable", "StrongHashSpec",
    "TableInitializerBase", "TextFileIdTableInitializer", "TextFileIndex", "TextFileInitializer",
    "TextFileStringTableInitializer", "index_table_from_file", "index_table_from_tensor",
    "index_to_string", "index_to_string_table_from_file", "index_to_string_table_from_tensor",
    "string_to_index",
]


def _check_table_dtypes(table: LookupInterface, key_dtype: dtypes.DType,
                        value_dtype: dtypes.DType) -> None:
    if key_dtype != table.key_dtype:
        raise TypeError(f"Invalid key dtype, expected {table.key_dtype} but got {key_dtype}.")
    if value_dtype != table.value_dtype:
        raise TypeError(f"Invalid value dtype, expected {table.value_dtype} but got "
                        f"{value_dtype}.")


def _table_op(op_type: str, attrs: dict[str, Any], name: str) -> Tensor:
    with get_default_graph().control_dependencies(None):  # state depends on nothing
        return make_op(op_type, [], attrs, name=name).outputs[0]


def _keys_of(keys: Any, key_dtype: dtypes.DType) -> Any:
    """`keys` as a Tensor or SparseTensor, a Python value converted to `key_dtype`; TF's
    `TypeError` when a tensor's dtype is not `key_dtype`."""
    if not isinstance(keys, (Tensor, SparseTensor)):
        keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
    if keys.dtype != key_dtype:
        raise TypeError(f"Signature mismatch. Keys must be dtype {key_dtype}, got "
                        f"{keys.dtype}.")
    return keys


def _like_keys(keys: Any, values: Tensor) -> Any:
    if isinstance(keys, SparseTensor):
        return SparseTensor(keys.indices, values, keys.dense_shape)
    return values


def _table_name(handle: Tensor) -> str:
    return handle.op.name.split("/")[-1]


class _KeyValueTyped:
    """Something of key and value dtypes: a table or what fills one."""

    def __init__(self, key_dtype: Any, value_dtype: Any) -> None:
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self) -> dtypes.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        return self._value_dtype


class LookupInterface(_KeyValueTyped):
    """A lookup table: its key and value dtypes, `size` and `lookup`."""

    @property
    def name(self) -> str | None:
        raise NotImplementedError

    def size(self, name: str | None = None) -> Tensor:
        raise NotImplementedError

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        raise NotImplementedError


class _ResourceTable(LookupInterface):
    """A table held in the resource `_resource_handle`, answering `_default_value` for
    missing keys."""

    _resource_handle: Tensor
    _default_value: Tensor

    @property
    def resource_handle(self) -> Tensor:
        return self._resource_handle

    @property
    def default_value(self) -> Tensor:
        return self._default_value

    def _size_op(self, name: str | None, colocate: bool) -> Tensor:
        with name_scope(name, f"{self.name}_Size", [self._resource_handle]):
            with colocate_with(self._resource_handle) if colocate else contextlib.nullcontext():
                return make_op("LookupTableSizeV2", [self._resource_handle]).outputs[0]

    def _export_op(self, name: str | None, default_name: str, colocate: bool,
                   value_shape: TensorShape) -> tuple[Tensor, Tensor]:
        """All keys, and their values of shape ``keys.shape + value_shape``."""
        with name_scope(name, default_name, [self._resource_handle]):
            with colocate_with(self._resource_handle) if colocate else contextlib.nullcontext():
                keys, values = make_op("LookupTableExportV2", [self._resource_handle],
                                       {"Tkeys": self._key_dtype,
                                        "Tvalues": self._value_dtype}).outputs
        values.set_shape(keys.shape.concatenate(value_shape))
        return keys, values


# -- initializers ---------------------------------------------------------------------------------

class TableInitializerBase(_KeyValueTyped):
    """What fills a static table: its key and value dtypes and `initialize(table)`."""

    def initialize(self, table: InitializableLookupTableBase) -> Operation:
        raise NotImplementedError

    @property
    def _shared_name(self) -> str:
        return ""


class KeyValueTensorInitializer(TableInitializerBase):
    """Fills a table with `keys[i] -> values[i]`."""

    def __init__(self, keys: Any, values: Any, key_dtype: Any = None, value_dtype: Any = None,
                 name: str | None = None) -> None:
        self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
        self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name if name is not None else "key_value_init"
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table: InitializableLookupTableBase) -> Operation:
        _check_table_dtypes(table, self._keys.dtype, self._values.dtype)
        with name_scope(self._name, values=(table.resource_handle, self._keys, self._values)):
            init_op = make_op("LookupTableImportV2",
                              [table.resource_handle, self._keys, self._values])
        get_default_graph().add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        return init_op


class TextFileIndex:
    """Special key and value indices of a `TextFileInitializer`."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer(TableInitializerBase):
    """Fills a table with one entry per line of a text file; see the kernels' docstring."""

    def __init__(self, filename: Any, key_dtype: Any, key_index: int, value_dtype: Any,
                 value_index: int, vocab_size: int | None = None, delimiter: str = "\t",
                 name: str | None = None) -> None:
        if not isinstance(filename, Tensor) and not filename:
            raise ValueError(f"Filename required for {name}.")
        key_dtype = dtypes.as_dtype(key_dtype)
        value_dtype = dtypes.as_dtype(value_dtype)
        if key_index < -2:
            raise ValueError(f"Invalid key index {key_index}.")
        if key_index == TextFileIndex.LINE_NUMBER and key_dtype != dtypes.int64:
            raise ValueError(f"Signature mismatch. Keys must be dtype {dtypes.int64}, got "
                             f"{key_dtype}.")
        if (key_index == TextFileIndex.WHOLE_LINE and not key_dtype.is_integer
                and key_dtype != dtypes.string):
            raise ValueError(f"Signature mismatch. Keys must be integer or string, got "
                             f"{key_dtype}.")
        if value_index < -2:
            raise ValueError(f"Invalid value index {value_index}.")
        if value_index == TextFileIndex.LINE_NUMBER and value_dtype != dtypes.int64:
            raise ValueError(f"Signature mismatch. Values must be dtype {dtypes.int64}, got "
                             f"{value_dtype}.")
        if value_index == TextFileIndex.WHOLE_LINE and value_dtype != dtypes.string:
            raise ValueError(f"Signature mismatch. Values must be dtype {dtypes.string}, got "
                             f"{value_dtype}.")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"Invalid vocab_size {vocab_size}.")
        self._filename = filename
        self._key_index = key_index
        self._value_index = value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._name = name
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table: InitializableLookupTableBase) -> Operation:
        _check_table_dtypes(table, self.key_dtype, self.value_dtype)
        with name_scope(self._name, "text_file_init", (table.resource_handle,)):
            filename = convert_to_tensor(self._filename, dtypes.string, name="asset_filepath")
            init_op = make_op(
                "InitializeTableFromTextFileV2", [table.resource_handle, filename],
                {"key_index": self._key_index, "value_index": self._value_index,
                 "vocab_size": -1 if self._vocab_size is None else self._vocab_size,
                 "delimiter": self._delimiter})
        graph = get_default_graph()
        graph.add_to_collection(GraphKeys.TABLE_INITIALIZERS, init_op)
        if filename.op.type == "Const":  # a fed or computed filename is no asset
            graph.add_to_collection(GraphKeys.ASSET_FILEPATHS, filename)
        return init_op

    @property
    def _shared_name(self) -> str:
        if self._vocab_size:
            return (f"hash_table_{self._filename}_{self._vocab_size}_{self._key_index}_"
                    f"{self._value_index}")
        return f"hash_table_{self._filename}_{self._key_index}_{self._value_index}"


class TextFileStringTableInitializer(TextFileInitializer):
    """An int64 id -> string initializer from a text file (by default line number -> line)."""

    def __init__(self, filename: Any, key_column_index: int = TextFileIndex.LINE_NUMBER,
                 value_column_index: int = TextFileIndex.WHOLE_LINE,
                 vocab_size: int | None = None, delimiter: str = "\t",
                 name: str = "text_file_string_table_init") -> None:
        super().__init__(filename, dtypes.int64, key_column_index, dtypes.string,
                         value_column_index, vocab_size=vocab_size, delimiter=delimiter,
                         name=name)


class TextFileIdTableInitializer(TextFileInitializer):
    """A string -> int64 id initializer from a text file (by default line -> line number)."""

    def __init__(self, filename: Any, key_column_index: int = TextFileIndex.WHOLE_LINE,
                 value_column_index: int = TextFileIndex.LINE_NUMBER,
                 vocab_size: int | None = None, delimiter: str = "\t",
                 name: str = "text_file_id_table_init", key_dtype: Any = dtypes.string
                 ) -> None:
        super().__init__(filename, key_dtype, key_column_index, dtypes.int64,
                         value_column_index, vocab_size=vocab_size, delimiter=delimiter,
                         name=name)


# -- static tables --------------------------------------------------------------------------------

class InitializableLookupTableBase(_ResourceTable):
    """A table filled once by its initializer, with a scalar default value."""

    def __init__(self, default_value: Any, initializer: TableInitializerBase) -> None:
        super().__init__(initializer.key_dtype, initializer.value_dtype)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._default_value.shape.merge_with(TensorShape([]))
        self._initializer = initializer
        self._resource_handle = self._create_resource()
        self._init_op = self._initializer.initialize(self)

    def _create_resource(self) -> Tensor:
        raise NotImplementedError

    @property
    def initializer(self) -> Operation:
        return self._init_op

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries (int64 scalar)."""
        return self._size_op(name, colocate=False)

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The value of each key, the default value for missing ones; a `SparseTensor` for
        sparse keys."""
        keys = _keys_of(keys, self._key_dtype)
        key_tensor = keys.values if isinstance(keys, SparseTensor) else keys
        with name_scope(name, f"{self.name}_Lookup",
                        (self._resource_handle, key_tensor, self._default_value)):
            values = make_op("LookupTableFindV2",
                             [self._resource_handle, key_tensor, self._default_value]).outputs[0]
        values.set_shape(key_tensor.shape)
        return _like_keys(keys, values)


class StaticHashTable(InitializableLookupTableBase):
    """A hash table filled once by `initializer` (``tf.compat.v1.lookup.StaticHashTable``)."""

    def __init__(self, initializer: TableInitializerBase, default_value: Any,
                 name: str | None = None) -> None:
        self._shared_name = initializer._shared_name or f"hash_table_{uuid.uuid4()}"
        self._name = name or "hash_table"
        super().__init__(default_value, initializer)

    def _create_resource(self) -> Tensor:
        return _table_op("HashTableV2", {"shared_name": self._shared_name,
                                         "key_dtype": self._initializer.key_dtype,
                                         "value_dtype": self._initializer.value_dtype},
                         self._name)

    @property
    def name(self) -> str:
        return _table_name(self._resource_handle)

    def export(self, name: str | None = None) -> tuple[Tensor, Tensor]:
        """All keys and their values (`FailedPreconditionError` before initialization)."""
        return self._export_op(name, f"{self.name}_Export", colocate=False,
                               value_shape=TensorShape([]))


class HashTable(StaticHashTable):
    """``tf.contrib.lookup.HashTable``: a `StaticHashTable` whose initializer is also
    ``init``."""

    @property
    def init(self) -> Operation:
        return self.initializer


# -- out-of-vocabulary buckets --------------------------------------------------------------------

class HasherSpec(collections.namedtuple("HasherSpec", ["hasher", "key"])):
    """The hash function of out-of-vocabulary buckets: ``"fasthash"`` or ``"stronghash"``
    (keyed by `key`)."""

    __slots__ = ()


FastHashSpec = HasherSpec("fasthash", None)


class StrongHashSpec(HasherSpec):
    """The keyed strong hash, `key` two unsigned integers."""

    __slots__ = ()

    def __new__(cls, key: Any) -> StrongHashSpec:
        if len(key) != 2:
            raise ValueError(f"key must have size 2, got {len(key)}.")
        if not all(isinstance(k, int) for k in key):
            raise TypeError(f"Invalid key {key}. Must be unsigned integer values.")
        return super().__new__(cls, "stronghash", key)


def _as_string(tensor: Tensor) -> Tensor:
    return tensor if tensor.dtype == dtypes.string else string_ops.as_string(tensor)


def _hash_buckets(values: Tensor, num_buckets: int, hasher_spec: HasherSpec) -> Tensor:
    if not isinstance(hasher_spec, HasherSpec):
        raise TypeError(f"hasher_spec must be of type HasherSpec {hasher_spec}")
    if hasher_spec.hasher == "fasthash":
        return string_ops.string_to_hash_bucket_fast(_as_string(values), num_buckets,
                                                     name="hash_bucket")
    if hasher_spec.hasher == "stronghash":
        return string_ops.string_to_hash_bucket_strong(_as_string(values), num_buckets,
                                                       key=hasher_spec.key, name="hash_bucket")
    raise ValueError(f"Unknown hasher {hasher_spec.hasher}")


def _check_id_table(table_key_dtype: dtypes.DType, value_dtype: dtypes.DType,
                    key_dtype: dtypes.DType) -> None:
    supported = (dtypes.int64, dtypes.string)
    if table_key_dtype not in supported:
        raise TypeError(f"Invalid key dtype, expected one of {supported}, but got "
                        f"{table_key_dtype}.")
    if table_key_dtype.is_integer != key_dtype.is_integer:
        raise TypeError(f"Invalid key dtype, expected "
                        f"{'integer' if key_dtype.is_integer else 'non-integer'} but got "
                        f"{table_key_dtype}.")
    if value_dtype != dtypes.int64:
        raise TypeError(f"Invalid value dtype, expected {dtypes.int64} but got {value_dtype}.")


class _BucketedTable(LookupInterface):
    """Ids of a string/integer -> int64 table, out-of-vocabulary keys hashed into
    `num_oov_buckets` buckets after the table's ids."""

    def __init__(self, table: InitializableLookupTableBase | None, num_oov_buckets: int,
                 hasher_spec: HasherSpec, name: str | None, key_dtype: dtypes.DType) -> None:
        if not key_dtype.is_integer and key_dtype != dtypes.string:
            raise TypeError(f"Invalid key_dtype, expected integer or string, got {key_dtype}.")
        if not isinstance(hasher_spec, HasherSpec):
            raise TypeError(f"hasher_spec must be of type HasherSpec, got {hasher_spec}")
        self._table = table
        self._num_oov_buckets = num_oov_buckets
        self._hasher_spec = hasher_spec
        self._table_name = name.split("/")[-1] if name else None
        super().__init__(key_dtype, dtypes.int64)

    @property
    def name(self) -> str | None:
        return self._table_name

    @property
    def resource_handle(self) -> Tensor | None:
        return None if self._table is None else self._table.resource_handle

    @property
    def initializer(self) -> Operation:
        if self._table is not None:
            return self._table.initializer
        with name_scope(None, "init"):
            return no_op()

    def size(self, name: str | None = None) -> Tensor:
        """The table's size plus the number of buckets (int64 scalar)."""
        with name_scope(name, f"{self.name}_Size"):
            table_size = (self._table.size() if self._table is not None
                          else convert_to_tensor(0, dtype=dtypes.int64))
            return math_ops.add(table_size, convert_to_tensor(self._num_oov_buckets,
                                                              dtype=dtypes.int64))

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The id of each key; a `SparseTensor` for sparse keys."""
        keys = _keys_of(keys, self._key_dtype)
        values = keys.values if isinstance(keys, SparseTensor) else keys
        if self._table is not None and self._table.key_dtype == dtypes.int64:
            values = math_ops.cast(values, dtypes.int64)
        if self._num_oov_buckets == 0:
            return _like_keys(keys, self._table.lookup(values, name=name))
        with name_scope(name, f"{self.name}_Lookup"):
            buckets = _hash_buckets(values, self._num_oov_buckets, self._hasher_spec)
            if self._table is None:
                ids = buckets
            else:
                found = self._table.lookup(values)
                buckets = math_ops.add(buckets, self._table.size())
                known = math_ops.not_equal(found, self._table.default_value)
                ids = array_ops.where_v2(known, found, buckets)
        return _like_keys(keys, ids)


class IdTableWithHashBuckets(_BucketedTable):
    """``tf.contrib.lookup.IdTableWithHashBuckets``: `table`'s ids, out-of-vocabulary keys
    hashed into buckets after them (only buckets when `table` is None)."""

    def __init__(self, table: InitializableLookupTableBase | None, num_oov_buckets: int,
                 hasher_spec: HasherSpec = FastHashSpec, name: str | None = None,
                 key_dtype: Any = None) -> None:
        name = name.rstrip("/") if name else name
        if table is not None:
            key_dtype = table.key_dtype if key_dtype is None else dtypes.as_dtype(key_dtype)
            _check_id_table(table.key_dtype, table.value_dtype, key_dtype)
            name = name or table.name
        else:
            if num_oov_buckets <= 0:
                raise ValueError("oov_buckets must be > 0 if no table is supplied.")
            key_dtype = dtypes.string if key_dtype is None else dtypes.as_dtype(key_dtype)
            name = name or "hash_bucket"
        super().__init__(table, num_oov_buckets, hasher_spec, name, key_dtype)

    @property
    def init(self) -> Operation:
        return self.initializer


class StaticVocabularyTable(_BucketedTable):
    """``tf.compat.v1.lookup.StaticVocabularyTable``: the ids `initializer` gives,
    out-of-vocabulary keys hashed (``Fingerprint64``) into `num_oov_buckets` buckets after
    them."""

    def __init__(self, initializer: TableInitializerBase | None, num_oov_buckets: int,
                 lookup_key_dtype: Any = None, name: str | None = None) -> None:
        if num_oov_buckets <= 0:
            raise ValueError("oov_buckets must be > 0.")
        name = name.rstrip("/") if name else name
        table = None
        if initializer:
            key_dtype = (initializer.key_dtype if lookup_key_dtype is None
                         else dtypes.as_dtype(lookup_key_dtype))
            _check_id_table(initializer.key_dtype, initializer.value_dtype, key_dtype)
            table = HashTable(initializer, default_value=-1)
            name = name or table.name
        else:
            key_dtype = dtypes.string
            name = name or "hash_bucket"
        super().__init__(table, num_oov_buckets, FastHashSpec, name, key_dtype)


# -- helpers ---------------------------------------------------------------------------------------

def _check_num_oov_buckets(num_oov_buckets: int) -> None:
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got "
                         f"{num_oov_buckets}.")


def _id_table_key_dtype(dtype: Any) -> dtypes.DType:
    """`dtype` as a `DType`, which an id table's keys (integer or string) may have."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_integer and dtype != dtypes.string:
        raise TypeError("Only integer and string keys are supported.")
    return dtype


def _check_vocabulary_file(vocabulary_file: Any) -> None:
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")


def index_table_from_file(vocabulary_file: Any = None, num_oov_buckets: int = 0,
                          vocab_size: int | None = None, default_value: int = -1,
                          hasher_spec: HasherSpec = FastHashSpec,
                          key_dtype: Any = dtypes.string, name: str | None = None,
                          key_column_index: int = TextFileIndex.WHOLE_LINE,
                          value_column_index: int = TextFileIndex.LINE_NUMBER,
                          delimiter: str = "\t") -> LookupInterface:
    """A key -> int64 id table from a vocabulary file (by default line -> line number),
    out-of-vocabulary keys in `num_oov_buckets` hash buckets, else `default_value`."""
    _check_vocabulary_file(vocabulary_file)
    _check_num_oov_buckets(num_oov_buckets)
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}. "
                         f"vocabulary_file: {vocabulary_file}")
    key_dtype = _id_table_key_dtype(key_dtype)
    with name_scope(name, "string_to_index"):
        with name_scope(None, "hash_table"):
            init = TextFileIdTableInitializer(
                vocabulary_file, vocab_size=vocab_size,
                key_dtype=dtypes.int64 if key_dtype.is_integer else key_dtype,
                name="table_init", key_column_index=key_column_index,
                value_column_index=value_column_index, delimiter=delimiter)
            table: LookupInterface = HashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets,
                                           hasher_spec=hasher_spec, key_dtype=key_dtype)
        return table


def index_table_from_tensor(vocabulary_list: Any, num_oov_buckets: int = 0,
                            default_value: int = -1, hasher_spec: HasherSpec = FastHashSpec,
                            dtype: Any = dtypes.string, name: str | None = None
                            ) -> LookupInterface:
    """A key -> int64 id table from the 1-D `vocabulary_list` (key -> its index); duplicates
    fail the initializer at run time (`FailedPreconditionError`)."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    _check_num_oov_buckets(num_oov_buckets)
    dtype = _id_table_key_dtype(dtype)
    with name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(f"Expected {'integer' if dtype.is_integer else 'non-integer'}, "
                             f"got {keys.dtype}.")
        if not dtype.is_integer and keys.dtype != dtype:
            raise ValueError(f"Expected {dtype}, got {keys.dtype}.")
        values = math_ops.cast(array_ops.range(array_ops.size(keys)), dtypes.int64)
        with name_scope(None, "hash_table"):
            table_keys = math_ops.cast(keys, dtypes.int64) if keys.dtype.is_integer else keys
            init = KeyValueTensorInitializer(table_keys, values, table_keys.dtype,
                                             dtypes.int64, name="table_init")
            table: LookupInterface = HashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets=num_oov_buckets,
                                           hasher_spec=hasher_spec, key_dtype=dtype)
        return table


def index_to_string_table_from_file(vocabulary_file: Any, vocab_size: int | None = None,
                                    default_value: str = "UNK", name: str | None = None,
                                    key_column_index: int = TextFileIndex.LINE_NUMBER,
                                    value_column_index: int = TextFileIndex.WHOLE_LINE,
                                    delimiter: str = "\t") -> HashTable:
    """An int64 id -> string table from a vocabulary file (by default line number -> line),
    `default_value` for unknown ids."""
    _check_vocabulary_file(vocabulary_file)
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}.")
    with name_scope(name, "index_to_string"):
        init = TextFileStringTableInitializer(
            vocabulary_file, vocab_size=vocab_size, name="table_init",
            key_column_index=key_column_index, value_column_index=value_column_index,
            delimiter=delimiter)
        return HashTable(init, default_value)


def index_to_string_table_from_tensor(vocabulary_list: Any, default_value: str = "UNK",
                                      name: str | None = None) -> HashTable:
    """An int64 id -> string table from the 1-D string `vocabulary_list` (index -> entry)."""
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    with name_scope(name, "index_to_string"):
        vocabulary_list = convert_to_tensor(vocabulary_list, dtypes.string)
        keys = math_ops.cast(array_ops.range(array_ops.size(vocabulary_list)), dtypes.int64)
        init = KeyValueTensorInitializer(keys, vocabulary_list, dtypes.int64, dtypes.string,
                                         name="table_init")
        return HashTable(init, default_value)


def string_to_index(tensor: Any, mapping: Any, default_value: int = -1,
                    name: str | None = None) -> Any:
    """``tf.contrib.lookup.string_to_index``: each string's index in `mapping`."""
    table = index_table_from_tensor(vocabulary_list=mapping, default_value=default_value,
                                    name=name)
    return table.lookup(tensor)


def index_to_string(tensor: Any, mapping: Any, default_value: str = "UNK",
                    name: str | None = None) -> Any:
    """``tf.contrib.lookup.index_to_string``: the entry of `mapping` at each int64 index."""
    table = index_to_string_table_from_tensor(vocabulary_list=mapping,
                                              default_value=default_value, name=name)
    return table.lookup(tensor)


# -- mutable tables --------------------------------------------------------------------------------

class MutableHashTable(_ResourceTable):
    """``tf.contrib.lookup.MutableHashTable``: a table that `insert` and `remove` change; a
    vector `default_value` makes a table of vectors of its shape."""

    def __init__(self, key_dtype: Any, value_dtype: Any, default_value: Any,
                 name: str = "MutableHashTable", checkpoint: bool = True) -> None:
        super().__init__(key_dtype, value_dtype)
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        self._value_shape = self._default_value.shape
        self._checkpoint = checkpoint
        self._name = name
        attrs: dict[str, Any] = {"use_node_name_sharing": checkpoint,
                                 "key_dtype": self._key_dtype,
                                 "value_dtype": self._value_dtype}
        if self._value_shape.ndims == 0:
            self._resource_handle = _table_op("MutableHashTableV2", attrs, name)
        else:
            attrs["value_shape"] = self._value_shape
            self._resource_handle = _table_op("MutableHashTableOfTensorsV2", attrs, name)
        if checkpoint:
            get_default_graph().add_to_collection(
                GraphKeys.SAVEABLE_OBJECTS, _TableSaveable(self, self._resource_handle.op.name))

    @property
    def name(self) -> str:
        return _table_name(self._resource_handle)

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries (int64 scalar)."""
        return self._size_op(name, colocate=True)

    def lookup(self, keys: Any, name: str | None = None) -> Tensor:
        """The value of each key (shape ``keys.shape + value_shape``), the default value for
        missing ones."""
        with name_scope(name, f"{self.name}_lookup_table_find",
                        (self._resource_handle, keys, self._default_value)):
            keys = _keys_of(keys, self._key_dtype)
            with colocate_with(self._resource_handle):
                values = make_op("LookupTableFindV2",
                                 [self._resource_handle, keys, self._default_value]).outputs[0]
        values.set_shape(keys.shape.concatenate(self._value_shape))
        return values

    def insert(self, keys: Any, values: Any, name: str | None = None) -> Operation:
        """An op that maps each key to its value (replacing what was there)."""
        with name_scope(name, f"{self.name}_lookup_table_insert",
                        [self._resource_handle, keys, values]):
            keys = _keys_of(keys, self._key_dtype)
            values = convert_to_tensor(values, self._value_dtype, name="values")
            with colocate_with(self._resource_handle):
                return make_op("LookupTableInsertV2", [self._resource_handle, keys, values])

    def remove(self, keys: Any, name: str | None = None) -> Operation:
        """An op that removes `keys` (missing ones are ignored)."""
        keys = _keys_of(keys, self._key_dtype)
        with name_scope(name, f"{self.name}_lookup_table_remove",
                        (self._resource_handle, keys, self._default_value)):
            return make_op("LookupTableRemoveV2", [self._resource_handle, keys])

    def export(self, name: str | None = None) -> tuple[Tensor, Tensor]:
        """All keys and their values."""
        return self._export_op(name, f"{self.name}_lookup_table_export_values", colocate=True,
                               value_shape=self._value_shape)


class _TableSaveable(SaveableObject):
    """A mutable table's contents for a `Saver`: its keys and values, put back by import."""

    def __init__(self, table: MutableHashTable, name: str) -> None:
        keys, values = table.export()
        super().__init__(table, [SaveSpec(keys, "", f"{name}-keys"),
                                 SaveSpec(values, "", f"{name}-values")], name)

    def restore(self, restored_tensors: list[Tensor], restored_shapes: Any) -> Operation:
        keys, values = restored_tensors
        handle = self.op.resource_handle
        with name_scope(f"{self.name}_table_restore"), colocate_with(handle):
            return make_op("LookupTableImportV2", [handle, keys, values])
