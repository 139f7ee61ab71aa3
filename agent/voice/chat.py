"""The chat's daemon side: sessions, one message's prompt, its streamed answer, its log.

``chat.start`` opens a session (its recent turns live here, in memory: a chat is a
conversation, the log file is its record). ``chat.send`` returns a
:class:`~control.stream.StreamReply` at once; the model's worker builds the prompt (it needs
the model's tokenizer), streams the answer as token events, and logs both turns (§6).

Grounded whatever the model: the memories and principles that answer the message are shown
first (a ``known`` event: each quoted with its date and source), by the daemon, not left to the
model, which may be a small one that ignores them; when nothing answers a question, the person
is told ALMA has nothing stored on it and how to tell it. The model's text reaches the person
only through :class:`agent.voice.verify.Verifier`, the one check of a model's text: sentence by
sentence, each shown only when what ALMA gave the model supports it, loops and invented
citations cut, and one line saying how many sentences were left out. The answer is in the
message's language (:func:`policies.i18n.message_language`), whatever the daemon's. An answer
that loops, stops short or had anything left out is never given back to the model as history,
and the history is bounded in tokens (dropped in halves, so the prompt's start stays the same
text most turns): the time to the first word stays flat as a chat grows.
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

from actions.safe_read import read_file
from actions.tree import Tree
from agent.voice.model import CHAT_SAMPLING, Backend, ModelRuntime, generate
from agent.voice.prompt import assemble, framing
from agent.voice.turnlog import append_exchange
from agent.voice.verify import Verifier, dropped_sentence, grounds_of
from control.stream import StreamReply
from policies.errors import AlmaError, NotFoundError, UnavailableError
from policies.i18n import _, current_language, language, message_language
from policies.layout import RootLayout
from policies.results import ChatAnswer, ChatStart, Context, ContextItem, Suggestion

log = logging.getLogger("alma.chat")

#: Turns kept per session (the prompt takes what fits, newest first).
MAX_TURNS = 40
MAX_SESSIONS = 64
#: Sentences of a session's answers remembered to leave their repeats out.
MAX_SAID = 400
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


@dataclass(frozen=True)
class ChatLimits:
    max_tokens: int = 512
    timeout_s: float = 120.0
    context_budget: int = 1500


class Session:
    __slots__ = ("id", "said", "tokens", "turns")

    def __init__(self, session_id: str) -> None:
        self.id = session_id
        self.turns: deque[tuple[str, str]] = deque(maxlen=MAX_TURNS)
        self.tokens: deque[int] = deque(maxlen=MAX_TURNS)  # each turn's, by the model's count
        #: The sentences shown in this session (keys): a repeat of one is left out.
        self.said: deque[str] = deque(maxlen=MAX_SAID)

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


ContextFn = Callable[[str, int], Context]
PendingFn = Callable[[], list[Suggestion]]
AsksFn = Callable[[str], bool]


def answers(item: ContextItem) -> bool:
    """Whether a context item answers the message: its ``answers`` when the context says,
    else a memory does (it was selected for the message) and a principle does not (every
    principle is handed whatever the message)."""
    said = item.get("answers")
    if said is not None:
        return said
    return item["layer"] in ("L1", "L0")


def answering(ctx: Context) -> tuple[list[ContextItem], bool]:
    """The items that answer the message (quoted to the person), and whether any does."""
    items = [i for i in ctx["items"] if answers(i)]
    answered = ctx.get("answered")
    return items, answered if isinstance(answered, bool) else bool(items)


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
        asks: AsksFn = lambda message: "?" in message,
    ) -> None:
        self.layout = layout
        self.runtime = runtime
        self.context = context
        self.pending = pending
        self.asks = asks  # the memory wing's rule: whether a message only asks
        self.limits = limits
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def start(self) -> ChatStart:
        session = Session(secrets.token_hex(8))
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return {"session": session.id, "pending": self.pending(), "model": self.runtime.status()}

    def send(self, session: str, message: str) -> StreamReply:
        session_id = session
        with self._lock:
            found = self._sessions.get(session_id)
            if found is not None:
                self._sessions.move_to_end(session_id)
        if found is None:
            raise NotFoundError(
                _(
                    "No chat session {session} (the daemon may have restarted); start a new one.",
                    session=repr(session_id[:40]),
                )
            )
        if not self.runtime.configured:
            raise UnavailableError(self.runtime.unavailable_sentence())
        reply = StreamReply(on_last=self.runtime.chat_answered)
        asked_at = self.clock()
        if self.runtime.loading_needed():
            reply.emit({"type": "status", "text": "cargando el modelo"})
        # The answer, its headings and the worker's sentences in the message's language.
        lang = message_language(message, current_language())

        def job(backend: Backend | None) -> None:
            with language(lang):
                self._answer(backend, found, message, asked_at, reply, lang)

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
        lang: str,
    ) -> None:
        try:
            if backend is None:
                reply.fail(UnavailableError(self.runtime.unavailable_sentence()))
                return
            started = time.monotonic()
            deadline = started + self.limits.timeout_s
            reply.emit({"type": "status", "text": "pensando"})
            ctx = self._context(message, backend)
            known, answered = answering(ctx)
            if known:  # what ALMA knows, shown as it is, whatever the model makes of it
                reply.emit({"type": "known", "text": known_block(known), "items": known})
            elif "memories_text" in ctx and self.asks(message):
                # Nothing the memory holds answers (it was searched): said, not left to the model.
                reply.emit({"type": "known", "text": nothing_stored(), "items": []})
            session.bound(backend.n_ctx // HISTORY_SHARE)
            persona = self.persona()
            prompt = assemble(
                persona=persona,
                context=ctx.get("principles_text", ""),
                memories=ctx.get("memories_text", ""),
                history=list(session.turns),
                message=message,
                n_ctx=backend.n_ctx,
                max_answer=self.limits.max_tokens,
                count=backend.count_tokens,
                history_tokens=backend.n_ctx // HISTORY_SHARE,
                lang=lang,
                answered=answered,
            )
            grounds = grounds_of(
                ctx["items"],
                message=message,
                extra=[persona],
                framing=framing(),
                earlier=session.said,
            )
            guard = Verifier(grounds, lambda text: reply.emit({"type": "token", "text": text}))
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
        session.said.extend(guard.keys)
        if stopped == "done" and answer and not guard.invented:  # what was shown: checked
            session.remember(message, answer, backend.count_tokens)
        for why, sentence in guard.dropped:  # as the model wrote it, for whoever checks it
            log.info("left out of an answer (%s): %r", why, sentence)
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
        answered_with: ChatAnswer = {
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
            "answered": answered,
            "language": lang,
            "invented_citations": guard.invented,
            "dropped": len(guard.dropped),
            "dropped_note": dropped_sentence(len(guard.dropped)) if guard.dropped else "",
            "logged": logged,
        }
        reply.finish(answered_with)

    def _context(self, message: str, backend: Backend) -> Context:
        budget = max(100, min(self.limits.context_budget, backend.n_ctx // CONTEXT_SHARE))
        try:
            return self.context(message, budget)
        except AlmaError as exc:  # memory still loading or off: answer without it
            log.info("chat without memories: %s", exc.message)
            return {"text": "", "items": []}

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


def nothing_stored() -> str:
    """What the person reads when nothing ALMA holds answers their question."""
    return _(
        "I have nothing stored about this. If you want me to remember it, tell me with "
        "!remember TEXT."
    )


def known_block(items: list[ContextItem]) -> str:
    """The memories that answer a message as the person sees them: each quoted with the day
    it was stated and where it comes from."""
    lines = [_("What ALMA knows about this:")]
    for item in items:
        day = str(item.get("created_at", ""))[:10]
        where = ", ".join(x for x in (day, str(item.get("source", ""))) if x)
        lines.append(f"  · «{' '.join(str(item.get('content', '')).split())}» ({where})")
    return "\n".join(lines)
