"""Train a bag-of-words text classifier from TFRecord files, TF1-style.

A plain TF1 graph-mode script (only the import differs from TensorFlow's) that uses the string,
sparse and input-file parts of the API: sentences are written as ``tf.train.Example`` protos to
TFRecord files with ``tf.io.TFRecordWriter``; a ``tf.data.TFRecordDataset`` reads them back and
``tf.io.parse_single_example`` parses them; ``tf.string_split`` turns each batch of sentences
into a ``SparseTensor`` of words, ``tf.strings.to_hash_bucket_fast`` hashes the words (TF's
farmhash, so the buckets are TF's), ``tf.nn.embedding_lookup_sparse`` averages their
embeddings, and a ``tf.layers.Dense`` layer classifies the average.

The task: a sentence of 4 to 9 words drawn from a small vocabulary is labelled 1 when it holds
more "good" words than "bad" ones (neutral words fill it up; ties are left out), so the model
must weigh the words it sees; chance is about 50 %. Averaged embeddings separate the classes,
so a few epochs learn them: it prints the loss per epoch and ends with ``held-out accuracy:
1.000 (300 of 300)`` or close to it.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import tensorweave as tf

GOOD = ["great", "good", "fine", "superb", "lovely", "happy", "bright", "nice"]
BAD = ["awful", "bad", "poor", "dreadful", "sad", "grim", "dull", "nasty"]
NEUTRAL = ["the", "a", "movie", "plot", "was", "and", "it", "very", "quite", "story", "actors"]
BUCKETS = 1024
EMBEDDING = 16


def make_sentences(n: int, seed: int) -> list[tuple[str, int]]:
    """`n` sentences with their labels; none has as many good words as bad ones."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, int]] = []
    while len(out) < n:
        length = int(rng.integers(4, 10))
        words = list(rng.choice(GOOD + BAD + NEUTRAL, size=length))
        good = sum(w in GOOD for w in words)
        bad = sum(w in BAD for w in words)
        if good != bad:
            out.append((" ".join(words), int(good > bad)))
    return out


def write_records(path: str, sentences: list[tuple[str, int]]) -> None:
    with tf.io.TFRecordWriter(path) as writer:
        for text, label in sentences:
            example = tf.train.Example(features=tf.train.Features(feature={
                "text": tf.train.Feature(bytes_list=tf.train.BytesList(value=[text.encode()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
            }))
            writer.write(example.SerializeToString())


def parse(record: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    features = tf.io.parse_single_example(record, {
        "text": tf.io.FixedLenFeature([], tf.string),
        "label": tf.io.FixedLenFeature([], tf.int64),
    })
    return features["text"], features["label"]


def build_model(texts: tf.Tensor, labels: tf.Tensor) -> dict[str, tf.Tensor]:
    words = tf.string_split(texts)  # a SparseTensor: [batch, longest sentence]
    ids = tf.SparseTensor(words.indices,
                          tf.strings.to_hash_bucket_fast(words.values, BUCKETS),
                          words.dense_shape)
    embeddings = tf.get_variable("embeddings", [BUCKETS, EMBEDDING],
                                 initializer=tf.random_normal_initializer(stddev=0.1))
    bag = tf.nn.embedding_lookup_sparse(embeddings, ids, None, combiner="mean")
    logits = tf.layers.Dense(2, name="classifier")(bag)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, axis=1), labels), tf.int32))
    return {"loss": loss, "train": train, "correct": correct, "size": tf.size(labels)}


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as data_dir:
        train_path = os.path.join(data_dir, "train.tfrecord")
        test_path = os.path.join(data_dir, "test.tfrecord")
        write_records(train_path, make_sentences(1000, args.seed))
        write_records(test_path, make_sentences(300, args.seed + 1))
        print(f"wrote {train_path} and {test_path}")

        tf.reset_default_graph()
        tf.set_random_seed(args.seed)
        filename = tf.placeholder(tf.string, [], name="filename")
        dataset = tf.data.TFRecordDataset(filename).map(parse).batch(50)
        iterator = dataset.make_initializable_iterator()
        texts, labels = iterator.get_next()
        model = build_model(texts, labels)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for epoch in range(args.epochs):
                sess.run(iterator.initializer, {filename: train_path})
                losses = []
                while True:
                    try:
                        losses.append(sess.run([model["loss"], model["train"]])[0])
                    except tf.errors.OutOfRangeError:
                        break
                print(f"epoch {epoch}: mean loss {np.mean(losses):.3f}")
            sess.run(iterator.initializer, {filename: test_path})
            correct = total = 0
            while True:
                try:
                    c, n = sess.run([model["correct"], model["size"]])
                except tf.errors.OutOfRangeError:
                    break
                correct, total = correct + c, total + n
    accuracy = correct / total
    print(f"held-out accuracy: {accuracy:.3f} ({correct} of {total})")
    return accuracy


if __name__ == "__main__":
    main()
