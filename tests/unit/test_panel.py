"""The panel's guards and pages in process: Starlette's test client, and a fake daemon that
answers the commands the pages ask (the browser tests run the real one, tests/e2e)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from panel import security
from panel.app import Panel
from policies.errors import NotFoundError, UnavailableError

PORT = 18765
ORIGIN = f"http://127.0.0.1:{PORT}"

SUGGESTION = {
    "id": 3,
    "kind": "organize",
    "status": "pending",
    "title": "Organize <script>alert(1)</script>",
    "reason": "31 loose files",
    "target": "user/p",
    "files": 31,
    "needs_approval": True,
    "created_at": "2026-11-22T10:00:00+00:00",
    "evidence": ["<img src=x onerror=alert(1)>.jpg"],
    "plan": [{"op": "move", "src": "user/p/<b>.jpg", "dst": "user/p/images/<b>.jpg"}],
}
ACTION = {
    "id": 7,
    "suggestion_id": 3,
    "kind": "organize",
    "status": "done",
    "ops": 2,
    "auto": False,
    "started_at": "x",
    "finished_at": "y",
    "undone_by": None,
    "undoable": True,
}
MEMORY = {
    "id": "m1",
    "content": "<script>alert(2)</script>",
    "tags": ["db"],
    "importance": 3,
    "memory_type": "fact",
    "archived": False,
}


class FakeDaemon:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, object]]] = []
        self.answers: dict[str, object] = {
            "report": {
                "text": "# Hoy\n<b>nada</b>",
                "date": "2026-11-28",
                "path": "logs/alma/2026-11-28.md",
                "written": True,
            },
            "suggestions.list": [SUGGESTION],
            "suggestions.show": SUGGESTION,
            "suggestions.accept": ACTION,
            "suggestions.reject": {"id": 3, "status": "rejected"},
            "history": [ACTION],
            "undo": {**ACTION, "id": 8, "undoes": 7},
            "memory.list": [MEMORY],
            "memory.search": [{**MEMORY, "score": 0.8}],
            "memory.show": MEMORY,
            "chat.start": {"session": "s1", "pending": [], "model": {"path": "", "state": ""}},
            "autonomy.status": {"configured": "suggest", "effective": "suggest", "paused": False},
            "model.status": {"path": "embedded", "backend": "llama-cpp", "loaded": False},
            "backup.list": [],
        }

    def call(self, cmd: str, **args: object) -> object:
        self.calls.append((cmd, args))
        if cmd not in self.answers:
            raise NotFoundError(f"no {cmd}")
        return self.answers[cmd]

    def offers(self, cmd: str) -> bool:
        return cmd in self.answers


@pytest.fixture
def fake() -> FakeDaemon:
    return FakeDaemon()


@pytest.fixture
def panel(fake: FakeDaemon) -> Panel:
    return Panel("/nowhere", PORT, fake)  # type: ignore[arg-type]  # the fake answers as the daemon


def client(panel: Panel, *, login: bool = True) -> TestClient:
    c = TestClient(panel.app, base_url=ORIGIN, follow_redirects=False)
    if login:
        answer = c.get(f"/login?token={panel.sessions.mint()}")
        assert answer.status_code == 303
    return c


def csrf_of(c: TestClient) -> str:
    found = re.search(r'data-csrf="([^"]+)"', c.get("/suggestions").text)
    assert found is not None
    return found.group(1)


def test_a_token_logs_in_once_and_becomes_an_httponly_strict_cookie(panel: Panel) -> None:
    c = client(panel, login=False)
    token = panel.sessions.mint()
    first = c.get(f"/login?token={token}")
    cookie = first.headers["set-cookie"]
    assert first.status_code == 303 and first.headers["location"] == "/"
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and token not in cookie
    again = TestClient(panel.app, base_url=ORIGIN).get(f"/login?token={token}")
    assert again.status_code == 403 and "set-cookie" not in again.headers


def test_a_token_expires(panel: Panel, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(panel.sessions, "_now", lambda: now[0])
    token = panel.sessions.mint()
    now[0] += security.TOKEN_TTL_S + 1
    assert panel.sessions.login(token) is None


def test_without_a_session_every_page_says_how_to_open_the_panel(panel: Panel) -> None:
    c = client(panel, login=False)
    for path in ("/", "/suggestions", "/history", "/memory", "/chat", "/system", "/memory/m1"):
        answer = c.get(path)
        assert answer.status_code == 401 and "alma-ctl web" in answer.text
        assert "suggestion-" not in answer.text and "memory-m1" not in answer.text


def test_a_foreign_host_is_refused_even_with_a_session(panel: Panel) -> None:
    c = client(panel)
    for host in ("evil.example", f"evil.example:{PORT}", "127.0.0.1", f"localhost:{PORT + 1}"):
        assert c.get("/", headers={"Host": host}).status_code == 421
    assert c.get("/", headers={"Host": f"localhost:{PORT}"}).status_code == 200


def test_a_post_needs_the_same_origin_and_the_csrf_token(panel: Panel, fake: FakeDaemon) -> None:
    c = client(panel)
    csrf = csrf_of(c)
    url = "/suggestions/3/accept"
    assert c.post(url, data={"csrf": csrf}).status_code == 403  # no Origin
    assert c.post(url, data={"csrf": csrf}, headers={"Origin": "null"}).status_code == 403
    bad = {"Origin": "http://evil.example"}
    assert c.post(url, data={"csrf": csrf}, headers=bad).status_code == 403
    good = {"Origin": ORIGIN}
    assert c.post(url, data={}, headers=good).status_code == 403
    assert c.post(url, data={"csrf": csrf + "x"}, headers=good).status_code == 403
    assert not [name for name, _args in fake.calls if name == "suggestions.accept"]
    done = c.post(url, data={"csrf": csrf}, headers=good)
    assert done.status_code == 303 and done.headers["location"] == "/suggestions"
    assert ("suggestions.accept", {"id": 3}) in fake.calls
    assert "Action 7" in c.get("/suggestions").text  # alma-ctl's sentence, shown once


def test_a_rejection_sends_its_reason(panel: Panel, fake: FakeDaemon) -> None:
    c = client(panel)
    csrf = csrf_of(c)
    c.post(
        "/suggestions/3/reject",
        data={"csrf": csrf, "reason": "a mano"},
        headers={"Origin": ORIGIN},
    )
    assert ("suggestions.reject", {"id": 3, "reason": "a mano"}) in fake.calls


def test_every_answer_carries_the_security_headers(panel: Panel) -> None:
    c = client(panel)
    for path in ("/", "/suggestions", "/login", "/static/panel.js", "/nothing-here"):
        headers = c.get(path).headers
        for name, value in security.SECURITY_HEADERS.items():
            assert headers[name] == value, (path, name)
    assert c.get("/", headers={"Host": "evil.example"}).headers["X-Frame-Options"] == "DENY"


def test_every_page_escapes_what_the_daemon_says(panel: Panel) -> None:
    c = client(panel)
    for path in ("/", "/suggestions", "/suggestions/3", "/history", "/memory", "/memory/m1"):
        page = c.get(path)
        assert page.status_code == 200, path
        assert "<script>alert" not in page.text and "<img src=x" not in page.text, path
        assert "<b>" not in page.text, path
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in c.get("/suggestions").text


def test_no_page_has_an_inline_script_or_a_remote_asset(panel: Panel) -> None:
    c = client(panel)
    for path in ("/", "/suggestions", "/suggestions/3", "/history", "/memory", "/chat", "/system"):
        page = c.get(path).text
        assert re.findall(r"<script(?![^>]*\bsrc=\"/static/)", page) == [], path
        assert not re.search(r'(src|href)="(https?:)?//', page), path
        assert not re.search(r"<[^>]+\son[a-z]+=", page), path


def test_the_test_ids_of_the_contract_are_on_the_pages(panel: Panel) -> None:
    c = client(panel)
    today = c.get("/").text
    for chart in ("chart-hours", "chart-mood", "chart-kinds"):
        assert f'data-testid="{chart}"' in today
    listed = c.get("/suggestions").text
    for tid in ("suggestion-3", "accept-3", "reject-3", "reason-3"):
        assert f'data-testid="{tid}"' in listed
    assert 'data-testid="undo-7"' in c.get("/history").text
    memory = c.get("/memory").text
    assert 'data-testid="memory-query"' in memory and 'data-testid="memory-m1"' in memory
    assert 'data-testid="chat-input"' in c.get("/chat").text


def test_no_undo_button_where_the_journal_says_undo_is_impossible(
    panel: Panel, fake: FakeDaemon
) -> None:
    fake.answers["history"] = [{**ACTION, "status": "undone", "undoable": False}]
    assert 'data-testid="undo-7"' not in client(panel).get("/history").text


def test_a_daemon_error_is_its_sentence(panel: Panel, fake: FakeDaemon) -> None:
    c = client(panel)
    del fake.answers["memory.show"]
    page = c.get("/memory/zzz")
    assert page.status_code == 400 and "no memory.show" in page.text


def test_raising_the_autonomy_level_is_not_offered(panel: Panel) -> None:
    page = client(panel).get("/system").text
    levels = re.findall(r'<option value="([a-z]+)"', page)
    assert levels == ["off", "manual"]  # configured "suggest": only below it


def test_the_memory_edit_form_sends_the_fields_memory_edit_takes(
    panel: Panel, fake: FakeDaemon
) -> None:
    fake.answers["memory.edit"] = {**MEMORY, "action_id": 9}
    c = client(panel)
    csrf = csrf_of(c)
    c.post(
        "/memory/m1/edit",
        data={
            "csrf": csrf,
            "text": "nuevo",
            "tags": "db, #sqlite, ",
            "importance": "5",
            "memory_type": "fact",
        },
        headers={"Origin": ORIGIN},
    )
    assert (
        "memory.edit",
        {
            "id": "m1",
            "text": "nuevo",
            "tags": ["db", "sqlite"],
            "importance": 5,
            "memory_type": "fact",
        },
    ) in fake.calls


def test_a_form_too_large_is_refused_before_anything_runs(panel: Panel, fake: FakeDaemon) -> None:
    from panel.guard import MAX_FORM_BYTES

    c = client(panel)
    csrf = csrf_of(c)
    big: dict[str, Any] = {"csrf": csrf, "reason": "x" * (MAX_FORM_BYTES + 1)}
    answer = c.post("/suggestions/3/reject", data=big, headers={"Origin": ORIGIN})
    assert answer.status_code == 413
    assert not [name for name, _args in fake.calls if name == "suggestions.reject"]


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    (run / "alma").mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    return tmp_path


def test_alma_ctl_web_without_the_daemon_is_the_usual_sentence_and_exit_3(
    runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from control.ctl import main

    root = str(runtime / "ALMA")
    assert main(["--root", root, "init"]) == 0
    capsys.readouterr()
    assert main(["--root", root, "web"]) == 3
    assert "alma-agentd is not reachable" in capsys.readouterr().err  # as every command
    assert main(["--root", root, "--json", "web", "--open"]) == 3
    assert '"ok": false' in capsys.readouterr().out


def test_the_login_socket_gives_a_url_whose_token_logs_in(runtime: Path, panel: Panel) -> None:
    from control.web import login_url, panel_socket_name
    from panel.login import LoginSocket

    root = str(runtime / "ALMA")
    socket = LoginSocket(panel_socket_name(root), PORT, panel.sessions.mint).start()
    try:
        assert os.stat(panel_socket_name(root)).st_mode & 0o777 == 0o600
        url = login_url(root)
        assert url.startswith(f"{ORIGIN}/login?token=")
        c = TestClient(panel.app, base_url=ORIGIN, follow_redirects=False)
        assert c.get(url.removeprefix(ORIGIN)).status_code == 303
        assert c.get("/suggestions").status_code == 200
    finally:
        socket.close()
    assert not Path(panel_socket_name(root)).exists()
    with pytest.raises(UnavailableError, match="web panel is not running"):
        login_url(root, wait_s=0.0)


def test_history_shows_the_newest_and_links_to_older_ones(panel: Panel, fake: FakeDaemon) -> None:
    from panel.app import HISTORY_LIMIT

    fake.answers["history"] = [{**ACTION, "id": i} for i in range(HISTORY_LIMIT, 0, -1)]
    c = client(panel)
    page = c.get("/history").text
    assert ("history", {"limit": HISTORY_LIMIT}) in fake.calls
    assert f'href="/history?limit={2 * HISTORY_LIMIT}"' in page
    fake.answers["history"] = [ACTION]
    assert "history-more" not in c.get("/history?limit=5000").text
    assert ("history", {"limit": 1000}) in fake.calls  # the table's limit, never more


def test_a_bang_command_in_the_chat_runs_as_in_alma_chat_never_to_the_model(
    panel: Panel, fake: FakeDaemon
) -> None:
    c = client(panel)
    csrf = csrf_of(c)
    for line in ("!ayuda", "!buscar respaldo", "!aceptar 3", "!nada"):
        answer = c.post("/chat", data={"csrf": csrf, "message": line}, headers={"Origin": ORIGIN})
        assert answer.status_code == 303
    page = c.get("/chat").text
    assert "!buscar" in page and "Action 7" in page  # the help, and accept's sentence
    assert ("memory.search", {"query": "respaldo"}) in [
        (name, {k: v for k, v in args.items() if k == "query"}) for name, args in fake.calls
    ]
    assert ("suggestions.accept", {"id": 3}) in fake.calls
    assert not [name for name, _args in fake.calls if name == "chat.send"]
    assert page.count('data-testid="chat-answer"') == 4


def test_alma_ctl_web_prints_the_url_and_open_opens_it(
    runtime: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import webbrowser

    import control.web
    from control.client import Client
    from control.ctl import main

    url = f"{ORIGIN}/login?token=abc"
    asked: list[str] = []
    opened: list[str] = []
    monkeypatch.setattr(Client, "call", lambda self, cmd, **args: asked.append(cmd) or {})
    monkeypatch.setattr(control.web, "login_url", lambda root: url)
    monkeypatch.setattr(webbrowser, "open", lambda target: opened.append(target) or True)
    root = str(runtime / "ALMA")
    assert main(["--root", root, "--json", "web"]) == 0
    assert json.loads(capsys.readouterr().out) == {"url": url} and opened == []
    assert main(["--root", root, "web", "--open"]) == 0
    assert capsys.readouterr().out.strip() == url and opened == [url]
    assert asked == ["status", "status"]  # the daemon is asked first, as every command does


def test_the_daemons_part_of_an_answer_counts_overlapping_commands_once() -> None:
    from panel.guard import waited

    assert waited([]) == 0.0
    assert waited([(0.0, 1.0), (0.5, 2.0), (3.0, 4.0)]) == 3.0
    assert waited([(0.0, 5.0), (1.0, 2.0)]) == 5.0


def test_today_shows_the_report_when_its_series_fail(panel: Panel, fake: FakeDaemon) -> None:
    fake.answers["report.days"] = None  # offered by this daemon...
    original = fake.call

    def failing(cmd: str, **args: object) -> object:
        if cmd == "report.days":
            raise NotFoundError("no series for these days")
        return original(cmd, **args)

    fake.call = failing  # type: ignore[method-assign]  # ...and failing
    page = client(panel).get("/")
    assert page.status_code == 200 and "no series for these days" in page.text
    assert "<h3>Hoy</h3>" in page.text and 'data-testid="chart-hours"' in page.text


def test_the_report_reads_as_headings_lists_and_text_all_escaped() -> None:
    from panel.rows import report_blocks

    text = "# Día\n\n## Fallos\n- uno <b>\n- dos\nnota #tag\n#sin espacio"
    assert report_blocks(text) == [
        {"kind": "heading", "level": 3, "text": "Día"},
        {"kind": "heading", "level": 4, "text": "Fallos"},
        {"kind": "list", "items": ["uno <b>", "dos"]},
        {"kind": "text", "text": "nota #tag"},
        {"kind": "text", "text": "#sin espacio"},
    ]


def test_a_missing_browser_is_a_skip_with_its_sentence_and_a_failure_in_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support import panel as support

    monkeypatch.setattr(support, "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"alma\.sh setup"), support.browser():
        pass
    monkeypatch.setenv("CI", "true")
    failed = pytest.raises(pytest.fail.Exception, match="CI: a missing browser is a failure")
    with failed, support.browser():
        pass


def test_model_use_from_the_page_needs_a_full_path(panel: Panel, fake: FakeDaemon) -> None:
    fake.answers["model.use"] = {"path": "/m/a.gguf", "backend": "llama-cpp", "loaded": True}
    c = client(panel)
    csrf = csrf_of(c)
    for path in ("modelo.gguf", "/m/a.gguf"):
        c.post("/system/model", data={"csrf": csrf, "path": path}, headers={"Origin": ORIGIN})
    assert [args for name, args in fake.calls if name == "model.use"] == [{"path": "/m/a.gguf"}]


def test_a_restore_from_the_page_needs_a_full_path(panel: Panel, fake: FakeDaemon) -> None:
    fake.answers["backup.restore"] = {"snapshot": "latest", "to": "/r"}
    c = client(panel)
    csrf = csrf_of(c)
    for to in ("restaurado", "/r"):
        form = {"csrf": csrf, "snapshot": "latest", "to": to}
        c.post("/system/restore", data=form, headers={"Origin": ORIGIN})
    restores = [args for name, args in fake.calls if name == "backup.restore"]
    assert restores == [{"snapshot": "latest", "to": "/r"}]


def test_today_draws_the_plots_of_report_days_each_test_id_once(
    panel: Panel, fake: FakeDaemon
) -> None:
    day = {
        "date": "2026-11-27",
        "hours": 9.5,
        "messages_by_hour": [0] * 9 + [4] + [0] * 14,
        "mood": 0.2,
        "suggestions": {"<script>x</script>": {"accepted": 1}},
    }
    fake.answers["report.days"] = {"days": [day], "outcomes": ["accepted"]}
    page = client(panel).get("/").text
    for chart in ("chart-hours", "chart-messages", "chart-mood", "chart-kinds"):
        assert page.count(f'data-testid="{chart}"') == 1, chart
        assert re.search(rf'<svg[^>]*data-testid="{chart}"', page), chart
    assert "<script>x" not in page and "&lt;script&gt;x" in page
