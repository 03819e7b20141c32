"""Alias of ``tensorflow.python.ops.embedding_ops``: re-exports the embedding lookups."""

from tensorweave.api.nn_extra import safe_embedding_lookup_sparse
from tensorweave.api.nn_ops import embedding_lookup
from tensorweave.api.sparse_ops import embedding_lookup_sparse
