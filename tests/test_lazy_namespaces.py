"""``import tensorweave`` leaves its heavy namespaces (and the op plugins) for first use, and
each is still reachable as ``tw.<name>``, ``import tensorweave.<name>`` and through ``dir``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tensorweave as tw

LAZY = ["app", "contrib", "data", "estimator", "feature_column", "flags", "keras", "lookup",
        "saved_model", "summary", "train"]
# where the public ``tensorweave.<name>`` modules above live
REAL = ["platform.app", "contrib", "namespaces.data", "estimator", "namespaces.feature_column",
        "platform.flags", "keras", "namespaces.lookup", "saved_model", "namespaces.summary",
        "train"]


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True).stdout.strip()


def test_import_leaves_heavy_modules_unloaded() -> None:
    names = LAZY + REAL + ["plugins.standard_ops"]
    out = _fresh("import sys, tensorweave\n"
                 f"print(sorted(n for n in {names!r} if 'tensorweave.' + n in sys.modules))")
    assert out == "[]"


def test_first_attribute_use_imports_the_namespace() -> None:
    out = _fresh("import sys, tensorweave as tw\n"
                 "f = tw.flags\n"
                 "print(f is sys.modules['tensorweave.flags'], 'tensorweave.keras' in "
                 "sys.modules)")
    assert out == "True False"


@pytest.mark.parametrize(("name", "real"), list(zip(LAZY, REAL)))
def test_lazy_namespace_is_reachable(name: str, real: str) -> None:
    module = getattr(tw, name)
    assert module.__name__ == f"tensorweave.{real}"
    assert sys.modules[f"tensorweave.{name}"] is module
    assert name in dir(tw)
    assert hasattr(tw, name)


def test_meta_graph_def_is_lazy_and_importable() -> None:
    from tensorweave import MetaGraphDef
    from tensorweave.train.meta_graph import MetaGraphDef as Defined

    assert MetaGraphDef is Defined is tw.MetaGraphDef
    assert "MetaGraphDef" in dir(tw)


def test_unknown_attribute_raises() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        tw.no_such_name  # noqa: B018


def test_functions_with_deferred_plugin_imports_work() -> None:
    with tw.Graph().as_default():
        product = tw.einsum("ij,jk->ik", tw.ones([2, 3]), tw.ones([3, 4]))
        with pytest.raises(TypeError, match="Unsupported dtype int32"):
            tw.parse_single_example(tw.constant(b""), {"x": tw.FixedLenFeature([], tw.int32)})
        with tw.Session() as sess:
            assert sess.run(product).tolist() == [[3.0] * 4] * 2
