"""Alias of ``tensorflow.python.framework``: tensorweave's objects under TF's private paths."""
