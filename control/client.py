"""The client end of the control socket. Standard library only: alma-ctl must start fast.

It speaks through :mod:`_socket`, the C module under :mod:`socket`: the Python wrapper imports
``selectors``, ``array`` and builds enums (docs/benchmarks.md, alma-ctl's start) for features
a blocking connect-send-receive does not use.
"""

from __future__ import annotations

import itertools
import os
from _socket import AF_UNIX, SOCK_STREAM
from _socket import socket as _raw_socket
from typing import TYPE_CHECKING

from control import commands, protocol
from policies.errors import TooLargeError, UnavailableError
from policies.i18n import _, current_language

if TYPE_CHECKING:
    from _socket import socket as RawSocket
    from collections.abc import Iterator

_CHUNK = 256 * 1024
_CONNECT_TIMEOUT = 5.0
_ids = itertools.count(1)


class DaemonUnreachable(UnavailableError):
    """Nobody answers on the socket: the daemon is not running for this root (exit code 3).

    Client side only; it never travels on the wire.
    """


class Client:
    """``Client(path, timeout).call("suggestions.show", id=3)`` returns the result or raises.

    Errors the daemon reports raise the :mod:`policies.errors` class of their code; arguments
    are checked against the command table before anything is sent.
    """

    def __init__(
        self,
        socket_path: str | os.PathLike[str],
        timeout: float = 30.0,
        *,
        start_hint: str = "alma-agentd --root ROOT",
    ) -> None:
        self.socket_path = os.fspath(socket_path)
        self.timeout = timeout
        self.start_hint = start_hint  # the command that starts the daemon, for error sentences

    def call(self, cmd: str, **args: object) -> object:
        commands.validate(cmd, args)  # the same table the server checks: fail fast, locally
        request_id = next(_ids)
        # The daemon writes its sentences in the language of the person at this end.
        line = protocol.encode_request(request_id, cmd, args, current_language())
        conn = self._connect()
        try:
            try:
                conn.sendall(line)
            except OSError as exc:
                # A busy daemon answers "too many connections" and closes at once, maybe before
                # our request arrives: its answer may already be here to read.
                answer = self._read_answer_after(conn, exc)
            else:
                answer = self._read_line(conn)
        except TimeoutError:
            raise UnavailableError(
                _(
                    "The daemon did not answer {command} within {seconds} seconds; "
                    "check its log, or try again.",
                    command=cmd,
                    seconds=f"{self.timeout:g}",
                )
            ) from None
        except OSError as exc:
            raise _broke(exc) from None
        finally:
            conn.close()
        return protocol.parse_response(answer, request_id)

    def _read_answer_after(self, conn: RawSocket, failed: OSError) -> bytes:
        try:
            return self._read_line(conn)
        except (OSError, DaemonUnreachable):
            raise failed from None

    def stream(self, cmd: str, **args: object) -> Stream:
        """Send a streamed command (``chat.send``); iterate the returned :class:`Stream` for its
        events, then read its ``result``. The connection is its own: :meth:`Stream.cancel`
        stops the generation, and closing it does too."""
        commands.validate(cmd, args)
        request_id = next(_ids)
        conn = self._connect()
        try:
            conn.sendall(protocol.encode_request(request_id, cmd, args, current_language()))
        except OSError as exc:
            try:  # the daemon's refusal (too many connections) may be waiting: it says why
                answer = self._read_answer_after(conn, exc)
            except OSError as failed:
                raise _broke(failed) from None
            finally:
                conn.close()
            protocol.parse_response(answer, request_id)
            raise _broke(exc) from None  # an answer that is not an error: still no stream
        return Stream(conn, request_id, cmd, self.timeout)

    def _connect(self) -> RawSocket:
        conn = _raw_socket(AF_UNIX, SOCK_STREAM)
        conn.settimeout(_CONNECT_TIMEOUT)
        try:
            conn.connect(self.socket_path)
        except (TimeoutError, BlockingIOError):
            conn.close()  # somebody listens but does not take connections: alive, not free
            raise UnavailableError(
                _(
                    "alma-agentd on {socket} is too busy to take the connection; "
                    "try again in a moment.",
                    socket=self.socket_path,
                )
            ) from None
        except OSError as exc:
            conn.close()
            raise DaemonUnreachable(
                _(
                    "alma-agentd is not reachable on {socket} ({reason}); start it with "
                    "`{command}` (or `systemctl --user start alma`).",
                    socket=self.socket_path,
                    reason=exc.strerror or exc,
                    command=self.start_hint,
                )
            ) from None
        conn.settimeout(self.timeout)
        return conn

    def _read_line(self, conn: RawSocket) -> bytes:
        return _read_line(conn, bytearray())


def _broke(exc: OSError) -> DaemonUnreachable:
    return DaemonUnreachable(
        _(
            "The connection to alma-agentd broke ({reason}); check that it is still running.",
            reason=exc.strerror or exc,
        )
    )


def _read_line(conn: RawSocket, buffer: bytearray) -> bytes:
    """The next line from ``conn``; what follows it stays in ``buffer``."""
    scanned = 0
    limit = protocol.MAX_RESPONSE_BYTES
    while True:
        newline = buffer.find(b"\n", scanned)
        if newline >= 0:
            line = bytes(buffer[:newline])
            del buffer[: newline + 1]
            return line
        if len(buffer) > limit:
            raise TooLargeError(_("The daemon's answer is larger than {limit} bytes.", limit=limit))
        scanned = len(buffer)
        chunk = conn.recv(_CHUNK)
        if not chunk:
            raise DaemonUnreachable(
                _(
                    "alma-agentd closed the connection without answering; "
                    "check that it is still running, and its log."
                )
            )
        buffer += chunk


class Stream:
    """A streamed command in flight. ``for event in stream`` yields each event object
    (``{"type": "token", "text": "..."}``); when the iteration ends, :attr:`result` holds the
    final result, or the final error was raised. Closed at the end (or by :meth:`close`)."""

    def __init__(self, conn: RawSocket, request_id: int, cmd: str, timeout: float) -> None:
        self._conn: RawSocket | None = conn
        self._buffer = bytearray()
        self.request_id = request_id
        self.cmd = cmd
        self.timeout = timeout
        self.result: object = None

    def __iter__(self) -> Iterator[dict[str, object]]:
        try:
            while self._conn is not None:
                try:
                    line = _read_line(self._conn, self._buffer)
                except TimeoutError:
                    raise UnavailableError(
                        _(
                            "The daemon did not answer {command} within {seconds} seconds; "
                            "check its log, or try again.",
                            command=self.cmd,
                            seconds=f"{self.timeout:g}",
                        )
                    ) from None
                except OSError as exc:
                    raise _broke(exc) from None
                event = protocol.stream_event(line, self.request_id)
                if event is not None:
                    yield event
                    continue
                self.result = protocol.parse_response(line, self.request_id)
                return
        finally:
            self.close()

    def cancel(self) -> None:
        """Ask the daemon to stop; keep iterating to read the final answer (``cancelled``)."""
        if self._conn is None:
            return
        try:
            self._conn.sendall(
                protocol.encode_request(next(_ids), "chat.cancel", {}, current_language())
            )
        except OSError:  # the daemon is gone; closing stops the generation as well
            self.close()

    def close(self) -> None:
        """Hang up; a generation still running stops at once."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
