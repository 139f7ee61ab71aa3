"""`alma-ctl memory export --format obsidian DIR` through the real daemon: a note per memory
with its front matter and its links, a secret withheld, and never over an existing folder."""

from __future__ import annotations

import os

import pytest

from tests.e2e.test_memory_e2e import wait_memory_ready
from tests.support.daemon import DaemonRoot

pytestmark = pytest.mark.e2e


def test_a_vault_of_notes_through_alma_ctl(
    alma_mem: DaemonRoot, tmp_path_factory: pytest.TempPathFactory
) -> None:
    d = alma_mem
    d.start()
    wait_memory_ready(d)
    luna = d.ok(
        "memory", "add", "Mi gata Luna duerme en el sofá.", "--related-to", "Luna",
        "--tag", "casa", "--importance", "4",
    )["id"]  # fmt: skip
    d.ok("memory", "add", "Luna come pienso de salmón.", "--related-to", "Luna")
    d.ok("memory", "add", "<script>alert(1)</script> ../../fuera")
    secret = d.ok("memory", "add", "La clave del banco es hunter2-Xy9#kP3qLm7")["id"]
    out = tmp_path_factory.mktemp("out")
    vault = out / "bóveda"

    done = d.ctl("memory", "export", "--format", "obsidian", str(vault), json_out=False)
    assert done.rc == 0, done.stderr
    assert "3" in done.stdout and str(vault) in done.stdout
    names = sorted(os.listdir(vault))
    assert len(names) == 3 and all(n.endswith(".md") and not n.startswith(".") for n in names)
    assert "script alert(1) script .. .. fuera.md" in names  # the text, its separators gone
    assert sorted(os.listdir(out)) == ["bóveda"]  # nothing beside it, nothing outside it
    texts = {n: (vault / n).read_text(encoding="utf-8") for n in names}
    gata = next(t for t in texts.values() if f'id: "{luna}"' in t)
    assert (
        '  - "casa"' in gata
        and "importance: 4" in gata
        and "[[Luna come pienso de salmón]]" in gata
    )
    assert all("hunter2" not in t and secret not in t for t in texts.values())

    listed = d.ok("memory", "export", "--format", "obsidian", str(out / "otra"), "--list-withheld")
    assert [w["id"] for w in listed["withheld"]] == [secret] and not (out / "otra").exists()

    again = d.ctl("memory", "export", "--format", "obsidian", str(vault), json_out=False)
    assert again.rc != 0 and "never written over" in again.stderr
    assert sorted(os.listdir(vault)) == names
    assert all((vault / n).read_text(encoding="utf-8") == texts[n] for n in names)

    doc = d.ok("memory", "export", "--format", "obsidian", str(out / "todo"), "--include", secret)
    assert doc["summary"]["notes"] == 4 and doc["output"] == str(out / "todo")
    assert all(isinstance(n, str) and n.endswith(".md") for n in doc["notes"])  # names only
    nofolder = d.ctl("memory", "export", "--format", "obsidian", json_out=False)
    assert nofolder.rc == 2 and "--format obsidian DIR" in nofolder.stderr
