"""``tf.contrib.seq2seq``'s decoding loop: `Decoder`, `dynamic_decode` and `BasicDecoder`.

Contract: a `Decoder` says what one step emits (`output_size`, `output_dtype`, nests matching
each other) and provides ``initialize() -> (finished, inputs, state)`` and
``step(time, inputs, state) -> (outputs, next_state, next_inputs, finished)``, optionally
``finalize(outputs, final_state, sequence_lengths)``. `dynamic_decode` runs the steps in one
`while_loop` (under variable scope ``<scope or "decoder">``) until every batch entry is finished
or `maximum_iterations` steps ran, writing each step's outputs to dynamically sized TensorArrays.
A batch entry's sequence length is the step at which it first finished, plus one. With
`impute_finished`, finished entries emit zeros and keep their state (scalar states and
TensorArrays are passed through). Outputs are batch-major unless `output_time_major`. As TF1,
a decoder that `tracks_own_finished` (beam search) replaces the finished flags instead of
or-ing them. `BasicDecoder` calls its cell, an optional output layer, then its helper's `sample`
and `next_inputs`.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, math_ops
from tensorweave.api.control_flow_ops import _flatten, _pack_as, _same_structure, while_loop
from tensorweave.api.rnn import _check_cell, _swap_batch_time
from tensorweave.api.rnn_cell import _zeros
from tensorweave.api.scopes import name_scope
from tensorweave.api.tensor_array import TensorArray
from tensorweave.api.variable_scope import variable_scope
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor, constant_value
from tensorweave.engine.tensor_shape import TensorShape

__all__ = ["BasicDecoder", "BasicDecoderOutput", "Decoder", "dynamic_decode"]


class Decoder:
    """The interface `dynamic_decode` drives; see the module docstring."""

    @property
    def batch_size(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define batch_size")

    @property
    def output_size(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    @property
    def output_dtype(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define output_dtype")

    def initialize(self, name: str | None = None) -> tuple[Any, Any, Any]:
        raise NotImplementedError(f"{type(self).__name__} must define initialize")

    def step(self, time: Any, inputs: Any, state: Any,
             name: str | None = None) -> tuple[Any, Any, Any, Any]:
        raise NotImplementedError(f"{type(self).__name__} must define step")

    def finalize(self, outputs: Any, final_state: Any, sequence_lengths: Any) -> tuple[Any, Any]:
        raise NotImplementedError

    @property
    def tracks_own_finished(self) -> bool:
        return False


def _map(fn: Callable[..., Any], *structures: Any) -> Any:
    """``fn`` over the leaves of same-shaped nests, packed as the first (whose TensorArray
    leaves are replaced, not rebuilt from a flow)."""
    leaves = [fn(*leaf) for leaf in zip(*(_flatten(s) for s in structures))]
    return _pack_as(structures[0], leaves, rebuild_flows=False)


def _tensors(structure: Any) -> list[Tensor]:
    """The tensors among a nest's leaves (for name scopes' `values`)."""
    return [v for v in _flatten(structure) if isinstance(v, Tensor)]


def _as_shape(size: Any) -> TensorShape:
    return size if isinstance(size, TensorShape) else TensorShape([size])


def _element_shape(batch_size: Any, size: Any) -> TensorShape:
    static = constant_value(batch_size) if isinstance(batch_size, Tensor) else batch_size
    return TensorShape([None if static is None else int(static)]).concatenate(_as_shape(size))


def _check_same(a: Any, b: Any, what: str) -> None:
    if not _same_structure(a, b):
        raise ValueError(f"The decoder's {what} changed structure in a step: {a!r} vs {b!r}")


def dynamic_decode(decoder: Decoder, output_time_major: bool = False,
                   impute_finished: bool = False, maximum_iterations: Any = None,
                   parallel_iterations: int = 32, swap_memory: bool = False,
                   scope: Any = None) -> tuple[Any, Any, Tensor]:
    """``(final_outputs, final_state, final_sequence_lengths)`` of `decoder` run to the end;
    see the module docstring."""
    if not isinstance(decoder, Decoder):
        raise TypeError(f"Expected decoder to be type Decoder, but saw: {type(decoder)}")
    with variable_scope(scope, "decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, dtype=dtypes.int32,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError("maximum_iterations must be a scalar")
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        zero_outputs = _pack_as(decoder.output_size, [
            _zeros(s, decoder.batch_size, dtypes.as_dtype(d))
            for s, d in zip(_flatten(decoder.output_size), _flatten(decoder.output_dtype))])
        if maximum_iterations is not None:
            initial_finished = math_ops.logical_or(initial_finished, 0 >= maximum_iterations)
        initial_lengths = array_ops.zeros_like(initial_finished, dtype=dtypes.int32)
        initial_outputs_ta = _map(
            lambda s, d: TensorArray(d, size=0, dynamic_size=True,
                                     element_shape=_element_shape(decoder.batch_size, s)),
            decoder.output_size, decoder.output_dtype)

        def condition(time: Tensor, outputs_ta: Any, state: Any, inputs: Any,
                      finished: Tensor, lengths: Tensor) -> Tensor:
            return math_ops.logical_not(math_ops.reduce_all(finished))

        def body(time: Tensor, outputs_ta: Any, state: Any, inputs: Any, finished: Tensor,
                 lengths: Tensor) -> tuple[Any, ...]:
            outputs, decoder_state, next_inputs, decoder_finished = decoder.step(
                time, inputs, state)
            next_finished = decoder_finished if decoder.tracks_own_finished else \
                math_ops.logical_or(decoder_finished, finished)
            next_lengths = array_ops.where(
                math_ops.logical_not(finished),
                array_ops.fill(array_ops.shape(lengths), time + 1), lengths)
            _check_same(state, decoder_state, "state")
            _check_same(outputs_ta, outputs, "outputs")
            _check_same(inputs, next_inputs, "inputs")
            if impute_finished:
                outputs = _map(lambda out, zero: array_ops.where(finished, zero, out),
                               outputs, zero_outputs)
                decoder_state = _map(lambda new, cur: _copy_state(finished, new, cur),
                                     decoder_state, state)
            outputs_ta = _map(lambda ta, out: ta.write(time, out), outputs_ta, outputs)
            return (time + 1, outputs_ta, decoder_state, next_inputs, next_finished,
                    next_lengths)

        _, final_ta, final_state, _, _, final_lengths = while_loop(
            condition, body, (0, initial_outputs_ta, initial_state, initial_inputs,
                              initial_finished, initial_lengths),
            parallel_iterations=parallel_iterations, maximum_iterations=maximum_iterations,
            swap_memory=swap_memory)
        final_outputs = _map(lambda ta: ta.stack(), final_ta)
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state,
                                                          final_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = _map(_swap_batch_time, final_outputs)
        return final_outputs, final_state, final_lengths


def _copy_state(finished: Tensor, new: Any, cur: Any) -> Any:
    """The state a finished entry keeps: its current one (TensorArrays and scalars pass)."""
    if isinstance(cur, TensorArray):
        return new
    new.set_shape(cur.shape)
    if new.shape.ndims == 0:
        return new
    return array_ops.where(finished, cur, new)


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput",
                                                ("rnn_output", "sample_id"))):
    """One step's output of a `BasicDecoder`: the cell's (projected) output and the sample."""

    __slots__ = ()


def _layer_output_size(layer: Any, size: Any) -> Any:
    """What `layer` maps a cell output of `size` to, per batch element."""
    if hasattr(layer, "compute_output_shape"):
        return _map(lambda s: TensorShape(layer.compute_output_shape(
            TensorShape([None]).concatenate(_as_shape(s))))[1:], size)
    if hasattr(layer, "units"):
        return _map(lambda s: _as_shape(s)[:-1].concatenate([layer.units]), size)
    raise TypeError(f"output_layer {layer!r} has neither compute_output_shape nor units")


class BasicDecoder(Decoder):
    """`cell` then `output_layer`, sampled and fed back by `helper`."""

    def __init__(self, cell: Any, helper: Any, initial_state: Any,
                 output_layer: Any = None) -> None:
        _check_cell("cell", cell)
        if not all(hasattr(helper, a) for a in ("initialize", "sample", "next_inputs")):
            raise TypeError(f"helper must be a Helper, received: {type(helper)}")
        if output_layer is not None and not callable(output_layer):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self) -> Any:
        return self._helper.batch_size

    def _rnn_output_size(self) -> Any:
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        return _layer_output_size(self._output_layer, size)

    @property
    def output_size(self) -> BasicDecoderOutput:
        return BasicDecoderOutput(self._rnn_output_size(), self._helper.sample_ids_shape)

    @property
    def output_dtype(self) -> BasicDecoderOutput:
        dtype = convert_to_tensor(_flatten(self._initial_state)[0]).dtype
        return BasicDecoderOutput(_map(lambda _: dtype, self._rnn_output_size()),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name: str | None = None) -> tuple[Any, Any, Any]:
        return (*self._helper.initialize(), self._initial_state)

    def step(self, time: Any, inputs: Any, state: Any,
             name: str | None = None) -> tuple[Any, Any, Any, Any]:
        with name_scope(name, "BasicDecoderStep", _tensors([time, inputs, state])):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished
