"""The ``cse``plugin."""
