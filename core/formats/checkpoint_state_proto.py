"""TF's ``checkpoint_state.proto`` as a protobuf class: the ``checkpoint`` file of a checkpoint
directory (see `tensorweave.train.checkpoint_management`, which writes it in text format).

Contract: `CheckpointState` is a ``protobuf`` message class with TF's names and numbers
(described here in the project's own ``.proto`` text), so its text is TF's.
"""

from __future__ import annotations

from tensorweave.engine.proto import schema

__all__ = ["CheckpointState"]

schema.define("tensorweave/python/checkpoint_state.proto", """
syntax = "proto3";
package tensorflow;
message CheckpointState {
  string model_checkpoint_path = 1;  // the newest
  repeated string all_model_checkpoint_paths = 2;  // oldest first, the newest last
  repeated double all_model_checkpoint_timestamps = 3;  // seconds since the epoch
  double last_preserved_timestamp = 4;
}
""")

CheckpointState = schema.message_class("tensorflow.CheckpointState")
