"""Alias of ``tensorflow.core``: TF's protocol-buffer module paths over tensorweave's objects."""
