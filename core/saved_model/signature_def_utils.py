"""Building `SignatureDef`s (``tf.saved_model.signature_def_utils``).

Contract: `build_signature_def` assembles one from `TensorInfo` maps; the predict, classify and
regress builders take tensors and check them with TF's rules and messages (``ValueError``):
predict needs non-empty inputs and outputs; classify and regress take a string ``examples``
tensor, classify's ``classes`` must be strings and its ``scores`` float32, regress's
``predictions`` float32. `is_valid_signature` says whether a `SignatureDef` fits its method.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tensorweave.engine import dtypes
from tensorweave.engine.graph.graph import Tensor
from tensorweave.formats.saved_model_proto import SignatureDef, TensorInfo
from tensorweave.saved_model import signature_constants as sc
from tensorweave.saved_model.utils import build_tensor_info, dtype_enum

__all__ = ["build_signature_def", "classification_signature_def", "is_valid_signature",
           "predict_signature_def", "regression_signature_def"]


def build_signature_def(inputs: Mapping[str, TensorInfo] | None = None,
                        outputs: Mapping[str, TensorInfo] | None = None,
                        method_name: str | None = None) -> SignatureDef:
    signature = SignatureDef(method_name=method_name or "")
    for key, info in (inputs or {}).items():
        signature.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature.outputs[key].CopyFrom(info)
    return signature


def predict_signature_def(inputs: Mapping[str, Any], outputs: Mapping[str, Any]
                          ) -> SignatureDef:
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               sc.PREDICT_METHOD_NAME)


def _examples_info(examples: Any, what: str) -> TensorInfo:
    if examples is None:
        raise ValueError(f"{what} examples cannot be None.")
    if not isinstance(examples, Tensor) or examples.dtype != dtypes.string:
        raise ValueError(f"{what} examples must be a string Tensor.")
    return build_tensor_info(examples)


def _typed_info(tensor: Any, dtype: dtypes.DType, message: str) -> TensorInfo:
    info = build_tensor_info(tensor)
    if info.dtype != dtype_enum(dtype):
        raise ValueError(message)
    return info


def classification_signature_def(examples: Tensor, classes: Tensor | None,
                                 scores: Tensor | None) -> SignatureDef:
    inputs = {sc.CLASSIFY_INPUTS: _examples_info(examples, "Classification")}
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    outputs = {}
    if classes is not None:
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = _typed_info(
            classes, dtypes.string, "Classification classes must be a string Tensor.")
    if scores is not None:
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = _typed_info(
            scores, dtypes.float32, "Classification scores must be a float Tensor.")
    return build_signature_def(inputs, outputs, sc.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples: Tensor, predictions: Tensor) -> SignatureDef:
    inputs = {sc.REGRESS_INPUTS: _examples_info(examples, "Regression")}
    if predictions is None:
        raise ValueError("Regression predictions cannot be None.")
    outputs = {sc.REGRESS_OUTPUTS: _typed_info(predictions, dtypes.float32,
                                               "Regression output must be a float Tensor.")}
    return build_signature_def(inputs, outputs, sc.REGRESS_METHOD_NAME)


def _has(signature: SignatureDef, side: str, key: str, dtype: dtypes.DType) -> bool:
    info = getattr(signature, side).get(key)
    return info is not None and info.dtype == dtype_enum(dtype)


def is_valid_signature(signature_def: SignatureDef) -> bool:
    """Whether `signature_def` has the inputs and outputs its method needs (TF's rules)."""
    if signature_def is None or not signature_def.method_name:
        return False
    method = signature_def.method_name
    if method == sc.PREDICT_METHOD_NAME:
        return bool(signature_def.inputs) and bool(signature_def.outputs)
    if method == sc.CLASSIFY_METHOD_NAME:
        outputs = set(signature_def.outputs)
        return (_has(signature_def, "inputs", sc.CLASSIFY_INPUTS, dtypes.string)
                and len(signature_def.inputs) == 1
                and bool(outputs) and outputs <= {sc.CLASSIFY_OUTPUT_CLASSES,
                                                  sc.CLASSIFY_OUTPUT_SCORES}
                and (sc.CLASSIFY_OUTPUT_CLASSES not in outputs
                     or _has(signature_def, "outputs", sc.CLASSIFY_OUTPUT_CLASSES, dtypes.string))
                and (sc.CLASSIFY_OUTPUT_SCORES not in outputs
                     or _has(signature_def, "outputs", sc.CLASSIFY_OUTPUT_SCORES, dtypes.float32)))
    if method == sc.REGRESS_METHOD_NAME:
        return (_has(signature_def, "inputs", sc.REGRESS_INPUTS, dtypes.string)
                and len(signature_def.inputs) == 1
                and _has(signature_def, "outputs", sc.REGRESS_OUTPUTS, dtypes.float32)
                and len(signature_def.outputs) == 1)
    return True

