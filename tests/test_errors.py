"""The `OpError` family: canonical codes, code <-> type round trip, message and copying."""

from __future__ import annotations

import copy

import pytest

from tensorweave.engine import errors

EXPECTED_CODES = {
    errors.CancelledError: 1,
    errors.UnknownError: 2,
    errors.InvalidArgumentError: 3,
    errors.DeadlineExceededError: 4,
    errors.NotFoundError: 5,
    errors.AlreadyExistsError: 6,
    errors.PermissionDeniedError: 7,
    errors.ResourceExhaustedError: 8,
    errors.FailedPreconditionError: 9,
    errors.AbortedError: 10,
    errors.OutOfRangeError: 11,
    errors.UnimplementedError: 12,
    errors.InternalError: 13,
    errors.UnavailableError: 14,
    errors.DataLossError: 15,
    errors.UnauthenticatedError: 16,
}


def test_every_subclass_is_covered() -> None:
    assert set(errors.OpError.__subclasses__()) == set(EXPECTED_CODES)


@pytest.mark.parametrize("cls, code", EXPECTED_CODES.items(),
                         ids=lambda v: getattr(v, "__name__", v))
def test_error_code_is_tf_canonical(cls: type[errors.OpError], code: int) -> None:
    assert issubclass(cls, errors.OpError)
    assert cls.error_code == code
    assert errors.error_code_from_exception_type(cls) == code


@pytest.mark.parametrize("cls", EXPECTED_CODES, ids=lambda c: c.__name__)
def test_code_round_trip(cls: type[errors.OpError]) -> None:
    assert errors.exception_type_from_error_code(cls.error_code) is cls


@pytest.mark.parametrize("code", [errors.OK, 17, -1, 999])
def test_unknown_code_is_unknown_error(code: int) -> None:
    assert errors.exception_type_from_error_code(code) is errors.UnknownError


def test_module_constants_match_classes() -> None:
    assert errors.INVALID_ARGUMENT == errors.InvalidArgumentError.error_code
    assert errors.FAILED_PRECONDITION == errors.FailedPreconditionError.error_code
    assert errors.OpError.error_code == errors.UNKNOWN


def test_str_message_node_def_op() -> None:
    err = errors.InvalidArgumentError("node_a", "MatMul", "shapes do not match")
    assert str(err) == "shapes do not match"
    assert err.message == "shapes do not match"
    assert err.node_def == "node_a"
    assert err.op == "MatMul"
    assert isinstance(err, Exception)


def test_raised_and_caught_as_op_error() -> None:
    with pytest.raises(errors.OpError, match="gone") as info:
        raise errors.NotFoundError(None, None, "gone")
    assert type(info.value) is errors.NotFoundError
    assert info.value.node_def is None and info.value.op is None


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_copy_keeps_type_and_fields(copier) -> None:
    err = errors.OutOfRangeError("reader", "QueueDequeue", "End of sequence")
    dup = copier(err)
    assert dup is not err
    assert type(dup) is errors.OutOfRangeError
    assert (dup.node_def, dup.op, dup.message) == ("reader", "QueueDequeue", "End of sequence")
    assert str(dup) == "End of sequence"


def test_reduce_rebuilds_the_same_error() -> None:
    err = errors.AbortedError("n", "Op", "aborted")
    factory, args = err.__reduce__()
    rebuilt = factory(*args)
    assert type(rebuilt) is errors.AbortedError
    assert rebuilt.error_code == errors.ABORTED
    assert str(rebuilt) == "aborted"


def test_rebuild_from_code_and_message() -> None:
    original = errors.ResourceExhaustedError(None, None, "OOM when allocating")
    cls = errors.exception_type_from_error_code(original.error_code)
    rebuilt = cls(None, None, original.message)
    assert type(rebuilt) is errors.ResourceExhaustedError
    assert str(rebuilt) == str(original)
