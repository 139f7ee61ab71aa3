"""The panel's login socket: a one-time login URL for whoever may talk to the daemon.

It lives beside the daemon's socket (control.web.panel_socket_name), in the same private
folder, made private the same way (control.server.listen_private), and answers only a peer of
the same uid. Each connection gets one line, ``{"url": "http://127.0.0.1:PORT/login?token=…"}``,
and is closed: nothing is read from it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from control.server import listen_private, peer_uid

log = logging.getLogger("alma.panel")


class LoginSocket:
    def __init__(self, path: str, port: int, mint: Callable[[], str]) -> None:
        self.path = Path(path)
        self.port = port
        self.mint = mint
        self._listener: socket.socket | None = None
        self._thread = threading.Thread(target=self._serve, name="panel-login", daemon=True)

    def start(self) -> LoginSocket:
        self._listener = listen_private(self.path)
        self._thread.start()
        return self

    def _serve(self) -> None:
        listener = self._listener
        assert listener is not None
        while True:
            try:
                conn, _addr = listener.accept()
            except OSError:
                return  # closed
            with conn:
                if peer_uid(conn) != os.getuid():
                    log.warning("refused a login request from another user")
                    continue
                url = f"http://127.0.0.1:{self.port}/login?token={self.mint()}"
                try:
                    conn.sendall(json.dumps({"url": url}).encode("utf-8") + b"\n")
                except OSError:  # alma-ctl went away before reading its URL: the next one
                    continue

    def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
