"""``alma chat`` in a real terminal, with the real daemon and the real embedded model.

tmux runs the chat on its own server (``tmux -L``); the test types with ``send-keys`` and reads
the screen with ``capture-pane``, as a person would. Every wait polls the screen (or the root)
with a generous bound, so a machine loaded by others only makes the test slower.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from state import chatlog
from tests.support.daemon import DaemonRoot, wait_for
from tests.support.tmux import ALMA, PROMPT, TMUX, Tmux, after, answered, environment_for
from tests.support.trees import snapshot

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.timeout(1800),  # every wait inside is bounded; a loaded machine only waits longer
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
]

LONG = "Escribe una lista larga de veinte frutas, con una frase sobre cada una."


def answer_text(shown: str) -> str:
    """The answer's own words: what follows the typed line, without the spinner."""
    return "\n".join(
        line for line in shown.splitlines() if line.strip() and "pensando" not in line
    ).strip()


def test_a_person_chats_in_a_real_terminal(alma_chat: DaemonRoot, term: Tmux) -> None:
    alma = alma_chat
    # A pending suggestion to show at the start: a messy folder.
    alma.messy_folder("user/fotos", n=24)
    alma.start(timeout=120)
    alma.analyze()
    suggestion = alma.wait_suggestion(kind="organize", target="user/fotos", timeout=120)
    before = snapshot(alma.root / "user")

    term.start([ALMA, "chat", "--root", str(alma.root)], environment_for(alma.env))
    term.wait(
        lambda s: suggestion["title"] in s and PROMPT.rstrip() in s,
        what="the pending suggestion at the start, then the prompt",
        timeout=120,
    )

    # 1. The answer streams: the screen changes while the model writes, before the prompt is back.
    term.line(LONG)
    marker = PROMPT + LONG
    frames: list[str] = []

    def prompt_back(screen: str) -> bool:
        rest = after(screen, marker)
        words = answer_text(rest.split("\n" + PROMPT.rstrip())[0])
        if words and (not frames or frames[-1] != words):
            frames.append(words)
        return ("\n" + PROMPT.rstrip()) in rest

    term.wait(prompt_back, what="the long answer to end", timeout=300)
    assert len(frames) >= 3, f"the answer did not stream: only {len(frames)} states seen: {frames}"
    assert len(frames[0]) < len(frames[-1]), frames
    assert "\x1b" not in term.screen()

    # 2. The turn is in logs/DATE.md, in the format of contract §6.
    def logged() -> list[chatlog.Paragraph] | None:
        for day in (date.today(), date.today() - timedelta(days=1)):
            path = alma.root / "logs" / chatlog.file_name(day)
            if path.exists():
                turns = [p for p in chatlog.parse(path.read_bytes()) if p.kind == "turn"]
                mine = [i for i, p in enumerate(turns) if p.by_person and p.text == LONG]
                if mine and len(turns) > mine[0] + 1 and turns[mine[0] + 1].meta:
                    return turns[mine[0] : mine[0] + 2]
        return None

    person, model = alma.wait_for(logged, timeout=60, what="the turn in logs/DATE.md")
    assert (person.speaker, model.speaker) == ("usuario", "alma")
    for turn in (person, model):
        assert re.fullmatch(r"\d{2}:\d{2}:\d{2}", turn.time), turn.time
    # Contract §6's comment; fields may be added after the three it names.
    meta = r"<!-- model: [^·]+ · tokens: \d+ · ms: \d+( · [\w ]+: [^·]+)* -->"
    assert re.fullmatch(meta, model.meta[0].strip()), model.meta
    assert model.text.strip()

    # 3. !recordar, then !buscar finds it.
    term.line("!recordar Mi gata se llama Ñoqui y duerme en la estantería #mascotas")
    term.wait(lambda s: "Stored memory" in after(s, "!recordar Mi gata"), what="the memory stored")
    term.line("!buscar cómo se llama mi gata")
    term.wait(
        lambda s: "Ñoqui" in after(s, PROMPT + "!buscar cómo se llama mi gata"),
        what="!buscar to find the memory",
    )

    # 4. !aceptar N runs the suggestion; !deshacer reverts it byte for byte.
    n = suggestion["id"]
    term.line(f"!aceptar {n}")
    term.wait(
        lambda s: re.search(rf"Action \d+: folder tidying done, \d+ ops, from suggestion {n}\.", after(s, f"!aceptar {n}")),
        what="the suggestion executed",
    )  # fmt: skip
    assert snapshot(alma.root / "user") != before
    term.line("!deshacer")
    term.wait(
        lambda s: re.search(r"Action \d+: folder tidying done, \d+ ops, undoing action \d+\.", after(s, PROMPT + "!deshacer")),
        what="the undo done",
    )  # fmt: skip
    assert snapshot(alma.root / "user") == before

    # 5. Ctrl-C while the model writes stops the answer; the next message works.
    stopped = False
    for attempt in range(3):  # a very short answer may end before the key arrives: ask again
        message = f"{LONG} ({attempt + 1})"
        term.line(message)
        term.wait(
            lambda s, m=message: answer_text(after(s, PROMPT + m)) or "\n" + PROMPT.rstrip() in after(s, PROMPT + m),
            what="the answer to start",
            timeout=300,
        )  # fmt: skip
        term.keys("C-c")
        shown = answered(term, message)
        if "Answer stopped." in shown:
            stopped = True
            break
    assert stopped, "Ctrl-C never caught an answer being written"
    term.line("Gracias. ¿Cómo te llamas?")
    shown = answered(term, "Gracias. ¿Cómo te llamas?")
    assert answer_text(shown) and "Answer stopped." not in shown

    # 6. Ctrl-D leaves, with exit status 0.
    term.keys("C-d")
    wait_for(term.dead, timeout=60, what="alma chat to exit on Ctrl-D", detail=term.screen)
    assert term.exit_status() == 0
    assert alma.ok("status")["running"]


FRUITS = (
    "manzana", "pera", "ciruela", "mango", "kiwi", "higo", "uva", "melón", "sandía", "limón",
    "naranja", "fresa", "cereza", "plátano", "piña", "papaya", "granada", "níspero", "caqui",
    "mora", "frambuesa", "lima", "pomelo", "guayaba", "chirimoya", "dátil", "membrillo",
    "albaricoque", "melocotón", "arándano",
)  # fmt: skip
COLOURS = ("roja", "verde", "amarilla", "morada", "naranja", "marrón")


ORDINALS = ("primero", "segundo", "tercero", "cuarto", "quinto", "sexto", "séptimo", "octavo")


def _long_answer() -> str:
    """Eight paragraphs of several lines each, then a list taller than the screen on its own,
    every line different (the chat cuts an answer that repeats itself), every sentence one the
    answer's check lets through (about fruit, naming no number the question does not hold)."""
    paragraphs = [
        f"Párrafo {ordinal}: "
        + " ".join(
            f"la {FRUITS[(n * 7 + k) % len(FRUITS)]} {COLOURS[(n + k) % len(COLOURS)]} "
            f"madura despacio en el huerto {ordinal}."
            for k in range(6)
        )
        for n, ordinal in enumerate(ORDINALS, 1)
    ]
    items = [
        f"- Fruta {fruit}: es {COLOURS[i % len(COLOURS)]} y sabe dulce."
        for i, fruit in enumerate(FRUITS, 1)
    ]
    return "\n\n".join(paragraphs) + "\n\n" + "\n".join(items) + "\n\nFin de la lista."


def test_a_long_answer_ends_up_once_in_the_scrollback(alma: DaemonRoot) -> None:
    """An answer several screens long, streamed into a small terminal: every paragraph and
    every line of the list is in the terminal's scrollback exactly once (a live area taller
    than the screen left a partial copy behind at every redraw)."""
    from tests.support.openai_stub import ModelStub

    answer = _long_answer()
    with ModelStub(answer, piece=3, pause=0.004) as stub:
        alma.set_settings("model", "url", stub.url)
        alma.start(timeout=120)
        term = Tmux(width=90, height=20)
        try:
            term.start([ALMA, "chat", "--root", str(alma.root)], environment_for(alma.env))
            term.wait(lambda s: PROMPT.rstrip() in s, what="the prompt", timeout=120)
            question = "Háblame largo y tendido de las frutas del huerto."
            term.line(question)
            shown = answered(term, question, timeout=300)
        finally:
            term.close()
    assert "Fin de la lista." in shown, shown[-2000:]
    assert "no se apoyan" not in shown, shown[-2000:]  # every sentence passed the check
    for ordinal in ORDINALS:
        assert shown.count(f"Párrafo {ordinal}:") == 1, (ordinal, shown)
    for fruit in FRUITS:
        assert shown.count(f"Fruta {fruit}:") == 1, (fruit, shown)
