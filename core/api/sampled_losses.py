"""Sampled losses over large class sets: ``tw.nn.nce_loss`` and ``tw.nn.sampled_softmax_loss``
(TF1's ``nn_impl.py``), exported through ``tw.nn``.

Contract: both score each row of `inputs` (``[batch, dim]``) against its `num_true` true classes
(`labels`, ``[batch, num_true]``) and `num_sampled` shared negative classes, reading the class
rows of `weights` (``[num_classes, dim]``, or a list of shards split by `partition_strategy`)
and `biases` (``[num_classes]``) with ``embedding_lookup``, so their gradients are
`IndexedSlices`. The negatives come from `sampled_values` (a sampler's 3-tuple) or, by default,
from ``log_uniform_candidate_sampler(unique=True)``; no gradient flows into them. The logits are
``inputs . w_c + b_c - log(expected_count_c)`` (the "log Q" correction); with
`remove_accidental_hits` a sampled class equal to a row's true class gets ``-FLT_MAX`` added.
`nce_loss` sums the logistic losses of a row (true targets ``1 / num_true``, sampled 0);
`sampled_softmax_loss` is the softmax cross-entropy over the ``num_true + num_sampled`` logits.
Each returns one loss per row, ``[batch]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.api import array_ops, math_ops
from tensorweave.api.candidate_sampling_ops import (
    compute_accidental_hits,
    log_uniform_candidate_sampler,
)
from tensorweave.api.gradients import stop_gradient
from tensorweave.api.nn_ops import (
    embedding_lookup,
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
)
from tensorweave.api.scopes import name_scope
from tensorweave.api.sparse_ops import sparse_to_dense
from tensorweave.engine import dtypes
from tensorweave.engine.graph.constant_op import convert_to_tensor
from tensorweave.engine.graph.graph import Tensor

__all__ = ["nce_loss", "sampled_softmax_loss"]


def _lookup(params: list[Any], ids: Tensor, like: Tensor, partition_strategy: str) -> Tensor:
    rows = embedding_lookup(params, ids, partition_strategy=partition_strategy)
    return rows if rows.dtype == like.dtype else math_ops.cast(rows, like.dtype)


def _accidental_hit_mask(labels: Tensor, sampled: Tensor, num_true: int, num_sampled: int,
                         like: Tensor) -> Tensor:
    """``[batch, num_sampled]``: ``-FLT_MAX`` where a sampled class is one of the row's true
    classes, else 0."""
    indices, ids, weights = compute_accidental_hits(labels, sampled, num_true=num_true)
    positions = array_ops.concat([array_ops.reshape(indices, [-1, 1]),
                                  array_ops.reshape(math_ops.cast(ids, dtypes.int32), [-1, 1])],
                                 1, name="sparse_indices")
    shape = array_ops.concat([array_ops.shape(labels)[:1],
                              np.array([num_sampled], np.int32)], 0)
    if weights.dtype != like.dtype:
        weights = math_ops.cast(weights, like.dtype)
    return sparse_to_dense(positions, shape, weights, default_value=0.0, validate_indices=False)


def _compute_sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any,
                            num_sampled: int, num_classes: int, num_true: int = 1,
                            sampled_values: Any = None, subtract_log_q: bool = True,
                            remove_accidental_hits: bool = False,
                            partition_strategy: str = "mod", name: str | None = None,
                            seed: int | None = None) -> tuple[Tensor, Tensor]:
    """The ``[batch, num_true + num_sampled]`` logits (true classes first) and their target
    probabilities."""
    shards = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    with name_scope(name, "compute_sampled_logits", [*shards, biases, inputs, labels]):
        inputs = convert_to_tensor(inputs, name="inputs")
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype != dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected, sampled_expected = (stop_gradient(s) for s in sampled_values)
        sampled = math_ops.cast(sampled, dtypes.int64)

        # One lookup for true and sampled classes; the first len(labels_flat) rows are true.
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        num_labels = array_ops.shape(labels_flat)[0]
        all_w = _lookup(shards, all_ids, inputs, partition_strategy)
        all_b = _lookup(biases, all_ids, inputs, partition_strategy)
        true_w = array_ops.slice(all_w, [0, 0], array_ops.stack([num_labels, -1]))
        sampled_w = array_ops.slice(all_w, array_ops.stack([num_labels, 0]), [-1, -1])
        true_b = array_ops.slice(all_b, [0], array_ops.reshape(num_labels, [1]))
        sampled_b = array_ops.slice(all_b, array_ops.reshape(num_labels, [1]), [-1])

        # true_logits[i, j] = inputs[i] . true_w[i * num_true + j]
        dim = array_ops.shape(true_w)[1:2]
        true_w = array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0))
        products = math_ops.multiply(array_ops.expand_dims(inputs, 1), true_w)
        true_logits = math_ops.reduce_sum(products, 2) + array_ops.reshape(true_b, [-1, num_true])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True) + sampled_b

        if remove_accidental_hits:
            sampled_logits += _accidental_hit_mask(labels, sampled, num_true, num_sampled,
                                                   sampled_logits)
        if subtract_log_q:
            true_logits -= math_ops.log(true_expected)
            sampled_logits -= math_ops.log(sampled_expected)

        logits = array_ops.concat([true_logits, sampled_logits], 1)
        targets = array_ops.concat([array_ops.ones_like(true_logits) / num_true,
                                    array_ops.zeros_like(sampled_logits)], 1)
        return logits, targets


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
             num_classes: int, num_true: int = 1, sampled_values: Any = None,
             remove_accidental_hits: bool = False, partition_strategy: str = "mod",
             name: str = "nce_loss") -> Tensor:
    """Noise-contrastive estimation loss per example, ``[batch]``."""
    logits, targets = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name)
    losses = sigmoid_cross_entropy_with_logits(labels=targets, logits=logits,
                                               name="sampled_losses")
    return math_ops.reduce_sum(losses, 1)


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                         num_classes: int, num_true: int = 1, sampled_values: Any = None,
                         remove_accidental_hits: bool = True, partition_strategy: str = "mod",
                         name: str = "sampled_softmax_loss", seed: int | None = None) -> Tensor:
    """Softmax cross-entropy over the true and sampled classes per example, ``[batch]``."""
    logits, targets = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name, seed=seed)
    targets = stop_gradient(targets, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=targets, logits=logits)
