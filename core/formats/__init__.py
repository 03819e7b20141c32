"""TF's file and wire formats: checkpoints (TensorBundle), tables, checksums."""
