"""examples/text_classifier.py: sentences written to TFRecord files, read back, split, hashed
and averaged, learn to tell good from bad."""

from __future__ import annotations

import pytest

from tests.examples_support import load_example


def test_sentences_are_labelled_by_their_good_and_bad_words() -> None:
    example = load_example("text_classifier")
    for text, label in example.make_sentences(200, seed=5):
        words = text.split()
        good = sum(w in example.GOOD for w in words)
        bad = sum(w in example.BAD for w in words)
        assert 4 <= len(words) <= 9 and good != bad and label == int(good > bad)


def test_it_learns_the_task(capsys: pytest.CaptureFixture[str]) -> None:
    accuracy = load_example("text_classifier").main(["--epochs", "2"])
    out = capsys.readouterr().out
    assert accuracy >= 0.95
    assert "epoch 1: mean loss" in out and "held-out accuracy:" in out
