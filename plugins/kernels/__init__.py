"""Kernel bodies written once against an array module ``xp`` (``ctx.xp``).

Each module here has ``register(registry, device_type)``; the CPU plugin binds them to numpy
devices and the GPU plugin to cupy devices.
"""
