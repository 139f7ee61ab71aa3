"""ALMA says only what it knows, in a real terminal, with the real daemon and the real embedded
model: the fact asked for quoted with its source and nothing invented beside it; "nothing stored"
when nothing answers; a principle that answers quoted; an English question answered in English by
a daemon that speaks Spanish; questions never become memories, a statement does.

What the model wrote and the person was shown is read from the day's log (the shown answer) and
checked by tests/support/invented.py, apart from the product's own check.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from state import chatlog
from tests.support.daemon import DaemonRoot
from tests.support.grounded_eval_data import OTHERS
from tests.support.invented import invented_in
from tests.support.tmux import ALMA, PROMPT, TMUX, Tmux, answered, environment_for

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.timeout(2400),  # every wait inside is bounded; a loaded machine only waits longer
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
]

DOG = "Mi perro se llama Toby y es un podenco."
PRINCIPLE = "Nunca arriesgar más del 2% de la cuenta en una sola operación."
KNOWN = "¿Cómo se llama mi perro?"
UNKNOWN = "¿Cuántos años tiene mi tortuga?"
RULE = "¿Cuánto puedo arriesgar en una operación?"
ENGLISH = "What is my dog called?"
STATEMENT = "Mi tortuga se llama Manolo y vive en la terraza."
KNOWS_ES = "Lo que ALMA sabe de esto:"
KNOWS_EN = "What ALMA knows about this:"
NOTHING_ES = "No tengo nada guardado sobre esto"
NOTHING_EN = "I have nothing stored about this"


def shown_answer(alma: DaemonRoot, question: str) -> str:
    """ALMA's logged turn after ``question``: what the person was shown of the model's text."""

    def logged() -> str | None:
        for day in (date.today(), date.today() - timedelta(days=1)):
            path = alma.root / "logs" / chatlog.file_name(day)
            if path.exists():
                turns = [p for p in chatlog.parse(path.read_bytes()) if p.kind == "turn"]
                mine = [i for i, p in enumerate(turns) if p.by_person and p.text == question]
                if mine and len(turns) > mine[-1] + 1 and turns[mine[-1] + 1].meta:
                    return turns[mine[-1] + 1].text
        return None

    return str(alma.wait_for(logged, timeout=120, what=f"the answer to {question!r} logged"))


def stated(alma: DaemonRoot) -> list[dict[str, Any]]:
    return [m for m in alma.ok("memory", "list", "--limit", "500") if m["kind"] != "summary"]


def test_alma_says_only_what_it_knows(alma_chat: DaemonRoot, term: Tmux) -> None:
    alma = alma_chat
    (alma.root / "system" / "alma.toml").write_text('language = "es"\n', encoding="utf-8")
    (alma.root / "system" / "principles.md").write_text(f"# Principios\n\n- {PRINCIPLE}\n")
    alma.start(timeout=120)
    # The chat's context is the principles alone while the memory store loads: every check
    # below needs the store, so the test waits for it (bounded) rather than skip any.
    alma.wait_for(
        lambda: alma.ok("status")["memory"] == "ready", timeout=300, what="the memory store"
    )
    dog = alma.ok("memory", "add", DOG)
    for text in OTHERS:
        alma.ok("memory", "add", text)
    before = len(stated(alma))
    given = {q: alma.ok("context", q) for q in (KNOWN, UNKNOWN, RULE, ENGLISH)}
    assert all("answered" in ctx for ctx in given.values()), given

    term.start([ALMA, "chat", "--root", str(alma.root)], environment_for(alma.env))
    term.wait(lambda s: PROMPT.rstrip() in s, what="the prompt", timeout=120)

    # 1. A known question: the fact quoted with its date and source; nothing invented after it.
    term.line(KNOWN)
    shown = answered(term, KNOWN, timeout=600)
    assert KNOWS_ES in shown, shown
    assert f"«{DOG}» ({dog['created_at'][:10]}, alma-ctl)" in " ".join(shown.split()), shown
    text = shown_answer(alma, KNOWN)
    handed = " ".join(
        f"{i['content']} {i.get('created_at', '')} {i['source']}" for i in given[KNOWN]["items"]
    )
    assert not invented_in(text, f"{KNOWN} {handed} ALMA"), text

    # 2. An English question to a daemon that speaks Spanish: the answer's lines in English.
    term.line(ENGLISH)
    shown = answered(term, ENGLISH, timeout=600)
    assert (KNOWS_EN in shown or NOTHING_EN in shown) and KNOWS_ES not in shown, shown
    assert NOTHING_ES not in shown, shown

    # 3. Nothing answers: the sentence, and no memory.
    term.line(UNKNOWN)
    unknown = answered(term, UNKNOWN, timeout=600)
    # 4. A principle that answers is quoted like a memory.
    term.line(RULE)
    rule = answered(term, RULE, timeout=600)
    for question in (UNKNOWN, RULE):
        text = shown_answer(alma, question)
        handed = " ".join(
            f"{i['content']} {i.get('created_at', '')} {i['source']}"
            for i in given[question]["items"]
        )
        assert not invented_in(text, f"{question} {handed} ALMA"), text

    # 5. Four questions and one statement: one memory more, the statement.
    term.line(STATEMENT)
    answered(term, STATEMENT, timeout=600)

    def grew() -> list[dict[str, Any]] | None:
        mine = stated(alma)
        return mine if any(m["content"] == STATEMENT for m in mine) else None

    mine = alma.wait_for(grew, timeout=240, what="the statement ingested")
    assert len(mine) == before + 1, [m["content"] for m in mine]
    asked = {KNOWN, UNKNOWN, RULE, ENGLISH}
    assert not [m for m in mine if m["content"] in asked]
    log = "".join(p.read_text(encoding="utf-8") for p in (alma.root / "logs").glob("*.md"))
    assert all(q in log for q in asked)  # asked, and in the day's log

    term.keys("C-d")

    # The context's relevance bound decides these two; the chat follows what it says.
    assert not given[UNKNOWN]["answered"]
    assert NOTHING_ES in unknown and KNOWS_ES not in unknown, unknown
    assert KNOWS_ES in rule and PRINCIPLE in " ".join(rule.split()), rule
    assert "(system/principles.md:3)" in rule, rule
