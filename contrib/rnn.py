"""``tf.contrib.rnn``: TF1's contrib names for the recurrent cells and the static and stacked
bidirectional RNNs.

Contract: the cells, wrappers and `static_rnn` are ``tw.nn.rnn_cell``'s and ``tw.nn``'s own
objects. `LSTMBlockCell` is `LSTMCell` under TF's block-cell signature (``use_peephole``, no
projection, state always a tuple, scope ``lstm_cell``): the same gates and variables
(``kernel``, ``bias``, peepholes ``w_i_diag``/``w_f_diag``/``w_o_diag``), a non-positive
`cell_clip` meaning no clipping as in TF's kernel. `static_bidirectional_rnn` runs `static_rnn`
forward under ``<scope or "bidirectional_rnn">/fw`` and over the reversed inputs (each sequence
within its length) under ``.../bw``, and returns ``(outputs, state_fw, state_bw)`` where each
step's output is ``concat([fw, bw], 1)``. The stacked variants feed each layer's concatenated
outputs to the next, layer ``i`` under ``<scope or "stack_bidirectional_rnn">/cell_i`` (the
dynamic one adds TF's ``bidirectional_rnn/`` below it, the static one does not), and return
``(outputs, states_fw, states_bw)`` with one state per layer.
"""

from __future__ import annotations

from typing import Any

from tensorweave.api import array_ops
from tensorweave.api.control_flow_ops import _flatten, _pack_as
from tensorweave.api.rnn import (
    _check_cell,
    _reverse,
    _sequence_length,
    bidirectional_dynamic_rnn,
    static_rnn,
)
from tensorweave.api.rnn_cell import (
    BasicLSTMCell,
    BasicRNNCell,
    DropoutWrapper,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    ResidualWrapper,
    RNNCell,
)
from tensorweave.api.variable_scope import variable_scope
from tensorweave.framework.constant_op import convert_to_tensor

__all__ = [
    "BasicLSTMCell", "BasicRNNCell", "DropoutWrapper", "GRUCell", "LSTMBlockCell", "LSTMCell",
    "LSTMStateTuple", "MultiRNNCell", "RNNCell", "ResidualWrapper",
    "stack_bidirectional_dynamic_rnn", "stack_bidirectional_rnn", "static_bidirectional_rnn",
    "static_rnn",
]


class LSTMBlockCell(LSTMCell):
    """TF's fused-kernel LSTM cell: `LSTMCell`'s maths and variables, TF's block signature."""

    def __init__(self, num_units: int, forget_bias: float = 1.0, cell_clip: float | None = None,
                 use_peephole: bool = False, dtype: Any = None, reuse: Any = None,
                 name: str = "lstm_cell") -> None:
        super().__init__(num_units, use_peepholes=use_peephole,
                         cell_clip=cell_clip if cell_clip is not None and cell_clip > 0 else None,
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)


def _reverse_steps(steps: list[Any], lengths: Any) -> list[Any]:
    """A list of per-step values reversed in time; with `lengths`, each sequence only within its
    first ``length`` steps (the steps are stacked time-major and reversed as one tensor)."""
    if lengths is None:
        return list(reversed(steps))
    flat_steps = [[convert_to_tensor(x) for x in _flatten(step)] for step in steps]
    columns = []
    for i in range(len(flat_steps[0])):
        stacked = array_ops.stack([step[i] for step in flat_steps])
        columns.append(array_ops.unstack(_reverse(stacked, lengths), num=len(steps)))
    return [_pack_as(steps[t], [column[t] for column in columns]) for t in range(len(steps))]


def static_bidirectional_rnn(cell_fw: Any, cell_bw: Any, inputs: Any,
                             initial_state_fw: Any = None, initial_state_bw: Any = None,
                             dtype: Any = None, sequence_length: Any = None,
                             scope: Any = None) -> tuple[list[Any], Any, Any]:
    """``(outputs, output_state_fw, output_state_bw)``; see the module docstring."""
    _check_cell("cell_fw", cell_fw)
    _check_cell("cell_bw", cell_bw)
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a list")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            lengths = _sequence_length(sequence_length)
            reversed_out, state_bw = static_rnn(cell_bw, _reverse_steps(list(inputs), lengths),
                                                initial_state_bw, dtype, sequence_length,
                                                scope=bw_scope)
    output_bw = _reverse_steps(reversed_out, lengths)
    outputs = [_pack_as(fw, [array_ops.concat([f, b], 1)
                             for f, b in zip(_flatten(fw), _flatten(bw))])
               for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw


def _check_stack(cells_fw: Any, cells_bw: Any, initial_states_fw: Any,
                 initial_states_bw: Any) -> None:
    if not cells_fw:
        raise ValueError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise ValueError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list):
        raise ValueError("cells_fw must be a list of RNNCells (one per layer).")
    if not isinstance(cells_bw, list):
        raise ValueError("cells_bw must be a list of RNNCells (one per layer).")
    if len(cells_fw) != len(cells_bw):
        raise ValueError("Forward and Backward cells must have the same depth.")
    for states, side in ((initial_states_fw, "fw"), (initial_states_bw, "bw")):
        if states is not None and (not isinstance(states, list)
                                   or len(states) != len(cells_fw)):
            raise ValueError(f"initial_states_{side} must be a list of state tensors (one per "
                             "layer).")


def _layer_state(states: Any, i: int) -> Any:
    return states[i] if states else None


def stack_bidirectional_rnn(cells_fw: list[Any], cells_bw: list[Any], inputs: Any,
                            initial_states_fw: Any = None, initial_states_bw: Any = None,
                            dtype: Any = None, sequence_length: Any = None,
                            scope: Any = None) -> tuple[list[Any], tuple[Any, ...],
                                                        tuple[Any, ...]]:
    """Layers of `static_bidirectional_rnn`; see the module docstring."""
    _check_stack(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw, layer = [], [], inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}") as cell_scope:
                layer, state_fw, state_bw = static_bidirectional_rnn(
                    cell_fw, cell_bw, layer, _layer_state(initial_states_fw, i),
                    _layer_state(initial_states_bw, i), dtype, sequence_length,
                    scope=cell_scope)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_dynamic_rnn(cells_fw: list[Any], cells_bw: list[Any], inputs: Any,
                                    initial_states_fw: Any = None, initial_states_bw: Any = None,
                                    dtype: Any = None, sequence_length: Any = None,
                                    parallel_iterations: int | None = None,
                                    time_major: bool = False, scope: Any = None,
                                    swap_memory: bool = False) -> tuple[Any, tuple[Any, ...],
                                                                        tuple[Any, ...]]:
    """Layers of `bidirectional_dynamic_rnn`, each layer's two outputs concatenated on the last
    axis; see the module docstring."""
    _check_stack(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw, layer = [], [], inputs
    with variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, layer, sequence_length=sequence_length,
                    initial_state_fw=_layer_state(initial_states_fw, i),
                    initial_state_bw=_layer_state(initial_states_bw, i), dtype=dtype,
                    parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                    time_major=time_major)
                layer = array_ops.concat(outputs, 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)
