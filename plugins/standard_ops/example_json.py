"""OpDef of ``DecodeJSONExample`` (JSON-encoded ``tf.train.Example`` strings to binary ones,
same shape); the kernel is `tensorweave.plugins.kernels.example_json`."""

from __future__ import annotations

from typing import Any

from tensorweave.plugins.standard_ops.shape_fns import unchanged


def register(registry: Any) -> None:
    registry.op("DecodeJSONExample", ["json_examples:string"], unchanged)
