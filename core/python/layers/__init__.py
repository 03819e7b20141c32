"""Alias of ``tensorflow.python.layers``: tensorweave's objects under TF's private paths."""
