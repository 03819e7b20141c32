"""The ``constant_folding``plugin."""
