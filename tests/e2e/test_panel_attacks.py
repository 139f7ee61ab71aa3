"""Attacks on the web panel, each refused with nothing changed (docs/panel.md, "Security").

Over plain HTTP to the real panel (a real daemon runs it): no session cookie, a wrong login
token, a foreign Host (DNS rebinding), a foreign Origin on a POST, a POST without its CSRF
token; in a real browser: the panel framed by a page of another origin, and markup where ALMA
shows text (a file named ``<img src=x onerror=alert(1)>.jpg``, a memory holding ``<script>``,
a model answer holding HTML), shown as text while no dialog fires. After every attack the
suggestions, the history, the autonomy and the files are as they were. Last, the panel killed
outright: the daemon answers throughout and starts a new panel, which logs in again.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.daemon import DaemonRoot
from tests.support.openai_stub import ModelStub
from tests.support.panel import browser, login_url, with_panel
from tests.support.trees import snapshot

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]

FILE_NAME = "<img src=x onerror=alert(1)>.jpg"
MEMORY = "Mi nota <script>alert(2)</script> sobre el respaldo nocturno"
#: What the stub model answers: markup that would run if it were ever parsed. The persona
#: holds the same sentence, so the chat's check shows it as what ALMA gave the model.
ANSWER = "Tu nota dice <img src=x onerror=alert(3)> y <b>negrita</b> tal cual."


@dataclass
class Panel:
    alma: DaemonRoot
    port: int
    sid: int  # a pending suggestion every attack tries to accept

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: str | None = None,
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
            if body is not None:
                sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
            conn.request(method, path, body=body, headers=sent)
            answer = conn.getresponse()
            return (
                answer.status,
                {k.lower(): v for k, v in answer.getheaders()},
                answer.read().decode("utf-8", "replace"),
            )
        finally:
            conn.close()

    def login(self) -> tuple[str, str]:
        """A session cookie (as the browser would send it) and its CSRF token."""
        url = urlsplit(login_url(self.alma))
        status, headers, _body = self.request("GET", f"{url.path}?{url.query}")
        assert status == 303, status
        cookie = headers["set-cookie"].split(";", 1)[0]
        status, _headers, page = self.request("GET", "/suggestions", headers={"Cookie": cookie})
        assert status == 200
        csrf = re.search(r'data-csrf="([^"]+)"', page)
        assert csrf is not None
        return cookie, csrf.group(1)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def state(alma: DaemonRoot) -> dict[str, Any]:
    autonomy = alma.ok("autonomy", "status")
    return {
        "suggestions": [(s["id"], s["status"]) for s in alma.ok("suggestions", "list", "--all")],
        "history": [(a["id"], a["status"]) for a in alma.ok("history")],
        "autonomy": (autonomy.get("paused"), autonomy.get("effective")),
        "user": snapshot(alma.root / "user"),
    }


@pytest.fixture(scope="module")
def panel() -> Iterator[Panel]:
    alma = DaemonRoot(memory=True).init()
    alma.policy(monitor__settle_seconds=0, monitor__new_per_day=0)
    port = with_panel(alma)
    (alma.root / "system" / "persona.md").write_text(f"Eres ALMA.\n\n{ANSWER}\n", "utf-8")
    try:
        with ModelStub(ANSWER) as stub:
            alma.set_settings("model", "url", stub.url)
            alma.start(timeout=180)
            alma.messy_folder("user/fotos", n=24)
            alma.write(f"user/fotos/{FILE_NAME}", b"foto\n")
            alma.analyze()
            sid = alma.wait_suggestion(kind="organize", target="user/fotos", timeout=120)["id"]
            yield Panel(alma, port, sid)
            alma.stop()
    finally:
        alma.close()


def accept_form(csrf: str | None) -> str:
    return "" if csrf is None else f"csrf={csrf}"


def test_without_a_session_the_panel_only_says_how_to_open_it(panel: Panel) -> None:
    before = state(panel.alma)
    for path in ("/", "/suggestions", "/memory", f"/suggestions/{panel.sid}"):
        status, _headers, page = panel.request("GET", path)
        assert status == 401 and 'data-testid="login-hint"' in page
        assert "alma-ctl web" in page and "suggestion-" not in page
    _cookie, csrf = panel.login()  # a real token, but no cookie sent with the POST
    status, _headers, _page = panel.request(
        "POST",
        f"/suggestions/{panel.sid}/accept",
        headers={"Origin": panel.origin},
        body=accept_form(csrf),
    )
    assert status == 401
    assert state(panel.alma) == before


def test_a_wrong_token_or_cookie_logs_nobody_in(panel: Panel) -> None:
    before = state(panel.alma)
    status, headers, page = panel.request("GET", "/login?token=not-the-token")
    assert status == 403 and "set-cookie" not in headers and "login-hint" in page
    url = urlsplit(login_url(panel.alma))
    status, headers, _page = panel.request("GET", f"{url.path}?{url.query}")
    assert status == 303
    session = headers["set-cookie"].split(";", 1)[0].split("=", 1)[1]
    status, headers, _page = panel.request("GET", f"{url.path}?{url.query}")  # used: spent
    assert status == 403 and "set-cookie" not in headers
    forged = f"alma_panel_{panel.port}=forged"
    assert panel.request("GET", "/suggestions", headers={"Cookie": forged})[0] == 401
    assert state(panel.alma) == before
    # Neither the token nor the session it became is in the log (the panel's goes there too).
    token = url.query.removeprefix("token=")
    log = panel.alma.log()
    assert "alma.web" in log and token not in log and session not in log


def test_a_foreign_host_is_refused(panel: Panel) -> None:
    before = state(panel.alma)
    cookie, csrf = panel.login()
    for host in (f"evil.example:{panel.port}", "127.0.0.1", f"127.0.0.1.nip.io:{panel.port}"):
        status, _headers, page = panel.request(
            "GET", "/suggestions", headers={"Host": host, "Cookie": cookie}
        )
        assert status == 421 and "suggestion-" not in page
        status, _headers, _page = panel.request(
            "POST",
            f"/suggestions/{panel.sid}/accept",
            headers={"Host": host, "Cookie": cookie, "Origin": f"http://{host}"},
            body=accept_form(csrf),
        )
        assert status == 421
    assert state(panel.alma) == before


def test_a_foreign_origin_or_a_missing_csrf_token_changes_nothing(panel: Panel) -> None:
    before = state(panel.alma)
    cookie, csrf = panel.login()
    accept = f"/suggestions/{panel.sid}/accept"
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{panel.port + 1}"):
        status, _h, _p = panel.request(
            "POST", accept, headers={"Cookie": cookie, "Origin": origin}, body=accept_form(csrf)
        )
        assert status == 403, origin
    status, _h, _p = panel.request(
        "POST", accept, headers={"Cookie": cookie}, body=accept_form(csrf)
    )
    assert status == 403  # no Origin at all
    for form in (None, "csrf=", "csrf=wrong"):
        body = "" if form is None else form
        status, _h, _p = panel.request(
            "POST", accept, headers={"Cookie": cookie, "Origin": panel.origin}, body=body
        )
        assert status == 403, form
    assert state(panel.alma) == before
    # The same request with its token is accepted: the refusals above were the guards'.
    status, headers, _p = panel.request(
        "POST",
        "/history/999999/undo",
        headers={"Cookie": cookie, "Origin": panel.origin},
        body=accept_form(csrf),
    )
    assert status == 303 and headers["location"] == "/history"


def test_every_answer_forbids_framing_and_inline_script(panel: Panel) -> None:
    for path in ("/", "/login", "/static/panel.css"):
        _status, headers, _page = panel.request("GET", path)
        policy = headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
        assert "unsafe-inline" not in policy
        assert headers["x-frame-options"] == "DENY"


class _Attacker(BaseHTTPRequestHandler):
    """Another origin's page that frames the panel."""

    target = ""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = f'<!doctype html><iframe id="f" src="{self.target}"></iframe>'.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_the_panel_framed_by_another_origin_shows_nothing(panel: Panel) -> None:
    before = state(panel.alma)
    _Attacker.target = f"{panel.origin}/suggestions"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with browser() as chromium:
            page = chromium.new_page()
            page.goto(login_url(panel.alma))  # logged in: the frame would carry the cookie
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
            page.wait_for_load_state("load")
            frame = page.frame_locator("#f")
            assert frame.get_by_test_id(f"accept-{panel.sid}").count() == 0
            framed = page.frames[1:]
            assert framed, "the attacker's page has its frame"
            # Blocked by the browser: chromium's error page stands in the panel's place.
            assert all(f.locator("[data-testid^=suggestion-]").count() == 0 for f in framed)
            assert all(not f.url.startswith(panel.origin) for f in framed), [f.url for f in framed]
    finally:
        server.shutdown()
        server.server_close()
    assert state(panel.alma) == before


def test_markup_from_files_memories_and_the_model_is_shown_as_text(panel: Panel) -> None:
    alma = panel.alma
    stored = alma.ok("memory", "add", MEMORY)
    before = state(alma)
    dialogs: list[str] = []
    with browser() as chromium:
        page = chromium.new_page()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(login_url(alma))
        page.goto(f"{panel.origin}/suggestions/{panel.sid}")
        assert FILE_NAME in page.locator("ol.plan").inner_text()
        page.goto(f"{panel.origin}/memory/{stored['id']}")
        assert MEMORY in page.get_by_test_id("memory-text").inner_text()
        page.goto(f"{panel.origin}/memory")
        assert MEMORY in page.get_by_test_id(f"memory-{stored['id']}").inner_text()
        page.goto(f"{panel.origin}/chat")
        page.get_by_test_id("chat-input").fill("¿Qué dice mi nota?")
        page.get_by_test_id("chat-send").click()
        answer = page.get_by_test_id("chat-answer").last
        page.wait_for_function(
            "a => a.getAttribute('aria-busy') === 'false'", arg=answer.element_handle()
        )
        assert "<img src=x onerror=alert(3)>" in answer.inner_text()
        assert answer.locator("img, b").count() == 0
        page.reload()  # the same turn rendered by the server, without the script's stream
        assert (
            "<img src=x onerror=alert(3)>" in page.get_by_test_id("chat-answer").last.inner_text()
        )
        assert page.locator("main img, main script, main b").count() == 0
        page.wait_for_timeout(500)  # an onerror fires as the page loads; give it its chance
    assert dialogs == []
    after = state(alma)
    assert after == before


def panel_pid(daemon: int) -> int | None:
    for task in Path(f"/proc/{daemon}/task").iterdir():
        for child in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                if b"panel" in Path(f"/proc/{child}/cmdline").read_bytes():
                    return int(child)
    return None


def test_a_panel_that_crashes_is_started_again_and_the_daemon_never_notices(
    panel: Panel,
) -> None:
    alma = panel.alma
    daemon = alma.pid
    first = alma.wait_for(lambda: panel_pid(daemon), timeout=30, what="the panel process")
    os.kill(first, signal.SIGKILL)
    status = alma.ok("status")
    assert status["running"] and status["pid"] == daemon
    again = alma.wait_for(
        lambda: (pid := panel_pid(daemon)) not in (None, first) and pid,
        timeout=60,
        what="a new panel process",
    )
    assert again != first
    parts = urlsplit(login_url(alma))  # alma-ctl web waits for a panel being started
    assert panel.request("GET", f"{parts.path}?{parts.query}")[0] == 303
    assert alma.ok("status")["pid"] == daemon
