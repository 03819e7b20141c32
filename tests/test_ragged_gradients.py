"""Gradients through ragged tensors, end to end: construction, map_flat_values, reductions,
to_tensor, indexing and tile, checked numerically; an optimizer step on an embedding of ragged
token ids; and the ragged-tensor guide's bigram embedding, against a numpy reference."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorweave as tw

FLAT = np.array([0.5, -1.0, 2.0, 1.5, -0.25, 3.0], np.float32)
SPLITS = [0, 3, 3, 5, 6]


@pytest.mark.parametrize("build", [
    lambda x: tw.reduce_mean(tw.RaggedTensor.from_row_splits(x, SPLITS), axis=1)[:1],
    lambda x: tw.reduce_sum(tw.RaggedTensor.from_value_rowids(x, [0, 0, 0, 2, 2, 3]), axis=1),
    lambda x: tw.reduce_max(tw.RaggedTensor.from_row_lengths(x, [3, 0, 2, 1]), axis=1)[2:],
    lambda x: tw.RaggedTensor.from_row_splits(x, SPLITS).to_tensor(),
    lambda x: tw.reduce_sum(tw.RaggedTensor.from_row_splits(x, SPLITS)[:, 1:] * 3.0, axis=0),
    lambda x: tw.tile(tw.RaggedTensor.from_row_splits(x, SPLITS), [2, 2]).to_tensor(),
    lambda x: tw.ragged.map_flat_values(tw.square, tw.RaggedTensor.from_row_splits(
        x, SPLITS)).to_tensor(),
])
def test_numeric_gradients_agree(build: Callable[[tw.Tensor], tw.Tensor]) -> None:
    with tw.Graph().as_default():
        x = tw.constant(FLAT.astype(np.float64))
        y = build(x)
        with tw.Session():
            y_shape = y.eval().shape
            error = tw.test.compute_gradient_error(x, FLAT.shape, y, y_shape,
                                                   x_init_value=FLAT.astype(np.float64))
    assert error < 1e-4


def test_an_optimizer_step_on_ragged_token_embeddings() -> None:
    table0 = np.arange(10, dtype=np.float32).reshape(5, 2) / 10
    ids = [[1, 3, 3], [4], [0, 1]]
    weights = np.array([1.0, 2.0, -1.0], np.float32)
    table = tw.Variable(table0)
    embedded = tw.ragged.map_flat_values(tw.nn.embedding_lookup, table, tw.ragged.constant(ids))
    loss = tw.reduce_sum(tw.reduce_sum(tw.reduce_mean(embedded, axis=1), axis=1) * weights)
    step = tw.train.GradientDescentOptimizer(0.5).minimize(loss)
    expected_grad = np.zeros_like(table0)
    for row, w in zip(ids, weights):
        for token in row:
            expected_grad[token] += w / len(row)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        sess.run(step)
        np.testing.assert_allclose(sess.run(table), table0 - 0.5 * expected_grad, rtol=1e-6)


def _bigram_average(queries: list[list[str]], table: np.ndarray,
                    buckets: Callable[[list[str]], list[int]]) -> np.ndarray:
    """The guide's sentence embedding in numpy: the mean of the embeddings of the words and of
    the ``+``-joined bigrams of the words with ``#`` at both ends."""
    result = []
    for words in queries:
        padded = ["#", *words, "#"]
        tokens = words + [f"{a}+{b}" for a, b in zip(padded[:-1], padded[1:])]
        result.append(table[buckets(tokens)].mean(axis=0))
    return np.stack(result)


def test_bigram_embeddings_of_the_ragged_guide() -> None:
    sentences = [["Who", "is", "Dan", "Smith"], ["Pause"], ["Will", "it", "rain", "later"]]
    num_buckets, size = 64, 3
    table0 = np.random.default_rng(0).normal(size=(num_buckets, size)).astype(np.float32)
    queries = tw.ragged.constant(sentences)
    table = tw.Variable(table0)

    def embed(tokens: Any) -> Any:
        return tw.ragged.map_flat_values(tw.nn.embedding_lookup, table,
                                         tw.strings.to_hash_bucket_fast(tokens, num_buckets))

    marker = tw.fill([queries.nrows(), 1], "#")
    padded = tw.concat([marker, queries, marker], axis=1)
    bigrams = tw.string_join([padded[:, :-1], padded[:, 1:]], separator="+")
    everything = tw.concat([embed(queries), embed(bigrams)], axis=1)
    average = tw.reduce_mean(everything, axis=1)
    assert average.shape.as_list() == [3, size]
    step = tw.train.GradientDescentOptimizer(1.0).minimize(tw.reduce_sum(average))

    token = tw.placeholder(tw.string, [None])
    hashed = tw.strings.to_hash_bucket_fast(token, num_buckets)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())

        def buckets(tokens: list[str]) -> list[int]:
            return sess.run(hashed, {token: tokens}).tolist()

        np.testing.assert_allclose(sess.run(average),
                                   _bigram_average(sentences, table0, buckets), rtol=1e-5)
        sess.run(step)
        # each sentence's tokens take 1/len of the unit gradient of its average
        expected = table0.copy()
        for words in sentences:
            padded_words = ["#", *words, "#"]
            tokens = words + [f"{a}+{b}" for a, b in zip(padded_words[:-1], padded_words[1:])]
            for bucket in buckets(tokens):
                expected[bucket] -= 1.0 / len(tokens)
        np.testing.assert_allclose(sess.run(table), expected, rtol=1e-5, atol=1e-6)
