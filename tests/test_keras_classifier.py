"""examples/keras_classifier.py: a tf.keras Conv2D classifier learns the orientation of a bar in
synthetic images, and its saved weights give a fresh model the same predictions."""

from __future__ import annotations

import numpy as np
import pytest

from tests.examples_support import load_example


def test_each_image_holds_one_bar_of_its_labelled_orientation() -> None:
    example = load_example("keras_classifier")
    images, labels = example.make_images(100, seed=3)
    assert images.shape == (100, example.SIZE, example.SIZE, 1) and images.dtype == np.float32
    assert labels.dtype == np.int32 and set(labels.tolist()) == {0, 1, 2}
    for image, label in zip(images, labels):
        ys, xs = np.nonzero(image[..., 0] == 1.0)
        assert len(ys) == example.BAR
        dy, dx = example.STEPS[label]
        order = np.lexsort((xs, ys))
        assert np.all(np.diff(ys[order]) == dy) and np.all(np.diff(xs[order]) == dx)
        assert image[image < 1.0].max() < 0.3  # noise stays below the bar


def test_it_learns_the_task_and_reloads_the_weights(capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    result = load_example("keras_classifier").main(["--epochs", "5"])
    out = capsys.readouterr().out
    assert result.accuracy >= 0.95
    assert result.fresh_accuracy < 0.7  # an untrained copy does not know the task ...
    assert result.reloaded_accuracy == pytest.approx(result.accuracy)  # ... until it loads
    assert result.max_prediction_diff == 0.0
    assert "epoch 4: loss" in out and "held-out accuracy:" in out
