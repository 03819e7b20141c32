"""Wide & deep income classifier with a canned Estimator, exported and served as a SavedModel.

A plain TF1 estimator script (only the import differs from TensorFlow's) on synthetic
census-like rows: ``age`` and ``hours_per_week`` (numbers), ``education`` and ``occupation``
(strings). The label follows a known rule: income is ``>50K`` exactly when

    0.08 * (age - 45) + 0.06 * (hours_per_week - 40) + EDUCATION[education]
        + OCCUPATION[occupation] > 0

so a model that learns it classifies held-out people almost perfectly (chance is about 50 %).
Feature columns feed a ``DNNLinearCombinedClassifier`` (linear part: the categories and
bucketized age; deep part: the normalized numbers and one-hot categories), trained with
``train``, scored with ``evaluate`` (it prints accuracy and AUC), exported with
``export_saved_model`` and a parsing serving input receiver, then the SavedModel is loaded in a
fresh graph with ``tf.saved_model.loader.load`` and its ``serving_default`` (classify)
signature labels a few serialized ``tf.train.Example`` protos. The script prints them beside
the rule's answer and ``Estimator.predict``'s probability, which the served scores equal.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import Any

import attrs
import numpy as np

import tensorweave as tf

EDUCATION = {"HS-grad": -1.5, "Some-college": -0.5, "Bachelors": 0.5, "Masters": 1.5,
             "Doctorate": 2.0}
OCCUPATION = {"Service": -1.0, "Sales": -0.5, "Craft": 0.0, "Tech": 0.8, "Exec": 1.2}
CLASSES = ["<=50K", ">50K"]


@attrs.frozen
class Report:
    """What a run measured: the held-out metrics and, for the served examples, the served and
    the predicted probability of ``>50K`` and the rule's label (1 for ``>50K``)."""

    accuracy: float
    auc: float
    served: np.ndarray
    predicted: np.ndarray
    labels: np.ndarray


def income_rule(age: np.ndarray, hours: np.ndarray, education: np.ndarray,
                occupation: np.ndarray) -> np.ndarray:
    """1 where the rule in the module docstring says ``>50K``, else 0."""
    score = (0.08 * (age - 45) + 0.06 * (hours - 40)
             + np.array([EDUCATION[e] for e in education])
             + np.array([OCCUPATION[o] for o in occupation]))
    return (score > 0).astype(np.int64)


def make_people(n: int, seed: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """`n` random people's features and their labels (as class names)."""
    rng = np.random.default_rng(seed)
    people = {
        "age": rng.integers(18, 76, n).astype(np.float32),
        "hours_per_week": rng.integers(10, 71, n).astype(np.float32),
        "education": rng.choice(list(EDUCATION), n),
        "occupation": rng.choice(list(OCCUPATION), n),
    }
    labels = income_rule(people["age"], people["hours_per_week"], people["education"],
                         people["occupation"])
    return people, np.array(CLASSES)[labels]


def feature_columns() -> tuple[list[Any], list[Any]]:
    """The linear part's columns and the deep part's."""
    fc = tf.feature_column
    age = fc.numeric_column("age", normalizer_fn=lambda x: (x - 45.0) / 17.0)
    hours = fc.numeric_column("hours_per_week", normalizer_fn=lambda x: (x - 40.0) / 17.0)
    education = fc.categorical_column_with_vocabulary_list("education", list(EDUCATION))
    occupation = fc.categorical_column_with_vocabulary_list("occupation", list(OCCUPATION))
    age_buckets = fc.bucketized_column(fc.numeric_column("age"), [25, 35, 45, 55, 65])
    wide = [education, occupation, age_buckets]
    deep = [age, hours, fc.indicator_column(education), fc.indicator_column(occupation)]
    return wide, deep


def to_example(person: dict[str, Any]) -> bytes:
    """One person as a serialized ``tf.train.Example``, as a serving client sends it."""
    def floats(v: float) -> Any:
        return tf.train.Feature(float_list=tf.train.FloatList(value=[float(v)]))

    def strings(v: str) -> Any:
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[str(v).encode()]))

    return tf.train.Example(features=tf.train.Features(feature={
        "age": floats(person["age"]), "hours_per_week": floats(person["hours_per_week"]),
        "education": strings(person["education"]),
        "occupation": strings(person["occupation"]),
    })).SerializeToString()


def classify_with_saved_model(export_dir: bytes,
                              examples: list[bytes]) -> tuple[list[str], np.ndarray]:
    """The served class of each of `examples` and the ``[n, 2]`` class scores, from the
    SavedModel alone."""
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING],
                                          export_dir)
        signature = meta.signature_def["serving_default"]
        classes, scores = sess.run(
            [signature.outputs["classes"].name, signature.outputs["scores"].name],
            {signature.inputs["inputs"].name: examples})
    best = classes[np.arange(len(examples)), np.argmax(scores, axis=1)]
    return [name.decode() for name in best], scores


def main(argv: list[str] | None = None) -> Report:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--model-dir", default=None, help="default: a temporary directory")
    args = parser.parse_args(argv)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="census_")

    train_x, train_y = make_people(2000, seed=1)
    test_x, test_y = make_people(1000, seed=2)
    wide, deep = feature_columns()
    estimator = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=os.path.join(model_dir, "model"),
        linear_feature_columns=wide, linear_optimizer=tf.train.FtrlOptimizer(0.2),
        dnn_feature_columns=deep, dnn_hidden_units=[16, 8],
        dnn_optimizer=tf.train.AdagradOptimizer(0.2), label_vocabulary=CLASSES,
        config=tf.estimator.RunConfig(tf_random_seed=42, log_step_count_steps=None))

    estimator.train(tf.estimator.inputs.numpy_input_fn(
        train_x, train_y, batch_size=64, num_epochs=None, shuffle=True), steps=args.steps)
    metrics = estimator.evaluate(tf.estimator.inputs.numpy_input_fn(
        test_x, test_y, batch_size=250, shuffle=False))
    print(f"trained {metrics['global_step']} steps on {len(train_y)} people")
    print(f"held-out accuracy: {metrics['accuracy']:.3f}  auc: {metrics['auc']:.3f}  "
          f"({len(test_y)} people, {np.mean(test_y == CLASSES[1]):.0%} of them >50K)")

    spec = tf.feature_column.make_parse_example_spec(wide + deep)
    export_dir = estimator.export_saved_model(
        os.path.join(model_dir, "export"),
        tf.estimator.export.build_parsing_serving_input_receiver_fn(spec))
    print(f"exported SavedModel: {export_dir.decode()}")

    people = {k: v[:8] for k, v in test_x.items()}
    rows = [{k: v[i] for k, v in people.items()} for i in range(8)]
    served_classes, scores = classify_with_saved_model(export_dir, [to_example(r) for r in rows])
    served = scores[:, 1]
    predicted = np.array([p["probabilities"][1] for p in estimator.predict(
        tf.estimator.inputs.numpy_input_fn(people, shuffle=False))])
    labels = income_rule(people["age"], people["hours_per_week"], people["education"],
                         people["occupation"])

    print("serving_default (classify) on serialized tf.train.Examples:")
    print(f"  {'age':>4} {'hours':>5}  {'education':<13} {'occupation':<10} {'rule':>5}  "
          f"{'served':>6} {'P(>50K)':>8}  {'predict()':>9}")
    for row, label, name, p_served, p_predicted in zip(rows, labels, served_classes, served,
                                                       predicted):
        print(f"  {row['age']:4.0f} {row['hours_per_week']:5.0f}  {row['education']:<13} "
              f"{row['occupation']:<10} {CLASSES[label]:>5}  {name:>6} "
              f"{p_served:8.3f}  {p_predicted:9.3f}")
    print(f"served vs Estimator.predict: max |difference| = "
          f"{np.max(np.abs(served - predicted)):.1e}")
    return Report(float(metrics["accuracy"]), float(metrics["auc"]), served, predicted, labels)


if __name__ == "__main__":
    main()
