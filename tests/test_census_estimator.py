"""examples/census_estimator.py: a wide & deep Estimator learns the income rule, and the
SavedModel it exports classifies serialized Examples exactly as ``Estimator.predict`` does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tensorweave.namespaces.summary import FileWriterCache
from tests.examples_support import load_example


def test_people_are_labelled_by_the_rule() -> None:
    example = load_example("census_estimator")
    people, labels = example.make_people(300, seed=3)
    score = (0.08 * (people["age"] - 45) + 0.06 * (people["hours_per_week"] - 40)
             + np.array([example.EDUCATION[e] for e in people["education"]])
             + np.array([example.OCCUPATION[o] for o in people["occupation"]]))
    np.testing.assert_array_equal(labels, np.where(score > 0, ">50K", "<=50K"))
    assert 0.3 < np.mean(labels == ">50K") < 0.7  # both classes are common


def test_it_learns_exports_and_serves(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        report = load_example("census_estimator").main(["--model-dir", str(tmp_path)])
    finally:
        FileWriterCache.clear()
    out = capsys.readouterr().out
    accuracy = float(re.search(r"held-out accuracy: ([0-9.]+)", out).group(1))
    assert accuracy == pytest.approx(report.accuracy, abs=5e-4) and accuracy >= 0.95
    assert float(re.search(r"auc: ([0-9.]+)", out).group(1)) >= 0.98
    export_dir = re.search(r"exported SavedModel: (\S+)", out).group(1)
    assert Path(export_dir, "saved_model.pb").is_file()
    assert Path(export_dir).parent == tmp_path / "export"
    # The SavedModel, loaded on its own, answers as the estimator does.
    assert len(report.served) == 8
    np.testing.assert_allclose(report.served, report.predicted, rtol=1e-5, atol=1e-6)
    rows = [line.split() for line in out.splitlines() if re.match(r"\s+\d+\s+\d+\s", line)]
    assert len(rows) == 8
    served_classes = [row[5] for row in rows]
    assert served_classes == [">50K" if p > 0.5 else "<=50K" for p in report.served]
    assert np.mean((report.served > 0.5) == (report.labels == 1)) >= 0.75
