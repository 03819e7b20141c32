"""CSV parsing: ``tf.decode_csv`` (``tf.io.decode_csv``) and
``tf.data.experimental.CsvDataset``.

Contract: `decode_csv` converts each record default (a Python value, a one-element list such as
``[0.0]``, an empty list/tensor for a required column, or a tensor) to a tensor, builds one
``DecodeCSV`` op (see `tensorweave.plugins.standard_ops.csv`) and returns its outputs as a list,
one per column, each shaped as `records`. `CsvDataset` reads the lines of text files (skipping
each file's first line with `header`) and decodes each line with `decode_csv`; its elements are
tuples of scalars, one per column. A record default given as a dtype marks a required column.
Records are lines, so a quoted field cannot span lines here. ``select_cols`` errors are TF's
`ValueError` texts.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api.array_ops import reshape
from tensorweave.api.dataset_ops import Dataset, Description, TextLineDataset
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.graph.op_builder import make_op
from tensorweave.engine.op_def import TensorSpec
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["decode_csv"]


def _check_select_cols(select_cols: Any, record_defaults: list[Any]) -> list[int]:
    if select_cols is None:
        return []
    cols = [int(c) for c in select_cols]
    if len(cols) != len(record_defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    if any(b <= a for a, b in zip(cols, cols[1:])):
        raise ValueError("select_cols is not strictly increasing.")
    if cols and cols[0] < 0:
        raise ValueError("select_cols contains negative values.")
    return cols


def _default_tensor(value: Any) -> Tensor:
    if isinstance(value, dtypes.DType):  # a required column of that type
        return constant([], dtype=value)
    if isinstance(value, (list, tuple)) and len(value) == 0:
        raise ValueError("An empty record default needs a dtype: pass a typed empty tensor "
                         "(or, for CsvDataset, the dtype)")
    return convert_to_tensor(value)


def decode_csv(records: Any, record_defaults: list[Any], field_delim: str = ",",
               use_quote_delim: bool = True, name: str | None = None, na_value: str = "",
               select_cols: Any = None) -> list[Tensor]:
    """One tensor per column of the CSV `records`; see the module docstring."""
    cols = _check_select_cols(select_cols, record_defaults)
    defaults = [_default_tensor(d) for d in record_defaults]
    records = convert_to_tensor(records, dtype=dtypes.string)
    op = make_op("DecodeCSV", [records, defaults],
                 {"OUT_TYPE": [d.dtype for d in defaults], "field_delim": field_delim,
                  "use_quote_delim": bool(use_quote_delim), "na_value": na_value,
                  "select_cols": cols}, name=name or "DecodeCSV")
    return list(op.outputs)


class CsvDataset(Dataset):
    """``tf.data.experimental.CsvDataset``: the records of CSV files as tuples of scalars."""

    def __init__(self, filenames: Any, record_defaults: list[Any], compression_type: Any = None,
                 buffer_size: Any = None, header: bool = False, field_delim: str = ",",
                 use_quote_delim: bool = True, na_value: str = "",
                 select_cols: Any = None) -> None:
        _check_select_cols(select_cols, record_defaults)
        defaults = [_default_tensor(d) for d in record_defaults]
        super().__init__(tuple(TensorSpec(d.dtype, TensorShape([])) for d in defaults))

        def lines(filename: Tensor) -> Dataset:
            text = TextLineDataset(filename, compression_type, buffer_size)
            return text.skip(1) if header else text

        def decode(line: Tensor) -> tuple[Tensor, ...]:
            return tuple(decode_csv(line, defaults, field_delim, use_quote_delim,
                                    na_value=na_value, select_cols=select_cols))

        names = filenames if isinstance(filenames, Dataset) else \
            Dataset.from_tensor_slices(_filename_vector(filenames))
        self._impl = names.flat_map(lines).map(decode)

    def _describe(self, d: Description) -> dict[str, Any]:
        return self._impl._describe(d)


def _filename_vector(filenames: Any) -> Tensor:
    names = convert_to_tensor(filenames, dtype=dtypes.string)
    return reshape(names, [-1])
