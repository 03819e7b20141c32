"""Candidate samplers and ComputeAccidentalHits: shapes and dtypes, the sampled distributions
(statistically, with fixed seeds), TF's expected-count formulas, seeds, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.engine import errors


def run(fetches, feed_dict=None):
    with tw.Session() as sess:
        return sess.run(fetches, feed_dict)


def true_classes(rows):
    return tw.constant(rows, dtype=tw.int64)


def log_uniform_p(values, range_max):
    v = np.asarray(values, np.float64)
    return np.log((v + 2) / (v + 1)) / np.log(range_max + 1)


def assert_frequencies(samples, p):
    """Observed frequencies within 5 standard errors (plus a little) of the probabilities `p`."""
    n = len(samples)
    freq = np.bincount(samples, minlength=len(p)) / n
    bound = 5 * np.sqrt(p * (1 - p) / n) + 1e-3
    assert np.all(np.abs(freq - p) <= bound), (freq, p)


SAMPLERS = [tw.nn.uniform_candidate_sampler, tw.nn.log_uniform_candidate_sampler,
            tw.nn.learned_unigram_candidate_sampler]


@pytest.mark.parametrize("fn", SAMPLERS)
def test_sampler_shapes_and_dtypes(fn):
    sampled, true_ec, sampled_ec = fn(true_classes([[1, 2], [3, 4], [0, 0]]), num_true=2,
                                      num_sampled=6, unique=True, range_max=10, seed=3)
    assert sampled.dtype == tw.int64 and sampled.shape.as_list() == [6]
    assert true_ec.dtype == tw.float32 and true_ec.shape.as_list() == [3, 2]
    assert sampled_ec.dtype == tw.float32 and sampled_ec.shape.as_list() == [6]
    s, t, e = run([sampled, true_ec, sampled_ec])
    assert s.dtype == np.int64 and t.dtype == np.float32 and e.dtype == np.float32
    assert len(set(s.tolist())) == 6 and s.min() >= 0 and s.max() < 10


def test_unknown_batch_size_is_kept():
    labels = tw.placeholder(tw.int64, [None, 3])
    _, true_ec, _ = tw.nn.uniform_candidate_sampler(labels, 3, 4, False, 9)
    assert true_ec.shape.as_list() == [None, 3]
    value = run(true_ec, {labels: np.zeros((5, 3), np.int64)})
    np.testing.assert_allclose(value, np.full((5, 3), 4 / 9), rtol=1e-6)


def test_log_uniform_frequencies_and_expected_counts():
    range_max, n = 12, 40000
    sampled, true_ec, sampled_ec = tw.nn.log_uniform_candidate_sampler(
        true_classes([[0], [5], [11]]), 1, n, False, range_max, seed=7)
    s, t, e = run([sampled, true_ec, sampled_ec])
    assert_frequencies(s, log_uniform_p(np.arange(range_max), range_max))
    # without `unique`, the expected count is p * num_sampled
    np.testing.assert_allclose(t[:, 0], log_uniform_p([0, 5, 11], range_max) * n, rtol=1e-5)
    np.testing.assert_allclose(e, log_uniform_p(s, range_max) * n, rtol=1e-5)


def test_uniform_frequencies():
    sampled, _, _ = tw.nn.uniform_candidate_sampler(true_classes([[0]]), 1, 30000, False, 7,
                                                     seed=1)
    assert_frequencies(run(sampled), np.full(7, 1 / 7))


def implied_tries(expected, p):
    return np.log1p(-expected.astype(np.float64)) / np.log1p(-p)


def rejection_count(values, tries, range_max):
    return -np.expm1(tries * np.log1p(-log_uniform_p(values, range_max)))


def test_unique_log_uniform_uses_the_rejection_formula():
    range_max, n = 30, 10
    labels = [[0, 3], [29, 7]]
    sampled, true_ec, sampled_ec = tw.nn.log_uniform_candidate_sampler(
        true_classes(labels), 2, n, True, range_max, seed=11)
    for _ in range(3):  # every run draws afresh; the formula holds on each
        s, t, e = run([sampled, true_ec, sampled_ec])
        assert len(set(s.tolist())) == n
        tries = implied_tries(e[:1], log_uniform_p(s[:1], range_max))[0]
        assert tries >= n and abs(tries - round(tries)) < 1e-2
        np.testing.assert_allclose(e, rejection_count(s, round(tries), range_max), rtol=1e-4)
        np.testing.assert_allclose(t, rejection_count(labels, round(tries), range_max),
                                   rtol=1e-4)


def test_unique_uniform_tries_match_the_coupon_collector_mean():
    # Drawing 8 distinct values out of 10 takes sum_{k<8} 10 / (10 - k) tries on average.
    range_max, n = 10, 8
    _, _, sampled_ec = tw.nn.uniform_candidate_sampler(true_classes([[0]]), 1, n, True,
                                                       range_max, seed=5)
    tries = []
    with tw.Session() as sess:
        for _ in range(400):
            e = sess.run(sampled_ec)[0]
            # no rejected draw: TF's shortcut p * num_sampled applies
            tries.append(n if np.isclose(e, n / range_max) else implied_tries(e, 1 / range_max))
    mean = sum(range_max / (range_max - k) for k in range(n))
    assert np.all(np.abs(np.asarray(tries) - np.round(tries)) < 1e-2)
    assert min(tries) >= n
    assert abs(np.mean(tries) - mean) < 0.6  # the tries' std is ~4: 3 standard errors


def test_unique_needs_a_large_enough_range():
    sampled, _, _ = tw.nn.uniform_candidate_sampler(true_classes([[0]]), 1, 5, True, 4)
    with pytest.raises(errors.InvalidArgumentError, match="range is too small"):
        run(sampled)


def test_unique_with_num_sampled_equal_to_range_returns_a_permutation():
    sampled, _, sampled_ec = tw.nn.log_uniform_candidate_sampler(true_classes([[0]]), 1, 6,
                                                                 True, 6, seed=2)
    s, e = run([sampled, sampled_ec])
    assert sorted(s.tolist()) == list(range(6))
    assert np.all((e > 0) & (e <= 1))


def test_fixed_unigram_frequencies_distortion_and_reserved_ids():
    unigrams = [1.0, 4.0, 9.0, 16.0]
    sampled, true_ec, _ = tw.nn.fixed_unigram_candidate_sampler(
        true_classes([[0], [4], [5]]), 1, 30000, False, range_max=6, distortion=0.5,
        num_reserved_ids=2, unigrams=unigrams, seed=4)
    s, t = run([sampled, true_ec])
    p = np.array([0, 0, 1, 2, 3, 4]) / 10  # sqrt of the unigrams, after 2 reserved ids
    assert_frequencies(s, p)
    assert not np.isin(s, [0, 1]).any()
    np.testing.assert_allclose(t[:, 0], p[[0, 4, 5]] * 30000, rtol=1e-5)


def test_fixed_unigram_shard_keeps_its_share_of_ids():
    # ids 0..5 in 2 shards: shard 1 keeps ids 1, 3, 5 and samples local ids 0..2
    sampled, _, sampled_ec = tw.nn.fixed_unigram_candidate_sampler(
        true_classes([[0]]), 1, 20000, False, range_max=3, num_shards=2, shard=1,
        unigrams=[5, 1, 5, 2, 5, 3], seed=8)
    s, e = run([sampled, sampled_ec])
    assert_frequencies(s, np.array([1, 2, 3]) / 6)
    np.testing.assert_allclose(e[s == 2], 0.5 * 20000, rtol=1e-5)


def test_fixed_unigram_reads_a_vocab_file(tmp_path):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("the,6\nof,3\nzebra,1\n")
    sampled, true_ec, _ = tw.nn.fixed_unigram_candidate_sampler(
        true_classes([[0], [2]]), 1, 20000, False, range_max=3, vocab_file=str(vocab), seed=2)
    s, t = run([sampled, true_ec])
    assert_frequencies(s, np.array([0.6, 0.3, 0.1]))
    np.testing.assert_allclose(t[:, 0], [0.6 * 20000, 0.1 * 20000], rtol=1e-5)


@pytest.mark.parametrize("kwargs, message", [
    ({"unigrams": [1.0, 2.0]}, "must be equal to weights size"),
    ({}, "Must provide either vocab_file or unigrams"),
    ({"unigrams": [1.0, 2.0, 3.0], "vocab_file": "v.txt"}, "Must only provide one"),
])
def test_fixed_unigram_bad_configuration(kwargs, message):
    sampled, _, _ = tw.nn.fixed_unigram_candidate_sampler(true_classes([[0]]), 1, 2, False,
                                                          range_max=3, **kwargs)
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run(sampled)


def test_fixed_unigram_bad_vocab_line(tmp_path):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("a,1\nb,many\n")
    sampled, _, _ = tw.nn.fixed_unigram_candidate_sampler(true_classes([[0]]), 1, 2, False,
                                                          range_max=2, vocab_file=str(vocab))
    with pytest.raises(errors.InvalidArgumentError, match="Wrong vocabulary format"):
        run(sampled)


def test_learned_unigram_counts_the_true_classes_it_has_seen():
    range_max, n = 5, 20000
    labels = tw.placeholder(tw.int64, [None, 1])
    sampled, true_ec, _ = tw.nn.learned_unigram_candidate_sampler(labels, 1, n, False,
                                                                  range_max, seed=9)
    with tw.Session() as sess:
        first, t0 = sess.run([sampled, true_ec], {labels: [[3]] * 15})
        second, t1 = sess.run([sampled, true_ec], {labels: [[3]]})
    # every weight starts at 1; the first run then adds 15 to class 3
    assert_frequencies(first, np.full(range_max, 1 / range_max))
    np.testing.assert_allclose(t0, np.full((15, 1), n / range_max), rtol=1e-5)
    p = np.array([1, 1, 1, 16, 1]) / 20
    assert_frequencies(second, p)
    np.testing.assert_allclose(t1, [[p[3] * n]], rtol=1e-5)


def test_true_class_out_of_range_fails():
    sampled, _, _ = tw.nn.learned_unigram_candidate_sampler(true_classes([[7]]), 1, 2, False, 5)
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        run(sampled)


def test_all_candidate_sampler():
    sampled, true_ec, sampled_ec = tw.random.all_candidate_sampler(true_classes([[1], [2]]), 1,
                                                                   4, True)
    s, t, e = run([sampled, true_ec, sampled_ec])
    np.testing.assert_array_equal(s, [0, 1, 2, 3])
    np.testing.assert_array_equal(t, np.ones((2, 1), np.float32))
    np.testing.assert_array_equal(e, np.ones(4, np.float32))


def test_seeds_follow_the_graph_seed_rule():
    def draw(graph_seed, op_seed):
        with tw.Graph().as_default():
            if graph_seed is not None:
                tw.set_random_seed(graph_seed)
            sampled, _, _ = tw.nn.log_uniform_candidate_sampler(true_classes([[0]]), 1, 50,
                                                                False, 1000, seed=op_seed)
            return sampled.op, run(sampled)

    op, first = draw(None, 5)
    assert (op.get_attr("seed"), op.get_attr("seed2")) == (87654321, 5)
    np.testing.assert_array_equal(first, draw(None, 5)[1])
    assert not np.array_equal(first, draw(None, 6)[1])
    np.testing.assert_array_equal(draw(3, None)[1], draw(3, None)[1])
    op, _ = draw(None, None)
    assert (op.get_attr("seed"), op.get_attr("seed2")) == (0, 0)
    assert not np.array_equal(draw(None, None)[1], draw(None, None)[1])


def test_samplers_are_stateful_and_draw_anew_each_run():
    sampled, _, _ = tw.nn.uniform_candidate_sampler(true_classes([[0]]), 1, 20, False, 1000,
                                                    seed=1)
    assert sampled.op.op_def.stateful
    with tw.Session() as sess:
        assert not np.array_equal(sess.run(sampled), sess.run(sampled))


def test_random_aliases():
    assert tw.random.uniform_candidate_sampler is tw.nn.uniform_candidate_sampler
    assert tw.random.log_uniform_candidate_sampler is tw.nn.log_uniform_candidate_sampler
    assert tw.random.fixed_unigram_candidate_sampler is tw.nn.fixed_unigram_candidate_sampler
    assert (tw.random.learned_unigram_candidate_sampler
            is tw.nn.learned_unigram_candidate_sampler)


def test_construction_errors():
    with pytest.raises(ValueError, match="rank 2"):
        tw.nn.uniform_candidate_sampler(tw.constant([1, 2], tw.int64), 1, 2, False, 5)
    with pytest.raises(ValueError, match="num_sampled"):
        tw.nn.uniform_candidate_sampler(true_classes([[1]]), 1, 0, False, 5)
    with pytest.raises(ValueError, match="range_max"):
        tw.nn.log_uniform_candidate_sampler(true_classes([[1]]), 1, 1, False, 0)
    with pytest.raises(TypeError):
        tw.nn.uniform_candidate_sampler(tw.constant([[1]], tw.int32), 1, 2, False, 5)
    with pytest.raises(ValueError, match="Dimension must be 2"):
        tw.nn.compute_accidental_hits(true_classes([[1]]), tw.constant([1], tw.int64), 2)


def test_wrong_num_true_fails_at_run_time():
    labels = tw.placeholder(tw.int64, [None, None])
    sampled, _, _ = tw.nn.uniform_candidate_sampler(labels, 2, 3, False, 5)
    with pytest.raises(errors.InvalidArgumentError, match="num_true columns"):
        run(sampled, {labels: [[1, 2, 3]]})


def test_accidental_hits_hand_example():
    labels = true_classes([[1, 5], [3, 9], [8, 8]])
    # 5 is sampled twice: TF reports its last position only
    sampled = tw.constant([5, 9, 1, 8, 5], tw.int64)
    indices, ids, weights = tw.nn.compute_accidental_hits(labels, sampled, num_true=2)
    assert (indices.dtype, ids.dtype, weights.dtype) == (tw.int32, tw.int64, tw.float32)
    i, d, w = run([indices, ids, weights])
    np.testing.assert_array_equal(i, np.array([0, 0, 1, 2, 2], np.int32))
    np.testing.assert_array_equal(d, np.array([2, 4, 1, 3, 3], np.int64))
    np.testing.assert_array_equal(w, np.full(5, -np.finfo(np.float32).max, np.float32))
    assert i.dtype == np.int32 and d.dtype == np.int64 and w.dtype == np.float32


def test_accidental_hits_none():
    i, d, w = run(tw.nn.compute_accidental_hits(true_classes([[1]]),
                                                tw.constant([2, 3], tw.int64), 1))
    assert i.shape == d.shape == w.shape == (0,)
