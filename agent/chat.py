"""The chat's daemon side: sessions, one message's prompt, its streamed answer, its log.

``chat.start`` opens a session (its recent turns live here, in memory: a chat is a
conversation, the log file is its record). ``chat.send`` returns a
:class:`~control.stream.StreamReply` at once; the model's worker builds the prompt (it needs
the model's tokenizer), streams the answer as token events, and logs both turns (§6).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from actions.scan import read_file
from actions.tree import Tree
from agent.model import Backend, ModelRuntime, generate
from agent.prompt import assemble
from agent.turnlog import append_exchange
from control.stream import StreamReply
from policies.errors import AlmaError, NotFoundError, UnavailableError
from policies.i18n import _, current_language, language
from policies.layout import RootLayout

log = logging.getLogger("alma.chat")

#: Turns kept per session (the prompt takes what fits, newest first).
MAX_TURNS = 40
MAX_SESSIONS = 64
#: The persona file is read whole; a persona longer than this is cut.
MAX_PERSONA_BYTES = 64 * 1024
FALLBACK_PERSONA = (
    "Eres ALMA, el asistente local de esta persona. Respondes en el idioma de la persona, "
    "breve y claro."
)
#: Context is given at most this share of the model's window (the rest: turns and answer).
CONTEXT_SHARE = 3


@dataclass(frozen=True)
class ChatLimits:
    max_tokens: int = 512
    timeout_s: float = 120.0
    context_budget: int = 1500


class Session:
    __slots__ = ("id", "turns")

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.turns: deque[tuple[str, str]] = deque(maxlen=MAX_TURNS)


ContextFn = Callable[[str, int], str]
PendingFn = Callable[[], list[dict[str, Any]]]


class ChatService:
    """``context(message, budget_tokens)`` gives the principles and memories as text;
    ``pending()`` the pending suggestions; both are the daemon's real parts (or test fakes)."""

    def __init__(
        self,
        layout: RootLayout,
        runtime: ModelRuntime,
        *,
        context: ContextFn,
        pending: PendingFn,
        limits: ChatLimits = ChatLimits(),
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        self.layout = layout
        self.runtime = runtime
        self.context = context
        self.pending = pending
        self.limits = limits
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def start(self) -> dict[str, Any]:
        session = Session(secrets.token_hex(8))
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return {"session": session.id, "pending": self.pending(), "model": self.runtime.status()}

    def send(self, session_id: str, message: str) -> StreamReply:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                self._sessions.move_to_end(session_id)
        if session is None:
            raise NotFoundError(
                _(
                    "No chat session {session} (the daemon may have restarted); start a new one.",
                    session=repr(session_id[:40]),
                )
            )
        if not self.runtime.configured:
            raise UnavailableError(self.runtime.unavailable_sentence())
        reply = StreamReply()
        asked_at = self.clock()
        if self.runtime.loading_needed():
            reply.emit({"type": "status", "text": "cargando el modelo"})
        lang = current_language()  # the worker's sentences are for this person too

        def job(backend: Backend | None) -> None:
            with language(lang):
                self._answer(backend, session, message, asked_at, reply)

        try:
            self.runtime.submit_chat(job)
        except BaseException:
            reply.close()
            raise
        return reply

    # ------------------------------------------------------------------ in the model's worker

    def _answer(
        self,
        backend: Backend | None,
        session: Session,
        message: str,
        asked_at: datetime,
        reply: StreamReply,
    ) -> None:
        try:
            if backend is None:
                reply.fail(UnavailableError(self.runtime.unavailable_sentence()))
                return
            started = time.monotonic()
            deadline = started + self.limits.timeout_s
            reply.emit({"type": "status", "text": "pensando"})
            prompt = assemble(
                persona=self.persona(),
                context=self._context(message, backend),
                history=list(session.turns),
                message=message,
                n_ctx=backend.n_ctx,
                max_answer=self.limits.max_tokens,
                count=backend.count_tokens,
            )
            result = generate(
                backend,
                prompt.messages,
                max_tokens=prompt.max_answer,
                deadline=deadline,
                cancelled=reply.cancelled.is_set,
                on_text=lambda text: reply.emit({"type": "token", "text": text}),
            )
        except AlmaError as exc:
            reply.fail(exc)
            return
        except Exception:
            log.exception("chat generation failed")
            reply.fail(
                AlmaError(_("The model failed while answering; the daemon log has details."))
            )
            return
        ms = int((time.monotonic() - started) * 1000)
        self.runtime.record_speed(result)
        answer = result.text.strip()
        session.turns.append(("user", message))
        if answer:
            session.turns.append(("assistant", answer))
        logged = append_exchange(
            self.layout,
            asked_at=asked_at,
            question=message,
            answered_at=self.clock(),
            answer=answer,
            model=result.model,
            tokens=result.tokens,
            ms=ms,
            stopped=result.stopped,
        )
        reply.finish(
            {
                "text": result.text,
                "stopped": result.stopped,
                "tokens": result.tokens,
                "ms": ms,
                "first_token_ms": result.first_token_ms,
                "model": result.model,
                "prompt_tokens": prompt.tokens,
                "turns_dropped": prompt.turns_dropped,
                "message_cut": prompt.message_cut,
                "logged": logged,
            }
        )

    def _context(self, message: str, backend: Backend) -> str:
        budget = max(100, min(self.limits.context_budget, backend.n_ctx // CONTEXT_SHARE))
        try:
            return self.context(message, budget)
        except AlmaError as exc:  # memory still loading or off: answer without it
            log.info("chat without memories: %s", exc.message)
            return ""

    def persona(self) -> str:
        """``system/persona.md``, read the one safe way (actions.scan.read_file: no link, no FIFO,
        at most MAX_PERSONA_BYTES); the built-in one if missing."""
        path = self.layout.persona_file
        try:
            with Tree(path.parent) as tree:
                read = read_file(tree, path.name, limit=MAX_PERSONA_BYTES)
        except OSError:  # no system/ folder
            read = None
        text = read.data.decode("utf-8", errors="replace").strip() if read else ""
        return text or FALLBACK_PERSONA
