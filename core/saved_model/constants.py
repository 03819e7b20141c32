"""File names and collection keys of a SavedModel (``tf.saved_model.constants``)."""

from __future__ import annotations

__all__ = [
    "ASSETS_DIRECTORY", "ASSETS_KEY", "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY",
    "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION",
    "VARIABLES_DIRECTORY", "VARIABLES_FILENAME",
]

ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
# signature keys TF reserves for its own init and train ops
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"
