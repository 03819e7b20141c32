"""``tw.math``: the ops ``tf.math`` offers, under its names (``tw.math.log``,
``tw.math.floormod``, ``tw.math.reduce_sum``, ...).

Contract: the math ops come from `tensorweave.api.math_ops`; the ``tf.math`` names that other API
modules define (``softplus``, ``top_k``, ``unsorted_segment_sum``, ...) are looked up there on
first access, so this module never depends on their import order.
"""

from typing import Any

from tensorweave.api.math_ops import (
    abs,
    acos,
    acosh,
    add,
    add_n,
    argmax,
    argmin,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    ceil,
    cos,
    cosh,
    count_nonzero,
    cumprod,
    cumsum,
    divide,
    divide_no_nan,
    equal,
    erf,
    erfc,
    exp,
    expm1,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    is_finite,
    is_inf,
    is_nan,
    less,
    less_equal,
    log,
    log1p,
    log_sigmoid,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    multiply_no_nan,
    negative,
    nextafter,
    not_equal,
    pow,
    reciprocal,
    reciprocal_no_nan,
    reduce_all,
    reduce_any,
    reduce_euclidean_norm,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_std,
    reduce_sum,
    reduce_variance,
    rint,
    round,
    rsqrt,
    scalar_mul,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    squared_difference,
    subtract,
    tan,
    tanh,
    truediv,
    truncatediv,
    truncatemod,
    xdivy,
    xlogy,
)

__all__ = [
    "abs", "acos", "acosh", "add", "add_n", "argmax", "argmin", "asin", "asinh", "atan", "atan2",
    "atanh", "ceil", "cos", "cosh", "count_nonzero", "cumprod", "cumsum", "divide",
    "divide_no_nan", "equal", "erf", "erfc", "exp", "expm1", "floor", "floordiv", "floormod",
    "greater", "greater_equal", "is_finite", "is_inf", "is_nan", "less", "less_equal", "log",
    "log1p", "log_sigmoid", "logical_and", "logical_not", "logical_or", "logical_xor",
    "maximum", "minimum", "mod", "multiply", "multiply_no_nan", "negative", "nextafter",
    "not_equal", "pow", "reciprocal", "reciprocal_no_nan",
    "reduce_all", "reduce_any", "reduce_euclidean_norm", "reduce_logsumexp", "reduce_max",
    "reduce_mean", "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance",
    "rint", "round", "rsqrt", "scalar_mul", "sigmoid", "sign", "sin", "sinh", "sqrt", "square",
    "squared_difference", "subtract", "tan", "tanh", "truediv", "truncatediv", "truncatemod",
    "xdivy", "xlogy",
]

_ELSEWHERE = {
    "tensorweave.api.complex_ops": ("angle", "conj", "imag", "real"),
    "tensorweave.api.array_ops_extra": ("is_non_decreasing", "is_strictly_increasing"),
    "tensorweave.api.nn_ops": ("in_top_k", "l2_normalize", "log_softmax",
                               "softmax", "softplus", "softsign", "top_k"),
    "tensorweave.api.confusion_matrix": ("confusion_matrix",),
    "tensorweave.api.special_math_ops": ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e",
                                         "betainc", "digamma", "igamma", "igammac", "lbeta",
                                         "lgamma", "polygamma", "zeta"),
    "tensorweave.api.array_ops": ("invert_permutation", "unsorted_segment_max",
                                  "unsorted_segment_sum"),
    "tensorweave.api.segment_ops": ("segment_max", "segment_mean", "segment_min", "segment_prod",
                                    "segment_sum", "unsorted_segment_mean",
                                    "unsorted_segment_min", "unsorted_segment_prod",
                                    "unsorted_segment_sqrt_n"),
}
_MODULE_OF = {name: module for module, names in _ELSEWHERE.items() for name in names}


def __getattr__(name: str) -> Any:
    import importlib

    module = _MODULE_OF.get(name)
    value = None if module is None else getattr(importlib.import_module(module), name, None)
    if value is None:
        raise AttributeError(f"module 'tensorweave.math' has no attribute '{name}'")
    return value
