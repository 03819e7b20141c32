"""Kernel of ``DecodeCSV`` (host only, as TF's): RFC 4180 fields, parsed per record.

Contract: a record splits at ``field_delim``; with ``use_quote_delim`` a field wholly enclosed in
double quotes may hold the delimiter, and ``""`` inside it is one quote. An empty field, or one
equal to ``na_value``, takes its column's default; a required column (empty default) then fails.
Every failure is TF's `InvalidArgumentError` text: a record with another number of fields than
columns (or, with ``select_cols``, too few for the last selected one), a malformed quoted
field, a quote inside an unquoted field, or a value that does not parse as its column's type.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.engine import dtypes, errors
from tensorweave.engine.kernel import KernelContext

_TYPE_NAMES = {dtypes.float32: "float", dtypes.float64: "double", dtypes.int32: "int32",
               dtypes.int64: "int64"}


def _fail(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def split_record(ctx: KernelContext, record: bytes, delim: bytes, quotes: bool) -> list[bytes]:
    """The fields of one record."""
    fields: list[bytes] = []
    i, n = 0, len(record)
    while True:
        if quotes and record[i:i + 1] == b'"':
            field, i = bytearray(), i + 1
            while True:
                end = record.find(b'"', i)
                if end < 0:
                    raise _fail(ctx, f"Quoted field has to end with quote followed by delim or "
                                     f"end: {record.decode(errors='replace')}")
                field += record[i:end]
                if record[end + 1:end + 2] == b'"':  # an escaped quote
                    field += b'"'
                    i = end + 2
                    continue
                i = end + 1
                break
            if i < n and record[i:i + 1] != delim:
                raise _fail(ctx, f"Quoted field has to end with quote followed by delim or "
                                 f"end: {record.decode(errors='replace')}")
            fields.append(bytes(field))
        else:
            end = record.find(delim, i)
            end = n if end < 0 else end
            field = record[i:end]
            if quotes and (b'"' in field or b"\n" in field or b"\r" in field):
                raise _fail(ctx, f"Unquoted fields cannot have quotes/CRLFs inside: "
                                 f"{record.decode(errors='replace')}")
            fields.append(field)
            i = end
        if i >= n:
            return fields
        i += 1  # past the delimiter
        if i == n:  # a trailing delimiter ends in an empty field
            fields.append(b"")
            return fields


def _parse(ctx: KernelContext, text: bytes, dtype: dtypes.DType, column: int,
           record: int) -> Any:
    if dtype == dtypes.string:
        return text
    try:
        if dtype.is_integer:
            value = int(text)
            info = np.iinfo(dtype.np_type)
            if not info.min <= value <= info.max:
                raise ValueError(text)
            return value
        return float(text)
    except ValueError:
        raise _fail(ctx, f"Field {column} in record {record} is not a valid "
                         f"{_TYPE_NAMES[dtype]}: {text.decode(errors='replace')}") from None


def decode_csv(ctx: KernelContext, records: Any, *defaults: Any) -> Any:
    types = list(ctx.attrs["OUT_TYPE"])
    delim = ctx.attrs["field_delim"]
    delim = delim.encode() if isinstance(delim, str) else bytes(delim)
    if len(delim) != 1:
        raise _fail(ctx, "field_delim should be only 1 char")
    na = ctx.attrs["na_value"]
    na = na.encode() if isinstance(na, str) else bytes(na)
    quotes = bool(ctx.attrs["use_quote_delim"])
    select = [int(c) for c in ctx.attrs["select_cols"]]
    if select and len(select) != len(types):
        raise _fail(ctx, "select_cols should match output size")
    if any(b <= a for a, b in zip(select, select[1:])) or (select and select[0] < 0):
        raise _fail(ctx, "select_cols should be non-negative and strictly increasing")
    for i, d in enumerate(defaults):
        if np.asarray(d).size > 1:
            raise _fail(ctx, f"There should only be 1 default per field but field {i} has "
                             f"{np.asarray(d).size}")
    flat = np.asarray(records, dtype=object).reshape(-1)
    columns: list[list[Any]] = [[] for _ in types]
    for r, value in enumerate(flat):
        record = value if isinstance(value, bytes) else str(value).encode()
        fields = split_record(ctx, record, delim, quotes)
        if select:
            if len(fields) <= select[-1]:
                raise _fail(ctx, f"Expect at least {select[-1] + 1} fields but have "
                                 f"{len(fields)} in record {r}")
            fields = [fields[c] for c in select]
        elif len(fields) != len(types):
            raise _fail(ctx, f"Expect {len(types)} fields but have {len(fields)} in record {r}")
        for c, (text, dtype) in enumerate(zip(fields, types)):
            if text == b"" or text == na:
                default = np.asarray(defaults[c]).reshape(-1)
                if default.size == 0:
                    raise _fail(ctx, f"Field {c} is required but missing in record {r}!")
                columns[c].append(default[0])
            else:
                columns[c].append(_parse(ctx, text, dtype, c, r))
    shape = np.shape(records)
    outputs = []
    for values, dtype in zip(columns, types):
        out = np.empty(len(values), dtype=dtype.np_type)
        out[:] = values
        outputs.append(out.reshape(shape))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    registry.add("DecodeCSV", device_type, decode_csv)
