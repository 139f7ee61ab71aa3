"""`alma-ctl memory edit` through the real daemon: the edit is what `memory show` prints and
what `memory search` finds, it is in the history, and `alma-ctl undo` gives the memory back
exactly; bad input is one sentence with nothing changed."""

from __future__ import annotations

import pytest

from tests.e2e.test_memory_e2e import wait_memory_ready
from tests.support.daemon import DaemonRoot

pytestmark = pytest.mark.e2e

EXIT_BAD_ARGUMENT = 2


def test_edit_show_search_undo(alma_mem: DaemonRoot) -> None:
    d = alma_mem
    d.start()
    wait_memory_ready(d)
    mid = d.ok(
        "memory", "add", "El servidor de pruebas se reinicia los lunes.",
        "--tag", "servidor", "--importance", "2",
    )["id"]  # fmt: skip
    d.ok("memory", "add", "Mi gata se llama Luna y duerme en el sofá.")
    before = d.ok("memory", "show", mid)

    edited = d.ok(
        "memory", "edit", mid, "--text", "La impresora del despacho necesita tóner azul.",
        "--tags", "oficina,compras", "--importance", "5", "--type", "fact",
    )  # fmt: skip
    action_id = edited.pop("action_id")
    assert edited["content"] == "La impresora del despacho necesita tóner azul."
    assert edited["tags"] == ["oficina", "compras"]
    assert (edited["importance"], edited["memory_type"]) == (5, "fact")
    assert d.ok("memory", "show", mid) == edited
    hits = d.ok("memory", "search", "¿qué le hace falta a la impresora?", "--limit", "1")
    assert hits[0]["id"] == mid and "tóner" in hits[0]["content"]
    assert d.ok("history")[0]["id"] == action_id
    text = d.ctl("memory", "edit", mid, "--importance", "4", json_out=False)
    assert text.rc == 0 and "alma-ctl undo" in text.stdout, text.stdout

    # Bad input: one sentence, nothing changed.
    for args, sentence in (
        (("--text", "  "), "non-empty text"),
        (("--importance", "9"), "from 1 to 5"),
        (("--type", "inventado"), "not a memory type"),
        ((), "Say what to change"),
    ):
        bad = d.ctl("memory", "edit", mid, *args, json_out=False)
        assert bad.rc == EXIT_BAD_ARGUMENT and sentence in bad.stderr, (args, bad.stderr)
        assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    missing = d.ctl("memory", "edit", "no-such-id", "--importance", "3", json_out=False)
    assert missing.rc != 0 and "memory list" in missing.stderr

    # Undo the newest edit (importance 4), then the first: the memory is as it was.
    d.ok("undo")
    d.ok("undo", str(action_id))
    assert d.ok("memory", "show", mid) == before
    hits = d.ok("memory", "search", "reinicio del servidor de pruebas", "--limit", "1")
    assert hits[0]["id"] == mid and hits[0]["content"] == before["content"]
