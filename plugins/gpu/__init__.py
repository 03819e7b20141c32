"""The ``gpu``plugin."""
