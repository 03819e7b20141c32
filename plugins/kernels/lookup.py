"""Kernels of TF1's lookup tables (CPU only: TF keeps tables in host memory).

Contract: a table lives in its device's resource store under ``table:<shared_name>`` (the node
name when the shared name is empty), created by the first run of its table op
(`resources.make_handle`); a second table op of the same name must be of the same op type, key
and value dtypes and value shape (`InvalidArgumentError`, TF's "Conflicting key/value dtypes"
words). Keys are held as Python ints or bytes, values as Python scalars (tuples for a
``MutableHashTableOfTensorsV2``), both copied out of the input arrays.

Semantics (TF's): a ``HashTableV2`` is filled once, by ``InitializeTableV2`` or
``LookupTableImportV2`` (keys and values of one shape), or by ``InitializeTableFromTextFileV2``;
until then a find is a `FailedPreconditionError` ("Table not initialized.") and its size 0. A
second initialization is a `FailedPreconditionError` ("Table already initialized."), except from
a text file, which leaves the table as it is; a key given twice with different values is a
`FailedPreconditionError` ("HashTable has different value for same key...") and leaves the table
uninitialized. Insert and remove on it are `UnimplementedError`. A mutable table inserts (last
value wins), removes (missing keys ignored), and imports by replacing its content; initializing
it is an `InvalidArgumentError` ("... is not initializable"). A find gives, for keys of shape
``S``, values of shape ``S + value_shape``, the default value (of exactly ``value_shape``) for
missing keys. Export gives the keys in insertion order and their values. An op whose key or value
dtype differs from the table's is an `InvalidArgumentError` ("Key must be type ...").

Text files (``InitializeTableFromTextFileV2``): one entry per line (lines end at ``\\n``, a
``\\r`` before it dropped), read up to ``vocab_size`` lines when it is not -1; a key or value is
the whole line (index -2), the 0-based line number (-1, int64 only) or the field at that index
of the line split at the one-character delimiter. Errors, each an `InvalidArgumentError` in TF's
words unless said: a missing file (`NotFoundError`), an empty line, a line with too few fields,
a field that is not a valid number of the dtype, fewer lines than ``vocab_size``, an empty file
(`OutOfRangeError`, as TF's), dtypes that the indices do not allow.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext
from tensorweave.engine.tensor_shape import TensorShape, format_dims
from tensorweave.plugins.kernels.file_access import checked_path
from tensorweave.plugins.kernels.resources import find, make_handle
from tensorweave.plugins.standard_ops.lookup import LINE_NUMBER, TABLE_OPS, WHOLE_LINE

_INTEGER = re.compile(rb"\s*[+-]?\d+\s*")
_INT_RANGES = {dtypes.int32: (-(2 ** 31), 2 ** 31 - 1), dtypes.int64: (-(2 ** 63), 2 ** 63 - 1)}


class Table:
    """One table's entries and settings; every access holds `lock`."""

    def __init__(self, kind: str, name: str, key_dtype: dtypes.DType,
                 value_dtype: dtypes.DType, value_shape: tuple[int, ...]) -> None:
        self.kind = kind
        self.name = name
        self.key_dtype = key_dtype
        self.value_dtype = value_dtype
        self.value_shape = value_shape
        self.initializable = kind == "HashTableV2"
        self.initialized = False
        self.data: dict[Any, Any] = {}
        self.lock = threading.Lock()

    def mismatch(self, kind: str, key_dtype: dtypes.DType, value_dtype: dtypes.DType,
                 value_shape: tuple[int, ...]) -> str | None:
        """Why a table op with these attrs cannot share this table, or None."""
        if kind != self.kind:
            return f"Shared table '{self.name}' is a {self.kind}, not a {kind}"
        if (key_dtype, value_dtype) != (self.key_dtype, self.value_dtype):
            return (f"Conflicting key/value dtypes {key_dtype.name}->{value_dtype.name} with "
                    f"{self.key_dtype.name}-{self.value_dtype.name} for table {self.name}")
        if value_shape != self.value_shape:
            return (f"Shared table '{self.name}' has value shape {_dims(self.value_shape)} but "
                    f"{_dims(value_shape)} was requested")
        return None


# -- conversions ---------------------------------------------------------------------------------

def _dims(shape: tuple[int, ...]) -> str:
    return format_dims(TensorShape(list(shape)))


def _keys(array: Any) -> list[Any]:
    keys = np.asarray(array).reshape(-1).tolist()
    return [k.encode() if isinstance(k, str) else k for k in keys]


def _values(array: Any, count: int, value_shape: tuple[int, ...]) -> list[Any]:
    values = np.asarray(array)
    if not value_shape:
        items = values.reshape(-1).tolist()
        return [v.encode() if isinstance(v, str) else v for v in items]
    return [tuple(row) for row in values.reshape(count, -1).tolist()]


def _show(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, tuple):
        return "[" + " ".join(_show(v) for v in value) + "]"
    return str(value)


def _output(items: list[Any], dtype: dtypes.DType, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(len(items), dtype=object) if dtype == dtypes.string else None
    if out is not None and not any(isinstance(v, tuple) for v in items):
        out[:] = items  # a list of bytes must not become a fixed-width bytes array
        return out.reshape(shape)
    return np.array(items, dtype=dtype.np_type).reshape(shape)


# -- checks --------------------------------------------------------------------------------------

def _invalid(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _check_types(ctx: KernelContext, table: Table, key_dtype: dtypes.DType,
                 value_dtype: dtypes.DType | None) -> None:
    if key_dtype != table.key_dtype:
        raise _invalid(ctx, f"Key must be type {table.key_dtype.name} but got {key_dtype.name}")
    if value_dtype is not None and value_dtype != table.value_dtype:
        raise _invalid(ctx, f"Value must be type {table.value_dtype.name} but got "
                       f"{value_dtype.name}")


def _check_pairs(ctx: KernelContext, table: Table, keys: Any, values: Any,
                 key_attr: str, value_attr: str) -> list[tuple[Any, Any]]:
    """The (key, value) pairs of an insert, import or initialization, checked as TF's."""
    _check_types(ctx, table, ctx.attrs[key_attr], ctx.attrs[value_attr])
    expected = tuple(keys.shape) + table.value_shape
    if tuple(values.shape) != expected:
        raise _invalid(ctx, f"Expected shape {_dims(expected)} for value, got "
                       f"{_dims(tuple(values.shape))}")
    flat = _keys(keys)
    return list(zip(flat, _values(values, len(flat), table.value_shape), strict=True))


def _table(ctx: KernelContext, handle: Any) -> Table:
    return find(ctx, handle, Table)


def _not_initializable(ctx: KernelContext, table: Table) -> errors.InvalidArgumentError:
    return _invalid(ctx, f"Table {table.name} is not initializable")


def _initialize(ctx: KernelContext, table: Table, pairs: list[tuple[Any, Any]],
                from_file: bool = False) -> None:
    with table.lock:
        if table.initialized:
            if from_file:  # TF: a table already filled from its file is left as it is
                return
            raise errors.FailedPreconditionError(ctx.node_name, ctx.op,
                                                 "Table already initialized.")
        data: dict[Any, Any] = {}
        for key, value in pairs:
            previous = data.setdefault(key, value)
            if previous != value:
                raise errors.FailedPreconditionError(
                    ctx.node_name, ctx.op, "HashTable has different value for same key. Key "
                    f"{_show(key)} has {_show(previous)} and trying to add value {_show(value)}")
        table.data = data
        table.initialized = True


# -- text files ----------------------------------------------------------------------------------

def _read_lines(ctx: KernelContext, filename: str) -> list[tuple[bytes, int]]:
    """Each line of `filename` and the file offset just past it."""
    checked_path(ctx, filename)
    try:
        with open(filename, "rb") as f:
            content = f.read()
    except FileNotFoundError as exc:
        raise errors.NotFoundError(ctx.node_name, ctx.op,
                                   f"{filename}; No such file or directory") from exc
    except OSError as exc:
        raise errors.UnknownError(ctx.node_name, ctx.op, f"{filename}; {exc.strerror}") from exc
    lines = []
    start = 0
    while start < len(content):
        end = content.find(b"\n", start)
        if end < 0:
            lines.append((content[start:], len(content)))
            break
        line = content[start:end]
        lines.append((line[:-1] if line.endswith(b"\r") else line, end + 1))
        start = end + 1
    return lines


def _field(ctx: KernelContext, token: bytes, line_number: int, dtype: dtypes.DType) -> Any:
    if dtype == dtypes.string:
        return token
    if dtype in _INT_RANGES:
        low, high = _INT_RANGES[dtype]
        if _INTEGER.fullmatch(token) and low <= int(token) <= high:
            return int(token)
    elif dtype in (dtypes.float32, dtypes.float64):
        try:
            if b"_" not in token:
                value = float(token)
                return float(np.float32(value)) if dtype == dtypes.float32 else value
        except ValueError:
            pass
    else:
        raise _invalid(ctx, f"Data type {dtype.name} not supported.")
    raise _invalid(ctx, f"Field {_show(token)} in line {line_number} is not a valid "
                   f"{dtype.name}.")


def _check_indices(ctx: KernelContext, table: Table, key_index: int, value_index: int) -> None:
    if key_index == LINE_NUMBER and table.key_dtype != dtypes.int64:
        raise _invalid(ctx, "Key index for line number requires table key dtype of int64, got "
                       f"{table.key_dtype.name}")
    if key_index == WHOLE_LINE and not (table.key_dtype.is_integer
                                        or table.key_dtype == dtypes.string):
        raise _invalid(ctx, "Key index for whole line requires string or integer table key, "
                       f"got {table.key_dtype.name}")
    if value_index == LINE_NUMBER and table.value_dtype != dtypes.int64:
        raise _invalid(ctx, "Value index for line number requires table value dtype of int64, "
                       f"got {table.value_dtype.name}")
    if value_index == WHOLE_LINE and table.value_dtype != dtypes.string:
        raise _invalid(ctx, "Value index for whole line requires table value dtype of string, "
                       f"got {table.value_dtype.name}")


def _text_file_pairs(ctx: KernelContext, table: Table, filename: str
                     ) -> list[tuple[Any, Any]]:
    key_index, value_index = ctx.attrs["key_index"], ctx.attrs["value_index"]
    vocab_size, delimiter = ctx.attrs["vocab_size"], ctx.attrs["delimiter"].encode()
    if len(delimiter) != 1:
        raise _invalid(ctx, "delimiter should be only 1 char")
    _check_indices(ctx, table, key_index, value_index)
    lines = _read_lines(ctx, filename)
    if not lines:
        raise errors.OutOfRangeError(ctx.node_name, ctx.op, f"{filename} is empty")
    if vocab_size != -1:
        if len(lines) < vocab_size:
            raise _invalid(ctx, f"Invalid vocab_size in {filename}: expected {vocab_size} but "
                           f"got {len(lines)}")
        lines = lines[:vocab_size]
    split = max(key_index, value_index) >= 0
    pairs = []
    for number, (line, offset) in enumerate(lines):
        if not line:
            raise _invalid(ctx, f"Invalid content in {filename}: empty line found at position "
                           f"{offset}.")
        tokens = line.split(delimiter) if split else []
        if split and max(key_index, value_index) >= len(tokens):
            raise _invalid(ctx, f"Invalid number of columns in {filename} line {number} "
                           f"({_show(line)}) : expected {max(key_index, value_index)} got "
                           f"{len(tokens)}")

        def pick(index: int, dtype: dtypes.DType, line: bytes = line, number: int = number,
                 tokens: list[bytes] = tokens) -> Any:
            if index == LINE_NUMBER:
                return number
            return _field(ctx, line if index == WHOLE_LINE else tokens[index], number, dtype)

        pairs.append((pick(key_index, table.key_dtype), pick(value_index, table.value_dtype)))
    return pairs


# -- kernels -------------------------------------------------------------------------------------

def table_op(ctx: KernelContext) -> Any:
    a = ctx.attrs
    key_dtype, value_dtype = a["key_dtype"], a["value_dtype"]
    value_shape = tuple(TensorShape(a.get("value_shape", [])).as_list())
    return make_handle(
        ctx, "table", lambda name: Table(ctx.op, name, key_dtype, value_dtype, value_shape),
        lambda table: table.mismatch(ctx.op, key_dtype, value_dtype, value_shape))


def find_values(ctx: KernelContext, handle: Any, keys: Any, default_value: Any) -> np.ndarray:
    table = _table(ctx, handle)
    _check_types(ctx, table, ctx.attrs["Tin"], ctx.attrs["Tout"])
    if tuple(default_value.shape) != table.value_shape:
        raise _invalid(ctx, f"Expected shape {_dims(table.value_shape)} for default value, got "
                       f"{_dims(tuple(default_value.shape))}")
    default = _values(default_value, 1, table.value_shape)[0]
    flat = _keys(keys)
    with table.lock:
        if table.initializable and not table.initialized:
            raise errors.FailedPreconditionError(ctx.node_name, ctx.op, "Table not initialized.")
        get = table.data.get
        found = [get(k, default) for k in flat]
    return _output(found, table.value_dtype, tuple(keys.shape) + table.value_shape)


def insert(ctx: KernelContext, handle: Any, keys: Any, values: Any) -> None:
    table = _table(ctx, handle)
    if table.initializable:
        raise errors.UnimplementedError(
            ctx.node_name, ctx.op,
            "Insert not supported by InitializableLookupTable implementations")
    pairs = _check_pairs(ctx, table, keys, values, "Tin", "Tout")
    with table.lock:
        table.data.update(pairs)


def remove(ctx: KernelContext, handle: Any, keys: Any) -> None:
    table = _table(ctx, handle)
    if table.initializable:
        raise errors.UnimplementedError(
            ctx.node_name, ctx.op,
            "Remove not supported by InitializableLookupTable implementations")
    _check_types(ctx, table, ctx.attrs["Tin"], None)
    with table.lock:
        for key in _keys(keys):
            table.data.pop(key, None)


def size(ctx: KernelContext, handle: Any) -> np.ndarray:
    table = _table(ctx, handle)
    with table.lock:
        return np.asarray(len(table.data), dtype=np.int64)


def export(ctx: KernelContext, handle: Any) -> tuple[np.ndarray, np.ndarray]:
    table = _table(ctx, handle)
    _check_types(ctx, table, ctx.attrs["Tkeys"], ctx.attrs["Tvalues"])
    with table.lock:
        if table.initializable and not table.initialized:
            raise errors.FailedPreconditionError(ctx.node_name, ctx.op, "Table not initialized.")
        keys, values = list(table.data), list(table.data.values())
    return (_output(keys, table.key_dtype, (len(keys),)),
            _output(values, table.value_dtype, (len(keys), *table.value_shape)))


def import_values(ctx: KernelContext, handle: Any, keys: Any, values: Any) -> None:
    table = _table(ctx, handle)
    pairs = _check_pairs(ctx, table, keys, values, "Tin", "Tout")
    if table.initializable:
        _initialize(ctx, table, pairs)
        return
    with table.lock:
        table.data = dict(pairs)


def initialize(ctx: KernelContext, handle: Any, keys: Any, values: Any) -> None:
    table = _table(ctx, handle)
    if not table.initializable:
        raise _not_initializable(ctx, table)
    _initialize(ctx, table, _check_pairs(ctx, table, keys, values, "Tkey", "Tval"))


def initialize_from_text_file(ctx: KernelContext, handle: Any, filename: Any) -> None:
    table = _table(ctx, handle)
    if not table.initializable:
        raise _not_initializable(ctx, table)
    name = filename.item() if hasattr(filename, "item") else filename
    name = name.decode() if isinstance(name, bytes) else str(name)
    _initialize(ctx, table, _text_file_pairs(ctx, table, name), from_file=True)


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    if device_type != "CPU":  # TF keeps lookup tables in host memory only
        return
    for op in TABLE_OPS:
        registry.add(op, device_type, table_op)
    registry.add("LookupTableFindV2", device_type, find_values)
    registry.add("LookupTableInsertV2", device_type, insert)
    registry.add("LookupTableRemoveV2", device_type, remove)
    registry.add("LookupTableSizeV2", device_type, size)
    registry.add("LookupTableExportV2", device_type, export)
    registry.add("LookupTableImportV2", device_type, import_values)
    registry.add("InitializeTableV2", device_type, initialize)
    registry.add("InitializeTableFromTextFileV2", device_type, initialize_from_text_file)

