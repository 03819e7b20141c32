"""examples/third_party_plugin is a real pip-installable plugin package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.engine import plugin_manager

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "third_party_plugin"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(EXAMPLE)],
        check=True, timeout=300, capture_output=True)
    return target


def test_pip_installed_plugin_adds_an_op_with_kernel_and_gradient(installed, monkeypatch):
    monkeypatch.syspath_prepend(str(installed))
    plugin_manager.reset()
    try:
        x = tf.constant([3.0, 5.0])
        y = tf.constant([4.0, 12.0])
        h = tf.raw_ops.Hypot(x=x, y=y)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(h), [5.0, 13.0])
        info = {p.name: p for p in plugin_manager.get_registries().plugins}["hypot"]
        assert (info.version, info.status) == ("1.0.0", "loaded")
        assert plugin_manager.get_registries().gradients.get("Hypot") is not None
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.raw_ops.Hypot(x=tf.constant([1.0, 2.0]), y=tf.constant([1.0, 2.0, 3.0]))
    finally:
        monkeypatch.undo()
        plugin_manager.reset()
