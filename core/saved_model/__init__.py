"""``tw.saved_model``: ``tf.compat.v1.saved_model``'s SavedModel API: `Builder`
(``builder.SavedModelBuilder``), ``loader.load``, `simple_save`, signature builders, tag and
signature constants. A SavedModel keeps TF's ``saved_model.pb`` and its variables as a TF V2
checkpoint (see `tensorweave.saved_model.builder`). The TF2 object-graph API
(``tf.saved_model.save``) is not implemented."""

from tensorweave.formats.saved_model_proto import (
    AssetFileDef,
    MetaGraphDef,
    SavedModel,
    SignatureDef,
    TensorInfo,
)
from tensorweave.saved_model import (
    builder,
    constants,
    loader,
    main_op,
    signature_constants,
    signature_def_utils,
    tag_constants,
    utils,
)
from tensorweave.saved_model.builder import SavedModelBuilder as Builder
from tensorweave.saved_model.constants import (
    ASSETS_DIRECTORY,
    ASSETS_KEY,
    LEGACY_INIT_OP_KEY,
    MAIN_OP_KEY,
    SAVED_MODEL_FILENAME_PB,
    SAVED_MODEL_FILENAME_PBTXT,
    SAVED_MODEL_SCHEMA_VERSION,
    VARIABLES_DIRECTORY,
    VARIABLES_FILENAME,
)
from tensorweave.saved_model.loader import load, maybe_saved_model_directory
from tensorweave.saved_model.signature_constants import (
    CLASSIFY_INPUTS,
    CLASSIFY_METHOD_NAME,
    CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES,
    DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    PREDICT_INPUTS,
    PREDICT_METHOD_NAME,
    PREDICT_OUTPUTS,
    REGRESS_INPUTS,
    REGRESS_METHOD_NAME,
    REGRESS_OUTPUTS,
)
from tensorweave.saved_model.signature_def_utils import (
    build_signature_def,
    classification_signature_def,
    is_valid_signature,
    predict_signature_def,
    regression_signature_def,
)
from tensorweave.saved_model.simple_save import simple_save
from tensorweave.saved_model.tag_constants import GPU, SERVING, TPU, TRAINING
from tensorweave.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info

contains_saved_model = maybe_saved_model_directory

__all__ = [
    "ASSETS_DIRECTORY", "ASSETS_KEY", "CLASSIFY_INPUTS", "CLASSIFY_METHOD_NAME",
    "CLASSIFY_OUTPUT_CLASSES", "CLASSIFY_OUTPUT_SCORES", "DEFAULT_SERVING_SIGNATURE_DEF_KEY",
    "GPU", "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY", "PREDICT_INPUTS", "PREDICT_METHOD_NAME",
    "PREDICT_OUTPUTS", "REGRESS_INPUTS", "REGRESS_METHOD_NAME", "REGRESS_OUTPUTS",
    "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION",
    "SERVING", "TPU", "TRAINING", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME", "AssetFileDef",
    "Builder", "MetaGraphDef", "SavedModel", "SignatureDef", "TensorInfo", "build_signature_def",
    "build_tensor_info", "builder", "classification_signature_def", "constants",
    "contains_saved_model", "get_tensor_from_tensor_info", "is_valid_signature", "load",
    "loader", "main_op", "maybe_saved_model_directory", "predict_signature_def",
    "regression_signature_def", "signature_constants", "signature_def_utils", "simple_save",
    "tag_constants", "utils",
]
