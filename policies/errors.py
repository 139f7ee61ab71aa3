"""The shared error vocabulary: numbered codes for the wire, one exception class per code.

Nearly a leaf: of the project it imports only :mod:`policies.i18n` (itself a leaf), and
nothing outside the standard library, so every layer (and the light ``alma-ctl`` client) can
use it. Messages are one plain sentence in the person's language that says what happened and
what to do; the client turns codes into exit codes.
"""

from __future__ import annotations

import errno
from enum import IntEnum
from typing import Any

from policies.i18n import N_, _


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

    def to_wire(self) -> dict[str, Any]:
        """The error as it crosses a boundary (the socket, the confined child's answer, the
        loop's stored state): its code and its sentence, nothing else."""
        return {"code": int(self.code), "message": self.message}


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


def error_from_wire(data: Any) -> AlmaError:
    """The exception a ``{"code", "message"}`` from :meth:`AlmaError.to_wire` stands for: the
    one way back from a number to a class. Anything malformed is an internal error."""
    if isinstance(data, dict):
        code, message = data.get("code"), data.get("message")
        if type(code) is int and isinstance(message, str) and message:
            return ERROR_CLASSES.get(code, AlmaError)(message)
    return AlmaError(_("ALMA answered with a malformed error; see the daemon log."))


#: What an operating-system error means for a person, by errno.
_OS_CAUSES = {
    errno.ENOSPC: N_("the disk is full"),
    errno.EDQUOT: N_("the disk quota is used up"),
    errno.EACCES: N_("permission was denied"),
    errno.EPERM: N_("the operation was not permitted"),
    errno.EROFS: N_("the filesystem is read-only"),
    errno.ELOOP: N_("a folder was replaced by a symbolic link"),
    errno.ENOTDIR: N_("a folder was replaced by something that is not a folder"),
    errno.EIO: N_("the disk reported an input/output error"),
    errno.ENOENT: N_("a file or folder disappeared"),
    errno.EMFILE: N_("too many files were open"),
}


def explained(exc: BaseException) -> bool:
    """Whether :func:`cause_of` says more of ``exc`` than "an internal error"."""
    return isinstance(exc, AlmaError | OSError) or type(exc).__module__ == "sqlite3"


def cause_of(exc: BaseException) -> str:
    """What went wrong, as a clause for a sentence ("the disk is full (…: 'user/a')"): never a
    traceback, never a class name. AlmaErrors already are sentences: their text is returned."""
    if isinstance(exc, AlmaError):
        return exc.message.rstrip(".")
    if isinstance(exc, OSError):
        known = _OS_CAUSES.get(exc.errno or 0)
        what = _(known) if known else _("the system said {what}", what=exc.strerror or exc)
        where = f": {exc.filename!r}" if isinstance(exc.filename, str) else ""
        detail = exc.strerror or ""
        return f"{what} ({detail}{where})" if detail or where else what
    # sqlite3 is not imported here (alma-ctl imports this module): its errors by their text.
    text = str(exc)
    if type(exc).__module__ == "sqlite3" and "disk is full" in text:
        return _("the disk is full (the database could not be written)")
    if type(exc).__module__ == "sqlite3":
        return _("the database could not be used ({text})", text=text)
    return _("an internal error happened (the daemon log has the details)")


def as_alma_error(exc: BaseException) -> AlmaError:
    """``exc`` as the AlmaError a person is shown: itself, or an internal error whose sentence
    says what went wrong (see :func:`cause_of`)."""
    if isinstance(exc, AlmaError):
        return exc
    return AlmaError(_("ALMA stopped: {cause}.", cause=cause_of(exc)))
