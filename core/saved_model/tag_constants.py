"""Standard tags of a SavedModel's meta graphs (``tf.saved_model.tag_constants``)."""

from __future__ import annotations

__all__ = ["GPU", "SERVING", "TPU", "TRAINING"]

SERVING = "serve"
TRAINING = "train"
GPU = "gpu"
TPU = "tpu"
