"""The shared error vocabulary: numbered codes for the wire, one exception class per code.

A leaf module: it imports nothing of the project and nothing outside the standard library, so
every layer (and the light ``alma-ctl`` client) can use it. Messages are one plain sentence
that says what happened and what to do; the client turns codes into exit codes.
"""

from __future__ import annotations

from enum import IntEnum


class ErrorCode(IntEnum):
    """Fault codes carried on the control socket. Never renumber: clients depend on them."""

    INTERNAL = 1
    BAD_REQUEST = 10  # not valid JSON, not an object, missing fields
    UNKNOWN_COMMAND = 11
    TOO_LARGE = 12
    VERSION_MISMATCH = 13
    BAD_ARGUMENT = 14  # the command exists but an argument is wrong
    REFUSED = 20  # refused by the policy or a hard rule
    CONFLICT = 30  # the files are not as the plan or the journal expects; nothing was changed
    NOT_FOUND = 40  # no such suggestion, action or memory
    INVALID_STATE = 41  # e.g. accepting a suggestion that was already executed
    UNAVAILABLE = 50  # busy, or a needed part (sandbox, store) is not available
    CONFIG = 60  # a configuration file is wrong


#: How ``alma-ctl`` turns a wire code into its exit code (contract §2).
EXIT_CODES: dict[int, int] = {
    ErrorCode.BAD_ARGUMENT: 2,
    ErrorCode.REFUSED: 4,
    ErrorCode.CONFLICT: 5,
    ErrorCode.NOT_FOUND: 6,
}
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3


def exit_code_for(code: int) -> int:
    return EXIT_CODES.get(code, EXIT_ERROR)


class AlmaError(Exception):
    """Base of every error ALMA reports to a person. ``str(err)`` is the sentence to show."""

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequestError(AlmaError):
    code = ErrorCode.BAD_REQUEST


class UnknownCommandError(AlmaError):
    code = ErrorCode.UNKNOWN_COMMAND


class TooLargeError(AlmaError):
    code = ErrorCode.TOO_LARGE


class VersionMismatchError(AlmaError):
    code = ErrorCode.VERSION_MISMATCH


class BadArgumentError(AlmaError):
    code = ErrorCode.BAD_ARGUMENT


class RefusedError(AlmaError):
    """Refused by the policy or by a hard rule (zones, symlinks, max_files...)."""

    code = ErrorCode.REFUSED


class ConflictError(AlmaError):
    """The files are not as the plan or the journal expects. Nothing was changed."""

    code = ErrorCode.CONFLICT


class NotFoundError(AlmaError):
    code = ErrorCode.NOT_FOUND


class InvalidStateError(AlmaError):
    code = ErrorCode.INVALID_STATE


class UnavailableError(AlmaError):
    code = ErrorCode.UNAVAILABLE


class ConfigError(AlmaError):
    """A configuration file is wrong; the message names the file, the key (and line) and the fix."""

    code = ErrorCode.CONFIG


ERROR_CLASSES: dict[int, type[AlmaError]] = {
    cls.code: cls
    for cls in (
        AlmaError,
        BadRequestError,
        UnknownCommandError,
        TooLargeError,
        VersionMismatchError,
        BadArgumentError,
        RefusedError,
        ConflictError,
        NotFoundError,
        InvalidStateError,
        UnavailableError,
        ConfigError,
    )
}
