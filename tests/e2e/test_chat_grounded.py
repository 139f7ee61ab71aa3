"""The chat answers from what ALMA knows, through the real daemon.

The person has told ALMA a fact, then asks about it in the chat, and asks again in other words
once that first question is in the day's log (a question is never a memory, a statement told in
the chat is): the second message's context (what the model is given,
seen by a recording OpenAI-compatible model server, and `alma-ctl context`) still holds the
fact and not the first question; the person sees the fact quoted with its date and source
before the model's answer; `!buscar` after chatting ranks the fact above the questions. A
model that loops or cites a source that does not exist is cut, and that answer is never given
back to the model as history.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import ALMA_CTL, DaemonRoot
from tests.support.grounded_eval_data import ASKED as FIRST
from tests.support.grounded_eval_data import FACT, OTHERS
from tests.support.openai_stub import ModelStub

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]

ALMA = str(Path(ALMA_CTL).parent / "alma")
PARAPHRASE = "¿tengo alguna alergia alimentaria?"
STATEMENT = "Mi perro se llama Toby y tiene tres años."


def chat(alma: DaemonRoot, *lines: str, once: bool = False) -> subprocess.CompletedProcess[str]:
    argv = [ALMA, "chat", "--root", str(alma.root)]
    if once:
        argv += ["--once", lines[0]]
    return subprocess.run(
        argv,
        input="" if once else "".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=alma.env,
        timeout=600,
        check=False,
    )


def last_user(stub: ModelStub) -> str:
    return str(stub.requests[-1]["messages"][-1]["content"])


def test_the_fact_outlives_the_question(alma_chat: DaemonRoot) -> None:
    alma = alma_chat
    with ModelStub("No lo sé.") as stub:
        alma.set_settings("model", "url", stub.url)
        alma.start(timeout=120)
        fact = alma.ok("memory", "add", FACT)
        for text in OTHERS:
            alma.ok("memory", "add", text)
        first = chat(alma, FIRST, once=True)
        assert first.returncode == 0, first.stderr
        # The person sees what ALMA knows, quoted with its date and source, before the answer.
        assert f"«{FACT}» ({fact['created_at'][:10]}, alma-ctl)" in first.stdout, first.stdout
        assert FACT in last_user(stub)

        told = chat(alma, STATEMENT, once=True)  # ingested after the question, from the same log
        assert told.returncode == 0, told.stderr

        def stated() -> list[dict[str, Any]] | None:
            mine = alma.ok("memory", "list", "--limit", "50")
            return mine if any(m["content"] == STATEMENT for m in mine) else None

        mine = alma.wait_for(stated, timeout=120, what="the statement ingested")
        assert not [m for m in mine if m["content"] == FIRST]  # the question is no memory

        second = chat(alma, PARAPHRASE, once=True)
        assert second.returncode == 0, second.stderr
        given = last_user(stub)
        assert FACT in given and FIRST not in given, given
        ctx = alma.ok("context", PARAPHRASE)
        contents = [i["content"] for i in ctx["items"]]
        assert FACT in contents and FIRST not in contents
        assert f"«{FACT}»" in second.stdout

        found = chat(alma, "!buscar alergia", once=True)
        assert found.returncode == 0, found.stderr
        out = found.stdout
        assert FACT in out and (FIRST not in out or out.index(FACT) < out.index(FIRST)), out
        ranked = [r["content"] for r in alma.ok("memory", "search", "alergia", "--limit", "10")]
        assert ranked[0] == FACT, ranked


def test_a_loop_or_an_invented_citation_is_cut_and_never_history(alma_chat: DaemonRoot) -> None:
    alma = alma_chat
    loop = "Revisa el disco externo. " * 40
    with ModelStub(loop) as stub:
        alma.set_settings("model", "url", stub.url)
        alma.start(timeout=120)
        alma.ok("memory", "add", FACT)
        for text in OTHERS:
            alma.ok("memory", "add", text)
        looped = chat(alma, "¿qué hago con el backup?", "¿y con la alergia?")
        assert looped.returncode == 0, looped.stderr
        assert looped.stdout.count("Revisa el disco externo.") <= 6, looped.stdout
        assert "repetirse" in looped.stderr or "repeating" in looped.stderr, looped.stderr
        # The looping answer was not given back: the second prompt has no assistant turn.
        assert [m["role"] for m in stub.requests[-1]["messages"]] == ["system", "user"]
        stub.answer = "Eres alérgico a los frutos secos [logos/2026-11-27.md:84] [alma-ctl]."
        cited = chat(alma, "¿tengo alguna alergia?", "¿seguro?")
        assert cited.returncode == 0, cited.stderr
        assert "logos/" not in cited.stdout and "[alma-ctl]" in cited.stdout
        assert "no existe" in cited.stderr or "does not exist" in cited.stderr, cited.stderr
        assert [m["role"] for m in stub.requests[-1]["messages"]] == ["system", "user"]
        # A loop or a citation cut is logged as what the person was shown.
        logs = "".join(p.read_text(encoding="utf-8") for p in (alma.root / "logs").glob("*.md"))
        assert "logos/" not in logs and logs.count("Revisa el disco externo.") <= 6
