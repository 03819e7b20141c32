"""``tensorweave.compat.v1`` is tensorweave itself, so ``import tensorweave.compat.v1 as tf``
works like ``import tensorweave as tf``."""

import sys

import tensorweave as v1

sys.modules[__name__ + ".v1"] = v1
