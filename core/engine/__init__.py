"""The engine: the plugin seam, graphs, the runtime, the client and the distributed services.

It imports nothing from the TF library above it (``tensorweave.api``, ``train``, ...), from
``tensorweave.formats`` or from the plugins; tests/test_layering.py checks that.
"""
