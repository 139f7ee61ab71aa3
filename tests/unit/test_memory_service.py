"""MemoryService on real embedded Chroma with the real offline embedder (loaded once per
process by state.memory.get_embedder; each test gets its own root)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent.memory.rules import derive
from agent.memory.service import MemoryService
from policies.errors import BadArgumentError, NotFoundError
from policies.layout import RootLayout
from state.memory import MemoryRecord

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.fixture
def layout(tmp_path: Path) -> RootLayout:
    for sub in ("system", "logs", "user/proyectoY", ".alma"):
        (tmp_path / sub).mkdir(parents=True)
    return RootLayout(tmp_path)


@pytest.fixture
def svc(layout: RootLayout, embedder_loaded: None) -> Iterator[MemoryService]:
    service = MemoryService(layout, clock=lambda: NOW)
    yield service
    service.close()


def _seed(svc: MemoryService) -> dict[str, str]:
    items = [
        (
            "Operé con demasiado riesgo tras dormir poco.",
            ["trading", "Fatiga"],
            "trading",
            5,
            "episode",
        ),
        (
            "El backup nocturno falla si el disco no está montado.",
            ["backup"],
            "alma",
            4,
            "function",
        ),
        ("Mi perro Max murió hace dos semanas.", ["personal"], "vida", 5, "episode"),
        ("Me gusta correr por la mañana junto al río.", ["salud"], "vida", 2, "fact"),
    ]
    return {
        content[:10]: svc.add(content, tags=tags, project=p, importance=i, memory_type=t)["id"]
        for content, tags, p, i, t in items
    }


def test_add_returns_contract_shape(svc: MemoryService) -> None:
    mem = svc.add("Decidí usar Chroma para la memoria. #Arquitectura", tags=["DB"], project="alma")
    for key in (
        "id",
        "content",
        "tags",
        "project",
        "theme",
        "importance",
        "related_to",
        "memory_type",
        "use_count",
        "created_at",
        "source",
        "layer",
    ):
        assert key in mem
    assert len(mem["id"]) == 32 and mem["layer"] == "L1" and mem["source"] == "alma-ctl"
    assert mem["tags"][:2] == ["db", "arquitectura"]
    assert svc.show(mem["id"])["content"] == mem["content"]


def test_filters_by_tag_project_type_and_importance(svc: MemoryService) -> None:
    ids = _seed(svc)
    by_tag = svc.search("cansancio", tags=["FATIGA"])
    assert [m["id"] for m in by_tag] == [ids["Operé con "]]
    assert {m["project"] for m in svc.search("algo", limit=10, project="Vida")} == {"vida"}
    assert [m["memory_type"] for m in svc.search("deporte", memory_type="fact")] == ["fact"]
    strong = svc.search("recuerdos", limit=10, min_importance=5)
    assert {m["importance"] for m in strong} == {5} and len(strong) == 2
    both = svc.search("x", limit=10, tags=["trading", "fatiga"], min_importance=4)
    assert [m["id"] for m in both] == [ids["Operé con "]]
    assert svc.list(tag="backup")[0]["id"] == ids["El backup "]


def test_search_is_semantic_and_counts_use(svc: MemoryService) -> None:
    ids = _seed(svc)
    first = svc.search("¿Qué le pasó a mi mascota?", limit=3)
    assert first[0]["id"] == ids["Mi perro M"]
    assert all(first[0]["score"] > r["score"] for r in first[1:])
    before = svc.show(ids["Mi perro M"])["use_count"]
    svc.search("¿Qué le pasó a mi mascota?", limit=1)
    assert svc.show(ids["Mi perro M"])["use_count"] == before + 1


def test_count_use_false_reads_without_changing_anything(
    svc: MemoryService, layout: RootLayout
) -> None:
    """An evaluation or a preview reads with ``count_use=False``: no use_count rises, in the
    answer or in the store, so the same questions in any order get the same answers."""
    layout.principles_file.write_text("- Responde siempre en español.\n")
    _seed(svc)
    before = svc.list(limit=50)
    questions = ["¿Qué le pasó a mi mascota?", "¿Por qué falla la copia?", "deporte al aire libre"]

    def answers(order: list[str]) -> dict[str, Any]:
        return {
            q: (
                [(m["id"], m["score"], m["use_count"]) for m in svc.search(q, count_use=False)],
                svc.context(q, count_use=False)["items"],
            )
            for q in order
        }

    first = answers(questions)
    assert answers(questions[::-1]) == first
    assert any(ids for ids, _ctx in first.values())
    assert all(u == 0 for ids, _ctx in first.values() for _i, _s, u in ids)
    assert svc.store._uses == {}  # nothing waiting to be written either
    assert svc.list(limit=50) == before
    assert svc.search(questions[0])[0]["use_count"] == 1  # the default still counts


def test_use_counts_written_in_the_background_lose_nothing(
    svc: MemoryService, layout: RootLayout
) -> None:
    """A search answers with the new use_count at once and writes it later: a read shows it,
    a metadata rewrite in between loses none, the writer thread stores it unasked, and
    closing the service stores what is left."""
    ids = _seed(svc)
    dog = ids["Mi perro M"]

    def stored() -> int:
        res = svc.store._active.get(ids=[dog], include=["metadatas"])  # no pending added
        return int(res["metadatas"][0].get("use_count") or 0)

    counts = [svc.search("¿Qué le pasó a mi perro Max?", limit=1)[0] for _ in range(3)]
    assert [c["id"] for c in counts] == [dog] * 3
    assert [c["use_count"] for c in counts] == [1, 2, 3]
    deadline = time.monotonic() + 60
    while stored() != 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stored() == 3  # written with no read asking for it
    with svc.store.lock:  # the writer waits: a rewrite from a read made before it wrote
        assert svc.search("¿Qué le pasó a mi perro Max?", limit=1)[0]["use_count"] == 4
        raw = svc.store._active.get(ids=[dog], include=["metadatas", "documents"])
        old = MemoryRecord.from_chroma(dog, raw["documents"][0], raw["metadatas"][0])
        assert old.use_count == 3
        svc.store.update([old.model_copy(update={"importance": 4})])
    assert svc.show(dog)["use_count"] == 4 and svc.show(dog)["importance"] == 4
    svc.search("¿Qué le pasó a mi perro Max?", limit=1)
    svc.close()
    again = MemoryService(layout, clock=lambda: NOW)
    try:
        assert again.show(dog)["use_count"] == 5
    finally:
        again.close()


def test_a_read_while_use_counts_are_written_waits_for_them(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``get`` shows the counts handed out even while the writer thread is storing them (it
    has taken them off the pending ones): the read waits for that write, never shows the
    count from before it."""
    dog = _seed(svc)["Mi perro M"]
    inside, release = threading.Event(), threading.Event()

    class SlowUpdates:
        def __init__(self, col: Any) -> None:
            self._col = col

        def __getattr__(self, name: str) -> Any:
            return getattr(self._col, name)

        def update(self, *args: Any, **kwargs: Any) -> Any:
            inside.set()
            release.wait(60)
            return self._col.update(*args, **kwargs)

    monkeypatch.setattr(svc.store, "_active", SlowUpdates(svc.store._active))
    assert svc.search("¿Qué le pasó a mi perro Max?", limit=1)[0]["use_count"] == 1
    assert inside.wait(60)  # the writer thread is storing the increment
    seen: list[int] = []
    reader = threading.Thread(target=lambda: seen.append(svc.show(dog)["use_count"]))
    reader.start()
    reader.join(0.5)
    release.set()
    reader.join(60)
    assert seen == [1]


def test_reinforcement_at_five_mentions(svc: MemoryService) -> None:
    first = svc.add("Otra vez trabajando hasta medianoche.", importance=3)
    variants = [
        "otra vez trabajando hasta medianoche",
        "Otra vez trabajando hasta la medianoche.",
        "¡Otra vez trabajando hasta medianoche! #fatiga",
        "Otra vez, trabajando hasta medianoche.",
    ]
    for n, text in enumerate(variants, start=2):
        out = svc.add(text)
        assert out["status"] == "reinforced" and out["id"] == first["id"]
        assert out["mentions"] == n
        assert out["importance"] == (4 if n >= 5 else 3)
    assert svc.stats()["total"] == 1
    assert svc.show(first["id"])["use_count"] == 4
    assert "fatiga" in svc.show(first["id"])["tags"]
    sixth = svc.add("Otra vez trabajando hasta medianoche")
    assert sixth["importance"] == 4  # rises once, at five
    # Different facts stay apart, however close the vectors.
    assert svc.add("Otra vez NO trabajando hasta medianoche.")["status"] == "added"


def test_a_batch_that_repeats_itself_is_written_once_and_reinforces_its_own_rows(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    def para(n: int, text: str) -> MemoryRecord:
        return MemoryRecord(
            id=f"{n:032d}",
            content=text,
            layer="L0",
            kind="turn",
            created_at="2026-11-20T10:00:00+00:00",
            source=f"logs/2026-11-20.md:{n}",
        )

    batch = [
        para(1, "Otra vez trabajando hasta medianoche."),
        para(2, "Compré un candado en U para la bici nueva."),
        para(3, "otra vez trabajando hasta la medianoche"),
        para(4, "Otra vez, trabajando hasta medianoche."),
    ]
    writes: list[int] = []
    add = svc.store.add
    monkeypatch.setattr(
        svc.store, "add", lambda recs, vecs: (writes.append(len(recs)), add(recs, vecs))
    )
    out = svc._mem.remember(batch)
    assert [o.status for o in out] == ["added", "added", "reinforced", "reinforced"]
    assert writes == [2]  # the batch's new memories in one store write
    first = svc.show(batch[0].id)
    assert first["mentions"] == 3
    assert svc.stats()["total"] == 2
    # A replay (a crash before the log's offset was saved) changes nothing.
    again = svc._mem.remember(batch)
    assert [o.status for o in again] == ["existing"] * 4
    assert svc.show(batch[0].id)["mentions"] == 3


def test_cap_archives_least_important_episodes_never_facts(
    layout: RootLayout, embedder_loaded: None
) -> None:
    svc = MemoryService(layout, cap=5, clock=lambda: NOW)
    try:
        keep = [
            svc.add("Nunca operar sin stop loss.", memory_type="principle")["id"],
            svc.add("Vivo en Zaragoza desde 2019.", memory_type="fact", importance=1)["id"],
        ]
        low = svc.add("Hoy comí lentejas en casa.", importance=1)["id"]
        svc.add("Ayer fui al cine con Marta a ver una película francesa.", importance=3)
        svc.add("El martes arreglé la bicicleta vieja del garaje.", importance=4)
        svc.add("La reunión del proyecto se movió al jueves por la tarde.", importance=5)
        assert svc.stats()["total"] == 5 and svc.stats()["archived"] == 1
        gone = svc.show(low)
        assert gone["archived"] and gone["archive_reason"] == "cap"
        assert all(not svc.show(i)["archived"] for i in keep)
        assert low not in [m["id"] for m in svc.search("lentejas", limit=10)]
        assert svc.list(archived=True)[0]["id"] == low
        restored = svc.restore(low)  # over the cap again: someone else goes, not it
        assert not restored["archived"] and svc.stats()["archived"] == 1
    finally:
        svc.close()


def test_forget_archives_and_restore_brings_back(svc: MemoryService) -> None:
    mid = svc.add("Guardo las facturas en user/papeles/2026.")["id"]
    assert svc.forget(mid)["archived"] is True
    assert svc.forget(mid)["archived"] is True  # twice is fine
    assert svc.search("facturas", limit=5) == [] or mid not in {
        m["id"] for m in svc.search("facturas", limit=5)
    }
    assert svc.restore(mid)["archived"] is False
    assert svc.search("¿dónde están las facturas?", limit=1)[0]["id"] == mid
    with pytest.raises(NotFoundError, match="memory list"):
        svc.show("nope")


def test_principles_always_in_context(svc: MemoryService, layout: RootLayout) -> None:
    layout.principles_file.write_text("# Principios\n\n- Responde siempre en español.\n")
    svc.add("Nunca arriesgar más del 2% por operación.", memory_type="principle")
    _seed(svc)
    for prompt in ("¿Qué le pasó a Max?", "receta de lentejas", "backup"):
        ctx = svc.context(prompt, budget=60)
        layers = [i["layer"] for i in ctx["items"]]
        assert layers[:2] == ["L-inf", "L-inf"]
        assert "Responde siempre en español." in ctx["text"]
        assert "2% por operación" in ctx["text"]
        assert all(i["source"] for i in ctx["items"])
    big = svc.context("¿Qué le pasó a mi perro?", budget=1500)
    assert any("Max" in i["content"] for i in big["items"] if i["layer"] == "L1")
    assert big["tokens"] <= 1500 and big["items"][0]["source"] == "system/principles.md:3"


def test_context_principles_follow_every_store_write(svc: MemoryService) -> None:
    """The principles come from the catalog (not a Chroma scan): what a scan of Chroma's
    metadata finds, after adds, a metadata change, forget and restore."""

    def principles() -> list[str]:
        ctx = svc.context("receta de lentejas", budget=1500)
        return [i["id"] for i in ctx["items"] if i["layer"] == "L-inf" and i["id"]]

    def scanned() -> set[str]:
        return {r.id for r in svc.store.scan({"layer": "L-inf"})}

    first = svc.add("Nunca operar sin stop loss.", memory_type="principle", importance=5)["id"]
    other = svc.add("Siempre hacer copia antes de borrar.", memory_type="fact")["id"]
    _seed(svc)
    assert principles() == [first] and scanned() == {first}
    rec = svc.store.get([other])[0].model_copy(update={"memory_type": "principle"})
    svc.store.update([rec.model_copy(update={"layer": "L-inf"})])
    assert set(principles()) == scanned() == {first, other}
    assert principles()[0] == first  # importance first
    svc.forget(first)
    assert principles() == [other] and scanned() == {other}
    svc.restore(first)
    assert set(principles()) == scanned() == {first, other}


def test_examples_load_once(svc: MemoryService) -> None:
    assert svc.load_examples()["added"] >= 18
    assert svc.load_examples() == {"added": 0}
    assert svc.load_requested_examples() is None  # nobody asked: nothing to do


def test_examples_init_asked_for_are_stored_once_the_store_loads(svc: MemoryService) -> None:
    # `alma-ctl init --with-examples` without a daemon leaves the request; the daemon's
    # memory store honours it when it loads, and takes the request away.
    request = svc.layout.examples_request_file
    request.write_bytes(b"")
    added = svc.load_requested_examples()
    assert added is not None and added >= 18
    assert not request.exists()
    assert svc.stats()["total"] == added
    request.write_bytes(b"")
    assert svc.load_requested_examples() == 0  # asked again: nothing is stored twice
    stats = svc.stats()
    assert stats["by_layer"]["L-inf"] >= 1 and stats["by_project"]["alma"] >= 1


def test_merge_candidates_query_only_new_memories_and_match_a_full_scan(
    svc: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent.memory import merge

    a = svc.add("Prefiero respuestas cortas y en español.", tags=["estilo"])["id"]
    svc.add("El backup nocturno falla si el disco no está montado.")
    assert svc.merge_candidates() == []
    queried: list[int] = []
    real = svc.store.neighbours

    def counting(vectors: Any, n: int) -> Any:
        queried.append(len(vectors))
        return real(vectors, n)

    monkeypatch.setattr(svc.store, "neighbours", counting)
    assert svc.merge_candidates() == []
    assert queried == []  # nothing new: nothing queried
    b = svc.add("Prefiero respuestas breves y en español, sin rodeos.", tags=["tono"])["id"]
    c = svc.add("Mañana riego el huerto a las 8.")["id"]
    found = svc.merge_candidates()
    assert queried == [2]  # only the two new ones
    assert any({a, b} <= set(cluster) for cluster in found)
    assert all(c not in cluster for cluster in found)
    assert found == merge.candidates(svc.store)  # the same as a scan from scratch
    svc.merge(a, [b])  # b is archived: the pair is gone, without a new query
    queried.clear()
    assert svc.merge_candidates() == []
    assert queried == []
    assert merge.candidates(svc.store) == []


def test_merge_and_unmerge_restore_exactly(svc: MemoryService) -> None:
    a = svc.add("Prefiero respuestas cortas y en español.", tags=["estilo"])["id"]
    b = svc.add("Prefiero respuestas breves y en español, sin rodeos.", tags=["tono"])["id"]
    svc.add("El backup nocturno falla si el disco no está montado.")
    assert any({a, b} <= set(c) for c in svc.merge_candidates())
    before = (svc.show(a), svc.show(b))
    record = svc.merge(a, [b])
    assert svc.show(b)["archived"] and svc.show(b)["merged_into"] == a
    assert set(svc.show(a)["tags"]) >= {"estilo", "tono"}
    svc.unmerge(record)
    assert (svc.show(a), svc.show(b)) == before
    with pytest.raises(BadArgumentError):
        svc.unmerge({"keep": {}, "others": [], "surprise": 1})


def test_bad_arguments_say_what_to_fix(svc: MemoryService) -> None:
    with pytest.raises(BadArgumentError, match="importance"):
        svc.add("algo", importance=9)
    with pytest.raises(BadArgumentError, match=r"TEXT .*must be a non-empty text"):
        svc.add("   ")
    with pytest.raises(BadArgumentError, match="limit"):
        svc.search("algo", limit=0)


class FakeModel:
    """Answers per text; raises or returns junk when asked to."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    def __call__(self, text: str) -> Mapping[str, Any]:
        answer = self.answers[text.split()[0]]
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]  # the fake model is a structural stand-in for Enricher


def test_model_enriches_in_background_and_bad_output_keeps_rules(
    layout: RootLayout, embedder_loaded: None
) -> None:
    model = FakeModel(
        {
            "Bueno": {
                "importance": 42,
                "tags": ["Salud"],
                "memory_type": "fact",
                "theme": "Dinero",
                "related_to": "la cuenta",
            },
            "Extra": {"theme": "t"},
            "Malo": {"importance": "mucho"},
            "Raro": {"tags": ["x"], "sql": "DROP"},
            "Mudo": RuntimeError("model crashed"),
            "Fijo": {"importance": 1, "memory_type": "episode", "project": "otro"},
        }
    )
    svc = MemoryService(layout, model=model, clock=lambda: NOW)  # type: ignore[arg-type]  # the fake model is a structural stand-in for Enricher
    try:
        ids = {
            w: svc.add(f"{w} texto de prueba sobre el día de hoy")["id"]
            for w in ("Bueno", "Malo", "Raro", "Mudo", "Extra")
        }
        fixed = svc.add(
            "Fijo texto con valores puestos", importance=4, memory_type="context", project="alma"
        )["id"]
        svc.wait_idle()
        good = svc.show(ids["Bueno"])
        assert good["importance"] == 5 and "salud" in good["tags"] and good["memory_type"] == "fact"
        assert (good["theme"], good["related_to"]) == ("dinero", "la cuenta")
        rules = derive("Malo texto de prueba sobre el día de hoy")
        for w in ("Malo", "Raro", "Mudo", "Extra"):  # "t" is no theme: the rules' one stays
            kept_rules = svc.show(ids[w])
            assert kept_rules["importance"] == 3 and kept_rules["theme"] == rules.theme
        kept = svc.show(fixed)
        assert (kept["importance"], kept["memory_type"], kept["project"]) == (4, "context", "alma")
    finally:
        svc.close()


def test_the_model_never_makes_or_unmakes_a_principle(
    layout: RootLayout, embedder_loaded: None
) -> None:
    # A principle (L-inf) is in every prompt, never cut and never evicted: only the person's
    # words make one. The enricher's memory_type applied as given would make a note of the
    # day a principle in every chat, and take the person's "Regla: ..." out of them.
    model = FakeModel(
        {
            "Regla:": {"memory_type": "fact", "importance": 2},
            "Hoy": {"memory_type": "principle", "importance": 5},
        }
    )
    svc = MemoryService(layout, model=model, clock=lambda: NOW)  # type: ignore[arg-type]  # the fake model is a structural stand-in for Enricher
    try:
        rule = svc.add("Regla: nunca operar con más del 2% de riesgo")["id"]
        note = svc.add("Hoy fui al mercado a comprar fruta y pan")["id"]
        svc.wait_idle()
        kept_rule, kept_note = svc.show(rule), svc.show(note)
        assert (kept_rule["memory_type"], kept_rule["layer"]) == ("principle", "L-inf")
        assert kept_rule["importance"] == 5
        assert kept_note["memory_type"] != "principle" and kept_note["layer"] != "L-inf"
        context = svc.context("¿qué compré hoy?")
        principles = [i["id"] for i in context["items"] if i["layer"] == "L-inf"]
        assert principles == [rule]
    finally:
        svc.close()


@pytest.fixture
def east_of_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time one hour ahead of UTC (Spain in winter), as a POSIX TZ needing no tzdata."""
    monkeypatch.setenv("TZ", "CET-1")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_log_named_for_year_1_stops_no_other_days_ingestion(
    layout: RootLayout, embedder_loaded: None, east_of_utc: None
) -> None:
    # Its turn's time, 0001-01-01 00:00 local, is in year 0 in UTC: astimezone raises
    # ValueError, and as the files are read in name order, an uncaught one would stop every
    # rescan there, before any real day was read (the catch-up at start included).
    turn = "# {day}\n\n## 10:00:00 · usuario\n{text}\n"
    (layout.logs / "0001-01-01.md").write_text(
        turn.format(day="0001-01-01", text="Una plantilla de día que nunca usé."), encoding="utf-8"
    )
    (layout.logs / "2026-11-20.md").write_text(
        turn.format(day="2026-11-20", text="Hoy planté tomates en el huerto de la terraza."),
        encoding="utf-8",
    )
    svc = MemoryService(layout, clock=lambda: NOW)
    try:
        svc.rescan_logs()
        contents = {m["content"] for m in svc.list(limit=50)}
        assert "Hoy planté tomates en el huerto de la terraza." in contents
        assert "Una plantilla de día que nunca usé." in contents  # stamped in UTC
    finally:
        svc.close()


def test_a_memorys_answer_carries_every_field_of_the_record() -> None:
    """The typed answer (policies.results.Memory) is written field by field: a field added to
    the record and forgotten there would never reach the person."""
    rec = MemoryRecord(id="m1", content="x", created_at="2026-11-22T10:00:00")
    private = {"mention_ids", "enriched"}  # bookkeeping, never shown
    assert set(rec.public()) == (set(MemoryRecord.model_fields) - private) | {"archived"}
    assert rec.public(score=0.5)["score"] == 0.5


def test_a_closed_service_holds_no_file_open(layout: RootLayout, embedder_loaded: None) -> None:
    # A daemon reopens its store (a restore, a migration): each open must give back its files.
    def held() -> int:
        return len(list(Path("/proc/self/fd").iterdir()))

    MemoryService(layout, clock=lambda: NOW).close()
    before = held()
    for _ in range(3):
        service = MemoryService(layout, clock=lambda: NOW)
        service.add("Mi perro se llama Toby y tiene tres años.")
        service.search("¿cómo se llama mi perro?")
        service.close()
    assert held() == before
