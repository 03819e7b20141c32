"""``tensorflow.python.tools.inspect_checkpoint``: printing what a checkpoint holds.

Contract: `print_tensors_in_checkpoint_file(file_name, tensor_name, all_tensors,
all_tensor_names=False)` reads the checkpoint with `tensorweave.train.NewCheckpointReader` and
prints, as TF does: with `all_tensors` or `all_tensor_names`, a ``tensor_name:  <name>`` line per
saved tensor in sorted order, each followed by its value when `all_tensors`; else, with a
`tensor_name`, that line and value for that one tensor; else the reader's name/dtype/shape
listing. A missing checkpoint or tensor raises `tensorweave.errors.NotFoundError`.
"""

from __future__ import annotations

from tensorweave.train.checkpoint_reader import NewCheckpointReader


def print_tensors_in_checkpoint_file(file_name: str, tensor_name: str | None, all_tensors: bool,
                                     all_tensor_names: bool = False) -> None:
    """Print the checkpoint's tensors; see the module docstring."""
    reader = NewCheckpointReader(file_name)
    if all_tensors or all_tensor_names:
        for name in sorted(reader.get_variable_to_shape_map()):
            print("tensor_name: ", name)
            if all_tensors:
                print(reader.get_tensor(name))
    elif tensor_name:
        print("tensor_name: ", tensor_name)
        print(reader.get_tensor(tensor_name))
    else:
        print(reader.debug_string().decode("utf-8"), end="")
