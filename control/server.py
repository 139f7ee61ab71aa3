"""The daemon's end of the control socket: who may connect, how messages are framed and checked.

Security model (docs/protocol.md): the socket lives in a directory of mode 0700 owned by the
daemon's uid, the socket itself is 0600, and every connection's peer uid is read with
SO_PEERCRED and refused unless it is that uid. A request is parsed into plain data and checked
against the explicit command table before ``dispatch`` ever sees it; nothing in a message is
executed, evaluated or unpickled. A connection thread never lets an exception escape: any input
gets an answer or a closed connection, never a dead server.

One module, longer than most, because its defences (the peer check, framing, per-peer caps,
answering slots, streamed answers) all act on one connection's state; the command table
(control.commands) and the wire format (control.protocol) live apart.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import socket
import stat
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

from control import commands, protocol
from control.stream import StreamReply
from policies import limits as L
from policies.errors import (
    AlmaError,
    ErrorCode,
    TooLargeError,
    UnavailableError,
    as_alma_error,
    explained,
)
from policies.i18n import N_, _, language
from policies.modes import PRIVATE_DIR, PRIVATE_FILE

Dispatch = Callable[[str, dict[str, object]], object]

_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
_CHUNK = 64 * 1024
#: How long a goodbye to a peer that may not be reading is tried before the connection is cut.
_GOODBYE_SECONDS = 1.0
#: The least time between two log lines about refused connections.
_REFUSAL_LOG_SECONDS = 5.0
_INTERNAL_SENTENCE = N_("The daemon hit an internal error; its log has the details.")
_umask_lock = threading.Lock()


class _Streaming:
    """A request whose handler returned a :class:`StreamReply`."""

    __slots__ = ("reply", "request_id")

    def __init__(self, request_id: int, reply: StreamReply) -> None:
        self.request_id = request_id
        self.reply = reply


class _TooMuchInput(Exception):
    """A peer sent more than the server keeps for it while an answer streams."""


def _peer_credentials(conn: socket.socket) -> tuple[int, int]:
    """The peer's (pid, uid) by SO_PEERCRED; (-1, -1) when the kernel will not say."""
    try:
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    except OSError:
        return -1, -1
    pid, uid, _gid = _PEERCRED.unpack(raw)
    return pid, uid


def _request_id(line: bytes) -> int | None:
    try:
        return protocol.parse_request(line.rstrip(b"\r")).id
    except protocol.WireError as exc:
        return exc.request_id


def _cancel_request_id(line: bytes) -> int | None:
    """The id of ``line`` when it is a well-formed ``chat.cancel`` request, else None."""
    # Most lines are parsed later anyway, and a flood's never need be (an escaped name may
    # spell the command, so a line with an escape is parsed now too).
    if b"chat.cancel" not in line and b"\\u" not in line:
        return None
    try:
        request = protocol.parse_request(line.rstrip(b"\r"))
        commands.validate(request.cmd, request.args)
    except (protocol.WireError, AlmaError):
        return None
    return request.id if request.cmd == "chat.cancel" else None


def prepare_socket_dir(directory: Path, uid: int) -> None:
    """Create ``directory`` 0700 if missing; refuse it if it is not exactly ours and private.

    Someone else's directory, or one with a loose mode, is never chmod-ed silently: that would
    hide whoever set it up that way. Only a directory we have just created is fixed up, because
    the umask may have taken bits away from 0700.
    """
    created = False
    try:
        os.mkdir(directory, PRIVATE_DIR)
        created = True
    except FileExistsError:
        pass
    except OSError as exc:
        raise UnavailableError(
            _(
                "Cannot create the socket directory {path} ({reason}); "
                "set XDG_RUNTIME_DIR to a directory you own.",
                path=directory,
                reason=exc.strerror,
            )
        ) from None
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        # Say why: another user's 0700 folder cannot even be opened (EACCES), and calling it
        # "a symlink" sent people looking for the wrong thing.
        try:
            seen = os.lstat(directory)
        except OSError:
            seen = None
        if seen is not None and stat.S_ISDIR(seen.st_mode) and seen.st_uid != uid:
            raise _not_ours(directory, seen.st_uid, uid) from None
        if seen is not None and not (stat.S_ISLNK(seen.st_mode) or not stat.S_ISDIR(seen.st_mode)):
            raise UnavailableError(
                _(
                    "Cannot open the socket directory {path} ({reason}); "
                    "set XDG_RUNTIME_DIR to a directory you own.",
                    path=directory,
                    reason=exc.strerror,
                )
            ) from None
        raise UnavailableError(
            _(
                "The socket directory {path} is a symlink or not a directory; "
                "remove it and start the daemon again.",
                path=directory,
            )
        ) from None
    try:
        info = os.fstat(fd)
        if info.st_uid != uid:
            raise _not_ours(directory, info.st_uid, uid)
        if created and stat.S_IMODE(info.st_mode) != PRIVATE_DIR:
            os.fchmod(fd, PRIVATE_DIR)
            info = os.fstat(fd)
        mode = stat.S_IMODE(info.st_mode)
        if mode != PRIVATE_DIR:
            raise UnavailableError(
                _(
                    "The socket directory {path} has mode {mode}, not 0700; "
                    "run `chmod 700 {path}` and start the daemon again.",
                    path=directory,
                    mode=f"{mode:04o}",
                )
            )
    finally:
        os.close(fd)


def _not_ours(directory: Path, owner: int, uid: int) -> UnavailableError:
    return UnavailableError(
        _(
            "The socket directory {path} belongs to uid {owner}, not {uid}; "
            "remove it (or set XDG_RUNTIME_DIR) and start the daemon again.",
            path=directory,
            owner=owner,
            uid=uid,
        )
    )


def _somebody_listens(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(os.fspath(path))
    except (ConnectionRefusedError, FileNotFoundError):
        return False
    except OSError:
        return True  # cannot tell (e.g. a full backlog): assume alive, never steal it
    finally:
        probe.close()
    return True


def _clear_stale_socket(path: Path) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise UnavailableError(
            _("{path} exists and is not a socket; remove it and start the daemon again.", path=path)
        )
    if _somebody_listens(path):
        raise UnavailableError(
            _(
                "Another alma-agentd already listens on {path}; stop it before starting a new one.",
                path=path,
            )
        )
    path.unlink()


def _bind_private(path: Path, uid: int) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        # The umask is per process, so hold a lock while it is narrowed; the directory is already
        # 0700, so this only closes the instant between bind() and the chmod below.
        with _umask_lock:
            old = os.umask(0o177)
            try:
                listener.bind(os.fspath(path))
            finally:
                os.umask(old)
        os.chmod(path, PRIVATE_FILE)
        info = os.lstat(path)
        if (
            not stat.S_ISSOCK(info.st_mode)
            or info.st_uid != uid
            or stat.S_IMODE(info.st_mode) != PRIVATE_FILE
        ):
            raise UnavailableError(
                _("The socket {path} is not a private socket after creating it.", path=path)
            )
        listener.listen(64)
    except BaseException:
        listener.close()
        raise
    return listener


def listen_private(path: Path) -> socket.socket:
    """A private listening socket at ``path`` (a stale one there removed), as the daemon's
    own: the web panel's login socket is made the same way (panel.login)."""
    _clear_stale_socket(path)
    return _bind_private(path, os.getuid())


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of ``conn`` (-1 when the kernel will not say)."""
    return _peer_credentials(conn)[1]


def _finish(conn: socket.socket, answer: bytes, linger: float = 0.5) -> None:
    """Send a last answer, then discard what the peer is still sending before closing.

    Closing a Unix socket with unread input resets the connection, and the peer's recv() then
    fails before it reads our answer; draining (bounded in time and bytes) lets it arrive.
    """
    try:
        conn.sendall(answer)
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(linger)  # 0.0 means non-blocking: drain only what already arrived
        budget = 4 * protocol.MAX_REQUEST_BYTES
        while budget > 0:
            chunk = conn.recv(_CHUNK)
            if not chunk:
                break
            budget -= len(chunk)
    except OSError:  # timeouts and would-block included: we tried, the peer is gone or slow
        pass


class ControlServer:
    """Serves the command table on a Unix socket, one thread per connection.

    ``dispatch(cmd, args)`` is called only with a command name from :data:`commands.COMMANDS`
    and arguments that passed :func:`commands.validate` (defaults filled in). It may be called
    from several connection threads at once, so it must be thread-safe. It returns a JSON-able
    result or raises :class:`AlmaError`; anything else it raises is answered INTERNAL and logged.
    """

    def __init__(
        self,
        socket_path: Path,
        dispatch: Dispatch,
        *,
        expected_uid: int | None = None,
        logger: logging.Logger | None = None,
        max_connections: int = L.CONNECTIONS_MAX,
        max_per_peer: int = L.CONNECTIONS_PER_PROCESS,
        max_busy: int = L.ANSWERING_MAX,
        idle_timeout: float = L.IDLE_SECONDS,
        first_request_timeout: float = L.FIRST_REQUEST_SECONDS,
        request_timeout: float = L.REQUEST_SECONDS,
        max_request_bytes: int = protocol.MAX_REQUEST_BYTES,
        max_response_bytes: int = protocol.MAX_RESPONSE_BYTES,
    ) -> None:
        self.socket_path = Path(socket_path)
        self._dispatch = dispatch
        self.expected_uid = os.getuid() if expected_uid is None else expected_uid
        self._log = logger or logging.getLogger("alma.control")
        # A connection costs a thread and at most two requests' bytes; answering costs far
        # more, so the two are bounded apart: a client that is only sending takes no slot.
        self._max_connections = max_connections
        self._max_per_peer = min(max_per_peer, max_connections)
        self._busy = threading.BoundedSemaphore(max_busy)
        self._per_peer: dict[int, int] = {}  # peer pid -> its open connections
        self._idle_timeout = idle_timeout
        self._first_request_timeout = min(first_request_timeout, idle_timeout)
        self._request_timeout = request_timeout
        self._max_request = max_request_bytes
        # Kept of a connection's input while an answer streams: a request of the largest size,
        # and as much again of smaller ones (a cancel among them).
        self._max_pending = 2 * max_request_bytes
        self._max_response = max_response_bytes
        self._listener: socket.socket | None = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._closing = threading.Event()
        self._accept_thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._conns: dict[socket.socket, threading.Thread] = {}
        self._peer_of: dict[socket.socket, int] = {}
        # Connections waiting for a request, and since when: the longest idle one makes room
        # for a newcomer when every connection is taken.
        self._idle_since: dict[socket.socket, float] = {}
        self._refused = 0  # connections refused since the last log line saying so (accept thread)
        self._refusal_logged = -_REFUSAL_LOG_SECONDS
        self._bound_inode: tuple[int, int] | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Check the directory, bind the socket and start accepting in a background thread."""
        if self._listener is not None:
            raise RuntimeError("ControlServer.start() called twice")
        encoded = os.fsencode(self.socket_path)
        if len(encoded) > protocol.MAX_SOCKET_PATH_BYTES:
            raise UnavailableError(
                _(
                    "The socket path {path} is longer than {limit} bytes; "
                    "set XDG_RUNTIME_DIR to a shorter path.",
                    path=self.socket_path,
                    limit=protocol.MAX_SOCKET_PATH_BYTES,
                )
            )
        try:
            prepare_socket_dir(self.socket_path.parent, self.expected_uid)
            _clear_stale_socket(self.socket_path)
            self._listener = _bind_private(self.socket_path, self.expected_uid)
        except BaseException:
            self._closing.set()  # nothing to close later but the wake-up pair
            self._wake_r.close()
            self._wake_w.close()
            raise
        info = os.lstat(self.socket_path)
        self._bound_inode = (info.st_dev, info.st_ino)
        self._accept_thread = threading.Thread(
            target=self._accept_loop, name="alma-control-accept", daemon=True
        )
        self._accept_thread.start()
        self._log.info("control socket listening on %s", self.socket_path)

    def serve_forever(self) -> None:
        """Block until :meth:`close` is called from another thread (or a signal handler)."""
        self._closing.wait()

    def close(self, timeout: float = 5.0) -> None:
        """Stop accepting, unlink our socket file, end the connections, join the threads."""
        if self._closing.is_set():
            return
        self._closing.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        if self._accept_thread is not None:
            self._accept_thread.join(timeout)
        if self._listener is not None:
            self._listener.close()
        self._unlink_own_socket()
        with self._lock:
            conns = dict(self._conns)
        for conn in conns:
            # SHUT_RD wakes a thread blocked in recv(); a dispatch in flight finishes and can
            # still send its answer (an accepted action must not look lost to the person).
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RD)
        for thread in conns.values():
            thread.join(timeout)
        self._wake_r.close()
        self._wake_w.close()

    def __enter__(self) -> ControlServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _unlink_own_socket(self) -> None:
        # Only the file we bound: a newer daemon may already have replaced it.
        try:
            info = os.lstat(self.socket_path)
        except FileNotFoundError:
            return
        if (info.st_dev, info.st_ino) == self._bound_inode:
            with contextlib.suppress(OSError):
                self.socket_path.unlink()

    # ------------------------------------------------------------------ accepting

    def _accept_loop(self) -> None:
        assert self._listener is not None
        listener = self._listener
        listener.setblocking(False)
        with selectors.DefaultSelector() as selector:
            selector.register(listener, selectors.EVENT_READ)
            selector.register(self._wake_r, selectors.EVENT_READ)
            while not self._closing.is_set():
                for key, _events in selector.select():
                    if key.fileobj is listener and not self._closing.is_set():
                        self._accept_one(listener)

    def _accept_one(self, listener: socket.socket) -> None:
        try:
            conn, _addr = listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:  # e.g. EMFILE: keep serving the connections we have
            self._log.warning("control socket accept failed: %s", exc)
            return
        conn.setblocking(True)
        conn.settimeout(self._idle_timeout)
        pid, uid = _peer_credentials(conn)
        thread = threading.Thread(
            target=self._serve_connection,
            args=(conn, pid, uid),
            name="alma-control-conn",
            daemon=True,
        )
        refusal = self._admit(conn, pid, thread)
        if refusal is not None:
            self._log_refusal(pid, refusal)
            # No thread to spare for a patient goodbye: only what already arrived is drained.
            _finish(conn, protocol.encode_error(None, ErrorCode.UNAVAILABLE, refusal), linger=0.0)
            conn.close()
            return
        thread.start()

    def _admit(self, conn: socket.socket, pid: int, thread: threading.Thread) -> str | None:
        """Count ``conn`` in, or the sentence saying why not.

        Connections are capped per peer process (SO_PEERCRED's pid), so one program opening
        connections in a loop runs out of its own share, and in total. At the total cap the
        connection idle longest (waiting for a request, nothing of one received) is closed to
        make room: an idle connection costs the daemon nothing to drop and its client nothing
        to open again, while a request that cannot get in is a person locked out. Only a
        daemon whose every connection is receiving or answering a request (each bounded in
        time) refuses a newcomer.
        """
        with self._lock:
            held = self._per_peer.get(pid, 0)
            if held >= self._max_per_peer:
                return _(
                    "This program already has {count} connections open to the daemon; "
                    "close one and try again.",
                    count=held,
                )
            if len(self._conns) >= self._max_connections:
                if not self._idle_since:
                    return _("The daemon is serving too many connections; try again in a moment.")
                victim = min(self._idle_since, key=self._idle_since.__getitem__)
                self._forget(victim)
                # Its thread wakes from recv() with end of input and closes it.
                with contextlib.suppress(OSError):
                    victim.shutdown(socket.SHUT_RDWR)
                held = self._per_peer.get(pid, 0)
            self._per_peer[pid] = held + 1
            self._peer_of[conn] = pid
            self._conns[conn] = thread
            self._idle_since[conn] = time.monotonic()
        return None

    def _log_refusal(self, pid: int, refusal: str) -> None:
        # A program retrying in a loop is refused thousands of times a second: counted, and
        # said at most every few seconds, so the log stays readable (and small).
        self._refused += 1
        now = time.monotonic()
        if now - self._refusal_logged < _REFUSAL_LOG_SECONDS:
            return
        self._log.warning(
            "control socket: refused %s connection(s) since the last report; the last from "
            "pid %s: %s",
            self._refused,
            pid,
            refusal,
        )
        self._refused, self._refusal_logged = 0, now

    def _release(self, conn: socket.socket) -> None:
        with self._lock:
            self._forget(conn)

    def _forget(self, conn: socket.socket) -> None:
        """Stop counting ``conn`` (the lock held); a no-op for one already forgotten."""
        self._conns.pop(conn, None)
        self._idle_since.pop(conn, None)
        pid = self._peer_of.pop(conn, None)
        if pid is not None:
            left = self._per_peer[pid] - 1
            if left:
                self._per_peer[pid] = left
            else:
                del self._per_peer[pid]

    def _waiting(self, conn: socket.socket, idle: bool) -> bool:
        """Mark ``conn`` idle (waiting for a request) or not; False if it was closed to make
        room for another."""
        with self._lock:
            if conn not in self._conns:
                return False
            if idle:
                self._idle_since.setdefault(conn, time.monotonic())
            else:
                self._idle_since.pop(conn, None)
            return True

    # ------------------------------------------------------------------ one connection

    def _serve_connection(self, conn: socket.socket, pid: int, uid: int) -> None:
        try:
            if self._peer_allowed(conn, pid, uid):
                self._read_requests(conn)
        except Exception:  # last resort: a connection may die, the server may not
            self._log.exception("control connection failed")
        finally:
            self._release(conn)
            conn.close()

    def _peer_allowed(self, conn: socket.socket, pid: int, uid: int) -> bool:
        if uid == self.expected_uid:
            return True
        self._log.warning("control socket: refused a connection from uid %s (pid %s)", uid, pid)
        sentence = _("Only the user who runs alma-agentd may use its control socket.")
        _finish(conn, protocol.encode_error(None, ErrorCode.REFUSED, sentence))
        return False

    def _read_requests(self, conn: socket.socket) -> None:
        """Answer each request line in turn. The first request's first byte must come within
        ``first_request_timeout`` (a client connects to ask something); between requests the
        connection may stay quiet for ``idle_timeout``; once a request's first byte has come,
        the whole line must arrive within ``request_timeout``. The deadline is per request, not
        per ``recv``: a peer trickling a byte at a time would otherwise hold its slot (and, 16
        of them, the socket) for as long as it likes."""
        quiet = self._first_request_timeout
        buffer = bytearray()
        scanned = 0  # bytes already searched for a newline, so a long line is scanned once
        deadline = 0.0  # when the request being received must be whole (if buffer is not empty)
        cancels: set[int] = set()  # ids of chat.cancel requests that cancelled a stream
        while not self._closing.is_set():
            newline = buffer.find(b"\n", scanned)
            if newline < 0:
                if len(buffer) > self._max_request:
                    self._answer_too_large(conn)
                    return
                scanned = len(buffer)
                left = deadline - time.monotonic() if buffer else quiet
                if left <= 0:
                    self._answer_too_slow(conn)
                    return
                if not buffer and not self._waiting(conn, idle=True):
                    return
                try:
                    conn.settimeout(left)
                    chunk = conn.recv(_CHUNK)
                except TimeoutError:
                    if buffer:
                        self._answer_too_slow(conn)
                    return  # idle too long between requests: close quietly
                except OSError:
                    return  # the peer went away
                if not chunk or not self._waiting(conn, idle=False):
                    return  # EOF (or closed to make room); a partial line is dropped unanswered
                if not buffer:
                    deadline = time.monotonic() + self._request_timeout
                buffer += chunk
                continue
            line = bytes(buffer[:newline])
            del buffer[: newline + 1]
            scanned = 0
            if len(line) > self._max_request:
                self._answer_too_large(conn)
                return
            if not self._answer_in_a_slot(conn, line, buffer, cancels):
                return
            quiet = self._idle_timeout
            deadline = time.monotonic() + self._request_timeout  # for what is already buffered

    def _answer_in_a_slot(
        self, conn: socket.socket, line: bytes, buffer: bytearray, cancels: set[int]
    ) -> bool:
        """Answer one whole request line; False if the connection is to end.

        Only the dispatch holds one of the busy slots: sending, or forwarding a stream someone
        else produces, waits on the peer, and a peer that does not read must not keep others
        waiting. A request that waits for a slot longer than a request may take to arrive is
        answered busy instead."""
        if not self._busy.acquire(timeout=self._request_timeout):
            sentence = _("The daemon is answering too many requests; try again in a moment.")
            busy = protocol.encode_error(_request_id(line), ErrorCode.UNAVAILABLE, sentence)
            return self._send_quietly(conn, busy)
        try:
            answer = self._answer(line, cancels)
        finally:
            self._busy.release()
        if isinstance(answer, _Streaming):
            cancels.clear()
            return self._stream(conn, answer, buffer, cancels)
        return self._send_quietly(conn, answer)

    def _answer_too_slow(self, conn: socket.socket) -> None:
        sentence = _(
            "The request did not arrive whole within {seconds} seconds; "
            "send each request as one line at once.",
            seconds=f"{self._request_timeout:g}",
        )
        _finish(conn, protocol.encode_error(None, ErrorCode.BAD_REQUEST, sentence), linger=0.0)

    def _stream(
        self, conn: socket.socket, streaming: _Streaming, buffer: bytearray, cancels: set[int]
    ) -> bool:
        """Forward a streamed answer's events, then its final answer; False if the peer is gone.

        Meanwhile the connection is still read: a ``chat.cancel`` line cancels the generation
        at once; every request read meanwhile (the cancel too) waits in ``buffer`` and is
        answered afterwards, since answers keep the order of requests. End of input, or a peer
        that stops reading, cancels too.
        """
        reply, request_id = streaming.reply, streaming.request_id
        peer_gone = False
        # A generation may take minutes and the person may read slowly: the idle bound applies
        # to each send, not the per-request deadline of reading a request.
        conn.settimeout(self._idle_timeout)
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(reply, selectors.EVENT_READ)
                selector.register(conn, selectors.EVENT_READ)
                while True:
                    for key, _mask in selector.select():
                        if key.fileobj is conn:
                            try:
                                more = self._read_while_streaming(conn, buffer, reply, cancels)
                            except _TooMuchInput:
                                reply.cancel()
                                self._answer_too_much_input(conn)
                                return False
                            if not more:
                                # End of input: the person hung up (or only half-closed, so
                                # the final answer is still sent if it can be).
                                reply.cancel()
                                selector.unregister(conn)
                            continue
                        for kind, payload in reply.take():
                            if kind == "event":
                                line = protocol.encode_event(
                                    request_id, cast(dict[str, object], payload)
                                )
                            elif kind == "result":
                                line = self._encode_result(request_id, "chat.send", payload)
                            else:
                                error = payload
                                assert isinstance(error, AlmaError)
                                line = protocol.encode_error(request_id, error.code, error.message)
                            if not peer_gone and not self._send_quietly(conn, line):
                                peer_gone = True
                                reply.cancel()
                                with contextlib.suppress(KeyError, ValueError):
                                    selector.unregister(conn)
                            if kind != "event":
                                return not peer_gone
                    if self._closing.is_set():
                        reply.cancel()
        finally:
            reply.close()

    def _read_while_streaming(
        self, conn: socket.socket, buffer: bytearray, reply: StreamReply, cancels: set[int]
    ) -> bool:
        """Read what arrived; a ``chat.cancel`` line cancels now. False at end of input.

        Every line stays in ``buffer``, to be answered in order after the final answer; the ids
        of the cancels seen go in ``cancels`` so they are answered ``{"cancelled": true}``.
        """
        try:
            chunk = conn.recv(_CHUNK)
        except OSError:
            return False
        if not chunk:
            return False
        start = len(buffer)
        buffer += chunk
        line_start = buffer.rfind(b"\n", 0, start) + 1
        while (newline := buffer.find(b"\n", line_start)) >= 0:
            cancel_id = _cancel_request_id(bytes(buffer[line_start:newline]))
            if cancel_id is not None:
                cancels.add(cancel_id)
                reply.cancel()
            line_start = newline + 1
        # Every line waits here until the stream ends, so all of it counts, not the last line
        # only: a client writing without pause would otherwise fill the daemon's memory.
        if len(buffer) > self._max_pending:
            raise _TooMuchInput
        # A line longer than the limit cannot be framed: stop reading, like end of input.
        return len(buffer) - line_start <= self._max_request

    def _answer_too_much_input(self, conn: socket.socket) -> None:
        sentence = _(
            "More than {limit} bytes of requests arrived while an answer was streaming; "
            "the connection is closed. Send other requests on another connection.",
            limit=self._max_pending,
        )
        conn.settimeout(_GOODBYE_SECONDS)  # a flooding peer may not be reading either
        _finish(conn, protocol.encode_error(None, TooLargeError.code, sentence), linger=0.0)

    def _answer_too_large(self, conn: socket.socket) -> None:
        # Framing is lost once a line is cut, so the connection ends after this answer.
        sentence = _(
            "The request is larger than {limit} bytes; send a smaller one.", limit=self._max_request
        )
        _finish(conn, protocol.encode_error(None, TooLargeError.code, sentence))

    def _answer(self, line: bytes, cancels: set[int]) -> bytes | _Streaming:
        try:
            request = protocol.parse_request(line.rstrip(b"\r"))
        except protocol.WireError as exc:
            return protocol.encode_error(exc.request_id, exc.error.code, exc.error.message)
        # Every sentence made while answering is in the language of the client's person.
        with language(request.lang):
            return self._answer_request(request, cancels)

    def _answer_request(self, request: protocol.Request, cancels: set[int]) -> bytes | _Streaming:
        try:
            args = commands.validate(request.cmd, request.args)
            if request.cmd == "chat.cancel":
                # The connection's own business: answered after the stream it cancelled, in
                # order, true only if it cancelled one. Nothing for the dispatcher to do.
                cancelled = request.id in cancels
                cancels.discard(request.id)
                return protocol.encode_result(request.id, {"cancelled": cancelled})
            result = self._dispatch(request.cmd, args)
        except AlmaError as exc:
            return protocol.encode_error(request.id, exc.code, exc.message)
        except Exception as exc:
            self._log.exception("command %s failed", request.cmd)
            if explained(exc):  # a full disk is said as a full disk
                error = as_alma_error(exc)
                return protocol.encode_error(request.id, error.code, error.message)
            return protocol.encode_error(request.id, ErrorCode.INTERNAL, _(_INTERNAL_SENTENCE))
        if isinstance(result, StreamReply):
            return _Streaming(request.id, result)
        return self._encode_result(request.id, request.cmd, result)

    def _encode_result(self, request_id: int, cmd: str, result: object) -> bytes:
        try:
            encoded = protocol.encode_result(request_id, result)
        except (TypeError, ValueError, RecursionError):
            self._log.exception("command %s returned a result that is not JSON", cmd)
            return protocol.encode_error(request_id, ErrorCode.INTERNAL, _(_INTERNAL_SENTENCE))
        if len(encoded) > self._max_response:
            return protocol.encode_error(
                request_id,
                ErrorCode.TOO_LARGE,
                _(
                    "The answer is too large to send; ask for fewer items "
                    "(for example with --limit)."
                ),
            )
        return encoded

    def _send_quietly(self, conn: socket.socket, data: bytes) -> bool:
        try:
            conn.settimeout(self._idle_timeout)  # a peer that reads nothing for so long is gone
            conn.sendall(data)
        except OSError:  # includes timeouts: a peer that stops reading is dropped
            return False
        return True
