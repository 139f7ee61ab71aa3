"""memory.edit: a person's edit of one memory, journaled before it is written, undone exactly
(text, tags, importance, type, and what search finds), and bad input refused with nothing
changed."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agent.memory import merge_actions as memory_actions
from agent.memory.service import MemoryService
from policies.errors import BadArgumentError, ConflictError, InvalidStateError, NotFoundError
from policies.layout import RootLayout
from state.journal import Journal
from tests.unit.test_memory_service import NOW


@pytest.fixture
def root(tmp_path: Path) -> RootLayout:
    for sub in ("system", "logs", "user", ".alma/journal"):
        (tmp_path / sub).mkdir(parents=True)
    return RootLayout(tmp_path)


@pytest.fixture
def svc(root: RootLayout, embedder_loaded: None) -> Iterator[MemoryService]:
    service = MemoryService(root, clock=lambda: NOW)
    yield service
    service.close()


@pytest.fixture
def journal(root: RootLayout) -> Iterator[Journal]:
    j = Journal(root.journal_file)
    yield j
    j.close()


def _memory(svc: MemoryService) -> str:
    mid = svc.add("El servidor de pruebas se reinicia los lunes.", tags=["servidor"], importance=2)[
        "id"
    ]
    svc.add("Mi gata se llama Luna y duerme en el sofá.")
    return str(mid)


def _found(svc: MemoryService, query: str, mid: str) -> bool:
    return mid in [h["id"] for h in svc.search(query, limit=1, count_use=False)]


def test_an_edit_then_its_undo_gives_the_memory_back_exactly(
    svc: MemoryService, journal: Journal
) -> None:
    mid = _memory(svc)
    before = svc.show(mid)
    edited = memory_actions.edit(
        journal,
        svc,
        mid,
        text="La impresora del despacho necesita tóner azul.",
        tags=["oficina,compras"],
        importance=5,
        memory_type="fact",
    )
    assert edited["content"] == "La impresora del despacho necesita tóner azul."
    assert edited["tags"] == ["oficina", "compras"]
    assert (edited["importance"], edited["memory_type"]) == (5, "fact")
    assert svc.show(mid) == {k: v for k, v in edited.items() if k != "action_id"}
    action = journal.action(edited["action_id"])
    assert (action["kind"], action["status"], action["sandbox"]) == (
        "memory_edit",
        "done",
        "memory",
    )
    assert _found(svc, "tóner de la impresora", mid)  # the new text is what search reads
    assert "toner" in svc.store.bodies([mid])[mid]
    assert svc.list(tag="oficina")[0]["id"] == mid  # and the catalog
    undo = memory_actions.undo(journal, svc, edited["action_id"])
    assert undo["status"] == "done" and undo["undoes"] == edited["action_id"]
    assert journal.action(edited["action_id"])["status"] == "undone"
    assert svc.show(mid) == before
    assert _found(svc, "reinicio del servidor de pruebas", mid)
    assert "toner" not in svc.store.bodies([mid])[mid]  # the lexicon forgot the edit's words
    assert svc.list(tag="oficina") == []


def test_undoing_the_undo_does_the_edit_again(svc: MemoryService, journal: Journal) -> None:
    mid = _memory(svc)
    edited = memory_actions.edit(journal, svc, mid, importance=4)
    undo = memory_actions.undo(journal, svc, edited["action_id"])
    memory_actions.undo(journal, svc, undo["id"])
    assert svc.show(mid)["importance"] == 4


def test_an_undo_never_writes_over_a_later_edit(svc: MemoryService, journal: Journal) -> None:
    mid = _memory(svc)
    first = memory_actions.edit(journal, svc, mid, importance=4)
    memory_actions.edit(journal, svc, mid, text="El servidor de pruebas se reinicia los martes.")
    later = svc.show(mid)
    with pytest.raises(ConflictError, match="changed after this edit"):
        memory_actions.undo(journal, svc, first["action_id"])
    assert svc.show(mid) == later
    assert journal.action(first["action_id"])["status"] == "done"


@pytest.mark.parametrize(
    ("changes", "error", "sentence"),
    [
        ({}, BadArgumentError, "Say what to change"),
        ({"text": "   "}, BadArgumentError, "must be a non-empty text"),
        ({"text": "x" * 20_001}, BadArgumentError, "of at most 20000 characters"),
        ({"importance": 6}, BadArgumentError, "an integer from 1 to 5"),
        ({"memory_type": "invented"}, BadArgumentError, "not a memory type ALMA knows"),
        ({"importance": 2}, BadArgumentError, "already says that"),
    ],
)
def test_bad_input_is_one_sentence_and_nothing_changes(
    svc: MemoryService,
    journal: Journal,
    changes: dict[str, object],
    error: type[Exception],
    sentence: str,
) -> None:
    mid = _memory(svc)
    before = svc.show(mid)
    with pytest.raises(error, match=sentence):
        memory_actions.edit(journal, svc, mid, **changes)
    assert svc.show(mid) == before
    assert journal.history() == []


def test_an_unknown_or_forgotten_memory_is_refused(svc: MemoryService, journal: Journal) -> None:
    mid = _memory(svc)
    with pytest.raises(NotFoundError, match="No memory has id"):
        memory_actions.edit(journal, svc, "no-such-id", importance=3)
    svc.forget(mid)
    with pytest.raises(InvalidStateError, match="memory restore"):
        memory_actions.edit(journal, svc, mid, importance=3)
    assert journal.history() == []


def test_an_edit_interrupted_after_its_intent_is_taken_back(
    svc: MemoryService, journal: Journal
) -> None:
    mid = _memory(svc)
    before = svc.show(mid)
    old, new = svc.edited(mid, text="Texto a medio escribir.")
    aid = journal.create_action(
        kind="memory_edit",
        plan=[{"op": "memory_edit", "id": mid, "fields": ["content"]}],
        sandbox="memory",
    )
    journal.write_intents(
        aid, [(0, None, None, {"before": old.model_dump(), "after": new.model_dump()})]
    )
    svc.rewrite(new.model_dump())  # the crash comes after the write, before the journal's mark
    assert memory_actions.recover(journal, svc) == [aid]
    assert journal.action(aid)["status"] == "rolled_back"
    assert svc.show(mid) == before


def test_the_model_never_writes_over_a_persons_edit(
    root: RootLayout, journal: Journal, embedder_loaded: None
) -> None:
    """The model's metadata comes after the memory was stored: when the person edited it
    meanwhile, the edit stands."""
    asked, answer = threading.Event(), threading.Event()

    def slow_model(text: str) -> Mapping[str, Any]:
        asked.set()
        answer.wait(30)
        return {"importance": 5, "memory_type": "fact", "tags": ["modelo"]}

    svc = MemoryService(root, model=slow_model, clock=lambda: NOW)  # type: ignore[arg-type]  # a structural stand-in for Enricher
    try:
        mid = svc.add("Quiero revisar las facturas del mes que viene")["id"]
        assert asked.wait(30)
        memory_actions.edit(journal, svc, mid, importance=2, memory_type="context", tags=["casa"])
        answer.set()
        svc.wait_idle()
        shown = svc.show(mid)
        assert (shown["importance"], shown["memory_type"], shown["tags"]) == (
            2,
            "context",
            ["casa"],
        )
    finally:
        answer.set()
        svc.close()
