"""tensorweave: TensorFlow 1.x's runtime architecture, rebuilt in Python around plugins.

``import tensorweave as tf`` gives the ``tf.compat.v1`` graph-mode API: graphs, sessions,
variables and the standard ops. See README.md.
"""

from __future__ import annotations

__version__ = "0.1.0"

from tensorweave import compat  # noqa: E402
from tensorweave.api import graph_util, raw_ops  # noqa: E402
from tensorweave.api import tensor_operators as _tensor_operators  # noqa: F401 - installs operators
from tensorweave.api.accumulators import *  # noqa: F403
from tensorweave.api.array_ops import *  # noqa: F403
from tensorweave.api.array_ops_extra import *  # noqa: F403
from tensorweave.api.check_ops import *  # noqa: F403
from tensorweave.api.complex_ops import *  # noqa: F403
from tensorweave.api.confusion_matrix import *  # noqa: F403
from tensorweave.api.control_flow_ops import *  # noqa: F403
from tensorweave.api.csv_ops import *  # noqa: F403
from tensorweave.api.custom_gradient import *  # noqa: F403
from tensorweave.api.data_flow_ops import *  # noqa: F403
from tensorweave.api.functional_ops import *  # noqa: F403
from tensorweave.api.gradient_tape import *  # noqa: F403
from tensorweave.api.gradients import *  # noqa: F403
from tensorweave.api.hessians import *  # noqa: F403
from tensorweave.api.image_io_ops import read_file, write_file
from tensorweave.api.image_measure_ops import extract_image_patches
from tensorweave.api.image_ops import random_crop
from tensorweave.api.indexed_slices import *  # noqa: F403
from tensorweave.api.init_ops import *  # noqa: F403
from tensorweave.api.io_ops import *  # noqa: F403
from tensorweave.api.linalg_ops import *  # noqa: F403
from tensorweave.api.logging_ops import *  # noqa: F403
from tensorweave.api.math_ops import *  # noqa: F403
from tensorweave.api.misc_ops import *  # noqa: F403
from tensorweave.api.numerics import *  # noqa: F403
from tensorweave.api.parsing_ops import *  # noqa: F403
from tensorweave.api.partitioned_variables import *  # noqa: F403
from tensorweave.api.ragged_ops import *  # noqa: F403
from tensorweave.api.random_distributions import *  # noqa: F403
from tensorweave.api.random_ops import *  # noqa: F403
from tensorweave.api.resource_variable_ops import (
    disable_resource_variables,
    enable_resource_variables,
    resource_variables_enabled,
)
from tensorweave.api.scopes import *  # noqa: F403
from tensorweave.api.script_ops import *  # noqa: F403
from tensorweave.api.segment_ops import *  # noqa: F403
from tensorweave.api.sparse_ops import *  # noqa: F403
from tensorweave.api.sparse_ops_extra import *  # noqa: F403
from tensorweave.api.special_math_ops import *  # noqa: F403
from tensorweave.api.spectral_ops import *  # noqa: F403
from tensorweave.api.state_ops import *  # noqa: F403
from tensorweave.api.static_value import get_static_value
from tensorweave.api.string_ops import *  # noqa: F403
from tensorweave.api.template import *  # noqa: F403
from tensorweave.api.tensor_array import *  # noqa: F403
from tensorweave.api.variable_scope import *  # noqa: F403
from tensorweave.api.variables import *  # noqa: F403
from tensorweave.engine import dtypes, errors  # noqa: E402
from tensorweave.engine.client.config import (
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
)
from tensorweave.engine.client.session import InteractiveSession, Session, get_default_session
from tensorweave.engine.device_spec import DeviceSpec
from tensorweave.engine.dtypes import (
    DType,
    as_dtype,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from tensorweave.engine.dtypes import bool_ as bool
from tensorweave.engine.graph.constant_op import constant, convert_to_tensor
from tensorweave.engine.graph.graph import (
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    get_default_graph,
    reset_default_graph,
)
from tensorweave.engine.graph.graph_def_proto import GraphDef, NodeDef
from tensorweave.engine.graph.importer import import_graph_def
from tensorweave.engine.graph.tensor_conversion_registry import (
    register_tensor_conversion_function,
)
from tensorweave.engine.plugin_manager import hookimpl
from tensorweave.engine.proto.framework import AttrValue, NameAttrList
from tensorweave.engine.tensor_shape import (
    Dimension,
    TensorShape,
    dimension_at_index,
    dimension_value,
)
from tensorweave.formats.summary_proto import (
    Event,
    HistogramProto,
    LogMessage,
    SessionLog,
    Summary,
    SummaryMetadata,
)
from tensorweave.namespaces import (  # noqa: E402
    bitwise,
    debugging,
    image,
    io,
    layers,
    linalg,
    losses,
    math,
    metrics,
    nn,
    python_io,
    queue,
    ragged,
    random,
    signal,
    sparse,
    spectral,
    strings,
)
from tensorweave.platform import gfile, test  # noqa: E402
from tensorweave.platform import tf_logging as logging  # noqa: E402 - tf.logging
from tensorweave.platform.tf_logging import get_logger
from tensorweave.python import package_alias as _package_alias  # noqa: E402

# ``tensorweave.<name>`` for TF's namespace modules whose code lives in a layer's package: the
# attribute (``tw.flags``) and the import path (``import tensorweave.flags``) both give that module.
_PUBLIC_MODULES = {
    "errors": "tensorweave.engine.errors",
    "dtypes": "tensorweave.engine.dtypes",
    **{name: f"tensorweave.platform.{name}" for name in ("app", "flags", "gfile", "test")},
    "logging": "tensorweave.platform.tf_logging",
    **{name: f"tensorweave.namespaces.{name}" for name in (
        "bitwise", "data", "debugging", "feature_column", "image", "io", "layers", "linalg",
        "lookup", "losses", "math", "metrics", "nn", "python_io", "queue", "ragged", "random",
        "signal", "sparse", "spectral", "strings", "summary")},
    "graph_util": "tensorweave.api.graph_util",
    "raw_ops": "tensorweave.api.raw_ops",
}
_package_alias.install({f"tensorweave.{name}": real for name, real in _PUBLIC_MODULES.items()})

# Namespaces that are heavy to import and that nothing eager needs: each is imported on its first
# use (``tw.keras``, ``import tensorweave.keras``), which keeps ``import tensorweave`` fast.
# ``MetaGraphDef`` comes from ``tensorweave.train.meta_graph``, so it waits for first use too.
_LAZY_MODULES = frozenset({
    "app", "contrib", "data", "estimator", "feature_column", "flags", "keras", "lookup",
    "saved_model", "summary", "train",
})
_LAZY_ATTRS = {"MetaGraphDef": "tensorweave.train.meta_graph"}


def __getattr__(name: str) -> object:
    import importlib

    if name in _LAZY_MODULES:
        return importlib.import_module(f"tensorweave.{name}")
    if name in _LAZY_ATTRS:
        value = getattr(importlib.import_module(_LAZY_ATTRS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tensorweave' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_MODULES | set(_LAZY_ATTRS))
