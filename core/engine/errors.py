"""TensorFlow's `OpError` family.

Contract: every runtime failure surfaces as an `OpError` subclass carrying the failing node's name
and op (when known) and a message that names node, op and device. The integer `error_code`
follows TF's canonical codes, so an error can travel between processes as (code, message) and be
rebuilt as the same type with `exception_type_from_error_code`.
"""

from __future__ import annotations

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failed operation: `node_def`/`op` name the node where it happened, if any."""

    error_code = UNKNOWN

    def __init__(self, node_def: object, op: object, message: str, *args: object) -> None:
        super().__init__(message, *args)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # keep errors copyable between threads and test helpers
        return (type(self), (self.node_def, self.op, self.message))


class CancelledError(OpError):
    error_code = CANCELLED


class UnknownError(OpError):
    error_code = UNKNOWN


class InvalidArgumentError(OpError):
    error_code = INVALID_ARGUMENT


class DeadlineExceededError(OpError):
    error_code = DEADLINE_EXCEEDED


class NotFoundError(OpError):
    error_code = NOT_FOUND


class AlreadyExistsError(OpError):
    error_code = ALREADY_EXISTS


class PermissionDeniedError(OpError):
    error_code = PERMISSION_DENIED


class ResourceExhaustedError(OpError):
    error_code = RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError):
    error_code = FAILED_PRECONDITION


class AbortedError(OpError):
    error_code = ABORTED


class OutOfRangeError(OpError):
    error_code = OUT_OF_RANGE


class UnimplementedError(OpError):
    error_code = UNIMPLEMENTED


class InternalError(OpError):
    error_code = INTERNAL


class UnavailableError(OpError):
    error_code = UNAVAILABLE


class DataLossError(OpError):
    error_code = DATA_LOSS


class UnauthenticatedError(OpError):
    error_code = UNAUTHENTICATED


_BY_CODE: dict[int, type[OpError]] = {
    cls.error_code: cls
    for cls in (
        CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
        AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError,
        FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError,
        InternalError, UnavailableError, DataLossError, UnauthenticatedError,
    )
}


def exception_type_from_error_code(code: int) -> type[OpError]:
    """The `OpError` subclass for a canonical code; `UnknownError` for an unknown code."""
    return _BY_CODE.get(code, UnknownError)


def error_code_from_exception_type(cls: type[OpError]) -> int:
    return cls.error_code
