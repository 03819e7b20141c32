"""Shared references of the RNN tests: a session run that also returns every variable's
value, and a numpy unrolling of ``BasicRNNCell`` with TF's sequence-length masking."""

from __future__ import annotations

import numpy as np

import tensorweave as tw


def evaluate(fetches: object, feed: dict | None = None) -> tuple[object, dict[str, np.ndarray]]:
    """`fetches` and every global variable (by name without ``:0``) after initialization."""
    variables = tw.global_variables()
    with tw.Session() as sess:
        sess.run(tw.global_variables_initializer())
        out, values = sess.run([fetches, variables], feed)
    return out, {v.name[:-2]: value for v, value in zip(variables, values)}


def rnn_reference(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray,
                  lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A BasicRNNCell over batch-major `x`: outputs zero and state kept past each length."""
    h = np.zeros((x.shape[0], kernel.shape[1]), np.float32)
    outs = []
    for t in range(x.shape[1]):
        new = np.tanh(np.concatenate([x[:, t], h], 1) @ kernel + bias)
        live = (t < lengths)[:, None]
        outs.append(np.where(live, new, 0.0))
        h = np.where(live, new, h)
    return np.stack(outs, 1), h
