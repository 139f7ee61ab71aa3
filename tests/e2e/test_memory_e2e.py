"""Memory through the real ``alma-agentd`` and the real ``alma-ctl``.

The daemon runs with the memory store enabled (real embedded Chroma, the real offline
embedder, loaded once per daemon start) on a temp root. Everything is checked through what a
person or a script sees: alma-ctl's exit code and its ``--json`` document (contract §3).

The chat log test writes ``logs/YYYY-MM-DD.md`` (contract §6) while the daemon runs, stops it
with SIGTERM and separately kills it with SIGKILL while it is ingesting, writes more while it
is down, and restarts it: every paragraph the person wrote is a memory exactly once, counted
by its source (``file:line``) and by its content. Waiting is a bounded poll of ``memory list``
(never a timed assertion); the exact comparison is made once the last paragraph written shows,
since one ingestion pass reads a file in order and passes never overlap.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent.memory.search import SHOWN
from tests.support.daemon import DaemonRoot

pytestmark = pytest.mark.e2e

#: Contract §3: the Memory fields (``score`` only in search results).
MEMORY_KEYS = {
    "id", "content", "tags", "project", "theme", "importance", "related_to", "memory_type",
    "use_count", "created_at", "source", "layer",
}  # fmt: skip
LAYERS = {"L-inf", "L1", "L0"}
CONTEXT_KEYS = {
    "text", "items", "tokens", "budget_tokens", "over_budget", "l0_searched", "answered",
}  # fmt: skip
PRINCIPLES = "system/principles.md"
EXIT_NO_SUCH_ID = 6


def assert_memory_shape(m: dict[str, Any], *, scored: bool = False) -> None:
    assert set(m) >= MEMORY_KEYS, f"missing {MEMORY_KEYS - set(m)} in {m}"
    assert ("score" in m) is scored, m
    assert isinstance(m["id"], str) and m["id"], m
    assert isinstance(m["content"], str) and m["content"], m
    assert isinstance(m["tags"], list) and all(isinstance(t, str) for t in m["tags"]), m
    for key in ("project", "theme", "related_to", "memory_type", "source"):
        assert isinstance(m[key], str), (key, m)
    assert isinstance(m["importance"], int) and 1 <= m["importance"] <= 5, m
    assert isinstance(m["use_count"], int) and m["use_count"] >= 0, m
    assert m["layer"] in LAYERS, m
    assert datetime.fromisoformat(m["created_at"]).tzinfo is not None, m
    if scored:
        assert isinstance(m["score"], float) and 0.0 <= m["score"] <= 1.0, m


def wait_memory_ready(d: DaemonRoot) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        st = d.ok("status")
        assert st["memory"] in ("ready", "loading"), f"memory failed to load: {st['memory']}"
        return st if st["memory"] == "ready" else None

    return d.wait_for(ready, timeout=120, what="status to say the memory store is ready")


def search(d: DaemonRoot, query: str, *extra: str) -> list[dict[str, Any]]:
    hits = d.ok("memory", "search", query, *extra)
    assert isinstance(hits, list), hits
    for h in hits:
        assert_memory_shape(h, scored=True)
    # Best first (contract §3): the score falls down the list, and so does the rank it is
    # the probability of (why.fused).
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True), f"not best first: {scores}"
    ranks = [h["why"]["fused"] for h in hits]
    assert ranks == sorted(ranks, reverse=True), f"not best first: {ranks}"
    return hits


def listed(d: DaemonRoot, *extra: str) -> list[dict[str, Any]]:
    mems = d.ok("memory", "list", "--limit", "1000", *extra)
    assert isinstance(mems, list), mems
    return mems


# --------------------------------------------------------------------------- the commands

SQLITE = (
    "Decidí usar SQLite para la base de memorias de ALMA: un único fichero, sin servidor, "
    "y aguanta años de notas. Lo confirmé con la señora Núñez."
)
OTHERS = [
    ("Mañana riego el huerto de tomates y pimientos antes de que apriete el calor.", "huerto", ""),
    ("El viaje a Logroño con mi cuñado quedó para la primavera; reservamos en marzo.", "viaje", ""),
    ("La guitarra española necesita cuerdas nuevas, suena apagada desde el otoño.", "música", ""),
    (
        "En la tienda online la pasarela de pago falla con tarjetas extranjeras.",
        "errores",
        "tienda",
    ),
]


def test_init_with_examples_before_the_daemon_stores_them_when_it_starts(
    alma_mem: DaemonRoot,
) -> None:
    d = alma_mem
    assert d.ok("init", "--with-examples")["examples"] == {"requested": True}
    d.start()
    assert wait_memory_ready(d)["memories"] == 20, d.log()
    assert {m["source"] for m in listed(d)} == {"examples"}
    assert not (d.root / ".alma" / "examples.request").exists()  # asked once, done once


def test_memory_commands_end_to_end(alma_mem: DaemonRoot) -> None:
    d = alma_mem
    (d.root / "user" / "tienda").mkdir(parents=True)
    d.start()
    st = wait_memory_ready(d)
    assert st["memories"] == 0, d.log()

    # add: Spanish text with accents and ñ, tags, project, importance, type.
    added = d.ok(
        "memory", "add", SQLITE, "--tag", "arquitectura", "--tag", "base-de-datos",
        "--project", "alma", "--importance", "4", "--type", "architecture",
    )  # fmt: skip
    assert_memory_shape(added)
    assert added["content"] == SQLITE
    assert added["tags"][:2] == ["arquitectura", "base-de-datos"]
    assert added["project"] == "alma"
    assert added["importance"] == 4
    assert added["memory_type"] == "architecture"
    assert added["source"] == "alma-ctl"
    assert added["layer"] == "L1"
    assert added["use_count"] == 0
    sqlite_id = added["id"]
    other_ids = []
    for text, tag, project in OTHERS:
        extra = ["--project", project] if project else []
        m = d.ok("memory", "add", text, "--tag", tag, *extra)
        assert_memory_shape(m)
        assert m["content"] == text and tag in m["tags"]
        other_ids.append(m["id"])
    assert len({sqlite_id, *other_ids}) == 5

    # show: the same memory, as stored.
    shown = d.ok("memory", "show", sqlite_id)
    assert_memory_shape(shown)
    assert {k: shown[k] for k in MEMORY_KEYS} == {k: added[k] for k in MEMORY_KEYS}

    # search: a paraphrase finds it first, best first, with a score; use_count grows.
    hits = search(d, "¿Qué base de datos elegí para guardar los recuerdos?")
    assert hits[0]["id"] == sqlite_id, [h["content"] for h in hits]
    assert hits[0]["content"] == SQLITE
    assert hits[0]["use_count"] == 1
    hits = search(d, "¿qué motor de base de datos escogimos para las memorias?", "--limit", "2")
    # --limit is a most: what scores 0.00 is not listed to fill it.
    assert 1 <= len(hits) <= 2 and hits[0]["id"] == sqlite_id
    assert all(h["score"] >= SHOWN for h in hits)
    assert d.ok("memory", "show", sqlite_id)["use_count"] == 2

    # Filters: --tag and --project keep only what matches, whatever the query.
    by_tag = search(d, "¿Qué base de datos elegí?", "--tag", "huerto")
    assert [h["id"] for h in by_tag] == [other_ids[0]]
    by_accentless_tag = search(d, "cuerdas", "--tag", "MUSICA")
    assert [h["id"] for h in by_accentless_tag] == [other_ids[2]]
    by_project = search(d, "¿Qué base de datos elegí?", "--project", "tienda")
    assert [h["id"] for h in by_project] == [other_ids[3]]
    by_both = search(d, "fichero sin servidor", "--tag", "arquitectura", "--project", "alma")
    assert [h["id"] for h in by_both] == [sqlite_id]
    assert search(d, "SQLite", "--tag", "huerto", "--project", "alma") == []
    by_type = search(d, "base de datos", "--type", "architecture")
    assert [h["id"] for h in by_type] == [sqlite_id]

    # Human output: score (0-1, two decimals), id, content and tags on one line per memory.
    human = d.ctl("memory", "search", "¿Qué base de datos elegí?", "--limit", "1", json_out=False)
    assert human.rc == 0, human.stderr
    assert re.match(rf"^\[(?:0\.\d\d|1\.00)\] {sqlite_id}  Decidí usar SQLite", human.stdout), (
        human.stdout
    )
    assert "#arquitectura" in human.stdout

    # list: newest first; filters.
    mems = listed(d)
    for m in mems:
        assert_memory_shape(m)
    assert {m["id"] for m in mems} == {sqlite_id, *other_ids}
    created = [m["created_at"] for m in mems]
    assert created == sorted(created, reverse=True)
    assert [m["id"] for m in listed(d, "--tag", "viaje")] == [other_ids[1]]
    assert [m["id"] for m in listed(d, "--project", "alma")] == [sqlite_id]

    # stats: counts by tag, project, type and layer.
    stats = d.ok("memory", "stats")
    assert stats["total"] == 5 and stats["archived"] == 0
    assert stats["by_tag"]["arquitectura"] == 1 and stats["by_tag"]["huerto"] == 1
    assert stats["by_project"] == {"alma": 1, "tienda": 1}
    assert stats["by_memory_type"]["architecture"] == 1
    assert sum(stats["by_layer"].values()) == 5
    assert stats["embedder"] == "e5-small"
    assert d.ok("status")["memories"] == 5

    # forget archives (never deletes): gone from search and list, shown as archived,
    # listed with --archived; twice is not an error; restore brings it back.
    forgotten = d.ok("memory", "forget", sqlite_id)
    assert forgotten["id"] == sqlite_id and forgotten["archived"] is True
    assert d.ok("memory", "forget", sqlite_id)["archived"] is True
    assert sqlite_id not in {h["id"] for h in search(d, "¿Qué base de datos elegí?")}
    assert sqlite_id not in {m["id"] for m in listed(d)}
    assert [m["id"] for m in listed(d, "--archived")] == [sqlite_id]
    assert d.ok("memory", "show", sqlite_id)["content"] == SQLITE
    stats = d.ok("memory", "stats")
    assert (stats["total"], stats["archived"]) == (4, 1)
    restored = d.ok("memory", "restore", sqlite_id)
    assert restored["archived"] is False and restored["content"] == SQLITE
    assert d.ok("memory", "restore", sqlite_id)["archived"] is False
    assert search(d, "¿Qué base de datos elegí?")[0]["id"] == sqlite_id
    assert listed(d, "--archived") == []

    # context: every paragraph of system/principles.md (L-inf) always, then the memory
    # that answers, each with its source.
    principles = principle_items(d)
    ctx = d.ok("context", "¿Qué base de datos usamos para las memorias?")
    assert set(ctx) >= CONTEXT_KEYS, ctx
    assert ctx["over_budget"] is False and ctx["tokens"] <= ctx["budget_tokens"] == 1500
    items = ctx["items"]
    assert [(i["source"], i["content"]) for i in items[: len(principles)]] == principles
    assert all(i["layer"] == "L-inf" for i in items[: len(principles)])
    mine = [i for i in items if i.get("id") == sqlite_id]
    assert len(mine) == 1, items
    assert mine[0]["source"] == "alma-ctl" and mine[0]["layer"] == "L1"
    assert mine[0]["content"] == SQLITE
    for _, text in principles:
        assert text in ctx["text"]
    assert SQLITE in ctx["text"] and "[alma-ctl]" in ctx["text"]
    # A prompt about nothing stored still gets the principles, and nothing else from L1.
    unrelated = d.ok("context", "¿A qué hora abre la piscina municipal de Teruel?")
    assert [(i["source"], i["content"]) for i in unrelated["items"]][: len(principles)] == (
        principles
    )
    # Without --json, the text itself (what another chat tool takes as its context file).
    human = d.ctl("context", "¿Qué base de datos usamos?", json_out=False)
    assert human.rc == 0 and principles[0][1] in human.stdout and SQLITE in human.stdout

    # Unknown ids: exit 6, one sentence on stderr, the JSON error document on stdout.
    for verb in ("show", "forget", "restore"):
        res = d.ctl("memory", verb, "0" * 32)
        assert res.rc == EXIT_NO_SUCH_ID, (verb, res)
        assert res.data["ok"] is False and res.data["error"]["message"], res.data
        assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = d.ctl("memory", "show", "no-existe", json_out=False)
    assert res.rc == EXIT_NO_SUCH_ID and res.stdout == ""

    # init --with-examples on a running daemon: the daemon stores them, once.
    before = d.ok("memory", "stats")["total"]
    first = d.ok("init", "--with-examples")
    assert first["examples"] == {"added": 20}, first
    assert d.ok("memory", "stats")["total"] == before + 20
    again = d.ok("init", "--with-examples")
    assert again["examples"] == {"added": 0}, again
    stats = d.ok("memory", "stats")
    assert stats["total"] == before + 20
    examples = [m for m in listed(d) if m["source"] == "examples"]
    assert len(examples) == 20 and len({m["content"] for m in examples}) == 20
    # Principles among the examples are L-inf: always in the context too.
    ex_principles = {m["id"] for m in examples if m["memory_type"] == "principle"}
    assert ex_principles and all(
        m["layer"] == "L-inf" for m in examples if m["id"] in ex_principles
    )
    ctx = d.ok("context", "¿Qué tal el huerto?")
    in_ctx = {i["id"] for i in ctx["items"] if i["layer"] == "L-inf"}
    assert ex_principles <= in_ctx, ctx["items"]

    # Everything survives a restart (SIGTERM, exit 0).
    d.restart()
    wait_memory_ready(d)
    assert d.ok("memory", "stats")["total"] == before + 20
    assert d.ok("memory", "show", sqlite_id)["content"] == SQLITE
    assert search(d, "¿Qué base de datos elegí para guardar los recuerdos?")[0]["id"] == sqlite_id

    # theme and related_to: derived when not given, set with flags, filtered.
    assert all(m["theme"] and m["related_to"] for m in listed(d))
    themed = d.ok(
        "memory", "add", "Quedé con Sara el viernes para escalar.", "--theme", "Ocio",
        "--related-to", "Sara",
    )  # fmt: skip
    assert (themed["theme"], themed["related_to"]) == ("Ocio", "Sara")
    found = search(d, "escalada", "--theme", "ocio", "--related-to", "SARA")
    assert [h["id"] for h in found] == [themed["id"]]
    assert search(d, "escalada", "--theme", "salud", "--related-to", "Sara") == []
    d.stop()


def principle_items(d: DaemonRoot) -> list[tuple[str, str]]:
    """(source, text) of each bullet of system/principles.md, as the context must give them."""
    out = []
    lines = (d.root / PRINCIPLES).read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, start=1):
        if line.startswith("- "):
            out.append((f"{PRINCIPLES}:{n}", line[2:].strip()))
    assert out, "the default principles.md has bullets"
    return out


# --------------------------------------------------------------------------- the chat log

SUBJECTS = [
    "el huerto de tomates", "la tesis sobre ríos", "la mudanza a Cádiz", "el presupuesto del año",
    "la guitarra española", "el viaje a Logroño", "la reunión con la señora Núñez",
    "el backup del disco portátil", "el gimnasio del barrio", "la bicicleta de montaña",
    "el examen de alemán", "la cabaña de mi cuñado", "el niño de la vecina", "la caldera",
]  # fmt: skip
VERBS = ["Revisé", "Terminé", "Empecé", "Pospuse", "Discutí", "Planifiqué", "Retomé", "Ordené"]
_SENTENCES = itertools.count(1)  # shared by every log, so no two paragraphs repeat
MOODS = ["agotado", "contento", "preocupado", "tranquilo", "con prisa", "motivado", "aliviado"]


class ChatLog:
    """One day's chat log written as the chat and the person would (contract §6), recording
    where each of the person's paragraphs starts: what ingestion must turn into memories."""

    def __init__(self, root: Path, day: date) -> None:
        self.day = day.isoformat()
        self.rel = f"logs/{self.day}.md"
        self.path = root / self.rel
        self.expected: dict[str, str] = {}  # "logs/DAY.md:LINE" -> the paragraph's text
        self.alma_said: list[str] = []
        self.replies: dict[str, str] = {}  # source -> the alma turn it answers
        self._clock = 8 * 3600
        self._half: tuple[int, str] | None = None
        self._last_alma = ""

    # -- text ----------------------------------------------------------------------------
    def sentence(self, tag: str = "") -> str:
        """A distinct Spanish paragraph (a unique number, so no two are one repeated memory)."""
        n = next(_SENTENCES)
        text = (
            f"{VERBS[n % len(VERBS)]} {SUBJECTS[n % len(SUBJECTS)]} durante {1 + n % 9} horas "
            f"y acabé {MOODS[n % len(MOODS)]}; lo apunto como paso {n} de este año."
        )
        return f"{text} #{tag}" if tag else text

    def _time(self) -> str:
        self._clock += 37
        h, rest = divmod(self._clock, 3600)
        return f"{h:02d}:{rest // 60:02d}:{rest % 60:02d}"

    # -- writing -------------------------------------------------------------------------
    def _lines(self) -> int:
        return self.path.read_bytes().count(b"\n") if self.path.exists() else 0

    def _append(self, text: str, person: list[str]) -> None:
        """Append ``text`` in one write; ``person``: its paragraphs by the person."""
        base = self._lines()
        for para in person:
            line = base + text[: text.index(para)].count("\n") + 1
            source = f"{self.rel}:{line}"
            assert source not in self.expected
            self.expected[source] = para
            if self._last_alma:
                self.replies[source] = self._last_alma
            self._last_alma = ""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8", newline="") as f:
            f.write(text)

    def header(self) -> None:
        self._append(f"# {self.day}\n\n", [])

    def note(self, text: str) -> None:
        """A paragraph the person wrote by hand, outside any turn."""
        self._append(f"{text}\n\n", [text])

    def user(self, *paragraphs: str) -> None:
        self._append(
            f"## {self._time()} · usuario\n" + "\n\n".join(paragraphs) + "\n\n", [*paragraphs]
        )

    def alma(self, text: str) -> None:
        self.alma_said.append(text)
        self._append(
            f"## {self._time()} · alma\n{text}\n"
            f"<!-- model: mistral-7b-instruct q4 · tokens: {len(text) // 4} · ms: 812 -->\n\n",
            [],
        )
        self._last_alma = text

    def user_then_half(self, para: str, half: str) -> None:
        """A complete turn, then the first half of a line with no newline yet (a person
        typing): it must wait, whatever settle_seconds says, until its line is whole."""
        assert self._half is None
        text = f"## {self._time()} · usuario\n{para}\n\n"
        self._append(text, [para])
        self._half = (self._lines() + 1, half)
        with self.path.open("a", encoding="utf-8", newline="") as f:
            f.write(half)

    def finish_half(self, rest: str) -> None:
        assert self._half is not None
        line, half = self._half
        self._half = None
        self.expected[f"{self.rel}:{line}"] = half + rest
        with self.path.open("a", encoding="utf-8", newline="") as f:
            f.write(rest + "\n\n")

    def turns(self, n: int) -> None:
        """``n`` exchanges, one write per turn, as the chat appends them."""
        for i in range(n):
            self.user(self.sentence("diario" if i % 3 == 0 else ""))
            if i % 4 == 3:
                self.alma(f"Entendido, lo dejo anotado (respuesta {i}).")


def log_memories(d: DaemonRoot) -> list[dict[str, Any]]:
    return [m for m in listed(d) if m["source"].startswith("logs/")]


def paragraphs_of(mems: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in mems if m.get("kind") != "summary"]


def wait_ingested(d: DaemonRoot, logs: list[ChatLog]) -> list[dict[str, Any]]:
    """Poll until every expected paragraph shows, then check each is there exactly once."""
    expected = {src: text for log in logs for src, text in log.expected.items()}

    def all_there() -> list[dict[str, Any]] | None:
        mems = log_memories(d)
        seen = {m["source"] for m in paragraphs_of(mems)}
        return mems if set(expected) <= seen else None

    what = f"{len(expected)} log paragraphs to be memories"
    mems = d.wait_for(all_there, timeout=180, what=what)
    assert_exactly_once(mems, expected, logs)
    return mems


def assert_exactly_once(
    mems: list[dict[str, Any]], expected: dict[str, str], logs: list[ChatLog]
) -> None:
    paras = paragraphs_of(mems)
    by_source = Counter(m["source"] for m in paras)
    dupes = {s: c for s, c in by_source.items() if c > 1}
    assert not dupes, f"ingested more than once: {dupes}"
    extra = sorted(set(by_source) - set(expected))
    assert not extra, f"memories for no paragraph written: {extra}"
    by_content = Counter(m["content"] for m in paras)
    assert by_content == Counter(expected.values()), "contents differ from the paragraphs written"
    for m in paras:
        assert m["content"] == expected[m["source"]], m
        assert_memory_shape(m)
        assert m["kind"] in ("turn", "note"), m
    alma = {text for log in logs for text in log.alma_said}
    assert not alma & set(by_content), "alma's turns are not memories of the person"
    assert len({m["id"] for m in paras}) == len(paras)


def test_chat_log_ingested_exactly_once_across_sigterm_and_sigkill(alma_mem: DaemonRoot) -> None:
    d = alma_mem
    today = datetime.now().astimezone().date()
    log = ChatLog(d.root, today)

    # 1. While the daemon runs: a note by hand, turns, alma's answers, a note after them.
    d.start()
    wait_memory_ready(d)
    log.header()
    log.note("Nota a mano: esta semana quiero dormir más y revisar el año con calma, señor.")
    log.user(
        log.sentence("huerto"),
        "Un párrafo de dos líneas sobre la caña de pescar,\ncontinúa aquí con el anzuelo nuevo.",
    )
    log.alma("Suena a un buen plan. ¿Empezamos por el huerto o por la caña?")
    log.note("Otra nota a mano, tras la respuesta: comprar semillas de calabacín y ñame.")
    log.user("Sí, eso es: primero el huerto. #huerto")
    mems = wait_ingested(d, [log])
    by_source = {m["source"]: m for m in mems}
    first_note, _, _, after_alma, yes = list(log.expected)
    assert by_source[first_note]["kind"] == by_source[after_alma]["kind"] == "note"
    assert by_source[after_alma]["reply_to"] == log.replies[after_alma]  # keeps its sense
    assert by_source[yes]["kind"] == "turn" and "huerto" in by_source[yes]["tags"]
    assert d.ok("memory", "stats")["total"] == len(mems)

    # 2. A line half typed waits until it is whole (settle_seconds is 0 here).
    complete = log.sentence("trabajo")
    log.user_then_half(complete, "Escribo esta frase a medias sobre el año")
    wait_ingested(d, [log])  # the turn before it is in; the half line is not
    log.finish_half(" y la termino ahora, con su punto final.")
    log.alma("Anotado.")
    log.user(log.sentence())
    wait_ingested(d, [log])

    # 3. SIGTERM while ingesting; more written while down (and a file of an earlier day).
    before = len(log_memories(d))
    log.turns(30)
    d.wait_for(
        lambda: len(log_memories(d)) > before, timeout=120, what="ingestion of the new turns"
    )
    d.stop()  # exit 0 (checked by the helper)
    log.turns(6)
    log.note("Nota escrita con el demonio parado: llamar al fontanero por la caldera.")
    past = ChatLog(d.root, today - timedelta(days=3))
    past.header()
    past.user(past.sentence("salud"), "Dormí fatal, seis horas a trozos; mañana me acuesto antes.")
    past.alma("Descansa. Mañana lo vemos.")
    past.note("Nota del día pasado: el portátil se calienta con el cargador viejo.")
    d.start()
    mems = wait_ingested(d, [log, past])
    summaries = [m for m in mems if m.get("kind") == "summary"]
    assert [m["source"] for m in summaries if m["source"].startswith(past.rel)] == [past.rel]

    # 4. SIGKILL while ingesting (no clean-up at all); more written while down.
    before = len(log_memories(d))
    log.turns(40)
    d.wait_for(
        lambda: len(log_memories(d)) > before, timeout=120, what="ingestion of the new turns"
    )
    d.kill()
    log.turns(5)
    log.note("Nota tras el corte: la luz se fue a las once y volvió a las once y cuarto.")
    past.user("Añadido tarde al día pasado: encontré las llaves del trastero.")
    d.start()
    wait_ingested(d, [log, past])

    # 5. A clean restart with nothing new adds nothing: once a paragraph written after the
    #    start shows, the start's catch-up pass is over.
    d.restart()
    log.user("Último párrafo del día para cerrar la prueba: todo en orden, ningún duplicado.")
    mems = wait_ingested(d, [log, past])
    summaries = [m for m in mems if m.get("kind") == "summary"]
    assert [m["source"] for m in summaries if m["source"].startswith(past.rel)] == [past.rel]
    assert d.ok("memory", "stats")["total"] == len(listed(d))
    d.stop()
