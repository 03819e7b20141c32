"""Host kernels of TF's CTC ops: ``CTCLoss``, ``CTCGreedyDecoder`` and ``CTCBeamSearchDecoder``.

Contract (TF's ``ctc_loss_op.cc``, ``ctc_loss_calculator.h``, ``ctc_decoder_ops.cc`` and
``ctc_beam_search.h``): inputs are logits ``[max_time, batch, num_classes]`` and the blank is class
``num_classes - 1``.

``CTCLoss`` gives ``-log p(labels | inputs)`` per batch entry and its gradient with respect to the
logits, ``softmax - occupancy``. The forward-backward recursions run in log space over the
extended label ``l'`` (blanks around every label), vectorized over batch and label position with
one loop over time. A label ``>= num_classes - 1`` ends an entry's sequence; a real label after it,
a negative label, no labels for an entry, or fewer frames than labels (unless
``ignore_longer_outputs_than_inputs``, which gives that entry loss 0 and a zero gradient) raise
`InvalidArgumentError` with TF's wording. An entry no alignment can produce gets loss ``inf`` and
the softmax as its gradient, as TF.

``CTCGreedyDecoder`` takes the first argmax per frame, drops blanks (and repeats when
``merge_repeated``) and scores ``-sum(max logit)``. ``CTCBeamSearchDecoder`` is TF's prefix beam
search over each frame's log-softmax: the beam keeps ``beam_width`` prefixes, and a path scores
its prefix's total log probability (over every alignment the beam kept).
Decoded sequences come back as ``top_paths`` sparse triples (int64 indices, values, shape).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tensorweave.engine import errors
from tensorweave.engine.kernel import KernelContext

_NEG_INF = -math.inf


def _invalid(ctx: KernelContext, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(ctx.node_name, ctx.op, message)


def _precondition(ctx: KernelContext, message: str) -> errors.FailedPreconditionError:
    return errors.FailedPreconditionError(ctx.node_name, ctx.op, message)


def _join(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


# ----------------------------------------------------------------------------- CTCLoss


def _check_loss_inputs(ctx: KernelContext, inputs: np.ndarray, indices: np.ndarray,
                       values: np.ndarray, seq_len: np.ndarray) -> None:
    if inputs.ndim != 3:
        raise _invalid(ctx, "inputs is not a 3-Tensor")
    if seq_len.ndim != 1:
        raise _invalid(ctx, "sequence_length is not a vector")
    if indices.ndim != 2:
        raise _invalid(ctx, "labels_indices is not a matrix")
    if values.ndim != 1:
        raise _invalid(ctx, "labels_values is not a vector")
    max_time, batch_size, _ = inputs.shape
    if seq_len.shape[0] != batch_size:
        raise _invalid(ctx, "len(sequence_length) != batch_size.  len(sequence_length):  "
                       f"{seq_len.shape[0]} batch_size: {batch_size}")
    if indices.shape[0] != values.shape[0]:
        raise _invalid(ctx, "labels_indices and labels_values must contain the same number of "
                       f"rows, but saw shapes: [{indices.shape[0]},{indices.shape[1]}] vs. "
                       f"[{values.shape[0]}]")
    if batch_size == 0:
        raise _invalid(ctx, "batch_size must not be 0")


def _label_sequences(ctx: KernelContext, indices: np.ndarray, values: np.ndarray,
                     batch_size: int) -> list[list[int]]:
    """Each entry's labels, after TF's check that the sparse indices are in bounds and in
    row-major order."""
    max_len = int(indices[:, 1].max()) + 1 if indices.shape[0] else 0
    bounds = (batch_size, max_len)
    labels: list[list[int]] = [[] for _ in range(batch_size)]
    previous: tuple[int, ...] | None = None
    for n, (row, value) in enumerate(zip(indices.tolist(), values.tolist(), strict=True)):
        index = tuple(row)
        shown = f"indices[{n}] = [{_join(row)}]"
        if not all(0 <= i < b for i, b in zip(index, bounds, strict=True)):
            raise _invalid(ctx, f"label SparseTensor is not valid: {shown} is out of bounds: "
                           f"need 0 <= index < [{_join(list(bounds))}]")
        if previous is not None and index < previous:
            raise _invalid(ctx, f"label SparseTensor is not valid: {shown} is out of order")
        if previous == index:
            raise _invalid(ctx, f"label SparseTensor is not valid: {shown} is repeated")
        previous = index
        labels[index[0]].append(int(value))
    return labels


def _target(ctx: KernelContext, b: int, label: list[int], num_classes: int,
            collapse: bool) -> list[int]:
    """The labels CTC scores for entry `b`: repeats collapsed on request, cut at the first
    label ``>= num_classes - 1`` (TF's end-of-sequence marker)."""
    if not label:
        raise _invalid(ctx, f"Labels length is zero in batch {b}")
    target: list[int] = []
    finished = False
    for i, value in enumerate(label):
        if i > 0 and collapse and value == label[i - 1]:
            continue
        if value >= num_classes - 1:
            finished = True
        elif finished:
            raise _invalid(ctx, "Saw a non-null label (index >= num_classes - 1) following a "
                           f"null label, batch: {b} num_classes: {num_classes} labels: "
                           f"{_join(label)} labels seen so far: {_join(target)}")
        else:
            target.append(value)
    if any(v < 0 for v in target):
        raise _invalid(ctx, f"All labels must be nonnegative integers, batch: {b} labels: "
                       f"{_join(target)}")
    return target


def _shift(a: np.ndarray, k: int) -> np.ndarray:
    """`a` moved `k` places along the last axis (right for k > 0), filled with -inf."""
    out = np.full_like(a, _NEG_INF)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


def _forward_backward(log_y: np.ndarray, lengths: np.ndarray, lprime: np.ndarray,
                      u_len: np.ndarray, blank: int, merge: bool) -> tuple[np.ndarray, ...]:
    """Log alpha and beta ``[T, B, U]`` (TF's convention: beta excludes the frame's own
    emission), for entries of `lengths` frames over extended labels `lprime` ``[B, U]``."""
    steps, batch, width = log_y.shape[0], lprime.shape[0], lprime.shape[1]
    emit = np.take_along_axis(log_y, np.broadcast_to(lprime, (steps, batch, width)), axis=2)
    u = np.arange(width)
    valid_u = u[None, :] < u_len[:, None]
    is_blank = lprime == blank
    stay_ok = np.ones_like(is_blank) if merge else is_blank
    before = np.concatenate([np.full((batch, 2), -1), lprime[:, :-2]], axis=1)
    skip_in = (u[None, :] > 1) & ~is_blank & ~(merge & (lprime == before))
    skip_out = np.zeros_like(skip_in)
    skip_out[:, :-2] = skip_in[:, 2:]

    alpha = np.full((steps, batch, width), _NEG_INF, dtype=log_y.dtype)
    alpha[0, :, :2] = np.where(valid_u[:, :2], emit[0, :, :2], _NEG_INF)
    for t in range(1, steps):
        prev = alpha[t - 1]
        total = np.logaddexp(np.where(stay_ok, prev, _NEG_INF), _shift(prev, 1))
        total = np.logaddexp(total, np.where(skip_in, _shift(prev, 2), _NEG_INF))
        live = valid_u & (t < lengths)[:, None]
        alpha[t] = np.where(live, total + emit[t], _NEG_INF)

    beta = np.full_like(alpha, _NEG_INF)
    last = lengths - 1
    ends = valid_u & (u[None, :] >= (u_len - 2)[:, None])
    for t in range(steps - 1, -1, -1):
        total = np.full((batch, width), _NEG_INF, dtype=log_y.dtype)
        if t + 1 < steps:
            nxt = beta[t + 1] + emit[t + 1]
            total = np.logaddexp(np.where(stay_ok, nxt, _NEG_INF), _shift(nxt, -1))
            total = np.logaddexp(total, np.where(skip_out, _shift(nxt, -2), _NEG_INF))
        beta[t] = np.where(ends & (t == last)[:, None], 0.0,
                           np.where(valid_u & (t < last)[:, None], total, _NEG_INF))
    return alpha, beta


def _log_softmax_as_tf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Softmax and its log, taken as TF does (log of the normalized exponentials), so an
    underflowing probability is -inf as there."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    y = e / e.sum(axis=-1, keepdims=True)
    return y, np.log(y)


def ctc_loss(ctx: KernelContext, inputs: Any, labels_indices: Any, labels_values: Any,
             sequence_length: Any) -> tuple[np.ndarray, np.ndarray]:
    inputs = np.asarray(inputs)
    indices = np.asarray(labels_indices)
    values = np.asarray(labels_values)
    seq_len = np.asarray(sequence_length)
    _check_loss_inputs(ctx, inputs, indices, values, seq_len)
    max_time, batch_size, num_classes = inputs.shape
    labels = _label_sequences(ctx, indices, values, batch_size)
    for b in range(batch_size):
        if seq_len[b] > max_time:
            raise _invalid(ctx, f"sequence_length({b}) <= {max_time}")
    for b in range(batch_size):
        if seq_len[b] < 0:
            raise _invalid(ctx, f"seq_len({b}) < 0")
    collapse = bool(ctx.attrs["preprocess_collapse_repeated"])
    ignore_longer = bool(ctx.attrs["ignore_longer_outputs_than_inputs"])
    targets = []
    for b in range(batch_size):
        target = _target(ctx, b, labels[b], num_classes, collapse)
        if not ignore_longer and len(labels[b]) > seq_len[b]:
            raise _invalid(ctx, "Not enough time for target transition sequence (required: "
                           f"{len(labels[b])}, available: {seq_len[b]}){b}You can turn this "
                           "error into a warning by using the flag "
                           "ignore_longer_outputs_than_inputs")
        targets.append(target)

    loss = np.zeros(batch_size, dtype=inputs.dtype)
    grad = np.zeros_like(inputs)
    # as TF: no loss and no gradient for empty inputs, nor for too-long labels when ignored
    active = [b for b in range(batch_size)
              if seq_len[b] > 0 and not (ignore_longer and len(labels[b]) > seq_len[b])]
    if not active:
        return loss, grad
    blank = num_classes - 1
    lengths = seq_len[active].astype(np.int64)
    steps = int(lengths.max())
    u_len = np.array([2 * len(targets[b]) + 1 for b in active])
    lprime = np.full((len(active), int(u_len.max())), blank, dtype=np.int64)
    for row, b in enumerate(active):
        lprime[row, 1:u_len[row]:2] = targets[b]
    with np.errstate(all="ignore"):
        y, log_y = _log_softmax_as_tf(inputs[:steps, active])
        alpha, beta = _forward_backward(log_y, lengths, lprime, u_len, blank,
                                        bool(ctx.attrs["ctc_merge_repeated"]))
        ab = alpha + beta
        log_p = np.logaddexp.reduce(ab[0], axis=-1)
        occupancy = np.exp(ab - log_p[None, :, None])
        occupancy = np.where(np.isnan(occupancy), 0.0, occupancy).astype(inputs.dtype)
    one_hot = (lprime[:, :, None] == np.arange(num_classes)).astype(inputs.dtype)
    dy = y - np.einsum("tbu,buc->tbc", occupancy, one_hot)
    dy = np.where(np.isneginf(log_p)[None, :, None], y, dy)
    frames = (np.arange(steps)[:, None] < lengths[None, :])[..., None]
    grad[:steps, active] = np.where(frames, dy, 0.0)
    loss[active] = -log_p
    return loss, grad


# ----------------------------------------------------------------------------- decoders


def _check_decoder_inputs(ctx: KernelContext, inputs: np.ndarray, seq_len: np.ndarray) -> None:
    if inputs.ndim != 3:
        raise _invalid(ctx, "inputs is not a 3-Tensor")
    if inputs.size == 0:
        raise _invalid(ctx, "inputs must not be empty")
    max_time, batch_size, _ = inputs.shape
    if seq_len.ndim != 1:
        raise _invalid(ctx, "sequence_length is not a vector")
    if seq_len.shape[0] != batch_size:
        raise _precondition(ctx, "len(sequence_length) != batch_size.  len(sequence_length):  "
                            f"{seq_len.shape[0]} batch_size: {batch_size}")
    for b in range(batch_size):
        if seq_len[b] > max_time:
            raise _precondition(ctx, f"sequence_length({b}) <= {max_time}")


def _sparse_paths(paths: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One path per batch entry as TF's (indices, values, dense_shape) triple."""
    rows = [(b, t) for b, path in enumerate(paths) for t in range(len(path))]
    indices = np.array(rows, dtype=np.int64).reshape(-1, 2)
    values = np.array([v for path in paths for v in path], dtype=np.int64)
    longest = max((len(p) for p in paths), default=0)
    return indices, values, np.array([len(paths), longest], dtype=np.int64)


def ctc_greedy_decoder(ctx: KernelContext, inputs: Any, sequence_length: Any) -> tuple:
    inputs = np.asarray(inputs)
    seq_len = np.asarray(sequence_length)
    _check_decoder_inputs(ctx, inputs, seq_len)
    blank = inputs.shape[2] - 1
    merge = bool(ctx.attrs["merge_repeated"])
    best = inputs.argmax(axis=2)
    top = inputs.max(axis=2)
    frames = np.arange(inputs.shape[0])[:, None] < seq_len[None, :]
    log_prob = -np.where(frames, top, 0).sum(axis=0, dtype=inputs.dtype)[:, None]
    paths = []
    for b in range(inputs.shape[1]):
        path: list[int] = []
        previous = -1
        for t in range(max(int(seq_len[b]), 0)):
            k = int(best[t, b])
            if k != blank and not (merge and k == previous):
                path.append(k)
            previous = k
        paths.append(path)
    return (*_sparse_paths(paths), log_prob.astype(ctx.output_dtypes[3].np_type))


def _log_sum_exp(a: float, b: float) -> float:
    if a == _NEG_INF:
        return b
    if b == _NEG_INF:
        return a
    high, low = (a, b) if a > b else (b, a)
    return high + math.log1p(math.exp(low - high))


class _Prob:
    """A prefix's log probabilities at one frame: ending in a blank, in its last label, any."""

    __slots__ = ("blank", "label", "total")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.blank = self.label = self.total = _NEG_INF

    def copy_from(self, other: _Prob) -> None:
        self.blank, self.label, self.total = other.blank, other.label, other.total


class _Prefix:
    """A node of the prefix tree: the labelling of its parent plus `label`."""

    __slots__ = ("children", "label", "new", "old", "parent")

    def __init__(self, parent: _Prefix | None, label: int) -> None:
        self.parent, self.label = parent, label
        self.children: dict[int, _Prefix] = {}
        self.old, self.new = _Prob(), _Prob()

    def active(self) -> bool:
        return self.new.total != _NEG_INF

    def child(self, label: int) -> _Prefix:
        node = self.children.get(label)
        if node is None:
            node = self.children[label] = _Prefix(self, label)
        return node

    def labels(self, merge_repeated: bool) -> list[int]:
        out: list[int] = []
        previous = -1
        node: _Prefix | None = self
        while node is not None and node.parent is not None:
            if not merge_repeated or node.label != previous:
                out.append(node.label)
            previous = node.label
            node = node.parent
        return out[::-1]


class _BeamSearch:
    """TF's CTC prefix beam search for one batch entry; `beam` plays gtl::TopN's part."""

    def __init__(self, num_classes: int, width: int) -> None:
        self.blank, self.width = num_classes - 1, width
        root = _Prefix(None, -1)
        root.new.total = root.new.blank = 0.0
        self.beam = [root]

    def _bottom(self) -> _Prefix:
        return min(self.beam, key=lambda node: node.new.total)

    def _candidate(self, total: float) -> bool:
        return total > _NEG_INF and (len(self.beam) < self.width
                                     or total > self._bottom().new.total)

    def step(self, logits: list[float]) -> None:
        top = max(logits)
        shift = top + math.log(sum(math.exp(v - top) for v in logits))
        branches = sorted(self.beam, key=lambda node: -node.new.total)
        self.beam = []
        for node in branches:
            node.old.copy_from(node.new)
        for node in branches:
            parent = node.parent
            if parent is not None:
                if parent.active():
                    before = parent.old.blank if node.label == parent.label else parent.old.total
                    node.new.label = _log_sum_exp(node.new.label, before)
                node.new.label += logits[node.label] - shift
            node.new.blank = node.old.total + logits[self.blank] - shift
            node.new.total = _log_sum_exp(node.new.blank, node.new.label)
            self.beam.append(node)
        for node in branches:
            if not self._candidate(node.old.total):
                continue
            for label in range(self.blank):
                child = node.child(label)
                if child.active():
                    continue
                before = node.old.blank if label == node.label else node.old.total
                child.new.blank = _NEG_INF
                child.new.label = child.new.total = logits[label] - shift + before
                if self._candidate(child.new.total):
                    if len(self.beam) == self.width:
                        bottom = self._bottom()
                        bottom.new.reset()
                        self.beam.remove(bottom)
                    self.beam.append(child)
                else:
                    child.old.reset()
                    child.new.reset()

    def top_paths(self, ctx: KernelContext, n: int,
                  merge_repeated: bool) -> tuple[list[list[int]], list[float]]:
        if n > self.width:
            raise _invalid(ctx, "requested more paths than the beam width.")
        if n > len(self.beam):
            raise _invalid(ctx, "Less leaves in the beam search than requested.")
        best = sorted(self.beam, key=lambda node: -node.new.total)[:n]
        return [node.labels(merge_repeated) for node in best], [node.new.total for node in best]


def ctc_beam_search_decoder(ctx: KernelContext, inputs: Any, sequence_length: Any) -> tuple:
    inputs = np.asarray(inputs)
    seq_len = np.asarray(sequence_length)
    _check_decoder_inputs(ctx, inputs, seq_len)
    top_paths = int(ctx.attrs["top_paths"])
    merge = bool(ctx.attrs["merge_repeated"])
    batch_size, num_classes = inputs.shape[1], inputs.shape[2]
    paths: list[list[list[int]]] = [[] for _ in range(top_paths)]
    log_prob = np.zeros((batch_size, top_paths), dtype=ctx.output_dtypes[-1].np_type)
    for b in range(batch_size):
        search = _BeamSearch(num_classes, int(ctx.attrs["beam_width"]))
        for t in range(max(int(seq_len[b]), 0)):
            search.step(inputs[t, b].tolist())
        best, scores = search.top_paths(ctx, top_paths, merge)
        for p in range(top_paths):
            paths[p].append(best[p])
        log_prob[b] = scores
    triples = [_sparse_paths(p) for p in paths]
    return (*(t[0] for t in triples), *(t[1] for t in triples), *(t[2] for t in triples),
            log_prob)


HOST_ONLY = True  # host kernels: the gpu plugin does not bind this module (as in TF)


def register(registry: Any, device_type: str) -> None:
    """Register this module's kernels for `device_type`."""
    registry.add("CTCLoss", device_type, ctc_loss)
    registry.add("CTCGreedyDecoder", device_type, ctc_greedy_decoder)
    registry.add("CTCBeamSearchDecoder", device_type, ctc_beam_search_decoder)
