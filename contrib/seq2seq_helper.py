"""``tf.contrib.seq2seq``'s helpers: how a `BasicDecoder` samples and what it feeds next.

Contract: a helper has `batch_size`, `sample_ids_shape`, `sample_ids_dtype`,
``initialize() -> (finished, first_inputs)``, ``sample(time, outputs, state) -> sample_ids``
and ``next_inputs(time, outputs, state, sample_ids) -> (finished, next_inputs, next_state)``.
`TrainingHelper` feeds the ground-truth inputs (batch-major unless `time_major`), finishing each
entry at its `sequence_length`, and samples the argmax; once every entry is finished it feeds
zeros. `GreedyEmbeddingHelper` feeds the embedding of the argmax, `SampleEmbeddingHelper` of a
draw from ``softmax(logits / softmax_temperature)`` (seeded by `seed`); both finish an entry when
it emits `end_token`, and feed the start inputs once all are finished.
`ScheduledEmbeddingTrainingHelper` replaces each ground-truth input, with probability
`sampling_probability`, by the embedding of a draw from the outputs (sample id -1 where it does
not). `InferenceHelper` and `CustomHelper` take the sampling and feeding as functions. Argument
checks and their errors are TF1's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorweave.api import array_ops, math_ops, nn_ops, random_ops
from tensorweave.api.array_ops_extra import multinomial
from tensorweave.api.control_flow_ops import _flatten, _pack_as, cond
from tensorweave.api.rnn import _swap_batch_time
from tensorweave.api.scopes import name_scope
from tensorweave.api.tensor_array import TensorArray
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor
from tensorweave.engine.tensor_shape import TensorShape

__all__ = [
    "CustomHelper", "GreedyEmbeddingHelper", "Helper", "InferenceHelper",
    "SampleEmbeddingHelper", "ScheduledEmbeddingTrainingHelper", "TrainingHelper",
]


class Helper:
    """The interface a `BasicDecoder` uses; see the module docstring."""

    @property
    def batch_size(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define batch_size")

    @property
    def sample_ids_shape(self) -> TensorShape:
        return TensorShape([])

    @property
    def sample_ids_dtype(self) -> dtypes.DType:
        return dtypes.int32

    def initialize(self, name: str | None = None) -> tuple[Tensor, Any]:
        raise NotImplementedError(f"{type(self).__name__} must define initialize")

    def sample(self, time: Any, outputs: Any, state: Any, name: str | None = None) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define sample")

    def next_inputs(self, time: Any, outputs: Any, state: Any, sample_ids: Any,
                    name: str | None = None) -> tuple[Tensor, Any, Any]:
        raise NotImplementedError(f"{type(self).__name__} must define next_inputs")


def _all_false(batch_size: Any) -> Tensor:
    return array_ops.tile([False], array_ops.reshape(batch_size, [1]))


class CustomHelper(Helper):
    """A helper made of three functions: ``initialize_fn() -> (finished, inputs)``,
    ``sample_fn(time, outputs, state)`` and ``next_inputs_fn(time, outputs, state,
    sample_ids)``."""

    def __init__(self, initialize_fn: Callable[[], Any], sample_fn: Callable[..., Any],
                 next_inputs_fn: Callable[..., Any], sample_ids_shape: Any = None,
                 sample_ids_dtype: Any = None) -> None:
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size: Any = None
        self._sample_ids_shape = TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = dtypes.as_dtype(sample_ids_dtype or dtypes.int32)

    @property
    def batch_size(self) -> Any:
        if self._batch_size is None:
            raise ValueError("batch_size accessed before initialize was called")
        return self._batch_size

    @property
    def sample_ids_shape(self) -> TensorShape:
        return self._sample_ids_shape

    @property
    def sample_ids_dtype(self) -> dtypes.DType:
        return self._sample_ids_dtype

    def initialize(self, name: str | None = None) -> tuple[Tensor, Any]:
        with name_scope(name, f"{type(self).__name__}Initialize"):
            finished, next_inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = array_ops.size(finished)
        return finished, next_inputs

    def sample(self, time: Any, outputs: Any, state: Any, name: str | None = None) -> Any:
        with name_scope(name, f"{type(self).__name__}Sample", [time, outputs]):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time: Any, outputs: Any, state: Any, sample_ids: Any,
                    name: str | None = None) -> tuple[Tensor, Any, Any]:
        with name_scope(name, f"{type(self).__name__}NextInputs", [time, outputs]):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state,
                                        sample_ids=sample_ids)


class TrainingHelper(Helper):
    """Feeds the ground truth: step ``t + 1``'s input is ``inputs[:, t + 1]``."""

    def __init__(self, inputs: Any, sequence_length: Any, time_major: bool = False,
                 name: str | None = None) -> None:
        with name_scope(name, "TrainingHelper", _flatten(inputs) + [sequence_length]):
            flat = [convert_to_tensor(x, name="inputs") for x in _flatten(inputs)]
            if not time_major:
                flat = [_swap_batch_time(x) for x in flat]
            self._input_tas = [TensorArray(x.dtype, size=array_ops.shape(x)[0],
                                           element_shape=x.shape[1:]).unstack(x) for x in flat]
            self._structure = inputs
            self._sequence_length = convert_to_tensor(sequence_length, name="sequence_length")
            if self._sequence_length.shape.ndims != 1:
                raise ValueError("Expected sequence_length to be a vector, but received shape: "
                                 f"{self._sequence_length.shape}")
            self._zero_inputs = _pack_as(inputs, [array_ops.zeros_like(x[0]) for x in flat])
            self._batch_size = array_ops.size(self._sequence_length)

    @property
    def inputs(self) -> Any:
        return _pack_as(self._structure, [ta.stack() for ta in self._input_tas])

    @property
    def sequence_length(self) -> Tensor:
        return self._sequence_length

    @property
    def batch_size(self) -> Any:
        return self._batch_size

    def _read(self, time: Any) -> Any:
        return _pack_as(self._structure, [ta.read(time) for ta in self._input_tas])

    def initialize(self, name: str | None = None) -> tuple[Tensor, Any]:
        with name_scope(name, "TrainingHelperInitialize"):
            finished = math_ops.equal(0, self._sequence_length)
            next_inputs = cond(math_ops.reduce_all(finished), lambda: self._zero_inputs,
                               lambda: self._read(0))
            return finished, next_inputs

    def sample(self, time: Any, outputs: Any, state: Any, name: str | None = None) -> Tensor:
        with name_scope(name, "TrainingHelperSample", [time, outputs]):
            return math_ops.cast(math_ops.argmax(outputs, axis=-1), dtypes.int32)

    def next_inputs(self, time: Any, outputs: Any, state: Any, sample_ids: Any = None,
                    name: str | None = None) -> tuple[Tensor, Any, Any]:
        with name_scope(name, "TrainingHelperNextInputs", [time, outputs]):
            next_time = time + 1
            finished = next_time >= self._sequence_length
            next_inputs = cond(math_ops.reduce_all(finished), lambda: self._zero_inputs,
                               lambda: self._read(next_time))
            return finished, next_inputs, state


def _sampled_inputs(embedding_fn: Callable[[Tensor], Any], sample_ids: Tensor,
                    base_inputs: Tensor) -> Tensor:
    """`base_inputs` with the rows whose sample id is not -1 replaced by their embedding."""
    sampled = embedding_fn(math_ops.maximum(sample_ids, 0))
    return array_ops.where(sample_ids > -1, sampled, base_inputs)


def _embedding_fn(embedding: Any) -> Callable[[Tensor], Any]:
    if callable(embedding):
        return embedding
    return lambda ids: nn_ops.embedding_lookup(embedding, ids)


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """`TrainingHelper` that, per entry and step, feeds the embedding of a sample drawn from
    the outputs with probability `sampling_probability` (scheduled sampling)."""

    def __init__(self, inputs: Any, sequence_length: Any, embedding: Any,
                 sampling_probability: Any, time_major: bool = False, seed: int | None = None,
                 scheduling_seed: int | None = None, name: str | None = None) -> None:
        with name_scope(name, "ScheduledEmbeddingSamplingWrapper",
                        [embedding, sampling_probability]):
            self._embedding_fn = _embedding_fn(embedding)
            self._sampling_probability = convert_to_tensor(sampling_probability,
                                                           name="sampling_probability")
            if self._sampling_probability.shape.ndims not in (0, 1):
                raise ValueError("sampling_probability must be either a scalar or a vector. "
                                 f"saw shape: {self._sampling_probability.shape}")
            self._seed = seed
            self._scheduling_seed = scheduling_seed
            super().__init__(inputs, sequence_length, time_major=time_major, name=name)

    def sample(self, time: Any, outputs: Any, state: Any, name: str | None = None) -> Tensor:
        with name_scope(name, "ScheduledEmbeddingTrainingHelperSample", [time, outputs]):
            draw = random_ops.random_uniform(array_ops.reshape(self.batch_size, [1]),
                                             seed=self._scheduling_seed)
            select = draw < math_ops.cast(self._sampling_probability, draw.dtype)
            ids = array_ops.reshape(multinomial(outputs, 1, seed=self._seed,
                                                output_dtype=dtypes.int32), [-1])
            return array_ops.where(select, ids, array_ops.fill(array_ops.shape(ids), -1))

    def next_inputs(self, time: Any, outputs: Any, state: Any, sample_ids: Any = None,
                    name: str | None = None) -> tuple[Tensor, Any, Any]:
        with name_scope(name, "ScheduledEmbeddingTrainingHelperNextInputs", [time, outputs]):
            finished, base_inputs, state = super().next_inputs(time, outputs, state,
                                                               sample_ids)
            next_inputs = cond(math_ops.reduce_all(finished), lambda: base_inputs,
                               lambda: _sampled_inputs(self._embedding_fn, sample_ids,
                                                       base_inputs))
            return finished, next_inputs, state


class GreedyEmbeddingHelper(Helper):
    """Feeds back the embedding of the argmax of the outputs; see the module docstring."""

    def __init__(self, embedding: Any, start_tokens: Any, end_token: Any) -> None:
        self._embedding_fn = _embedding_fn(embedding)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32,
                                               name="start_tokens")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._batch_size = array_ops.size(start_tokens)
        self._start_inputs = self._embedding_fn(self._start_tokens)

    @property
    def batch_size(self) -> Any:
        return self._batch_size

    def initialize(self, name: str | None = None) -> tuple[Tensor, Any]:
        return _all_false(self._batch_size), self._start_inputs

    def sample(self, time: Any, outputs: Any, state: Any, name: str | None = None) -> Tensor:
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        return math_ops.argmax(outputs, axis=-1, output_type=dtypes.int32)

    def next_inputs(self, time: Any, outputs: Any, state: Any, sample_ids: Any,
                    name: str | None = None) -> tuple[Tensor, Any, Any]:
        finished = math_ops.equal(sample_ids, self._end_token)
        next_inputs = cond(math_ops.reduce_all(finished), lambda: self._start_inputs,
                           lambda: self._embedding_fn(sample_ids))
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """Feeds back the embedding of a sample of ``softmax(outputs / softmax_temperature)``."""

    def __init__(self, embedding: Any, start_tokens: Any, end_token: Any,
                 softmax_temperature: Any = None, seed: int | None = None) -> None:
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time: Any, outputs: Any, state: Any, name: str | None = None) -> Tensor:
        if not isinstance(outputs, Tensor):
            raise TypeError(f"Expected outputs to be a single Tensor, got: {type(outputs)}")
        logits = outputs if self._softmax_temperature is None else \
            outputs / self._softmax_temperature
        return array_ops.reshape(multinomial(logits, 1, seed=self._seed,
                                             output_dtype=dtypes.int32), [-1])


class InferenceHelper(Helper):
    """Feeds back ``next_inputs_fn(sample_ids)`` (the samples themselves by default), where
    ``sample_ids = sample_fn(outputs)``; an entry finishes where ``end_fn(sample_ids)``."""

    def __init__(self, sample_fn: Callable[[Any], Any], sample_shape: Any, sample_dtype: Any,
                 start_inputs: Any, end_fn: Callable[[Any], Any],
                 next_inputs_fn: Callable[[Any], Any] | None = None) -> None:
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_shape = TensorShape(sample_shape)
        self._sample_dtype = dtypes.as_dtype(sample_dtype)
        self._next_inputs_fn = next_inputs_fn
        self._start_inputs = convert_to_tensor(start_inputs, name="start_inputs")
        self._batch_size = array_ops.shape(self._start_inputs)[0]

    @property
    def batch_size(self) -> Any:
        return self._batch_size

    @property
    def sample_ids_shape(self) -> TensorShape:
        return self._sample_shape

    @property
    def sample_ids_dtype(self) -> dtypes.DType:
        return self._sample_dtype

    def initialize(self, name: str | None = None) -> tuple[Tensor, Any]:
        return _all_false(self._batch_size), self._start_inputs

    def sample(self, time: Any, outputs: Any, state: Any, name: str | None = None) -> Any:
        return self._sample_fn(outputs)

    def next_inputs(self, time: Any, outputs: Any, state: Any, sample_ids: Any,
                    name: str | None = None) -> tuple[Tensor, Any, Any]:
        finished = self._end_fn(sample_ids)
        next_inputs = sample_ids if self._next_inputs_fn is None else \
            self._next_inputs_fn(sample_ids)
        return finished, next_inputs, state
