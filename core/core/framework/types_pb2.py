"""Alias of ``tensorflow.core.framework.types_pb2``: TF's ``DataType`` values (``DT_FLOAT = 1``,
..., ``DT_FLOAT_REF = 101``, ...) as module constants, and ``DataType.Name``/``Value``."""

from __future__ import annotations

from tensorweave.engine.proto.framework import DATA_TYPES


class DataType:
    """TF's enum wrapper: ``Name(1) == "DT_FLOAT"``, ``Value("DT_FLOAT") == 1``."""

    @staticmethod
    def Name(number: int) -> str:  # noqa: N802 - protobuf's name
        for name, value in DATA_TYPES.items():
            if value == number:
                return name
        raise ValueError(f"Enum DataType has no name defined for value {number!r}")

    @staticmethod
    def Value(name: str) -> int:  # noqa: N802 - protobuf's name
        if name not in DATA_TYPES:
            raise ValueError(f"Enum DataType has no value defined for name {name!r}")
        return DATA_TYPES[name]


globals().update(DATA_TYPES)
