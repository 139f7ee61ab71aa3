"""The panel's process: ``python -m panel --root ROOT --port PORT`` (the daemon runs it,
agent.web). uvicorn serves the app on 127.0.0.1 only, without an access log: a login URL
holds a token, and no token or session id is ever written to a log."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time

import uvicorn

from control.web import panel_socket_name
from panel.app import Panel
from panel.login import LoginSocket
from policies.i18n import LANGUAGES, set_language
from policies.layout import root_name

HOST = "127.0.0.1"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m panel")
    parser.add_argument("--root", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--language", choices=LANGUAGES, help="the daemon's language")
    options = parser.parse_args(argv)
    root = root_name(options.root)
    set_language(options.language)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="alma-panel: %(message)s")
    panel = Panel(root, options.port)
    config = uvicorn.Config(
        panel.app,
        host=HOST,
        port=options.port,
        access_log=False,
        log_level="warning",
        server_header=False,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    login = LoginSocket(panel_socket_name(root), options.port, panel.sessions.mint)

    def open_login() -> None:
        # A login URL only once the port is the panel's: never an address nobody answers.
        while not server.started and not server.should_exit:
            time.sleep(0.05)
        if server.started:
            login.start()

    parent = os.getppid()

    def orphaned() -> None:
        # The daemon is this process's parent: killed outright, it cannot stop the panel, so
        # the panel notices it was left alone and goes too (it would answer for nobody).
        while not server.should_exit:
            if os.getppid() != parent:
                server.should_exit = True
            time.sleep(1.0)

    threading.Thread(target=open_login, daemon=True).start()
    threading.Thread(target=orphaned, daemon=True).start()
    # uvicorn stops gracefully on SIGTERM and then raises the signal again: it must reach this
    # handler (an exit), not the default one, so that the login socket is removed below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.run()
    finally:
        login.close()
    return 0 if server.started else 1
