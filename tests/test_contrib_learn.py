"""``tf.contrib.learn.preprocessing``: tokenizer, vocabularies and the text/byte/category
processors, against hand-computed ids (TF 1.15's ordering)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import tensorweave as tw
from tensorweave.contrib import learn

pre = learn.preprocessing


def test_namespace_is_reached_through_tf_contrib() -> None:
    assert tw.contrib.learn.preprocessing.VocabularyProcessor is pre.VocabularyProcessor
    assert set(pre.__all__) >= {"VocabularyProcessor", "CategoricalVocabulary", "tokenizer"}


def test_default_tokenizer_regex() -> None:
    docs = ["HelloWorld NLP's re-use ABCdef", "iPhone XMLHttp rocks!", "über café 42."]
    assert list(pre.tokenizer(docs)) == [
        ["Hello", "World", "NLP", "'s", "re-use", "AB", "Cdef"],
        ["iPhone", "XML", "Http", "rocks"],
        ["über", "café", "42"],
    ]


def test_fit_transform_ids_in_first_seen_order_padded_and_cut() -> None:
    vp = pre.VocabularyProcessor(4)
    rows = list(vp.fit_transform(["a b c", "c d a e f", "b"]))
    assert all(r.dtype == np.int64 and r.shape == (4,) for r in rows)
    np.testing.assert_array_equal(np.array(rows), [[1, 2, 3, 0], [3, 4, 1, 5], [2, 0, 0, 0]])
    # 'f' was counted (the vocabulary sees whole documents) though cut from the row
    assert len(vp.vocabulary_) == 7
    # frozen after fit: unseen words map to <UNK>
    np.testing.assert_array_equal(next(vp.transform(["zz a"])), [0, 1, 0, 0])
    assert len(vp.vocabulary_) == 7
    assert list(vp.reverse([[3, 1, 0, 0]])) == ["c a <UNK> <UNK>"]


def test_min_frequency_keeps_counts_above_it_by_count_then_name() -> None:
    docs = ["b a c", "a b d", "c a b", "d e"]  # a:3 b:3 c:2 d:2 e:1
    vp = pre.VocabularyProcessor(3, min_frequency=1)
    np.testing.assert_array_equal(np.array(list(vp.fit_transform(docs))),
                                  [[2, 1, 3], [1, 2, 4], [3, 1, 2], [4, 0, 0]])
    assert [vp.vocabulary_.reverse(i) for i in range(len(vp.vocabulary_))] == \
        ["<UNK>", "a", "b", "c", "d"]
    vp2 = pre.VocabularyProcessor(3, min_frequency=2)  # count must exceed 2
    list(vp2.fit_transform(docs))
    assert len(vp2.vocabulary_) == 3


def test_categorical_vocabulary_trim_max_frequency_and_reverse_support() -> None:
    vocab = pre.CategoricalVocabulary()
    for word, count in [("x", 5), ("y", 2), ("z", 2), ("w", 1)]:
        vocab.add(word, count)
    vocab.trim(1, max_frequency=5)
    assert (vocab.get("x"), vocab.get("y"), vocab.get("z")) == (3, 1, 2)  # x was dropped: new id
    no_rev = pre.CategoricalVocabulary(support_reverse=False)
    with pytest.raises(ValueError, match="support_reverse"):
        no_rev.reverse(0)


def test_save_restore_roundtrip_as_json(tmp_path) -> None:
    vp = pre.VocabularyProcessor(5, min_frequency=0)
    docs = ["the cat sat", "the dog"]
    expected = np.array(list(vp.fit_transform(docs)))
    path = str(tmp_path / "vocab")
    vp.save(path)
    with open(path, encoding="utf-8") as f:
        assert json.load(f)["vocabulary"]["categories"] == ["<UNK>", "the", "cat", "sat", "dog"]
    back = pre.VocabularyProcessor.restore(path)
    assert (back.max_document_length, back.min_frequency) == (5, 0)
    np.testing.assert_array_equal(np.array(list(back.transform(docs + ["a cat"]))),
                                  np.vstack([expected, [[0, 2, 0, 0, 0]]]))
    assert len(back.vocabulary_) == 5  # still frozen


def test_custom_tokenizer_is_not_saved_and_must_be_given_again(tmp_path) -> None:
    def by_char(docs):
        return (list(d) for d in docs)

    vp = pre.VocabularyProcessor(3, tokenizer_fn=by_char)
    list(vp.fit_transform(["abc"]))
    path = str(tmp_path / "vocab")
    vp.save(path)
    with pytest.raises(ValueError, match="tokenizer_fn"):
        pre.VocabularyProcessor.restore(path)
    back = pre.VocabularyProcessor.restore(path, tokenizer_fn=by_char)
    np.testing.assert_array_equal(next(back.transform(["cax"])), [3, 1, 0])


def test_restore_rejects_non_json_and_save_rejects_unstorable(tmp_path) -> None:
    bad = tmp_path / "pickled"
    bad.write_bytes(b"\x80\x04\x95garbage")
    with pytest.raises(ValueError, match="not a VocabularyProcessor"):
        pre.VocabularyProcessor.restore(str(bad))
    vp = pre.VocabularyProcessor(2, tokenizer_fn=lambda docs: ([object()] for _ in docs))
    list(vp.fit_transform(["x"]))
    with pytest.raises(TypeError, match="JSON"):
        vp.save(str(tmp_path / "v"))
    with pytest.raises(tw.errors.NotFoundError):
        pre.VocabularyProcessor.restore(str(tmp_path / "missing"))


def test_byte_processor() -> None:
    bp = pre.ByteProcessor(4)
    rows = list(bp.fit_transform(["ab", b"abcdef", "é"]))
    np.testing.assert_array_equal(np.array(rows),
                                  [[97, 98, 0, 0], [97, 98, 99, 100], [0xC3, 0xA9, 0, 0]])
    assert rows[0].dtype == np.uint8
    assert list(bp.reverse(rows)) == ["ab", "abcd", "é"]


def test_categorical_processor_per_column_shared_and_nan() -> None:
    data = [["a", 1], ["b", 2], [math.nan, 1]]
    cp = pre.CategoricalProcessor()
    np.testing.assert_array_equal(np.array(list(cp.fit_transform(data))),
                                  [[1, 1], [2, 2], [0, 1]])
    np.testing.assert_array_equal(next(cp.transform([["c", 2]])), [0, 2])
    shared = pre.CategoricalProcessor(share=True)
    np.testing.assert_array_equal(np.array(list(shared.fit_transform([["a", "b"], ["b", "c"]]))),
                                  [[1, 2], [2, 3]])
