"""Train a small tf.keras convolutional classifier on synthetic images, save its weights and
load them into a fresh model.

A plain TF1-era ``tf.keras`` script (only the import differs from TensorFlow's): a
``Sequential`` model of ``Conv2D``, ``MaxPooling2D``, ``Flatten`` and ``Dense`` layers is
compiled with Adam and sparse categorical cross-entropy, trained with ``fit`` and scored with
``evaluate`` on held-out images; ``save_weights`` writes a checkpoint, and ``load_weights``
puts it into a second model of the same architecture, which must then predict exactly what the
first one does.

The task: an 8x8 grey image holds one bright bar of 4 pixels, horizontal, vertical or
diagonal, at a random place, over uniform noise; the label is the bar's orientation (chance is
1 in 3). A 3x3 convolution sees the orientation anywhere in the image, so a few epochs learn it:
it prints the loss per epoch and ends with ``held-out accuracy: 1.000 (300 of 300)`` or close
to it, then the reloaded model's accuracy and the largest difference between the two models'
predictions (0).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import NamedTuple

import numpy as np

import tensorweave as tf

SIZE = 8
BAR = 4
ORIENTATIONS = ("horizontal", "vertical", "diagonal")
# The step from one pixel of a bar to the next, per orientation.
STEPS = ((0, 1), (1, 0), (1, 1))


class Result(NamedTuple):
    accuracy: float  # the trained model's, held out
    fresh_accuracy: float  # the second model's before load_weights
    reloaded_accuracy: float  # the second model's after load_weights
    max_prediction_diff: float  # largest |difference| between the two models' predictions


def make_images(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` images of shape [SIZE, SIZE, 1] with one bar each, and the bars' orientations."""
    rng = np.random.default_rng(seed)
    images = rng.uniform(0.0, 0.3, size=(n, SIZE, SIZE, 1)).astype(np.float32)
    labels = rng.integers(0, len(ORIENTATIONS), size=n).astype(np.int32)
    for image, label in zip(images, labels):
        dy, dx = STEPS[label]
        y = int(rng.integers(0, SIZE - dy * (BAR - 1)))
        x = int(rng.integers(0, SIZE - dx * (BAR - 1)))
        for i in range(BAR):
            image[y + i * dy, x + i * dx, 0] = 1.0
    return images, labels


def build_model() -> tf.keras.Sequential:
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(8, 3, activation="relu", input_shape=(SIZE, SIZE, 1)),
        tf.keras.layers.MaxPooling2D(2),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(len(ORIENTATIONS), activation="softmax"),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def accuracy_of(model: tf.keras.Model, images: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(np.argmax(model.predict(images), axis=1) == labels))


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    x_train, y_train = make_images(1500, args.seed)
    x_test, y_test = make_images(300, args.seed + 1)

    tf.keras.backend.clear_session()
    tf.set_random_seed(args.seed)
    np.random.seed(args.seed)  # fit shuffles with numpy's global generator
    model = build_model()
    history = model.fit(x_train, y_train, batch_size=50, epochs=args.epochs, verbose=0)
    for epoch, loss in enumerate(history.history["loss"]):
        print(f"epoch {epoch}: loss {loss:.3f}")
    _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    correct = int(round(accuracy * len(y_test)))
    print(f"held-out accuracy: {accuracy:.3f} ({correct} of {len(y_test)})")

    with tempfile.TemporaryDirectory() as weights_dir:
        path = os.path.join(weights_dir, "classifier")
        model.save_weights(path)
        fresh = build_model()
        fresh_accuracy = accuracy_of(fresh, x_test, y_test)
        fresh.load_weights(path)
    reloaded_accuracy = accuracy_of(fresh, x_test, y_test)
    diff = float(np.max(np.abs(fresh.predict(x_test) - model.predict(x_test))))
    print(f"fresh model: accuracy {fresh_accuracy:.3f} before load_weights, "
          f"{reloaded_accuracy:.3f} after; largest prediction difference {diff:g}")
    return Result(float(accuracy), fresh_accuracy, reloaded_accuracy, diff)


if __name__ == "__main__":
    main()
