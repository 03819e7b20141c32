"""Tests of the CTC API (`tensorweave.api.ctc_ops`) and its ops: the loss against alignments
enumerated by brute force and TF's published test vectors, its gradient against finite
differences, the decoders against Python references, TF's error messages, and a training run."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tensorweave as tw

RNG = np.random.default_rng(7)


def _run(fetches, feed_dict=None):
    with tw.Session() as sess:
        return sess.run(fetches, feed_dict)


def _sparse(seqs: list[list[int]]) -> tw.SparseTensor:
    idx = [[b, t] for b, seq in enumerate(seqs) for t in range(len(seq))]
    vals = [v for seq in seqs for v in seq]
    width = max(len(s) for s in seqs)
    return tw.SparseTensor(np.array(idx, np.int64).reshape(-1, 2), np.array(vals, np.int32),
                           np.array([len(seqs), width], np.int64))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _collapse(path: tuple[int, ...], blank: int, merge: bool) -> tuple[int, ...]:
    out: list[int] = []
    previous = None
    for k in path:
        if k != blank and not (merge and k == previous):
            out.append(k)
        previous = k
    return tuple(out)


def _labelling_probs(logits: np.ndarray, merge: bool = True) -> dict[tuple[int, ...], float]:
    """p(labelling | logits ``[T, C]``) for every labelling, by summing all alignments."""
    probs = _softmax(logits.astype(np.float64))
    steps, classes = probs.shape
    out: dict[tuple[int, ...], float] = {}
    for path in itertools.product(range(classes), repeat=steps):
        key = _collapse(path, classes - 1, merge)
        out[key] = out.get(key, 0.0) + float(np.prod(probs[np.arange(steps), path]))
    return out


# ----------------------------------------------------------------------------- loss


@pytest.mark.parametrize("merge", [True, False])
def test_loss_matches_brute_force_over_alignments(merge):
    steps, classes = 5, 3
    logits = RNG.normal(size=(steps, 3, classes)).astype(np.float32)
    seq_len = np.array([5, 4, 3], np.int32)
    labels = [[0, 1, 0], [1, 1], [0]]
    loss = tw.nn.ctc_loss(_sparse(labels), logits, seq_len, ctc_merge_repeated=merge)
    got = _run(loss)
    want = [-np.log(_labelling_probs(logits[: seq_len[b], b], merge).get(tuple(labels[b]), 0.0))
            for b in range(3)]
    assert got.dtype == np.float32 and got.shape == (3,)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_loss_batch_major_and_collapsed_labels():
    logits = RNG.normal(size=(2, 4, 3)).astype(np.float64)  # [batch, time, classes]
    labels = [[1, 1, 0], [0, 0]]
    loss = tw.nn.ctc_loss(_sparse(labels), logits, np.array([4, 4], np.int32),
                          preprocess_collapse_repeated=True, time_major=False)
    got = _run(loss)
    want = [-np.log(_labelling_probs(logits[0])[(1, 0)]),
            -np.log(_labelling_probs(logits[1])[(0,)])]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-10)


def _tf_basic_case():
    """TF's ``ctc_loss_op_test.testBasic``: two entries of 5 frames (from Alex Graves' code)."""
    p0 = [[0.633766, 0.221185, 0.0917319, 0.0129757, 0.0142857, 0.0260553],
          [0.111121, 0.588392, 0.278779, 0.0055756, 0.00569609, 0.010436],
          [0.0357786, 0.633813, 0.321418, 0.00249248, 0.00272882, 0.0037688],
          [0.0663296, 0.643849, 0.280111, 0.00283995, 0.0035545, 0.00331533],
          [0.458235, 0.396634, 0.123377, 0.00648837, 0.00903441, 0.00623107]]
    g0 = [[-0.366234, 0.221185, 0.0917319, 0.0129757, 0.0142857, 0.0260553],
          [0.111121, -0.411608, 0.278779, 0.0055756, 0.00569609, 0.010436],
          [0.0357786, 0.633813, -0.678582, 0.00249248, 0.00272882, 0.0037688],
          [0.0663296, -0.356151, 0.280111, 0.00283995, 0.0035545, 0.00331533],
          [-0.541765, 0.396634, 0.123377, 0.00648837, 0.00903441, 0.00623107]]
    p1 = [[0.30176, 0.28562, 0.0831517, 0.0862751, 0.0816851, 0.161508],
          [0.24082, 0.397533, 0.0557226, 0.0546814, 0.0557528, 0.19549],
          [0.230246, 0.450868, 0.0389607, 0.038309, 0.0391602, 0.202456],
          [0.280884, 0.429522, 0.0326593, 0.0339046, 0.0326856, 0.190345],
          [0.423286, 0.315517, 0.0338439, 0.0393744, 0.0339315, 0.154046]]
    g1 = [[-0.69824, 0.28562, 0.0831517, 0.0862751, 0.0816851, 0.161508],
          [0.24082, -0.602467, 0.0557226, 0.0546814, 0.0557528, 0.19549],
          [0.230246, 0.450868, 0.0389607, 0.038309, 0.0391602, -0.797544],
          [0.280884, -0.570478, 0.0326593, 0.0339046, 0.0326856, 0.190345],
          [-0.576714, 0.315517, 0.0338439, 0.0393744, 0.0339315, 0.154046]]
    pad = np.full((2, 2, 6), np.nan, np.float32)  # frames past sequence_length must not leak
    inputs = np.concatenate([np.log(np.stack([p0, p1], 1)).astype(np.float32), pad])
    grad = np.concatenate([np.stack([g0, g1], 1), np.zeros((2, 2, 6))]).astype(np.float32)
    return inputs, [[0, 1, 2, 1, 0], [0, 1, 1, 0]], np.array([3.34211, 5.42262]), grad


def test_loss_and_gradient_match_tf_test_vectors():
    inputs, labels, loss_truth, grad_truth = _tf_basic_case()
    x = tw.constant(inputs)
    loss = tw.nn.ctc_loss(_sparse(labels), x, np.array([5, 5], np.int32))
    grad = tw.gradients(loss, [x])[0]
    assert grad.shape.as_list() == [7, 2, 6]
    got_loss, got_grad = _run([loss, grad])
    np.testing.assert_allclose(got_loss, loss_truth, atol=1e-5)
    np.testing.assert_allclose(got_grad, grad_truth, atol=1e-6)
    assert got_grad.dtype == np.float32


def test_gradient_matches_finite_differences_and_scales_by_incoming_gradient():
    logits = RNG.normal(size=(4, 2, 4))
    labels = _sparse([[0, 2], [1, 1]])
    seq_len = np.array([4, 3], np.int32)
    x = tw.placeholder(tw.float64, [4, 2, 4])
    loss = tw.nn.ctc_loss(labels, x, seq_len)
    weights = np.array([2.0, -0.5])
    grad = tw.gradients(loss * weights, [x])[0]
    with tw.Session() as sess:
        analytic = sess.run(grad, {x: logits})
        numeric = np.zeros_like(logits)
        eps = 1e-6
        for i in np.ndindex(logits.shape):
            step = np.zeros_like(logits)
            step[i] = eps
            up, down = (sess.run(loss, {x: logits + s}) @ weights for s in (step, -step))
            numeric[i] = (up - down) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, atol=1e-6)
    assert not analytic[3, 1].any()  # frames past the entry's length get no gradient


def test_second_derivative_is_disabled_as_in_tf():
    x = tw.constant(RNG.normal(size=(2, 2, 3)).astype(np.float32))
    loss = tw.nn.ctc_loss(_sparse([[0, 1], [1, 0]]), x, np.array([2, 2], np.int32))
    grad = tw.gradients(loss, [x])[0]
    with pytest.raises(LookupError, match="explicitly disabled"):
        tw.gradients(tw.reduce_sum(grad * grad), [x])


def test_ignore_longer_outputs_gives_zero_loss_and_gradient():
    logits = RNG.normal(size=(2, 2, 3)).astype(np.float32)
    x = tw.constant(logits)
    loss = tw.nn.ctc_loss(_sparse([[0, 1, 0], [1]]), x, np.array([2, 2], np.int32),
                          ignore_longer_outputs_than_inputs=True)
    got_loss, got_grad = _run([loss, tw.gradients(loss, [x])[0]])
    assert got_loss[0] == 0.0 and not got_grad[:, 0].any()
    np.testing.assert_allclose(got_loss[1], -np.log(_labelling_probs(logits[:, 1])[(1,)]),
                               rtol=1e-5)


def test_unreachable_labelling_has_infinite_loss_and_softmax_gradient():
    logits = np.array([[[0.0, -200.0, 0.0]], [[0.0, -200.0, 0.0]]], np.float32)
    x = tw.constant(logits)
    loss = tw.nn.ctc_loss(_sparse([[1]]), x, np.array([2], np.int32))
    got_loss, got_grad = _run([loss, tw.gradients(loss, [x])[0]])
    assert np.isinf(got_loss[0])
    np.testing.assert_allclose(got_grad, _softmax(logits), atol=1e-7)


def test_label_at_or_above_blank_ends_the_sequence():
    logits = RNG.normal(size=(3, 1, 3)).astype(np.float32)
    loss = tw.nn.ctc_loss(_sparse([[1, 2, 2]]), logits, np.array([3], np.int32))
    np.testing.assert_allclose(_run(loss), [-np.log(_labelling_probs(logits[:, 0])[(1,)])],
                               rtol=1e-5)


@pytest.mark.parametrize("labels, seq_len, message", [
    ([[0, 1, 0]], [2], r"Not enough time for target transition sequence \(required: 3, "
                       r"available: 2\)0You can turn this error into a warning"),
    ([[0, 2, 1]], [3], "Saw a non-null label \\(index >= num_classes - 1\\) following a null "
                       "label, batch: 0 num_classes: 3 labels: 0,2,1 labels seen so far: 0"),
    ([[0, -1]], [3], "All labels must be nonnegative integers, batch: 0 labels: 0,-1"),
    ([[0]], [4], r"sequence_length\(0\) <= 3"),
])
def test_loss_errors_name_the_node(labels, seq_len, message):
    loss = tw.nn.ctc_loss(_sparse(labels), np.zeros((3, 1, 3), np.float32),
                          np.array(seq_len, np.int32))
    with pytest.raises(tw.errors.InvalidArgumentError, match=message) as info:
        _run(loss)
    assert "CTCLoss" in str(info.value)


def test_loss_errors_for_bad_sparse_labels_and_empty_batch():
    inputs = np.zeros((3, 2, 3), np.float32)
    seq_len = np.array([3, 3], np.int32)
    empty_entry = tw.SparseTensor(np.array([[0, 0]], np.int64), np.array([1], np.int32),
                                  np.array([2, 1], np.int64))
    with pytest.raises(tw.errors.InvalidArgumentError, match="Labels length is zero in batch 1"):
        _run(tw.nn.ctc_loss(empty_entry, inputs, seq_len))
    unordered = tw.SparseTensor(np.array([[1, 0], [0, 0]], np.int64), np.array([1, 1], np.int32),
                                np.array([2, 1], np.int64))
    with pytest.raises(tw.errors.InvalidArgumentError, match=r"indices\[1\] = \[0,0\] is out "):
        _run(tw.nn.ctc_loss(unordered, inputs, seq_len))
    no_batch = tw.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.int32),
                               np.array([0, 0], np.int64))
    with pytest.raises(tw.errors.InvalidArgumentError, match="batch_size must not be 0"):
        _run(tw.nn.ctc_loss(no_batch, np.zeros((1, 0, 2), np.float32), np.zeros(0, np.int32)))


def test_loss_construction_errors():
    labels = _sparse([[0]])
    with pytest.raises(TypeError, match="Expected labels"):
        tw.nn.ctc_loss([[0]], np.zeros((2, 1, 3), np.float32), [2])
    with pytest.raises(ValueError, match="rank 3"):
        tw.nn.ctc_loss(labels, np.zeros((2, 3), np.float32), np.array([2], np.int32))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tw.nn.ctc_loss(labels, np.zeros((2, 1, 3), np.float32), np.array([2, 2], np.int32))
    with pytest.raises(ValueError, match="Cannot specify both"):
        tw.nn.ctc_loss(labels, np.zeros((2, 1, 3), np.float32), [2],
                       logits=np.zeros((2, 1, 3), np.float32))
    with pytest.raises(TypeError):
        tw.nn.ctc_loss(labels, np.zeros((2, 1, 3), np.int32), np.array([2], np.int32))


# ----------------------------------------------------------------------------- ctc_loss_v2


def test_loss_v2_dense_and_sparse_agree_with_v1_for_any_blank():
    logits = RNG.normal(size=(5, 2, 4)).astype(np.float32)
    dense = np.array([[1, 2, 1], [3, 0, 0]], np.int64)  # blank 0, zero-padded
    lengths = np.array([3, 1], np.int64)
    v2_dense = tw.nn.ctc_loss_v2(dense, logits, lengths, [5, 5])
    # blank 0 -> last: class c > 0 becomes c - 1
    v1 = tw.nn.ctc_loss(_sparse([[0, 1, 0], [2]]), np.roll(logits, -1, axis=2),
                        np.array([5, 5], np.int32))
    v2_sparse = tw.nn.ctc_loss_v2(_sparse([[1, 2, 1], [3]]), logits, None, [5, 5], blank_index=0)
    v2_last = tw.nn.ctc_loss_v2(_sparse([[0, 1, 0], [2]]), np.roll(logits, -1, axis=2), None,
                                [5, 5], blank_index=-1)
    a, b, c, d = _run([v2_dense, v1, v2_sparse, v2_last])
    np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(c, b, rtol=1e-6)
    np.testing.assert_allclose(d, b, rtol=1e-6)
    with pytest.raises(ValueError, match="blank_index must be given"):
        tw.nn.ctc_loss_v2(_sparse([[1]]), logits, None, [5, 5])


# ----------------------------------------------------------------------------- decoders


def _greedy_reference(logits, seq_len, merge):
    paths, scores = [], []
    for b in range(logits.shape[1]):
        best = logits[: seq_len[b], b].argmax(-1)
        paths.append(list(_collapse(tuple(best), logits.shape[2] - 1, merge)))
        scores.append(-logits[: seq_len[b], b].max(-1).sum())
    return paths, np.array(scores, np.float32)[:, None]


def _dense(sp_value, shape):
    out = np.full(shape, -1)
    out[tuple(sp_value.indices.T)] = sp_value.values
    return [[v for v in row if v >= 0] for row in out]


@pytest.mark.parametrize("merge", [True, False])
def test_greedy_decoder_matches_python_loop(merge):
    logits = RNG.integers(0, 4, size=(6, 3, 4)).astype(np.float32)  # many repeats and ties
    seq_len = np.array([6, 4, 0], np.int32)
    decoded, neg_sum = tw.nn.ctc_greedy_decoder(logits, seq_len, merge_repeated=merge)
    assert len(decoded) == 1 and neg_sum.shape.as_list() == [3, 1]
    value, scores = _run([decoded[0], neg_sum])
    want_paths, want_scores = _greedy_reference(logits, seq_len, merge)
    longest = max(len(p) for p in want_paths)
    assert value.dense_shape.tolist() == [3, longest]
    assert value.indices.dtype == value.values.dtype == np.int64
    assert _dense(value, (3, longest)) == want_paths
    np.testing.assert_allclose(scores, want_scores)


def test_greedy_decoder_tf_test_vector():
    p0 = [[1.0, 0, 0, 0], [0, 0, 0.4, 0.6], [0, 0, 0.4, 0.6], [0, 0.9, 0.1, 0], [0, 0, 0, 0],
          [0, 0, 0, 0]]
    p1 = [[0.1, 0.9, 0, 0], [0, 0.9, 0.1, 0], [0, 0, 0.1, 0.9], [0, 0.9, 0.1, 0.1],
          [0.9, 0.1, 0, 0], [0, 0, 0, 0]]
    with np.errstate(divide="ignore"):
        inputs = np.log(np.stack([p0, p1], 1)).astype(np.float32)
    decoded, neg_sum = tw.nn.ctc_greedy_decoder(inputs, np.array([4, 5], np.int32))
    value, scores = _run([decoded[0], neg_sum])
    assert value.indices.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]]
    assert value.values.tolist() == [0, 1, 1, 1, 0]
    np.testing.assert_allclose(scores[:, 0], [-np.log([1.0, 0.6, 0.6, 0.9]).sum(),
                                              -np.log([0.9] * 5).sum()], atol=1e-6)


def test_beam_search_tf_test_vector():
    m = np.array([[0.30999, 0.309938, 0.0679938, 0.0673362, 0.0708352, 0.173908],
                  [0.215136, 0.439699, 0.0370931, 0.0393967, 0.0381581, 0.230517],
                  [0.199959, 0.489485, 0.0233221, 0.0251417, 0.0233289, 0.238763],
                  [0.279611, 0.452966, 0.0204795, 0.0209126, 0.0194803, 0.20655],
                  [0.51286, 0.288951, 0.0243026, 0.0220788, 0.0219297, 0.129878]], np.float32)
    inputs = np.concatenate([m[:, None] + 2.0, np.zeros((2, 1, 6), np.float32)])
    decoded, log_prob = tw.nn.ctc_beam_search_decoder(inputs, np.array([5], np.int32),
                                                      beam_width=2, top_paths=2)
    first, second, scores = _run([decoded[0], decoded[1], log_prob])
    assert first.values.tolist() == [1, 0] and first.dense_shape.tolist() == [1, 2]
    assert second.values.tolist() == [1] and second.dense_shape.tolist() == [1, 1]
    np.testing.assert_allclose(scores, [[-5.811451, -6.63339]], atol=1e-5)


def test_wide_beam_search_finds_most_probable_labellings():
    logits = RNG.normal(size=(4, 2, 3)).astype(np.float64)
    seq_len = np.array([4, 3], np.int32)
    decoded, log_prob = tw.nn.ctc_beam_search_decoder_v2(logits, seq_len, beam_width=50,
                                                         top_paths=3)
    got = _run([*decoded, log_prob])
    for b in range(2):
        ranked = sorted(_labelling_probs(logits[: seq_len[b], b]).items(), key=lambda kv: -kv[1])
        for p in range(3):
            value = got[p]
            path = [int(v) for (row, _), v in zip(value.indices, value.values, strict=True)
                    if row == b]
            assert tuple(path) == ranked[p][0]
            np.testing.assert_allclose(got[3][b, p], np.log(ranked[p][1]), rtol=1e-9)


def test_beam_search_merge_repeated_collapses_the_beam_labels():
    # the best labelling is (0, 0): "0 blank 0"
    logits = np.log(np.array([[[0.9, 0.05, 0.05]], [[0.05, 0.05, 0.9]], [[0.9, 0.05, 0.05]]]))
    seq_len = np.array([3], np.int32)
    merged, _ = tw.nn.ctc_beam_search_decoder(logits, seq_len, beam_width=10)
    kept, _ = tw.nn.ctc_beam_search_decoder(logits, seq_len, beam_width=10, merge_repeated=False)
    a, b = _run([merged[0], kept[0]])
    assert a.values.tolist() == [0] and b.values.tolist() == [0, 0]


def test_decoder_errors():
    inputs = np.zeros((2, 1, 3), np.float32)
    decoded, log_prob = tw.nn.ctc_beam_search_decoder(inputs, np.array([2], np.int32),
                                                      beam_width=2, top_paths=3)
    with pytest.raises(tw.errors.InvalidArgumentError,
                       match="requested more paths than the beam width"):
        _run(log_prob)
    _, neg_sum = tw.nn.ctc_greedy_decoder(inputs, np.array([3], np.int32))
    with pytest.raises(tw.errors.FailedPreconditionError, match=r"sequence_length\(0\) <= 2"):
        _run(neg_sum)
    with pytest.raises(ValueError, match="beam_width"):
        tw.nn.ctc_beam_search_decoder(inputs, np.array([2], np.int32), beam_width=0)
    with pytest.raises(tw.errors.InvalidArgumentError, match="inputs must not be empty"):
        _run(tw.nn.ctc_greedy_decoder(np.zeros((0, 1, 3), np.float32),
                                      np.array([0], np.int32))[1])
    assert tw.gradients(log_prob, [decoded[0].values])[0] is None


# ----------------------------------------------------------------------------- label helpers


def test_ctc_unique_labels():
    labels = np.array([[3, 4, 4, 3], [5, 0, 0, 0]], np.int64)
    unique, index = tw.nn.ctc_unique_labels(labels)
    got_unique, got_index = _run([unique, index])
    assert got_unique.dtype == np.int64 and got_index.dtype == np.int32
    assert got_unique.tolist() == [[3, 4, 0, 0], [5, 0, 0, 0]]
    assert got_index.tolist() == [[0, 1, 1, 0], [0, 1, 1, 1]]


def test_collapse_repeated():
    labels = np.array([[1, 1, 2, 2, 1], [1, 2, 3, 4, 5], [7, 7, 7, 0, 0]], np.int32)
    collapsed, lengths = tw.nn.collapse_repeated(labels, np.array([5, 5, 2], np.int64))
    got, got_len = _run([collapsed, lengths])
    assert got.tolist() == [[1, 2, 1, 0, 0], [1, 2, 3, 4, 5], [7, 0, 0, 0, 0]]
    assert got_len.tolist() == [3, 5, 1] and got_len.dtype == np.int64


# ----------------------------------------------------------------------------- training


def test_training_lowers_the_loss():
    tw.set_random_seed(1)
    logits = tw.Variable(tw.random_normal([6, 2, 4], stddev=0.1))
    loss = tw.reduce_mean(tw.nn.ctc_loss(_sparse([[0, 1, 2], [2, 2]]), logits,
                                         np.array([6, 5], np.int32)))
    train = tw.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(60):
            sess.run(train)
        last = sess.run(loss)
        decoded, _ = tw.nn.ctc_greedy_decoder(logits, np.array([6, 5], np.int32))
        value = sess.run(decoded[0])
    assert last < 0.25 * first
    assert _dense(value, tuple(value.dense_shape)) == [[0, 1, 2], [2, 2]]
