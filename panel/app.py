"""The panel's pages: an ASGI app (Starlette) whose every answer comes from the daemon's
commands, through the same client, table and views as alma-ctl (docs/panel.md).

:class:`panel.guard.Guard` stands before every route: the Host, the session, the Origin of a
request that changes something, the security headers. A route that changes something is
declared with :func:`panel.guard.mutation`, which reads the form and checks its CSRF token
before the route runs; there is no other way to declare one here. Each decision is a plain HTML form POSTed and answered with a
redirect and the sentence alma-ctl prints (:func:`control.views.render_result`); the page's
script only adds live updates (new suggestions, the chat's stream).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from control import chat_commands
from control.chat import NO_MESSAGE_YET, answer_notes, memories_today
from control.chat_commands import Local, Run, Usage, help_text, parse_line
from control.client import DaemonUnreachable
from control.views import op_line, render_result
from panel.daemon import Daemon
from panel.guard import Guard, daemon_time, mutation, session_of
from panel.rows import action_row, dicts, diffs, memory_row, report_blocks, suggestion_row
from panel.security import (
    Session,
    Sessions,
    cookie_name,
)
from panel.today import today_figures
from panel.words import words
from policies.errors import AlmaError
from policies.i18n import N_, _, current_language
from policies.limits import LIST_MAX
from policies.states import LEVELS
from policies.text import printable

HERE = Path(__file__).resolve().parent
#: How many memories a search shows (the ranking is memory search's), and the newest listed.
SEARCH_LIMIT = 10
LIST_LIMIT = 30
#: The newest actions History shows first; "more" doubles it, up to the table's limit.
HISTORY_LIMIT = 50
_FULL_PATH = N_(
    "{path} is not a full path: give the model file's whole path (/home/…/model.gguf), "
    "`embedded`, or a server's URL."
)
_FULL_FOLDER = N_(
    "{path} is not a full path: give the new folder's whole path (/media/…/restored)."
)
#: Chat turns a session keeps to show without JavaScript.
MAX_TURNS = 50


def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(HERE / "templates")),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


class Panel:
    """The panel for one root on one port: its sessions, its way to the daemon, its app."""

    def __init__(self, root: str, port: int, daemon: Daemon | None = None) -> None:
        self.root = root
        self.port = port
        self.daemon = daemon or Daemon(root)
        self.sessions = Sessions()
        self.env = _environment()
        self.cookie = cookie_name(port)
        routes = [
            Route("/login", self.login),
            Route("/", self.today),
            Route("/suggestions", self.suggestions),
            Route("/suggestions/pending.json", self.pending_json),
            Route("/suggestions/{id:int}", self.suggestion),
            Route("/suggestions/{id:int}/accept", mutation(self.accept), methods=["POST"]),
            Route("/suggestions/{id:int}/reject", mutation(self.reject), methods=["POST"]),
            Route("/history", self.history),
            Route("/history/{id:int}/undo", mutation(self.undo), methods=["POST"]),
            Route("/memory", self.memory),
            Route("/memory/{id}", self.memory_page),
            Route("/memory/{id}/edit", mutation(self.memory_edit), methods=["POST"]),
            Route("/memory/{id}/forget", mutation(self.memory_forget), methods=["POST"]),
            Route("/memory/{id}/restore", mutation(self.memory_restore), methods=["POST"]),
            Route("/chat", self.chat),
            Route("/chat", mutation(self.chat_send), methods=["POST"]),
            Route("/chat/stream", mutation(self.chat_stream), methods=["POST"]),
            Route("/system", self.system),
            Route("/system/backup", mutation(self.backup_now), methods=["POST"]),
            Route("/system/restore", mutation(self.backup_restore), methods=["POST"]),
            Route("/system/model", mutation(self.model_use), methods=["POST"]),
            Route("/system/autonomy", mutation(self.autonomy), methods=["POST"]),
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ]
        self.app: ASGIApp = Guard(Starlette(routes=routes), self)

    # ------------------------------------------------------------------ helpers
    async def call(self, cmd: str, **args: object) -> Any:
        began = time.perf_counter()
        try:
            return await run_in_threadpool(self.daemon.call, cmd, **args)
        finally:
            spent = daemon_time.get(None)
            if spent is not None:
                spent.append((began, time.perf_counter()))

    def page(
        self, request: Request, template: str, status: int = 200, **context: object
    ) -> HTMLResponse:
        session = session_of(request)
        flashes = list(session.flashes) if session is not None else []
        if session is not None:
            session.flashes.clear()
        html = self.env.get_template(template).render(
            w=words(),
            csrf=session.csrf if session is not None else "",
            flashes=flashes,
            path=request.url.path,
            lang=current_language(),
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def hint(self, request: Request, status: int = 401) -> HTMLResponse:
        """What a request without a session gets: how to open the panel, and nothing else."""
        return self.page(request, "login.html", status)

    def refused(self, request: Request, status: int, sentence: str) -> HTMLResponse:
        return self.page(request, "error.html", status, message=sentence)

    def failed(self, request: Request, exc: AlmaError) -> HTMLResponse:
        status = 503 if isinstance(exc, DaemonUnreachable) else 400
        return self.page(request, "error.html", status, message=exc.message)

    @staticmethod
    def back(to: str) -> RedirectResponse:
        return RedirectResponse(to, status_code=303)

    async def decide(
        self, session: Session, cmd: str, args: dict[str, object], to: str
    ) -> RedirectResponse:
        """Run a command a person decided on and say what alma-ctl says, then show ``to``."""
        try:
            result = await self.call(cmd, **args)
        except AlmaError as exc:
            session.flashes.append(("error", exc.message))
        else:
            session.flashes.append(("ok", render_result(cmd, args, result)))
        return self.back(to)

    # ------------------------------------------------------------------ login
    async def login(self, request: Request) -> Response:
        token = request.query_params.get("token", "")
        sid = self.sessions.login(token) if token else None
        if sid is None:
            return self.hint(request, 403)
        response = self.back("/")
        response.set_cookie(
            self.cookie, sid, httponly=True, samesite="strict", path="/", secure=False
        )
        return response

    # ------------------------------------------------------------------ today
    async def today(self, request: Request) -> Response:
        try:
            report = await self.call("report")
        except AlmaError as exc:
            return self.failed(request, exc)
        days: object = None
        problem = ""
        if self.daemon.offers("report.days"):
            try:
                days = await self.call("report.days")
            except DaemonUnreachable as exc:
                return self.failed(request, exc)
            except AlmaError as exc:  # the report stands without its plots
                problem = exc.message
        figures = {key: Markup(svg) for key, svg in today_figures(days).items()}
        blocks = report_blocks(render_result("report", {}, report))
        return self.page(request, "today.html", report=blocks, figures=figures, problem=problem)

    # ------------------------------------------------------------------ suggestions
    async def suggestions(self, request: Request) -> Response:
        try:
            rows = await self.call("suggestions.list", all=True)
        except AlmaError as exc:
            return self.failed(request, exc)
        items = [suggestion_row(row) for row in dicts(rows)]
        pending = [row for row in items if row["status"] == "pending"]
        decided = [row for row in items if row["status"] != "pending"]
        return self.page(request, "suggestions.html", pending=pending, decided=decided)

    async def pending_json(self, request: Request) -> Response:
        try:
            rows = await self.call("suggestions.list")
        except AlmaError as exc:
            return JSONResponse({"error": exc.message}, status_code=503)
        return JSONResponse({"ids": [row.get("id") for row in dicts(rows)]})

    async def suggestion(self, request: Request) -> Response:
        sid = int(request.path_params["id"])
        try:
            shown = await self.call("suggestions.show", id=sid, all=True)
        except AlmaError as exc:
            return self.failed(request, exc)
        item = suggestion_row(shown if isinstance(shown, dict) else {})
        return self.page(
            request,
            "suggestion.html",
            s=item,
            plan=[op_line(op) for op in item.get("plan") or []],
            diffs=diffs(item.get("diffs")),
        )

    async def accept(self, request: Request, session: Session, form: dict[str, str]) -> Response:
        sid = int(request.path_params["id"])
        return await self.decide(session, "suggestions.accept", {"id": sid}, "/suggestions")

    async def reject(self, request: Request, session: Session, form: dict[str, str]) -> Response:
        sid = int(request.path_params["id"])
        reason = form.get("reason", "").strip() or None
        return await self.decide(
            session, "suggestions.reject", {"id": sid, "reason": reason}, "/suggestions"
        )

    # ------------------------------------------------------------------ history
    async def history(self, request: Request) -> Response:
        asked = request.query_params.get("limit", "")
        limit = min(int(asked), LIST_MAX) if asked.isdigit() and int(asked) > 0 else HISTORY_LIMIT
        try:
            rows = await self.call("history", limit=limit)
        except AlmaError as exc:
            return self.failed(request, exc)
        actions = [action_row(row) for row in dicts(rows)]
        more = min(limit * 2, LIST_MAX) if len(actions) == limit < LIST_MAX else None
        return self.page(request, "history.html", actions=actions, more=more)

    async def undo(self, request: Request, session: Session, form: dict[str, str]) -> Response:
        aid = int(request.path_params["id"])
        return await self.decide(session, "undo", {"id": aid}, "/history")

    # ------------------------------------------------------------------ memory
    async def memory(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        archived = request.query_params.get("archived") == "1"
        try:
            principles: object = []
            if query:
                found = await self.call("memory.search", query=query, limit=SEARCH_LIMIT)
            else:  # two reads of the daemon, asked at once
                found, principles = await asyncio.gather(
                    self.call("memory.list", limit=LIST_LIMIT, archived=archived),
                    self.call("memory.list", limit=100, memory_type="principle"),
                )
        except AlmaError as exc:
            return self.failed(request, exc)
        listed = [m for m in dicts(found) if query or m.get("memory_type") != "principle"]
        return self.page(
            request,
            "memory.html",
            query=query,
            archived=archived,
            memories=[memory_row(m) for m in listed],
            principles=[memory_row(m) for m in dicts(principles)],
        )

    async def memory_page(self, request: Request) -> Response:
        mid = str(request.path_params["id"])
        try:
            memory = await self.call("memory.show", id=mid)
        except AlmaError as exc:
            return self.failed(request, exc)
        row = memory_row(memory if isinstance(memory, dict) else {})
        return self.page(
            request,
            "memory_page.html",
            m=row,
            can_edit=self.daemon.offers("memory.edit"),
            importances=range(1, 6),
        )

    async def memory_edit(
        self, request: Request, session: Session, form: dict[str, str]
    ) -> Response:
        mid = str(request.path_params["id"])
        to = f"/memory/{mid}"
        args: dict[str, object] = {"id": mid}
        if "text" in form:
            args["text"] = form["text"]
        if "tags" in form:
            args["tags"] = [t.strip().lstrip("#") for t in form["tags"].split(",") if t.strip()]
        if form.get("importance", "").isdigit():
            args["importance"] = int(form["importance"])
        if form.get("memory_type", "").strip():
            args["memory_type"] = form["memory_type"].strip()
        try:
            result = await self.call("memory.edit", **args)
        except AlmaError as exc:
            session.flashes.append(("error", exc.message))
            return self.back(to)
        action = result.get("action_id") if isinstance(result, dict) else None
        session.flashes.append(
            (
                "ok",
                _(
                    "Saved memory {id}; undo takes the edit back (action {action}).",
                    id=mid,
                    action=action,
                ),
            )
        )
        return self.back(to)

    async def memory_forget(
        self, request: Request, session: Session, form: dict[str, str]
    ) -> Response:
        mid = str(request.path_params["id"])
        return await self.decide(session, "memory.forget", {"id": mid}, f"/memory/{mid}")

    async def memory_restore(
        self, request: Request, session: Session, form: dict[str, str]
    ) -> Response:
        mid = str(request.path_params["id"])
        return await self.decide(session, "memory.restore", {"id": mid}, f"/memory/{mid}")

    # ------------------------------------------------------------------ chat
    async def _chat_session(self, session: Session) -> str:
        """The daemon's chat session of this panel session, started once (its greeting kept:
        the model and the pending suggestions when it started, as alma chat shows them)."""
        if session.chat is None:
            started = await self.call("chat.start")
            if isinstance(started, dict):
                session.chat = str(started.get("session"))
                session.greeting = render_result("chat.start", {}, started)
        return session.chat or ""

    async def chat(self, request: Request) -> Response:
        session = session_of(request)
        assert session is not None
        try:
            await self._chat_session(session)
        except AlmaError as exc:
            return self.failed(request, exc)
        return self.page(request, "chat.html", greeting=session.greeting, turns=session.turns)

    def _command(self, session: Session, decision: Run | Local | Usage) -> str:
        """A ``!`` line, done as alma chat does it (control.chat_commands reads it): its answer
        in the sentences alma chat shows."""
        if isinstance(decision, Usage):
            return decision.sentence
        if isinstance(decision, Run):
            args = dict(decision.args)
            return render_result(decision.cmd, args, self.daemon.call(decision.cmd, **args))
        if decision.name == "help":
            return help_text()
        if decision.name == "memory_today":
            return memories_today(self.daemon.call("memory.list", limit=1000))
        if decision.name == "context_last":
            said = [t["you"] for t in session.turns if t.get("said") == "message"]
            if not said:
                return _(NO_MESSAGE_YET)
            return render_result("context", {}, self.daemon.call("context", prompt=said[-1]))
        return _("Here the chat ends when you leave the page.")  # !salir

    def _turn(self, session: Session, message: str) -> Iterator[dict[str, str]]:
        """One line through the daemon's chat, as events the page shows: what ALMA knows,
        the answer's text, the notes under it; the turn is kept for the page without JS.
        A ``!`` command is done as in alma chat, never sent to the model."""
        turn = {"you": message, "known": "", "answer": "", "notes": "", "said": "message"}
        decision = parse_line(message)
        if decision is not None and not isinstance(decision, chat_commands.Send):
            turn["said"] = "command"
            try:
                turn["answer"] = printable(self._command(session, decision))
            except AlmaError as exc:
                turn["notes"] = exc.message
            yield {"type": "token", "text": turn["answer"]}
            if turn["notes"]:
                yield {"type": "note", "text": turn["notes"]}
            session.turns.append(turn)
            del session.turns[:-MAX_TURNS]
            return
        try:
            with self.daemon.stream(
                "chat.send", session=session.chat or "", message=message
            ) as stream:
                for event in stream:
                    kind, text = event.get("type"), event.get("text")
                    if not isinstance(text, str):
                        continue
                    if kind == "known":
                        turn["known"] += printable(text)
                        yield {"type": "known", "text": printable(text)}
                    elif kind == "token":
                        turn["answer"] += printable(text)
                        yield {"type": "token", "text": printable(text)}
                notes = answer_notes(stream.result)
        except AlmaError as exc:
            notes = [exc.message]
        turn["notes"] = "\n".join(notes)
        if notes:
            yield {"type": "note", "text": turn["notes"]}
        session.turns.append(turn)
        del session.turns[:-MAX_TURNS]

    async def chat_send(self, request: Request, session: Session, form: dict[str, str]) -> Response:
        message = form.get("message", "").strip()
        if message:
            try:
                await self._chat_session(session)
            except AlmaError as exc:
                session.flashes.append(("error", exc.message))
                return self.back("/chat")
            await run_in_threadpool(lambda: list(self._turn(session, message)))
        return self.back("/chat")

    async def chat_stream(
        self, request: Request, session: Session, form: dict[str, str]
    ) -> Response:
        message = form.get("message", "").strip()
        try:
            await self._chat_session(session)
        except AlmaError as exc:
            return JSONResponse({"type": "note", "text": exc.message}, status_code=503)

        def lines() -> Iterator[str]:
            if message:
                for event in self._turn(session, message):
                    yield json.dumps(event, ensure_ascii=False) + "\n"
            yield json.dumps({"type": "done"}) + "\n"

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    # ------------------------------------------------------------------ backups, model, autonomy
    async def system(self, request: Request) -> Response:
        shown: dict[str, str] = {}
        autonomy: dict[str, Any] = {}
        for cmd in ("autonomy.status", "model.status", "backup.list"):
            try:
                result = await self.call(cmd)
            except DaemonUnreachable as exc:
                return self.failed(request, exc)
            except AlmaError as exc:
                shown[cmd] = exc.message
                continue
            shown[cmd] = render_result(cmd, {}, result)
            if cmd == "autonomy.status" and isinstance(result, dict):
                autonomy = result
        configured = str(autonomy.get("configured", "off"))
        lower = [
            lv
            for lv in LEVELS
            if configured in LEVELS and LEVELS.index(lv) < LEVELS.index(configured)
        ]
        return self.page(
            request,
            "system.html",
            autonomy=shown["autonomy.status"],
            paused=bool(autonomy.get("paused")),
            model=shown["model.status"],
            backups=shown["backup.list"],
            lower=lower,
        )

    async def backup_now(
        self, request: Request, session: Session, form: dict[str, str]
    ) -> Response:
        return await self.decide(session, "backup.now", {}, "/system")

    async def backup_restore(
        self, request: Request, session: Session, form: dict[str, str]
    ) -> Response:
        to = os.path.expanduser(form.get("to", "").strip())
        if to and not os.path.isabs(to):  # no working folder here either
            session.flashes.append(("error", _(_FULL_FOLDER, path=to)))
            return self.back("/system")
        args: dict[str, object] = {"snapshot": form.get("snapshot", "").strip(), "to": to}
        return await self.decide(session, "backup.restore", args, "/system")

    async def model_use(self, request: Request, session: Session, form: dict[str, str]) -> Response:
        # A page has no working folder: a relative path would be read from the daemon's.
        path = os.path.expanduser(form.get("path", "").strip())
        named = path == "embedded" or path.startswith(("http://", "https://", "/"))
        if path and not named:
            session.flashes.append(("error", _(_FULL_PATH, path=path)))
            return self.back("/system")
        return await self.decide(session, "model.use", {"path": path}, "/system")

    async def autonomy(self, request: Request, session: Session, form: dict[str, str]) -> Response:
        what = form.get("do", "")
        if what in ("off", "on"):
            return await self.decide(session, f"autonomy.{what}", {}, "/system")
        return await self.decide(
            session, "autonomy.level", {"level": form.get("level", "")}, "/system"
        )
