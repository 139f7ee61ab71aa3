"""The control socket's wire format: one JSON object per line, both ways. Standard library only.

Request:  ``{"v": 1, "id": 7, "cmd": "suggestions.show", "args": {"id": 3}}``
Response: ``{"v": 1, "id": 7, "ok": true, "result": ...}`` or
          ``{"v": 1, "id": 7, "ok": false, "error": {"code": 40, "message": "..."}}``
Streamed commands (``chat.send``) first send zero or more event lines
          ``{"v": 1, "id": 7, "stream": {"type": "token", "text": "Ho"}}``, then one answer.

Only numbered codes and one sentence travel on the wire; exit codes and wording for people live
in the client. Nothing read here is ever executed: requests become plain data (a :class:`Request`)
that the server checks against the explicit command table before dispatching it.
"""

from __future__ import annotations

import json
import math
import os
from enum import Enum
from typing import TYPE_CHECKING

from control.commands import MAX_ID
from policies.errors import AlmaError, BadRequestError, VersionMismatchError, error_from_wire
from policies.i18n import _, language, ngettext, normalize, supported

if TYPE_CHECKING:
    from pathlib import Path

PROTOCOL_VERSION = 1
#: A request line longer than this (newline excluded) is answered TOO_LARGE and the connection closed.
MAX_REQUEST_BYTES = 1 << 20
#: A response longer than this is replaced by a TOO_LARGE error (ask for fewer items).
MAX_RESPONSE_BYTES = 64 << 20
#: AF_UNIX paths longer than this fail to bind (108 bytes with the terminating NUL).
MAX_SOCKET_PATH_BYTES = 107

_ENVELOPE_KEYS = frozenset({"v", "id", "cmd", "args", "lang"})
#: Longest language tag accepted in the envelope (BCP 47 tags in use are far shorter).
_MAX_LANG = 35


class Request:
    """A request that passed the envelope checks; ``args`` are not validated yet.

    ``lang`` is the language the client's person reads (one of :data:`policies.i18n.LANGUAGES`),
    or None when the client did not say: then the daemon's own language is used.
    """

    __slots__ = ("args", "cmd", "id", "lang")

    def __init__(self, id: int, cmd: str, args: dict[str, object], lang: str | None = None) -> None:
        self.id = id
        self.cmd = cmd
        self.args = args
        self.lang = lang

    def __repr__(self) -> str:
        return f"Request(id={self.id!r}, cmd={self.cmd!r})"


class WireError(Exception):
    """A request that cannot be dispatched, with the id to answer to when it could be read."""

    def __init__(self, error: AlmaError, request_id: int | None) -> None:
        super().__init__(error.message)
        self.error = error
        self.request_id = request_id


# --------------------------------------------------------------------------- socket location


def socket_dir_name(uid: int | None = None) -> str:
    """``$XDG_RUNTIME_DIR/alma`` when that is a usable absolute directory, else ``/tmp/alma-<uid>``.

    Both the daemon and alma-ctl call this, so they agree as long as they share the environment
    (a systemd user unit and a login shell both get the same ``XDG_RUNTIME_DIR``). A string:
    alma-ctl's start does not import :mod:`pathlib` (docs/benchmarks.md, alma-ctl's start).
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return os.path.join(runtime, "alma")
    return f"/tmp/alma-{os.getuid() if uid is None else uid}"


def socket_name_for(root: str | os.PathLike[str], uid: int | None = None) -> str:
    """One socket per root, named by a hash so the path stays under the AF_UNIX 108-byte limit."""
    absolute = os.path.abspath(os.fspath(root))
    digest = _sha256_hex(absolute.encode("utf-8", "surrogateescape"))[:16]
    return os.path.join(socket_dir_name(uid), f"{digest}.sock")


def socket_path_for(root: str | os.PathLike[str], uid: int | None = None) -> Path:
    """:func:`socket_name_for` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(socket_name_for(root, uid))


def daemon_start_hint(root: str | os.PathLike[str]) -> str:
    """The command that starts the daemon of ``root``, for the sentences that say to, as it
    can be typed: the ``alma-agentd`` installed beside this interpreter (the one this alma-ctl
    belongs to), by its name when that name on PATH finds it, else by its absolute path (a
    venv's bin/ is rarely on PATH)."""
    from shlex import quote

    return f"{quote(_agentd_command())} --root {quote(str(root))}"


def _agentd_command() -> str:
    import sys

    name = "alma-agentd"
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), name)
    if not os.access(beside, os.X_OK):
        return name  # not installed as a script here: the name is the best guess
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        found = os.path.join(folder or ".", name)
        try:
            if os.access(found, os.X_OK) and os.path.samefile(found, beside):
                return name
        except OSError:
            continue
        if os.access(found, os.X_OK):
            break  # another alma-agentd comes first on PATH: name this one exactly
    return beside


def _sha256_hex(data: bytes) -> str:
    try:  # CPython's builtin SHA-256: hashlib would load OpenSSL at every alma-ctl start
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython's builtin module has no type stub
    except ImportError:  # renamed in Python 3.12; hashlib always works
        from hashlib import sha256
    return str(sha256(data).hexdigest())


# --------------------------------------------------------------------------- encoding


def _reject_constant(name: str) -> object:
    # NaN and Infinity are not JSON; Python accepts them by default.
    raise ValueError(f"{name} is not allowed")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("number out of range")
    return value


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    # Duplicate keys would let two readers of one message disagree about what it says.
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def loads_strict(data: bytes) -> object:
    """Parse one JSON document strictly; any defect raises :class:`ValueError`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError("not valid UTF-8") from exc
    try:
        value = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            object_pairs_hook=_unique_keys,
        )
    except RecursionError as exc:  # deep nesting: refuse it rather than crash the thread
        raise ValueError("nested too deeply") from exc
    if "\\u" in text:  # only an escape can make a lone surrogate: valid UTF-8 holds none
        _check_unicode(value)
    return value


def _check_unicode(value: object) -> None:
    """Refuse lone surrogates (``"\\ud800"``): valid JSON, but no text, and every later use
    (an answer that echoes it, a database, a file name) would fail on them."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(
                    "a lone surrogate escape such as \\ud800 is not text; send text as UTF-8"
                ) from None
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _jsonable(value: object) -> object:
    # Handlers may return dates, paths and enums; everything else must already be JSON.
    from datetime import date, datetime

    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, os.PathLike):  # pathlib's paths, without importing pathlib
        return os.fspath(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def dumps_line(message: dict[str, object]) -> bytes:
    """One JSON line, UTF-8 (Spanish text travels as is), no NaN."""
    text = json.dumps(
        message, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_jsonable
    )
    return text.encode("utf-8") + b"\n"


def encode_request(
    request_id: int, cmd: str, args: dict[str, object], lang: str | None = None
) -> bytes:
    message: dict[str, object] = {"v": PROTOCOL_VERSION, "id": request_id, "cmd": cmd}
    message["args"] = args
    if lang is not None:
        message["lang"] = lang
    return dumps_line(message)


def encode_result(request_id: int, result: object) -> bytes:
    """Raises TypeError/ValueError when ``result`` is not JSON: the server turns that into INTERNAL."""
    return dumps_line({"v": PROTOCOL_VERSION, "id": request_id, "ok": True, "result": result})


def encode_event(request_id: int, event: dict[str, object]) -> bytes:
    """One event line of a streamed answer (``{"type": "token", "text": "..."}``)."""
    return dumps_line({"v": PROTOCOL_VERSION, "id": request_id, "stream": event})


def encode_error(request_id: int | None, code: int, message: str) -> bytes:
    error = {"code": int(code), "message": message}
    return dumps_line({"v": PROTOCOL_VERSION, "id": request_id, "ok": False, "error": error})


# --------------------------------------------------------------------------- decoding


def _valid_id(value: object) -> bool:
    # bool is an int in Python but never an id.
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_ID


def parse_request(line: bytes) -> Request:
    """Turn one request line (newline stripped) into a :class:`Request`, or raise :class:`WireError`.

    The version is checked before anything else about the command, as Supervisor does: a client
    from another installation must be told so, not get a confusing argument error.
    """
    try:
        message = loads_strict(line)
    except ValueError as exc:
        raise WireError(
            BadRequestError(
                _(
                    "The request is not a valid JSON line ({detail}); send one JSON object.",
                    detail=exc,
                )
            ),
            None,
        ) from None
    if not isinstance(message, dict):
        raise WireError(BadRequestError(_("The request must be a JSON object.")), None)
    raw_id = message.get("id")
    request_id = raw_id if _valid_id(raw_id) else None
    lang = _wire_language(message.get("lang"), request_id)
    with language(lang):  # the errors below are for the client's person
        return _parse_envelope(message, request_id, lang)


def _wire_language(value: object, request_id: int | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and len(value) <= _MAX_LANG and normalize(value) is not None:
        return supported(value)
    raise WireError(
        BadRequestError(_('"lang" must be a language tag such as "es" or "en", or left out.')),
        request_id,
    )


def _parse_envelope(
    message: dict[str, object], request_id: int | None, lang: str | None
) -> Request:
    version = message.get("v")
    if isinstance(version, bool) or not isinstance(version, int):
        raise WireError(
            BadRequestError(_('The request needs "v", the protocol version, as an integer.')),
            request_id,
        )
    if version != PROTOCOL_VERSION:
        raise WireError(VersionMismatchError(version_mismatch_sentence(version)), request_id)
    if request_id is None:
        raise WireError(
            BadRequestError(_('The request needs "id", a non-negative integer.')), request_id
        )
    unknown = sorted(str(key) for key in message if key not in _ENVELOPE_KEYS)
    if unknown:
        names = ", ".join(repr(_clip(key)) for key in unknown[:5])
        raise WireError(
            BadRequestError(
                ngettext(
                    "Unknown request field: {names}.",
                    "Unknown request fields: {names}.",
                    len(unknown),
                    names=names,
                )
            ),
            request_id,
        )
    cmd = message.get("cmd")
    if not isinstance(cmd, str) or not cmd:
        raise WireError(BadRequestError(_('The request needs "cmd", a command name.')), request_id)
    args = message.get("args", {})
    if not isinstance(args, dict):
        raise WireError(BadRequestError(_('"args" must be a JSON object.')), request_id)
    return Request(id=request_id, cmd=cmd, args=args, lang=lang)


def parse_response(line: bytes, expected_id: int) -> object:
    """The result of a response line, or the :mod:`policies.errors` exception its code names."""
    try:
        message = loads_strict(line)
    except ValueError as exc:
        raise BadRequestError(
            _("The daemon sent an unreadable answer ({detail}).", detail=exc)
        ) from None
    if not isinstance(message, dict):
        raise BadRequestError(_("The daemon sent an answer that is not a JSON object."))
    error = message.get("error")
    version = message.get("v")
    if version != PROTOCOL_VERSION:
        # Prefer the daemon's own explanation when it gave one.
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            raise VersionMismatchError(error["message"])
        raise VersionMismatchError(version_mismatch_sentence(version, ours_is_client=True))
    if message.get("ok") is True:
        if message.get("id") != expected_id:
            raise BadRequestError(_("The daemon answered a different request; try again."))
        return message.get("result")
    if not isinstance(error, dict):
        raise BadRequestError(_("The daemon sent an error without a code."))
    code = error.get("code")
    text = error.get("message")
    if isinstance(code, bool) or not isinstance(code, int) or not isinstance(text, str):
        raise BadRequestError(_("The daemon sent an error without a code or a message."))
    raise error_from_wire({"code": code, "message": text})


def stream_event(line: bytes, expected_id: int) -> dict[str, object] | None:
    """The event of an event line of request ``expected_id``, or None when ``line`` is not one
    (then it is the final answer: :func:`parse_response` reads it)."""
    try:
        message = loads_strict(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("v") != PROTOCOL_VERSION:
        return None
    event = message.get("stream")
    if not isinstance(event, dict) or "ok" in message:
        return None
    if message.get("id") != expected_id:
        raise BadRequestError(_("The daemon streamed an answer to a different request; try again."))
    return event


def version_mismatch_sentence(other: object, *, ours_is_client: bool = False) -> str:
    values = {"other": _clip(repr(other)), "ours": PROTOCOL_VERSION}
    if ours_is_client:
        return _(
            "The daemon speaks control protocol version {other} but alma-ctl speaks {ours}; "
            "restart alma-agentd and update alma-ctl so both come from the same installation.",
            **values,
        )
    return _(
        "alma-ctl speaks control protocol version {other} but the daemon speaks {ours}; "
        "restart alma-agentd and update alma-ctl so both come from the same installation.",
        **values,
    )


def _clip(text: str, limit: int = 40) -> str:
    # Names echoed back from a request are shortened so an error never carries a megabyte.
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "MAX_REQUEST_BYTES",
    "MAX_RESPONSE_BYTES",
    "PROTOCOL_VERSION",
    "Request",
    "WireError",
    "encode_error",
    "encode_event",
    "encode_request",
    "encode_result",
    "parse_request",
    "parse_response",
    "socket_path_for",
    "stream_event",
]
