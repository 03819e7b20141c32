"""OpDefs of ``Assert`` and ``Print``, as TF's ``logging_ops.cc``.

Contract: both are stateful, so passes never fold, merge or drop them while something depends
on them. ``Assert(condition, data)`` has no outputs; ``Print(input, data)`` forwards `input`.
`data` is a list of tensors of any dtypes, strings included.
"""

from __future__ import annotations

from typing import Any

from tensorweave.engine.op_def import REQUIRED
from tensorweave.plugins.standard_ops.shape_fns import no_outputs, unchanged


def register(registry: Any) -> None:
    registry.op("Assert", ["condition:bool", "data:*"], no_outputs, stateful=True,
                attrs={"summarize": 3})
    registry.op("Print", ["input:T", "data:*"], unchanged, stateful=True,
                attrs={"T": REQUIRED, "message": "", "first_n": -1, "summarize": 3})
