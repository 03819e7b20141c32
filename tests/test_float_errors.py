"""float_errors: numpy's floating-point errors off between `silence` and `restore`, exactly as
``np.errstate(all="ignore")`` from the state in force, and that state back afterwards."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

from tensorweave.engine.runtime import float_errors

ALL_IGNORED = {"divide": "ignore", "over": "ignore", "under": "ignore", "invalid": "ignore"}


def test_silence_ignores_every_error_and_restore_brings_back_the_callers_state():
    with np.errstate(all="raise"):
        token = float_errors.silence()
        try:
            assert np.geterr() == ALL_IGNORED
            assert np.isinf(np.float32(1.0) / np.zeros(1, np.float32))[0]
        finally:
            float_errors.restore(token)
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise",
                               "invalid": "raise"}
        with pytest.raises(FloatingPointError):
            np.float32(1.0) / np.zeros(1, np.float32)


def test_the_silenced_state_follows_the_callers_other_settings():
    # derived from each caller's state, not from the first one seen: its buffer size stays
    for size in (8192, 16384, 8192):
        with np.errstate(divide="warn"):
            previous = np.setbufsize(size)
            try:
                token = float_errors.silence()
                try:
                    assert np.getbufsize() == size and np.geterr() == ALL_IGNORED
                finally:
                    float_errors.restore(token)
                assert np.geterr()["divide"] == "warn"
            finally:
                np.setbufsize(previous)


def test_silence_nests_and_is_per_thread():
    outer = float_errors.silence()
    try:
        inner = float_errors.silence()
        float_errors.restore(inner)
        assert np.geterr() == ALL_IGNORED
        seen = []
        thread = threading.Thread(target=lambda: seen.append(np.geterr()))
        thread.start()
        thread.join()
        assert seen[0] != ALL_IGNORED  # another thread keeps its own (the default) state
    finally:
        float_errors.restore(outer)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            np.float32(1.0) / np.zeros(1, np.float32)
