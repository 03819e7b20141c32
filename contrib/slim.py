"""``tf.contrib.slim``: TF1's lightweight model-building namespace, assembled from the contrib
modules that implement it.

Contract: the layers, initializers and regularizers are ``tf.contrib.layers``'; the argument
scopes and variable helpers are ``tf.contrib.framework``'s (`variables` is that module);
`assign_from_checkpoint(_fn)` and `assign_from_values(_fn)` are
`tensorweave.contrib.variables_assign`'s. The submodules are `losses` (``tf.contrib.losses``),
`metrics` (``tf.contrib.metrics``), `initializers`, `regularizers`, `learning`
(`create_train_op`, `train`), `evaluation` and `utils` (named outputs). The model zoo
(``nets``) is not part of slim's runtime and is not provided.
"""

from __future__ import annotations

from tensorweave.contrib import framework as variables
from tensorweave.contrib import layers_initializers as initializers
from tensorweave.contrib import layers_regularizers as regularizers
from tensorweave.contrib import layers_utils as utils
from tensorweave.contrib import losses, metrics
from tensorweave.contrib import slim_evaluation as evaluation
from tensorweave.contrib import slim_learning as learning
from tensorweave.contrib.framework import (
    add_arg_scope,
    arg_scope,
    arg_scoped_arguments,
    create_global_step,
    current_arg_scope,
    get_global_step,
    get_local_variables,
    get_model_variables,
    get_or_create_global_step,
    get_trainable_variables,
    get_unique_variable,
    get_variables,
    get_variables_by_name,
    get_variables_to_restore,
    has_arg_scope,
    model_variable,
    variable,
)
from tensorweave.contrib.layers import (
    avg_pool2d,
    batch_norm,
    conv2d,
    convolution2d,
    dropout,
    flatten,
    fully_connected,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    linear,
    max_pool2d,
    sum_regularizer,
    variance_scaling_initializer,
    xavier_initializer,
    xavier_initializer_conv2d,
)
from tensorweave.contrib.layers_extra import (
    bias_add,
    conv2d_in_plane,
    conv2d_transpose,
    convolution2d_in_plane,
    convolution2d_transpose,
    layer_norm,
    one_hot_encoding,
    repeat,
    separable_conv2d,
    separable_convolution2d,
    softmax,
    stack,
    unit_norm,
)
from tensorweave.contrib.variables_assign import (
    assign_from_checkpoint,
    assign_from_checkpoint_fn,
    assign_from_values,
    assign_from_values_fn,
)

__all__ = [
    "add_arg_scope", "arg_scope", "arg_scoped_arguments", "assign_from_checkpoint",
    "assign_from_checkpoint_fn", "assign_from_values", "assign_from_values_fn", "avg_pool2d",
    "batch_norm", "bias_add", "conv2d", "conv2d_in_plane", "conv2d_transpose",
    "convolution2d", "convolution2d_in_plane", "convolution2d_transpose",
    "create_global_step", "current_arg_scope", "dropout", "evaluation", "flatten",
    "fully_connected", "get_global_step", "get_local_variables", "get_model_variables",
    "get_or_create_global_step", "get_trainable_variables", "get_unique_variable",
    "get_variables", "get_variables_by_name", "get_variables_to_restore", "has_arg_scope",
    "initializers",
    "l1_l2_regularizer", "l1_regularizer", "l2_regularizer", "layer_norm", "learning",
    "linear", "losses", "max_pool2d", "metrics", "model_variable", "one_hot_encoding",
    "regularizers", "repeat", "separable_conv2d", "separable_convolution2d", "softmax", "stack",
    "sum_regularizer", "unit_norm", "utils", "variable", "variables",
    "variance_scaling_initializer", "xavier_initializer", "xavier_initializer_conv2d",
]
