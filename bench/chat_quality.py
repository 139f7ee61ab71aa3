"""The chat's answers with a real model: what the person is shown, and nothing invented (docs/chat.md).

    .venv/bin/python -m tests.support.grounded_eval /tmp/grounded            # the store, once
    .venv/bin/python bench/chat_quality.py /tmp/grounded                     # grounded set, embedded model
    .venv/bin/python bench/chat_quality.py /tmp/grounded --set heldout       # the frozen held-out set
    .venv/bin/python bench/chat_quality.py /tmp/grounded --set heldout --stub
    .venv/bin/python bench/chat_quality.py /tmp/grounded --set heldout_b     # any set in tests/data
    .venv/bin/python bench/chat_quality.py /tmp/grounded --model URL         # an OpenAI-compatible one

The store is the grounded set's (tests/support/grounded_eval_data.py: 2,000+ memories); with
``--set NAME`` a held-out set's memories (tests/data/NAME/memories.jsonl, written blind and
frozen) are added to it once, as ``tests.support.heldout_eval`` adds them (a store of one set
each), and its questions are asked. The chat answers through the
daemon's own ChatService (the context, the quoted block, the prompt, the one check of the
model's text, the history) and the daemon's own model loader, one session of ``--questions``
turns spread over the set. The stub answers every message with the same made-up sentences
(a name, a place and a year no memory holds, then small talk): a model that invents.

Per question: for one something answers, whether its answer is shown (an answer memory quoted
in the block, or its key words in the model's shown text); for one nothing answers, whether the
person reads the "nothing stored" sentence and no memory. Every shown sentence of the model is
checked here, independently of agent.voice.verify: one that names a name (a capitalised word
after the first, a word in capitals), a number, a date or a path that is in no item handed and
not in the question counts as invented. And the time to the first token, turn 10 against turn 1.
The chat's log goes to a scratch root, never the store's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.memory.service import MemoryService
from agent.voice import backends
from agent.voice.chat import ChatLimits, ChatService, nothing_stored
from agent.voice.model import Backend, ModelRuntime
from agent.voice.process import ProcessOptions
from control.stream import StreamReply
from policies.i18n import language
from policies.layout import RootLayout
from state.memory.normalize import content_words
from tests.support.grounded_eval import build_store
from tests.support.heldout_eval import DATA, load_heldout
from tests.support.invented import invented_in
from tests.support.openai_stub import ModelStub

INVENTS = (
    "Según mis notas, te llamas Ramiro Olmedo y vives en Cuenca desde 2011. ¡Espero que te ayude!"
)


@dataclass
class Question:
    text: str
    answers: list[str]  # the answer memories' texts ([] when nothing answers)
    key: list[str] = field(default_factory=list)  # words the shown answer must hold
    lang: str = ""  # the question's language, where the set says


def drain(reply: StreamReply, timeout: float = 900.0) -> tuple[list[dict[str, Any]], Any]:
    items: list[tuple[str, object]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        items.extend(reply.take())
        if items and items[-1][0] != "event":
            break
        time.sleep(0.01)
    reply.close()
    events = [p for k, p in items if k == "event" and isinstance(p, dict)]
    return events, items[-1][1] if items else None


def holds(text: str, answer: str) -> bool:
    """The model's text holds the answer's words: all of its content words but one."""
    words = content_words(answer)
    return len(words & content_words(text)) >= max(1, len(words) - 1)


def heldout(svc: MemoryService, root: Path, name: str) -> list[Question]:
    """The held-out set ``name``'s memories added to the store (once, as its context eval
    adds them), and its questions."""
    folder = DATA / name
    load_heldout(svc, root, folder)
    memories = [json.loads(line) for line in (folder / "memories.jsonl").read_text().splitlines()]
    texts = {m["id"]: m["content"] for m in memories}
    out = []
    for line in (folder / "questions.jsonl").read_text().splitlines():
        q = json.loads(line)
        out.append(
            Question(
                q["question"],
                [texts[i] for i in q["answer_ids"]] if q["kind"] == "answered" else [],
                list(q.get("key") or []),
                q.get("lang", "es"),
            )
        )
    return out


def spread(questions: list[Question], n: int) -> list[Question]:
    """``n`` questions spread over the set, answered and unanswerable in their proportions."""
    if n >= len(questions):
        return questions
    step = len(questions) / n
    return [questions[int(i * step)] for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument(
        "--set",
        default="grounded",
        help="grounded (its report split), or a held-out set of tests/data: heldout, heldout_b, ...",
    )
    parser.add_argument("--model", default="embedded")
    parser.add_argument(
        "--stub", action="store_true", help="an OpenAI-compatible stub that invents"
    )
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument(
        "--threads", type=int, default=max(1, (os.cpu_count() or 2) - 1)
    )  # as the daemon
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--show", action="store_true", help="print each answer")
    args = parser.parse_args()

    if args.set != "grounded" and not (DATA / args.set / "questions.jsonl").is_file():
        parser.error(f"no held-out set {args.set!r} in {DATA}")
    svc, data = build_store(args.root)
    if args.set != "grounded":
        every = heldout(svc, args.root, args.set)
    else:
        answers = {m.id: m.content for m in data.memories}
        every = [
            Question(q.query, [answers[q.expected]] if q.expected else [])
            for q in data.split("report")
        ]
    questions = spread(every, args.questions)
    stub = ModelStub(INVENTS) if args.stub else None
    model = stub.__enter__().url if stub else args.model

    def load(path: str, lora: str | None) -> Backend:
        return backends.load(path, ProcessOptions(n_ctx=4096, threads=args.threads), lora)

    runtime = ModelRuntime(model, load)
    scratch = Path(tempfile.mkdtemp(prefix="alma-chat-quality-"))
    for sub in ("logs", "system"):
        (scratch / sub).mkdir()
    handed: list[dict[str, Any]] = []

    def context(message: str, budget: int) -> dict[str, Any]:
        ctx = svc.context(message, budget=budget, count_use=False)
        handed.append(ctx)
        return ctx

    chat = ChatService(
        RootLayout(scratch),
        runtime,
        context=context,
        pending=list,
        limits=ChatLimits(max_tokens=args.max_tokens, timeout_s=900.0),
    )
    session = chat.start()["session"]
    rows: list[dict[str, Any]] = []
    try:
        for n, q in enumerate(questions, start=1):
            handed.clear()
            events, result = drain(chat.send(session, q.text))
            if not isinstance(result, dict):
                print(f"{n:3d} failed: {result}")
                continue
            blocks = [e for e in events if e.get("type") == "known"]
            quoted = " ".join(str(e.get("text", "")) for e in blocks)
            items = sum(len(e.get("items") or []) for e in blocks)
            text = str(result["text"])
            given = (
                q.text
                + " "
                + " ".join(
                    f"{i.get('content', '')} {i.get('created_at', '')} {i.get('source', '')}"
                    for ctx in handed
                    for i in ctx.get("items", [])
                )
            )
            made_up = invented_in(text, given)
            with language(str(result.get("language", "es"))):
                nothing = nothing_stored()
            row = {
                "answerable": bool(q.answers),
                "shown": bool(q.answers)
                and (
                    any(a in quoted for a in q.answers)
                    or (bool(q.key) and all(k.casefold() in text.casefold() for k in q.key))
                    or any(holds(text, a) for a in q.answers)
                ),
                "nothing": not q.answers and nothing in quoted and items == 0,
                "invented": made_up,
                "dropped": int(result.get("dropped") or 0),
                "lang_ok": not q.lang or result.get("language") == q.lang,
                "lang": q.lang,
                "ttft": result.get("first_token_ms"),
                "stopped": result["stopped"],
            }
            rows.append(row)
            verdict = (
                ("shown" if row["shown"] else "NOT SHOWN")
                if q.answers
                else ("nothing stored" if row["nothing"] else "MEMORIES QUOTED")
            )
            print(
                f"{n:3d} {q.text!r}: {verdict}, {items} quoted, {row['dropped']} sentences left "
                f"out, invented shown {len(made_up)}, language {result.get('language')}, "
                f"first token {row['ttft']} ms"
            )
            if args.show or made_up:
                print("     shown:", " ".join(text.split())[:300])
            for s, names in made_up:
                print(f"     INVENTED {names}: {s!r}")
    finally:
        runtime.close()
        svc.close()
        if stub:
            stub.__exit__(None, None, None)
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    ttft = [r["ttft"] for r in rows if r["ttft"] is not None]
    english = [r for r in rows if r["lang"] == "en"]
    print(
        f"set {args.set}, model {model}, {len(rows)} questions in one session, "
        f"max_tokens {args.max_tokens}, {svc_count(args.root)}"
    )
    print(f"statements shown that no source supports: {sum(len(r['invented']) for r in rows)}")
    print(
        f"questions whose answer is shown: {sum(r['shown'] for r in answerable)}/{len(answerable)} "
        f"({sum(r['shown'] for r in answerable) / max(1, len(answerable)):.2f})"
    )
    print(
        f"questions nothing answers, answered 'nothing stored' and no memory: "
        f"{sum(r['nothing'] for r in unanswerable)}/{len(unanswerable)} "
        f"({sum(r['nothing'] for r in unanswerable) / max(1, len(unanswerable)):.2f})"
    )
    print(
        f"answered in the message's language: {sum(r['lang_ok'] for r in rows)}/{len(rows)} "
        f"(English questions {sum(r['lang_ok'] for r in english)}/{len(english)}); "
        f"sentences of the model left out: {sum(r['dropped'] for r in rows)}; "
        f"loops cut {sum(r['stopped'] == 'loop' for r in rows)}"
    )
    if len(ttft) >= 10:
        print(
            f"first token: turn 1 {ttft[0]} ms, turn 10 {ttft[9]} ms "
            f"(x{ttft[9] / max(1, ttft[0]):.2f}), median {statistics.median(ttft):.0f} ms, "
            f"last {ttft[-1]} ms"
        )


def svc_count(root: Path) -> str:
    from tests.support.memory_eval import open_service

    svc = open_service(root)
    try:
        return f"{svc.count()} memories stored"
    finally:
        svc.close()


if __name__ == "__main__":
    main()
