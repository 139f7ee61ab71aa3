"""The panel's guard, before every route: who may ask (the Host, the session, the Origin and
the CSRF token of a request that changes something), and what every answer tells the browser
(panel.security's headers, and Server-Timing)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Protocol
from urllib.parse import parse_qs

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from panel.security import (
    SECURITY_HEADERS,
    Session,
    Sessions,
    allowed_hosts,
    allowed_origins,
    csrf_ok,
)
from policies.i18n import N_, _

#: The largest form the panel reads (a memory's text is the longest field).
MAX_FORM_BYTES = 256 * 1024

_REFUSED_HOST = N_("This address is not the panel's: open the address `alma-ctl web` prints.")
_REFUSED_ORIGIN = N_("Refused: this request did not come from the panel's own page.")
_REFUSED_CSRF = N_("Refused: this form is not from your panel session; reload the page.")
_TOO_LARGE = N_("Refused: the form is too large.")

#: When this request waited for the daemon's commands, (start, end) each (Server-Timing).
daemon_time: ContextVar[list[tuple[float, float]]] = ContextVar("daemon_time")

Handler = Callable[[Request, Session, dict[str, str]], Awaitable[Response]]


def waited(spans: list[tuple[float, float]]) -> float:
    """How long the spans cover together (commands asked at once overlap)."""
    total, reached = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reached:
            total += end - max(start, reached)
            reached = end
    return total


class Pages(Protocol):
    """What the guard needs of the panel: its port, sessions and cookie, and its two pages
    for a refusal."""

    port: int
    sessions: Sessions
    cookie: str

    def hint(self, request: Request, status: int = 401) -> Response: ...

    def refused(self, request: Request, status: int, sentence: str) -> Response: ...


class Guard:
    """Before every route: the Host (DNS rebinding), the session (or the page that says how to
    open the panel), the Origin of anything but GET and HEAD; after: the security headers."""

    def __init__(self, app: ASGIApp, panel: Pages) -> None:
        self.app = app
        self.panel = panel
        self.hosts = allowed_hosts(panel.port)
        self.origins = allowed_origins(panel.port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        began = time.perf_counter()
        spent: list[tuple[float, float]] = []
        daemon_time.set(spent)

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
                # This answer's time, and the part of it the daemon's commands took
                # (bench/bench_panel.py reads both).
                took = (time.perf_counter() - began) * 1000
                daemon = waited(spent) * 1000
                headers["Server-Timing"] = f"app;dur={took:.1f}, daemon;dur={daemon:.1f}"
            await send(message)

        headers = Headers(scope=scope)
        state = scope.setdefault("state", {})
        request = Request(scope)
        response: Response | None = None
        method = scope["method"]
        if headers.get("host") not in self.hosts:
            response = PlainTextResponse(_(_REFUSED_HOST), status_code=421)
        else:
            session = self.panel.sessions.get(request.cookies.get(self.panel.cookie))
            state["session"] = session
            public = scope["path"] == "/login" or scope["path"].startswith("/static/")
            if method not in ("GET", "HEAD", "POST"):
                response = PlainTextResponse("", status_code=405)
            elif method == "POST" and headers.get("origin") not in self.origins:
                response = self.panel.refused(request, 403, _(_REFUSED_ORIGIN))
            elif session is None and not public:
                response = self.panel.hint(request)
        if response is not None:
            await response(scope, receive, secured)
            return
        await self.app(scope, receive, secured)


def session_of(request: Request) -> Session | None:
    session = request.scope.get("state", {}).get("session")
    return session if isinstance(session, Session) else None


def mutation(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """A route that changes something: its form is read (bounded) and its CSRF token checked
    against the session's before ``handler`` runs (the Guard has checked session and Origin)."""

    async def endpoint(request: Request) -> Response:
        session = session_of(request)
        if session is None:  # the Guard answers first; never reached without a session
            return PlainTextResponse("", status_code=401)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                return PlainTextResponse(_(_TOO_LARGE), status_code=413)
        form = {
            key: values[0]
            for key, values in parse_qs(
                body.decode("utf-8", "replace"), keep_blank_values=True
            ).items()
        }
        if not csrf_ok(session, form.get("csrf")):
            return PlainTextResponse(_(_REFUSED_CSRF), status_code=403)
        return await handler(request, session, form)

    return endpoint
