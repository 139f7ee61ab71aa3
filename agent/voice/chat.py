"""The chat's daemon side: sessions, one message's prompt, its streamed answer, its log.

``chat.start`` opens a session (its recent turns live here, in memory: a chat is a
conversation, the log file is its record). ``chat.send`` returns a
:class:`~control.stream.StreamReply` at once; the model's worker builds the prompt (it needs
the model's tokenizer), streams the answer as token events, and logs both turns (§6).

Grounded whatever the model: when memories answer the message, the person sees
them first (a ``known`` event: each quoted with its date and source), shown by the daemon, not
left to the model, which may be a small one that ignores them. The model's text is bounded:
its sampling (``agent.voice.model.CHAT_SAMPLING``), a loop cut as soon as the text repeats itself
(said to the person, ``stopped: "loop"``), a citation shown only if it names a source the
model was given (:class:`AnswerGuard`). An answer that loops, stops short or cites what does
not exist is never given back to the model as history, and the history is bounded in tokens
(dropped in halves, so the prompt's start stays the same text most turns): the time to the
first word stays flat as a chat grows.
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from actions.safe_read import read_file
from actions.tree import Tree
from agent.voice.model import CHAT_SAMPLING, Backend, ModelRuntime, generate
from agent.voice.prompt import assemble
from agent.voice.turnlog import append_exchange
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
#: The session's earlier turns are given at most this share of the model's window (one or
#: two exchanges with the embedded model's 4,096; a small model copies its earlier answers,
#: and a long history makes the first word slower at every turn); past it, the oldest
#: go until half of it is left.
HISTORY_SHARE = 32
#: What looks like a citation of a source inside [brackets]: a path ("logs/1987-04-30:5"), a
#: file with an extension, a name with a line ("notas:12"), or a source that is not a file.
_CITATION = re.compile(
    r"(?:[\w.-]+/)+[\w.-]*(?::\d+)?|[\w.-]+\.[A-Za-z]\w*(?::\d+)?|[\w.-]+:\d+|alma-ctl|examples"
)
#: A bracket is held back until it closes, for at most this many characters.
_HELD = 160
#: A loop: the text's end repeats the text before it, 3 times for a short piece, twice for a
#: long one (a 40-character run written twice in a row is not prose).
_PERIODS = range(6, 400)
_LONG = 40
#: A line written this many times (numbers and case aside) is a loop too.
_SAME_LINES = 3


@dataclass(frozen=True)
class ChatLimits:
    max_tokens: int = 512
    timeout_s: float = 120.0
    context_budget: int = 1500


class Session:
    __slots__ = ("id", "tokens", "turns")

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.turns: deque[tuple[str, str]] = deque(maxlen=MAX_TURNS)
        self.tokens: deque[int] = deque(maxlen=MAX_TURNS)  # each turn's, by the model's count

    def remember(self, question: str, answer: str, count: Callable[[str], int]) -> None:
        self.turns.extend([("user", question), ("assistant", answer)])
        self.tokens.extend([count(question), count(answer)])

    def bound(self, most: int) -> None:
        """Past ``most`` tokens, drop the oldest exchanges until half of it is left: the
        history then keeps its first turns for several messages (a model server reuses what
        the previous prompt began with), instead of losing one at every message."""
        if sum(self.tokens) <= most:
            return
        while self.turns and sum(self.tokens) > most // 2:
            for _turn in range(2):
                if self.turns:
                    self.turns.popleft()
                    self.tokens.popleft()


class AnswerGuard:
    """What the person is shown of the model's text as it streams, through ``emit``.

    A ``[...]`` that looks like a citation is held until it closes and shown only if it names
    one of ``sources`` (what the model was given); one that does not exist is left out and
    noted in ``invented``. When the text starts repeating itself, ``looped`` is set (the
    caller stops the model) and ``text`` ends where the repetition began."""

    def __init__(self, sources: set[str], emit: Callable[[str], None]) -> None:
        self.sources = sources
        self.emit = emit
        self.invented: list[str] = []
        self.looped = False
        self._shown: list[str] = []
        self._held = ""
        self._cut: int | None = None

    @property
    def text(self) -> str:
        shown = "".join(self._shown)
        return shown[: self._cut] if self._cut is not None else shown

    def feed(self, piece: str) -> None:
        if self.looped:
            return
        out: list[str] = []
        for ch in piece:
            if self._held:
                self._held += ch
                if ch == "]":
                    out.append(self._resolve(self._held))
                    self._held = ""
                elif ch == "\n" or len(self._held) > _HELD:
                    out.append(self._held)
                    self._held = ""
            elif ch == "[":
                self._held = ch
            else:
                out.append(ch)
        self._show("".join(out))

    def finish(self) -> None:
        if self._held and not self.looped:
            self._show(self._held)
        self._held = ""

    def _resolve(self, bracket: str) -> str:
        inner = bracket[1:-1].strip()
        if _CITATION.fullmatch(inner) and inner not in self.sources:
            self.invented.append(inner)
            return ""
        return bracket

    def _show(self, text: str) -> None:
        if not text:
            return
        self._shown.append(text)
        self.emit(text)
        start = loop_start("".join(self._shown))
        if start is not None:
            self.looped = True
            self._cut = start


def loop_start(text: str) -> int | None:
    """Where the repetition that ``text`` ends in began (its first copy kept), or None."""
    n = len(text)
    for period in _PERIODS:
        copies = 3 if period < _LONG else 2
        if copies * period > n:
            break
        unit = text[n - period :]
        if any(c.isalpha() for c in unit) and all(
            text[n - (k + 1) * period : n - k * period] == unit for k in range(1, copies)
        ):
            return n - (copies - 1) * period
    lines = text.split("\n")
    if len(lines) > _SAME_LINES:
        last = _line_key(lines[-2])  # the last complete line
        if len(last) >= 8:
            same = [i for i, line in enumerate(lines[:-1]) if _line_key(line) == last]
            if len(same) >= _SAME_LINES:
                return len("\n".join(lines[: same[1]]))
    return None


def _line_key(line: str) -> str:
    return " ".join(re.sub(r"[\d\W_]+", " ", line.lower()).split())


ContextFn = Callable[[str, int], dict[str, Any]]
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
            ctx = self._context(message, backend)
            known = [i for i in ctx.get("items", []) if i.get("layer") != "L-inf"]
            if known:  # what ALMA knows, shown as it is, whatever the model makes of it
                reply.emit({"type": "known", "text": known_block(known), "items": known})
            session.bound(backend.n_ctx // HISTORY_SHARE)
            prompt = assemble(
                persona=self.persona(),
                context=str(ctx.get("principles_text", "")),
                memories=str(ctx.get("memories_text", "")),
                history=list(session.turns),
                message=message,
                n_ctx=backend.n_ctx,
                max_answer=self.limits.max_tokens,
                count=backend.count_tokens,
                history_tokens=backend.n_ctx // HISTORY_SHARE,
            )
            sources = {str(i.get("source", "")) for i in ctx.get("items", [])}
            guard = AnswerGuard(sources, lambda text: reply.emit({"type": "token", "text": text}))
            result = generate(
                backend,
                prompt.messages,
                max_tokens=prompt.max_answer,
                deadline=deadline,
                cancelled=lambda: reply.cancelled.is_set() or guard.looped,
                on_text=guard.feed,
                sampling=CHAT_SAMPLING,
            )
            guard.finish()
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
        answer = guard.text.strip()
        stopped = "loop" if guard.looped else result.stopped
        if stopped == "done" and answer and not guard.invented:
            session.remember(message, answer, backend.count_tokens)
        logged = append_exchange(
            self.layout,
            asked_at=asked_at,
            question=message,
            answered_at=self.clock(),
            answer=answer,
            model=result.model,
            tokens=result.tokens,
            ms=ms,
            stopped=stopped,
        )
        reply.finish(
            {
                "text": guard.text,  # what the person was shown
                "stopped": stopped,
                "tokens": result.tokens,
                "ms": ms,
                "first_token_ms": result.first_token_ms,
                "model": result.model,
                "prompt_tokens": prompt.tokens,
                "turns_dropped": prompt.turns_dropped,
                "message_cut": prompt.message_cut,
                "known": len(known),
                "invented_citations": guard.invented,
                "logged": logged,
            }
        )

    def _context(self, message: str, backend: Backend) -> dict[str, Any]:
        budget = max(100, min(self.limits.context_budget, backend.n_ctx // CONTEXT_SHARE))
        try:
            return self.context(message, budget)
        except AlmaError as exc:  # memory still loading or off: answer without it
            log.info("chat without memories: %s", exc.message)
            return {}

    def persona(self) -> str:
        """``system/persona.md``, read the one safe way (actions.safe_read.read_file: no link, no FIFO,
        at most MAX_PERSONA_BYTES); the built-in one if missing."""
        path = self.layout.persona_file
        try:
            with Tree(path.parent) as tree:
                read = read_file(tree, path.name, limit=MAX_PERSONA_BYTES)
        except OSError:  # no system/ folder
            read = None
        text = read.data.decode("utf-8", errors="replace").strip() if read else ""
        return text or FALLBACK_PERSONA


def known_block(items: list[dict[str, Any]]) -> str:
    """The memories that answer a message as the person sees them: each quoted with the day
    it was stated and where it comes from."""
    lines = [_("What ALMA knows about this:")]
    for item in items:
        day = str(item.get("created_at", ""))[:10]
        where = ", ".join(x for x in (day, str(item.get("source", ""))) if x)
        lines.append(f"  · «{' '.join(str(item.get('content', '')).split())}» ({where})")
    return "\n".join(lines)
