"""Alias of ``tensorflow.python.util``: tensorweave's objects under TF's private paths."""
