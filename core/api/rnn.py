"""Recurrent networks over time: ``dynamic_rnn``, ``static_rnn`` and
``bidirectional_dynamic_rnn``, as ``tf.compat.v1.nn``.

Contract: `dynamic_rnn` is one `while_loop` over time whose body reads step ``t`` of every
input from a `TensorArray`, calls the cell once (at graph construction, so its variables are
created once, outside the loop, under ``<scope or "rnn">/``) and writes the output to a
TensorArray stacked after the loop. `static_rnn` calls the cell once per element of a Python list
of inputs, reusing its variables. With `sequence_length`, a sequence's outputs past its length
are zeros and its state is copied through, so the final state is the state at its last step.
Inputs are batch-major (``[batch, time, ...]``) unless `time_major`. Signatures, defaults,
variable scopes and construction errors follow TF1.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.control_flow_ops import _flatten, _pack_as, identity, while_loop
from tensorweave.api.rnn_cell import RNNCell
from tensorweave.api.scopes import name_scope
from tensorweave.api.tensor_array import TensorArray
from tensorweave.api.variable_scope import variable_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["bidirectional_dynamic_rnn", "dynamic_rnn", "static_rnn"]


def _check_cell(name: str, cell: Any) -> None:
    if not isinstance(cell, RNNCell) and not all(
            hasattr(cell, a) for a in ("output_size", "state_size", "zero_state", "__call__")):
        raise TypeError(f"The argument {name!r} ({cell}) is not an RNNCell: it lacks "
                        "output_size, state_size, zero_state or is not callable.")


def _swap_batch_time(x: Tensor) -> Tensor:
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise ValueError(f"Expected input tensor {x.name} to have rank at least 2, but saw "
                         f"shape: {x.shape}")
    rank = x.shape.ndims if x.shape.ndims is not None else array_ops.rank(x)
    if isinstance(rank, int):
        return array_ops.transpose(x, [1, 0, *range(2, rank)])
    perm = array_ops.concat([[1, 0], array_ops.range(2, rank)], 0)
    return array_ops.transpose(x, perm)


def _batch_size(flat: list[Tensor], axis: int) -> Any:
    """The batch size: static from any input that knows it, else a tensor."""
    for x in flat:
        if x.shape.ndims is not None and x.shape[axis] is not None:
            return x.shape[axis]
    return array_ops.shape(flat[0])[axis]


def _sequence_length(sequence_length: Any) -> Tensor | None:
    if sequence_length is None:
        return None
    sequence_length = math_ops.cast(sequence_length, dtypes.int32)
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError("sequence_length must be a vector of length batch_size, but saw "
                         f"shape: {sequence_length.shape}")
    return identity(sequence_length, name="sequence_length")


def _initial_state(cell: Any, initial_state: Any, batch_size: Any, dtype: Any) -> Any:
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def _masked_step(time: Any, sequence_length: Tensor | None, output: Any, new_state: Any,
                 state: Any) -> tuple[Any, Any]:
    """Past a sequence's length: zero output, state copied through (TF's ``_rnn_step``)."""
    if sequence_length is None:
        return output, new_state
    done = math_ops.greater_equal(time, sequence_length)
    out = [array_ops.where(done, array_ops.zeros_like(o), o) for o in _flatten(output)]
    st = [array_ops.where(done, s, n) for s, n in zip(_flatten(state), _flatten(new_state))]
    return _pack_as(output, out), _pack_as(new_state, st)


def dynamic_rnn(cell: Any, inputs: Any, sequence_length: Any = None, initial_state: Any = None,
                dtype: Any = None, parallel_iterations: int | None = None,
                swap_memory: bool = False, time_major: bool = False,
                scope: Any = None) -> tuple[Any, Any]:
    """``(outputs, final_state)`` of `cell` run over the time dimension of `inputs` (a tensor
    or nested structure of tensors); `outputs` has the structure of ``cell.output_size``."""
    _check_cell("cell", cell)
    with variable_scope(scope or "rnn"):
        flat = [convert_to_tensor(x) for x in _flatten(inputs)]
        if not time_major:
            flat = [_swap_batch_time(x) for x in flat]
        parallel_iterations = parallel_iterations or 32
        sequence_length = _sequence_length(sequence_length)
        batch_size = _batch_size(flat, 1)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        outputs, final_state = _dynamic_rnn_loop(cell, inputs, flat, state, parallel_iterations,
                                                 swap_memory, sequence_length)
        if not time_major:
            outputs = _pack_as(outputs, [_swap_batch_time(o) for o in _flatten(outputs)])
        return outputs, final_state


def _dynamic_rnn_loop(cell: Any, structure: Any, flat: list[Tensor], state: Any,
                      parallel_iterations: int, swap_memory: bool,
                      sequence_length: Tensor | None) -> tuple[Any, Any]:
    with name_scope("dynamic_rnn"):
        static_steps = flat[0].shape[0] if flat[0].shape.ndims else None
        steps = static_steps if static_steps is not None else array_ops.shape(flat[0])[0]
        steps = convert_to_tensor(steps, dtype=dtypes.int32, name="time_steps")
        inputs_ta = [TensorArray(x.dtype, size=steps, element_shape=x.shape[1:])
                     .unstack(x) for x in flat]
        state_flat = [convert_to_tensor(s) for s in _flatten(state)]
        out_dtype = state_flat[0].dtype
        batch_size = _batch_size(flat, 1)
        batch = TensorShape([batch_size if isinstance(batch_size, int) else None])
        outputs_ta = [TensorArray(out_dtype, size=steps, element_shape=batch.concatenate(
            TensorShape(size if isinstance(size, TensorShape) else [size])))
            for size in _flatten(cell.output_size)]

        def body(time: Tensor, st: list[Tensor], tas: list[TensorArray]) -> Any:
            input_t = _pack_as(structure, [ta.read(time) for ta in inputs_ta])
            prev = _pack_as(state, st)
            output, new_state = cell(input_t, prev)
            output, new_state = _masked_step(time, sequence_length, output, new_state, prev)
            outs = _flatten(output)
            return (time + 1, [convert_to_tensor(s) for s in _flatten(new_state)],
                    [ta.write(time, o) for ta, o in zip(tas, outs)])

        _, final, tas = while_loop(lambda time, st, tas: time < steps, body,
                                   [0, state_flat, outputs_ta],
                                   parallel_iterations=parallel_iterations,
                                   swap_memory=swap_memory)
        outputs = [ta.stack() for ta in tas]
        for o in outputs:
            o.set_shape(TensorShape([static_steps]).concatenate(o.shape[1:]))
        return _pack_as(cell.output_size, outputs), _pack_as(state, final)


def static_rnn(cell: Any, inputs: Any, initial_state: Any = None, dtype: Any = None,
               sequence_length: Any = None, scope: Any = None) -> tuple[list[Any], Any]:
    """``(outputs, final_state)`` of `cell` run over `inputs`, a list with one ``[batch, ...]``
    input per time step, by one cell call per step."""
    _check_cell("cell", cell)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with variable_scope(scope or "rnn") as varscope:
        first = [convert_to_tensor(x) for x in _flatten(inputs[0])]
        batch_size = _batch_size(first, 0)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        sequence_length = _sequence_length(sequence_length)
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(input_, state)
            output, state = _masked_step(time, sequence_length, output, new_state, state)
            outputs.append(output)
        return outputs, state


def _reverse(x: Tensor, sequence_length: Tensor | None) -> Tensor:
    """`x` (time-major) reversed in time; with lengths, only each sequence's first
    ``length`` steps (TF's ``reverse_sequence``)."""
    if sequence_length is None:
        return array_ops.reverse(x, [0])
    steps = array_ops.shape(x)[0]
    t = array_ops.expand_dims(array_ops.range(steps), 1)
    lengths = array_ops.expand_dims(sequence_length, 0)
    source = array_ops.where_v2(t < lengths, lengths - 1 - t, t)
    batch = array_ops.broadcast_to(array_ops.expand_dims(array_ops.range(
        array_ops.shape(x)[1]), 0), array_ops.shape(source))
    out = array_ops.gather_nd(x, array_ops.stack([source, batch], axis=-1))
    out.set_shape(x.shape)
    return out


def bidirectional_dynamic_rnn(cell_fw: Any, cell_bw: Any, inputs: Any,
                              sequence_length: Any = None, initial_state_fw: Any = None,
                              initial_state_bw: Any = None, dtype: Any = None,
                              parallel_iterations: int | None = None, swap_memory: bool = False,
                              time_major: bool = False, scope: Any = None,
                              ) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """``((output_fw, output_bw), (state_fw, state_bw))``: `cell_fw` over `inputs` and
    `cell_bw` over them reversed in time (each sequence within its length), the backward
    outputs reversed back, under variable scopes ``fw`` and ``bw``."""
    _check_cell("cell_fw", cell_fw)
    _check_cell("cell_bw", cell_bw)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length, initial_state_fw, dtype, parallel_iterations,
                swap_memory, time_major, scope=fw_scope)
        lengths = None if sequence_length is None else math_ops.cast(sequence_length,
                                                                     dtypes.int32)

        def reverse(value: Any) -> Any:
            flat = [convert_to_tensor(v) for v in _flatten(value)]
            if not time_major:
                flat = [_swap_batch_time(v) for v in flat]
            flat = [_reverse(v, lengths) for v in flat]
            if not time_major:
                flat = [_swap_batch_time(v) for v in flat]
            return _pack_as(value, flat)

        with variable_scope("bw") as bw_scope:
            reversed_out, state_bw = dynamic_rnn(
                cell_bw, reverse(inputs), sequence_length, initial_state_bw, dtype,
                parallel_iterations, swap_memory, time_major, scope=bw_scope)
    return (output_fw, reverse(reversed_out)), (state_fw, state_bw)
