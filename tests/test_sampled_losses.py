"""nce_loss and sampled_softmax_loss: values against a numpy reimplementation given fixed
`sampled_values`, gradients (IndexedSlices into the class weights, checked numerically), sharded
weights, the default sampler, and a word2vec-style skip-gram whose loss drops."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw

FLT_MAX = float(np.finfo(np.float32).max)
B, D, V = 4, 3, 10
RNG = np.random.RandomState(0)
W = RNG.randn(V, D).astype(np.float32)
BIAS = RNG.randn(V).astype(np.float32)
X = RNG.randn(B, D).astype(np.float32)
LABELS = np.array([[1, 4], [2, 7], [0, 9], [5, 3]], np.int64)
SAMPLED = np.array([7, 0, 6, 3, 8], np.int64)
TRUE_EC = RNG.uniform(0.1, 0.9, (B, 2)).astype(np.float32)
SAMPLED_EC = RNG.uniform(0.1, 0.9, 5).astype(np.float32)


def reference_logits(w, b, x, labels, sampled, true_ec, sampled_ec, remove_hits):
    num_true = labels.shape[1]
    true_logits = np.einsum("bd,btd->bt", x, w[labels]) + b[labels] - np.log(true_ec)
    sampled_logits = x @ w[sampled].T + b[sampled]
    if remove_hits:
        for i, row in enumerate(labels):
            for j, s in enumerate(sampled):
                if s in row:
                    sampled_logits[i, j] += -FLT_MAX
    sampled_logits = sampled_logits - np.log(sampled_ec)
    logits = np.concatenate([true_logits, sampled_logits], 1)
    targets = np.concatenate([np.full(true_logits.shape, 1 / num_true),
                              np.zeros(sampled_logits.shape)], 1)
    return logits, targets


def reference_nce(*args):
    z, t = reference_logits(*args)
    return (np.logaddexp(0, z) - z * t).sum(1)


def reference_softmax(*args):
    z, t = reference_logits(*args)
    z = z - z.max(1, keepdims=True)
    return -(t * (z - np.log(np.exp(z).sum(1, keepdims=True)))).sum(1)


def sampled_values():
    return (tw.constant(SAMPLED), tw.constant(TRUE_EC), tw.constant(SAMPLED_EC))


def run(fetches, feed_dict=None):
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        return sess.run(fetches, feed_dict)


LOSSES = [(tw.nn.nce_loss, reference_nce, False), (tw.nn.sampled_softmax_loss,
                                                    reference_softmax, True)]


@pytest.mark.parametrize("loss_fn, reference, default_remove", LOSSES)
@pytest.mark.parametrize("remove_hits", [False, True])
def test_matches_numpy_reference(loss_fn, reference, default_remove, remove_hits):
    loss = loss_fn(W, BIAS, LABELS, X, num_sampled=5, num_classes=V, num_true=2,
                   sampled_values=sampled_values(), remove_accidental_hits=remove_hits)
    assert loss.dtype == tw.float32 and loss.shape.as_list() == [B]
    value = run(loss)
    assert value.dtype == np.float32
    expected = reference(W.astype(np.float64), BIAS, X, LABELS, SAMPLED, TRUE_EC, SAMPLED_EC,
                         remove_hits)
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("loss_fn, reference, default_remove", LOSSES)
def test_default_remove_accidental_hits(loss_fn, reference, default_remove):
    loss = loss_fn(W, BIAS, LABELS, X, num_sampled=5, num_classes=V, num_true=2,
                   sampled_values=sampled_values())
    expected = reference(W.astype(np.float64), BIAS, X, LABELS, SAMPLED, TRUE_EC, SAMPLED_EC,
                         default_remove)
    np.testing.assert_allclose(run(loss), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("loss_fn, reference, default_remove", LOSSES)
def test_sharded_weights(strategy, loss_fn, reference, default_remove):
    n = 3
    shards = ([W[k::n] for k in range(n)] if strategy == "mod" else np.array_split(W, n))
    loss = loss_fn([tw.constant(s) for s in shards], BIAS, LABELS, X, num_sampled=5,
                   num_classes=V, num_true=2, sampled_values=sampled_values(),
                   partition_strategy=strategy)
    expected = reference(W.astype(np.float64), BIAS, X, LABELS, SAMPLED, TRUE_EC, SAMPLED_EC,
                         default_remove)
    np.testing.assert_allclose(run(loss), expected, rtol=1e-5, atol=1e-5)


def test_bad_partition_strategy():
    with pytest.raises(ValueError, match="partition strategy"):
        tw.nn.nce_loss([W[:5], W[5:]], BIAS, LABELS, X, 5, V, num_true=2,
                       sampled_values=sampled_values(), partition_strategy="rows")


def numeric_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


@pytest.mark.parametrize("loss_fn, reference, default_remove", LOSSES)
def test_gradients_reach_weights_biases_and_inputs(loss_fn, reference, default_remove):
    w, b, x = tw.Variable(W), tw.Variable(BIAS), tw.Variable(X)
    loss = tw.reduce_sum(loss_fn(w, b, LABELS, x, num_sampled=5, num_classes=V, num_true=2,
                                 sampled_values=sampled_values()))
    gw, gb, gx = tw.gradients(loss, [w, b, x])
    assert isinstance(gw, tw.IndexedSlices) and isinstance(gb, tw.IndexedSlices)
    dense = [tw.convert_to_tensor(g) for g in (gw, gb, gx)]
    got = run(dense)
    w64, b64, x64 = W.astype(np.float64), BIAS.astype(np.float64), X.astype(np.float64)
    rest = (LABELS, SAMPLED, TRUE_EC, SAMPLED_EC, default_remove)
    expected = [
        numeric_gradient(lambda v: reference(v, b64, x64, *rest).sum(), w64),
        numeric_gradient(lambda v: reference(w64, v, x64, *rest).sum(), b64),
        numeric_gradient(lambda v: reference(w64, b64, v, *rest).sum(), x64),
    ]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-4)


def test_default_sampler_is_log_uniform_unique_and_seeded():
    def losses():
        with tw.Graph().as_default():
            loss = tw.nn.sampled_softmax_loss(W, BIAS, LABELS[:, :1], X, num_sampled=6,
                                              num_classes=V, seed=3)
            sampler = next(op for op in tw.get_default_graph().get_operations()
                           if op.type == "LogUniformCandidateSampler")
            assert sampler.get_attr("unique") and sampler.get_attr("range_max") == V
            return run(loss)

    first = losses()
    assert first.shape == (B,) and np.all(np.isfinite(first)) and np.all(first > 0)
    np.testing.assert_array_equal(first, losses())


def test_int32_labels_and_one_optimizer_step():
    w, b = tw.Variable(W), tw.Variable(np.zeros(V, np.float32))
    labels = tw.placeholder(tw.int32, [None, 1])
    loss = tw.reduce_mean(tw.nn.nce_loss(w, b, labels, X, num_sampled=4, num_classes=V,
                                         sampled_values=(tw.constant([6, 7, 8, 9], tw.int64),
                                                         tw.ones([B, 1]) * 0.5,
                                                         tw.ones([4]) * 0.5)))
    step = tw.train.GradientDescentOptimizer(0.5).minimize(loss)
    feed = {labels: [[0], [1], [2], [3]]}
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        before = sess.run(loss, feed)
        sess.run(step, feed)
        after, new_w = sess.run([loss, w], feed)
    assert after < before
    np.testing.assert_array_equal(new_w[4:6], W[4:6])  # rows no lookup touched are unchanged


def skip_gram_corpus(rng, words=16, length=600):
    """Two halves of the vocabulary that never meet: a word's neighbours share its half."""
    half = words // 2
    corpus = []
    for _ in range(length // 10):
        base = rng.randint(2) * half
        corpus.extend(base + rng.randint(half, size=10))
    return np.asarray(corpus)


def test_skip_gram_training_lowers_the_loss():
    rng = np.random.RandomState(1)
    corpus = skip_gram_corpus(rng)
    centers = np.concatenate([corpus[1:-1], corpus[1:-1]])
    contexts = np.concatenate([corpus[:-2], corpus[2:]])
    tw.set_random_seed(0)
    vocab, dim, batch = 16, 8, 64
    emb = tw.Variable(tw.random_uniform([vocab, dim], -1.0, 1.0))
    nce_w = tw.Variable(tw.truncated_normal([vocab, dim], stddev=dim ** -0.5))
    nce_b = tw.Variable(tw.zeros([vocab]))
    x = tw.placeholder(tw.int32, [batch])
    y = tw.placeholder(tw.int32, [batch, 1])
    loss = tw.reduce_mean(tw.nn.nce_loss(nce_w, nce_b, y, tw.nn.embedding_lookup(emb, x),
                                         num_sampled=4, num_classes=vocab))
    step = tw.train.GradientDescentOptimizer(1.0).minimize(loss)
    history = []
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        for _ in range(120):
            pick = rng.randint(len(centers), size=batch)
            history.append(sess.run([loss, step], {x: centers[pick],
                                                   y: contexts[pick, None]})[0])
        vectors = sess.run(emb)
    assert np.mean(history[-20:]) < 0.75 * np.mean(history[:20])
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sim = unit @ unit.T
    half = np.arange(vocab) // 8
    same = half[:, None] == half[None, :]
    other = ~same
    np.fill_diagonal(same, False)
    # words of one half end up closer to each other than to the other half's
    assert sim[same].mean() > sim[other].mean() + 0.2
