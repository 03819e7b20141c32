"""Alias of ``tensorflow.python.training``: tensorweave's objects under TF's private paths."""
