"""tw.train: device_setter."""

from __future__ import annotations

__all__: list[str] = []
