"""The chat's answers with a real model, grounded or not (docs/chat.md).

    .venv/bin/python -m tests.support.grounded_eval /tmp/grounded        # the store, once
    .venv/bin/python bench/chat_quality.py /tmp/grounded                 # the embedded model
    .venv/bin/python bench/chat_quality.py /tmp/grounded --model URL     # an OpenAI-compatible one
    .venv/bin/python bench/chat_quality.py /tmp/grounded --stub          # the recording stub

The grounded set's store (tests/support/grounded_eval_data.py: 2,000+ memories) answers the
chat through the daemon's own ChatService (the prompt, the ``known`` block, the answer's
guard, the history) and the daemon's own model loader, one session of ``--questions`` turns:
the report split's questions whose answer is one stored memory, in order. Per question: is the
answer memory in what the person is shown (the ``known`` block quoting it, or the model's text
holding its key words), the citations the guard left out (a citation shown that does not
exist would be a failure; ones left out are counted), how the answer stopped (``max_tokens``
or ``loop``), and the time to the first token, whose tenth turn is compared with the first.
The chat's log goes to a scratch root, never the store's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.voice import backends
from agent.voice.chat import ChatLimits, ChatService
from agent.voice.model import Backend, ModelRuntime
from agent.voice.process import ProcessOptions
from control.stream import StreamReply
from policies.layout import RootLayout
from state.memory.normalize import content_words
from tests.support.grounded_eval import build_store
from tests.support.openai_stub import ModelStub


def drain(reply: StreamReply, timeout: float = 600.0) -> tuple[list[dict[str, Any]], Any]:
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--stub", action="store_true", help="the recording OpenAI-compatible stub")
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument(
        "--threads", type=int, default=max(1, (os.cpu_count() or 2) - 1)
    )  # as the daemon
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args()

    svc, data = build_store(args.root)
    answers = {m.id: m.content for m in data.memories}
    answerable = [q for q in data.split("report") if q.expected]
    # Spread over the split's families, not the first two of them.
    questions = answerable[:: max(1, len(answerable) // args.questions)][: args.questions]
    stub = ModelStub("No lo sé con seguridad.") if args.stub else None
    model = stub.__enter__().url if stub else args.model

    def load(path: str) -> Backend:
        return backends.load(path, ProcessOptions(n_ctx=4096, threads=args.threads))

    runtime = ModelRuntime(model, load)
    scratch = Path(tempfile.mkdtemp(prefix="alma-chat-quality-"))
    for sub in ("logs", "system"):
        (scratch / sub).mkdir()
    chat = ChatService(
        RootLayout(scratch),
        runtime,
        context=lambda m, b: svc.context(m, budget=b, count_use=False),
        pending=list,
        limits=ChatLimits(max_tokens=args.max_tokens, timeout_s=600.0),
    )
    session = chat.start()["session"]
    rows = []
    try:
        for n, q in enumerate(questions, start=1):
            events, result = drain(chat.send(session, q.query))
            if not isinstance(result, dict):
                print(f"{n:2d} failed: {result}")
                continue
            known = " ".join(str(e.get("text", "")) for e in events if e.get("type") == "known")
            answer = answers[q.expected]
            shown_known = answer in known
            in_text = holds(str(result["text"]), answer)
            rows.append(
                {
                    "known": shown_known,
                    "text": in_text,
                    "stopped": result["stopped"],
                    "invented": len(result.get("invented_citations") or []),
                    "ttft": result.get("first_token_ms"),
                    "tokens": result["tokens"],
                }
            )
            print(
                f"{n:2d} {q.query!r}: shown {'yes' if shown_known or in_text else 'NO '} "
                f"(quoted {shown_known}, in the answer {in_text}), {result['stopped']}, "
                f"{result['tokens']} tokens, prompt {result['prompt_tokens']}, "
                f"first token {result.get('first_token_ms')} ms, "
                f"citations left out {rows[-1]['invented']}"
            )
            print("    ", " ".join(str(result["text"]).split())[:200])
    finally:
        runtime.close()
        svc.close()
        if stub:
            stub.__exit__(None, None, None)
    shown = sum(r["known"] or r["text"] for r in rows)
    ttft = [r["ttft"] for r in rows if r["ttft"] is not None]
    print(f"model {model}, {len(rows)} questions, one session, max_tokens {args.max_tokens}")
    print(
        f"the answer shown to the person: {shown}/{len(rows)} ({shown / max(1, len(rows)):.2f}); "
        f"quoted by ALMA {sum(r['known'] for r in rows)}, in the model's own text "
        f"{sum(r['text'] for r in rows)}"
    )
    print(
        f"citations of sources that do not exist: shown 0, left out {sum(r['invented'] for r in rows)}; "
        f"answers at the token limit {sum(r['stopped'] == 'max_tokens' for r in rows)}, "
        f"loops cut {sum(r['stopped'] == 'loop' for r in rows)}"
    )
    if len(ttft) >= 10:
        print(
            f"first token: turn 1 {ttft[0]} ms, turn 10 {ttft[9]} ms "
            f"(x{ttft[9] / max(1, ttft[0]):.2f}), median {statistics.median(ttft):.0f} ms, "
            f"last {ttft[-1]} ms"
        )


if __name__ == "__main__":
    main()
