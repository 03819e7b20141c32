"""Write ``expected.json``: TF's bytes (hex, deterministic) and text of the messages that
`messages.build` makes with TF's own classes. Run with a Python that has TF:
``python make_expected.py`` (from this directory)."""

import json
import os
import sys

from google.protobuf import text_format
from tensorflow.core.framework import variable_pb2
from tensorflow.core.protobuf import meta_graph_pb2, queue_runner_pb2, saved_model_pb2, saver_pb2
from tensorflow.python.training import checkpoint_state_pb2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import messages  # noqa: E402

CLASSES = {"SavedModel": saved_model_pb2.SavedModel, "MetaGraphDef": meta_graph_pb2.MetaGraphDef,
           "SaverDef": saver_pb2.SaverDef, "VariableDef": variable_pb2.VariableDef,
           "QueueRunnerDef": queue_runner_pb2.QueueRunnerDef,
           "CheckpointState": checkpoint_state_pb2.CheckpointState,
           "AssetFileDef": meta_graph_pb2.AssetFileDef, "TensorInfo": meta_graph_pb2.TensorInfo}

out = {name: {"hex": message.SerializeToString(deterministic=True).hex(),
              "text": text_format.MessageToString(message)}
       for name, message in messages.build(CLASSES).items()}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected.json"), "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
