"""Who may use the panel, and what a browser is told not to do (docs/panel.md, "Security").

The bar is the control socket's: only the person who runs ALMA. A login token is minted for
whoever can reach the panel's private Unix socket (:mod:`panel.login`), logs in once and
becomes a session cookie (HttpOnly, SameSite=Strict). Other local users reach the TCP port but
hold no token; other web pages in the same browser send no cookie (SameSite) and cannot read
or frame the panel (CSP, X-Frame-Options); DNS rebinding is refused by the Host check; a
request that changes something carries the session's CSRF token and a same-origin Origin.
Tokens and session ids are compared in constant time and never logged.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field

#: How long a login token from ``alma-ctl web`` may wait to be opened.
TOKEN_TTL_S = 300.0
#: How long a session lives without a request.
SESSION_IDLE_S = 12 * 3600.0
#: Bounds on what a flood of ``alma-ctl web`` or logins may keep in memory.
MAX_TOKENS = 64
MAX_SESSIONS = 64

#: What every answer of the panel tells the browser: only the panel's own files, no inline
#: script, no framing, no form or connection elsewhere, no referrer to another site (a URL may hold a token).
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: with no-referrer chromium sends ``Origin: null`` on a
    # form's POST, and the Origin check needs the page's own origin there.
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def allowed_hosts(port: int) -> frozenset[str]:
    """The Host headers the panel answers: its loopback names with its port, nothing else (a
    rebinding page's Host is its own domain name)."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def allowed_origins(port: int) -> frozenset[str]:
    return frozenset(f"http://{host}" for host in allowed_hosts(port))


def cookie_name(port: int) -> str:
    """Cookies are not kept apart by port: two roots' panels on one machine need two names."""
    return f"alma_panel_{port}"


@dataclass
class Session:
    csrf: str
    seen: float
    flashes: list[tuple[str, str]] = field(default_factory=list)  # (level, sentence)
    chat: str | None = None  # the daemon's chat session id
    greeting: str = ""  # what the chat said when it started (the model, pending suggestions)
    turns: list[dict[str, str]] = field(default_factory=list)  # the chat shown without JS


class Sessions:
    """One-time login tokens and the sessions they became; thread-safe, in memory only (a
    restart of the panel logs everyone out: `alma-ctl web` logs in again)."""

    def __init__(self) -> None:
        self._now = time.monotonic
        self._lock = threading.Lock()
        self._tokens: dict[str, float] = {}
        self._sessions: dict[str, Session] = {}

    def mint(self) -> str:
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._sweep()
            if len(self._tokens) >= MAX_TOKENS:  # the oldest unused one goes
                del self._tokens[min(self._tokens, key=self._tokens.__getitem__)]
            self._tokens[token] = self._now() + TOKEN_TTL_S
        return token

    def login(self, token: str) -> str | None:
        """A new session id for a valid token (which is spent), or None."""
        with self._lock:
            self._sweep()
            found = next((t for t in self._tokens if hmac.compare_digest(t, token)), None)
            if found is None:
                return None
            del self._tokens[found]
            if len(self._sessions) >= MAX_SESSIONS:
                del self._sessions[min(self._sessions, key=lambda s: self._sessions[s].seen)]
            sid = secrets.token_urlsafe(32)
            self._sessions[sid] = Session(csrf=secrets.token_urlsafe(32), seen=self._now())
            return sid

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        with self._lock:
            self._sweep()
            found = next((s for s in self._sessions if hmac.compare_digest(s, sid)), None)
            if found is None:
                return None
            session = self._sessions[found]
            session.seen = self._now()
            return session

    def _sweep(self) -> None:
        now = self._now()
        for token in [t for t, until in self._tokens.items() if until < now]:
            del self._tokens[token]
        for sid in [s for s, v in self._sessions.items() if now - v.seen > SESSION_IDLE_S]:
            del self._sessions[sid]


def csrf_ok(session: Session, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(session.csrf, str(given))
