"""The web panel in a real browser (Debian's chromium, driven by Playwright), on a real daemon
that runs the real panel process, opened with the URL ``alma-ctl web`` prints.

A messy folder's suggestion accepted in the page moves the files, and undone in the page brings
them back byte for byte; a rejection with a reason typed in the page is what
``alma-ctl suggestions list --all`` shows; a memory found by the page's search is forgotten and
restored there, and edited in it is what ``alma-ctl memory show`` prints, and its undo restores it; a chat message streams into
the page. Each page's screenshot goes to docs/panel/. The model is a stub OpenAI-compatible
server (the chat's e2e tests use it too): what it says is the test's to decide.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.daemon import DaemonRoot
from tests.support.openai_stub import ModelStub
from tests.support.panel import SHOTS, browser, login_url, with_panel
from tests.support.trees import snapshot

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]

#: What the stub model answers; the persona holds it too, so the chat's check of a model's
#: text (agent.voice.verify) lets it through as what ALMA gave the model.
ANSWER = (
    "El respaldo de la base de datos se hace cada noche a las tres. "
    "Conviene comprobar el último respaldo antes de cambiar el esquema."
)
VIEW = {"width": 1000, "height": 700}


@dataclass
class World:
    alma: DaemonRoot
    port: int
    stub: ModelStub
    page: Any

    def goto(self, path: str) -> None:
        self.page.goto(f"http://127.0.0.1:{self.port}{path}")

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"))


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    alma = DaemonRoot(memory=True).init()
    alma.policy(monitor__settle_seconds=0, monitor__new_per_day=0)
    port = with_panel(alma)
    alma.extra_env["LANGUAGE"] = "es"  # the person's language: the pages (and shots) in Spanish
    persona = alma.root / "system" / "persona.md"
    persona.write_text(f"Eres ALMA.\n\n{ANSWER}\n", encoding="utf-8")
    try:
        with ModelStub(ANSWER, piece=4, pause=0.03) as stub, browser() as chromium:
            alma.set_settings("model", "url", stub.url)
            alma.set_settings("model", "max_tokens", 400)
            alma.start(timeout=180)
            context = chromium.new_context(viewport=VIEW, locale="es-ES")
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.goto(login_url(alma))
            yield World(alma, port, stub, page)
            context.close()
            alma.stop()
    finally:
        alma.close()


def test_the_url_of_alma_ctl_web_opens_the_panel(world: World) -> None:
    page = world.page
    assert page.url == f"http://127.0.0.1:{world.port}/"  # the token became a cookie
    for chart in ("chart-hours", "chart-messages", "chart-mood", "chart-kinds"):
        assert page.get_by_test_id(chart).count() == 1
        assert page.locator(f'svg[data-testid="{chart}"]').count() == 1, "the plot is drawn"
    assert page.get_by_test_id("report").inner_text().strip()
    world.shot("today")
    cookies = page.context.cookies()
    session = next(c for c in cookies if c["name"] == f"alma_panel_{world.port}")
    assert session["httpOnly"] and session["sameSite"] == "Strict"


def test_accept_moves_the_files_and_undo_brings_them_back_byte_exact(world: World) -> None:
    alma, page = world.alma, world.page
    alma.messy_folder("user/proyecto", n=30)
    before = snapshot(alma.root / "user" / "proyecto")
    alma.analyze()
    found = alma.wait_suggestion(kind="organize", target="user/proyecto", timeout=120)
    sid = found["id"]
    world.goto("/suggestions")
    row = page.get_by_test_id(f"suggestion-{sid}")
    assert row.is_visible()
    world.shot("suggestions")
    page.get_by_test_id(f"accept-{sid}").click()
    page.wait_for_url("**/suggestions")
    shown = page.get_by_test_id("flash").inner_text()
    action = alma.wait_action(lambda a: a["suggestion_id"] == sid, what="the accept's action")
    assert action["status"] == "done"
    assert str(action["id"]) in shown  # alma-ctl's sentence for the accept
    after = snapshot(alma.root / "user" / "proyecto")
    assert after != before and not any(path in after for path in before if "/" not in path)
    world.goto(f"/suggestions/{sid}")
    world.shot("suggestion")
    world.goto("/history")
    world.shot("history")
    page.get_by_test_id(f"undo-{action['id']}").click()
    page.wait_for_url("**/history")
    undone = alma.ok("history")
    assert any(a["id"] == action["id"] and a["status"] == "undone" for a in undone), undone
    assert snapshot(alma.root / "user" / "proyecto") == before


def test_a_new_suggestion_appears_and_its_rejection_with_a_reason_shows_in_alma_ctl(
    world: World,
) -> None:
    alma, page = world.alma, world.page
    world.goto("/suggestions")
    alma.messy_folder("user/papeles", n=24, exts=("pdf", "txt", "csv", "odt"))
    alma.analyze()
    sid = alma.wait_suggestion(kind="organize", target="user/papeles", timeout=120)["id"]
    # The page shows it without being reloaded by the test (its script asks for new ones).
    page.get_by_test_id(f"reason-{sid}").wait_for(state="visible", timeout=60_000)
    reason = "Prefiero ordenarlos a mano este mes"
    page.get_by_test_id(f"reason-{sid}").fill(reason)
    page.get_by_test_id(f"reject-{sid}").click()
    page.wait_for_url("**/suggestions")
    listed = {s["id"]: s for s in alma.ok("suggestions", "list", "--all")}
    assert listed[sid]["status"] == "rejected"
    assert listed[sid].get("reject_reason") == reason, listed[sid]


def test_a_memory_found_and_edited_in_the_page_is_what_memory_show_prints(world: World) -> None:
    alma, page = world.alma, world.page
    stored = alma.ok("memory", "add", "Decidí usar SQLite para la base de memorias", "--tag", "db")
    mid = stored["id"]
    world.goto("/memory")
    page.get_by_test_id("memory-query").fill("SQLite base de memorias")
    page.get_by_test_id("memory-query").press("Enter")
    page.get_by_test_id(f"memory-{mid}").get_by_role("link").click()
    world.shot("memory")
    page.get_by_test_id("memory-forget").click()
    page.wait_for_url(f"**/memory/{mid}")
    assert alma.ok("memory", "show", mid)["archived"] is True
    page.get_by_test_id("memory-restore").click()
    page.wait_for_url(f"**/memory/{mid}")
    assert alma.ok("memory", "show", mid)["archived"] is False
    new_text = "Decidí usar SQLite con WAL para la base de memorias"
    page.get_by_test_id("memory-edit-text").fill(new_text)
    page.get_by_test_id("memory-edit-tags").fill("db, sqlite")
    page.get_by_test_id("memory-edit-importance").select_option("5")
    page.get_by_test_id("memory-save").click()
    page.wait_for_url(f"**/memory/{mid}")
    shown = alma.ok("memory", "show", mid)
    assert (shown["content"], sorted(shown["tags"]), shown["importance"]) == (
        new_text,
        ["db", "sqlite"],
        5,
    )
    alma.ok("undo")
    restored = alma.ok("memory", "show", mid)
    assert (restored["content"], restored["tags"]) == (stored["content"], stored["tags"])


def test_a_chat_message_streams_into_the_page(world: World) -> None:
    page = world.page
    world.goto("/chat")
    page.get_by_test_id("chat-input").fill("¿Cuándo se hace el respaldo de la base de datos?")
    page.get_by_test_id("chat-send").click()
    answer = page.get_by_test_id("chat-answer").last
    # Streamed: some of the answer is on the page before all of it is.
    page.wait_for_function(
        "([a, whole]) => a.textContent.length > 0 && a.textContent.length < whole",
        arg=[answer.element_handle(), len(ANSWER)],
    )
    page.wait_for_function(
        "a => a.getAttribute('aria-busy') === 'false'", arg=answer.element_handle()
    )
    assert "cada noche a las tres" in answer.inner_text()
    world.shot("chat")


def test_the_system_page_shows_backups_model_and_autonomy(world: World) -> None:
    page = world.page
    world.goto("/system")
    assert page.get_by_test_id("autonomy-status").inner_text().strip()
    assert page.get_by_test_id("model-status").inner_text().strip()
    page.get_by_test_id("autonomy-off").click()
    page.wait_for_url("**/system")
    assert world.alma.ok("autonomy", "status")["paused"] is True
    page.get_by_test_id("autonomy-on").click()
    page.wait_for_url("**/system")
    assert world.alma.ok("autonomy", "status")["paused"] is False
    world.shot("system")
