"""``alma-ctl web``: the panel's login address, asked of the panel on its private socket.

The panel (panel/, docs/panel.md) runs beside the daemon, which starts it. It mints one-time
login tokens only for whoever can connect to its Unix socket, which lives in the daemon's
private socket folder (mode 0700) and checks its peer's uid as the daemon's does: the one
person who may talk to the daemon may open the panel. Standard library only (alma-ctl's start).
"""

from __future__ import annotations

import json
import os
import socket
import time

from control.protocol import socket_name_for
from policies.errors import UnavailableError
from policies.i18n import _

#: How long ``alma-ctl web`` waits for a panel the daemon is (re)starting.
WAIT_S = 15.0
#: The longest answer of the panel's socket (one JSON line with the URL).
ANSWER_MAX = 4096


def panel_socket_name(root: str | os.PathLike[str]) -> str:
    """The panel's socket for ``root``, beside the daemon's (same private folder)."""
    return socket_name_for(root).removesuffix(".sock") + ".panel.sock"


def login_url(root: str, *, wait_s: float = WAIT_S) -> str:
    """A fresh one-time login URL of the panel of ``root``, or :class:`UnavailableError`."""
    path = panel_socket_name(root)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return _ask(path)
        except OSError:  # the panel is starting (or restarting): ask again until the deadline
            if time.monotonic() >= deadline:
                break
            time.sleep(0.2)
    raise UnavailableError(
        _(
            "The web panel is not running for {root}; the daemon starts it when system/alma.toml "
            "has `[web] enabled = true` (the default), and its log says why it stopped.",
            root=root,
        )
    )


def _ask(path: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(5.0)
        conn.connect(path)
        data = b""
        while b"\n" not in data and len(data) < ANSWER_MAX:
            chunk = conn.recv(ANSWER_MAX)
            if not chunk:
                break
            data += chunk
    try:
        url = json.loads(data.decode("utf-8")).get("url")
    except (ValueError, AttributeError):
        raise OSError("the panel's socket gave no URL") from None
    if not isinstance(url, str) or not url.startswith("http://127.0.0.1:"):
        raise OSError("the panel's socket gave no URL")
    return url
