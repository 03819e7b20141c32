"""The fusion plugin's switches, read from the environment when a graph or node first needs them.

Contract: ``TENSORWEAVE_FUSION=0`` (or ``false``/``off``/``no``) turns the plugin's work off for
graphs compiled and nodes first run after it is set: the pass leaves graphs unfused and the
optimizer kernels stay their numpy twins. ``TENSORWEAVE_FUSION_COMPILE_AFTER=N`` (default
`COMPILE_AFTER`) is how many calls of a fused node or update run unfused before it is compiled:
compiling costs a few hundred milliseconds a region (numba's import and start seconds) that a
graph run once or twice never wins back; ``0`` compiles on the first call.
"""

from __future__ import annotations

import os

SWITCH = "TENSORWEAVE_FUSION"
COMPILE_AFTER_VAR = "TENSORWEAVE_FUSION_COMPILE_AFTER"
COMPILE_AFTER = 2


def enabled() -> bool:
    return os.environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "off", "no")


def compile_after() -> int:
    """How many calls of a fused node run unfused before it is compiled."""
    try:
        return max(0, int(os.environ.get(COMPILE_AFTER_VAR, COMPILE_AFTER)))
    except ValueError:
        return COMPILE_AFTER
