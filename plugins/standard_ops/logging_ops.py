"""OpDefs of ``Assert`` and ``Print``, as TF's ``logging_ops.cc``.

Contract: both are stateful, so passes never fold, merge or drop them while something depends
on them. ``Assert(condition, data)`` has no outputs; ``Print(input, data)`` forwards `input`.
`data` is a list of tensors of any dtypes. tensorweave has no string tensors, so the texts TF
would pass as string tensors travel in the attr ``literals``: one entry per displayed item in
order, the text itself, or None where the next tensor of `data` goes (empty: all tensors).
"""

from __future__ import annotations

from typing import Any

from tensorweave.op_def import REQUIRED
from tensorweave.plugins.standard_ops.shape_fns import no_outputs, unchanged


def register(registry: Any) -> None:
    registry.op("Assert", ["condition:bool", "data:*"], no_outputs, stateful=True,
                attrs={"summarize": 3, "literals": []})
    registry.op("Print", ["input:T", "data:*"], unchanged, stateful=True,
                attrs={"T": REQUIRED, "message": "", "first_n": -1, "summarize": 3,
                       "literals": []})
