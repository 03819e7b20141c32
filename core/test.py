"""``tw.test``: gradient checking, as ``tf.compat.v1.test``."""

from __future__ import annotations

__all__: list[str] = []
