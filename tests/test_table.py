"""tensorweave.formats.table: LevelDB tables as TF writes them (byte for byte with a TF-written
index), many blocks with prefix-compressed keys, and DataLossError for damage."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensorweave.engine import errors
from tensorweave.formats.table import build_table, read_table

INDEX = Path(__file__).parent / "data" / "tf_checkpoints" / "v1" / "model.ckpt-5.index"


def test_a_tf_written_table_reads_and_rebuilds_byte_for_byte() -> None:
    data = INDEX.read_bytes()
    items = read_table(data, str(INDEX))
    assert items[0][0] == b"" and len(items) == 26
    assert [k for k, _ in items] == sorted(k for k, _ in items)
    assert build_table(items) == data


def test_many_blocks_and_shared_prefixes_round_trip() -> None:
    items = [(f"scope/{i:06d}/kernel".encode(), bytes([i % 251]) * (i % 700))
             for i in range(3000)]
    data = build_table(items)
    assert len(data) > 3 * (256 << 10)  # several data blocks
    assert read_table(data, "t") == items
    assert len(data) < sum(len(k) + len(v) for k, v in items)  # keys are prefix-compressed
    assert read_table(build_table([]), "empty") == []


def test_keys_must_increase() -> None:
    with pytest.raises(ValueError, match="strictly increasing"):
        build_table([(b"b", b""), (b"a", b"")])
    with pytest.raises(ValueError, match="strictly increasing"):
        build_table([(b"a", b""), (b"a", b"")])


def test_damage_is_data_loss_naming_the_file() -> None:
    data = INDEX.read_bytes()
    for bad in (data[:-1], data[:47], b"", data[:100] + bytes([data[100] ^ 1]) + data[101:],
                data[:-48] + bytes(48)):
        with pytest.raises(errors.DataLossError, match="model.ckpt-5.index"):
            read_table(bad, str(INDEX))
