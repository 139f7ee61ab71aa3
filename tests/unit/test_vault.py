"""The Obsidian export: safe and unique note names, front matter read back as written, links
between related memories, secrets withheld as the training export withholds them, and a vault
written by alma-ctl all at once, never over anything."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent.memory.vault import NAME_BYTES, check_request, note_name, vault
from control import ctl
from policies.errors import AlmaError, BadArgumentError, ConflictError
from state.memory import MemoryRecord


def _rec(n: int, content: str, **fields: object) -> MemoryRecord:
    base: dict[str, object] = {
        "id": f"id{n:02d}",
        "content": content,
        "created_at": f"2026-11-{n:02d}T10:00:00+00:00",
    }
    return MemoryRecord.model_validate(base | fields)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Mi gata se llama Luna.", "Mi gata se llama Luna"),
        ("../../etc/passwd", "etc passwd"),
        (".oculto y con: dos*puntos?", "oculto y con dos puntos"),
        ("Año nuevo, café y ñandú", "Año nuevo, café y ñandú"),
        ("[[enlace]] #tag ^b | x", "enlace tag b x"),
        ("\n\n  segunda línea\nsigue", "segunda línea"),
        ("...", "idXX"),
        ("CON", "idXX"),
        ("a\x00b\x1fc", "a b c"),
    ],
)
def test_a_note_name_is_safe_and_keeps_accents(text: str, name: str) -> None:
    got = note_name(text, "idXX")
    assert got == name
    assert "/" not in got and "\\" not in got and not got.startswith(".")


def test_a_long_text_is_cut_at_a_word_within_the_bound() -> None:
    name = note_name("palabrañ " * 100, "x")
    assert len(name.encode("utf-8")) <= NAME_BYTES and name.endswith("palabrañ")


def test_names_are_unique_whatever_the_case() -> None:
    records = [_rec(1, "Luna"), _rec(2, "luna"), _rec(3, "LUNA."), _rec(4, "Otra")]
    names = [n["name"] for n in vault(records)["notes"]]
    assert names == ["Luna.md", "luna (2).md", "LUNA (3).md", "Otra.md"]
    assert len({n.casefold() for n in names}) == 4


def _front(text: str) -> dict[str, object]:
    head = text.split("---\n")[1]
    out: dict[str, object] = {}
    key = ""
    for line in head.splitlines():
        if line.startswith("  - "):
            listed = out.setdefault(key, [])
            assert isinstance(listed, list)
            listed.append(json.loads(line[4:]))
        else:
            key, _sep, value = line.partition(": ")
            key = key.rstrip(":")
            out[key] = json.loads(value) if value else []
    return out


def test_front_matter_holds_the_memory_as_it_is() -> None:
    rec = _rec(
        5,
        'Texto con "comillas", dos puntos: y\nuna segunda línea',
        tags=["salud", "dos palabras"],
        project="proyecto: X",
        importance=4,
        memory_type="fact",
        updated_at="2026-11-20T09:00:00+00:00",
    )
    (note,) = vault([rec])["notes"]
    front = _front(note["text"])
    assert front == {
        "id": "id05",
        "type": "fact",
        "importance": 4,
        "project": "proyecto: X",
        "tags": ["salud", "dos-palabras"],
        "created": "2026-11-05",
        "updated": "2026-11-20",
    }
    assert note["text"].split("---\n", 2)[2].strip() == rec.content


def test_related_memories_link_each_other_and_no_note_links_itself() -> None:
    records = [
        _rec(1, "Max es mi perro", related_to="Max"),
        _rec(2, "Max come pienso", related_to="max"),
        _rec(3, "El backup de proyectoY", project="proyectoY"),
        _rec(4, "Revisar proyectoY el lunes", project="proyectoY"),
        _rec(5, "Nada que ver"),
    ]
    notes = {n["id"]: n["text"] for n in vault(records)["notes"]}
    assert "[[Max come pienso]]" in notes["id01"] and "[[Max es mi perro]]" in notes["id02"]
    assert "[[Revisar proyectoY el lunes]]" in notes["id03"]
    assert "[[Max es mi perro]]" not in notes["id01"]
    assert "[[" not in notes["id05"]


def test_secrets_and_private_memories_are_withheld_and_never_linked() -> None:
    records = [
        _rec(1, "La clave del banco es hunter2-Xy9#kP3qLm7", related_to="banco"),
        _rec(2, "Algo íntimo #privado", related_to="banco"),
        _rec(3, "El banco abre a las 9", related_to="banco"),
    ]
    out = vault(records)
    assert [n["id"] for n in out["notes"]] == ["id03"]
    assert "[[" not in out["notes"][0]["text"]
    assert {w["id"]: w["why"] for w in out["withheld"]} == {"id01": "secret", "id02": "private"}
    assert "hunter2-Xy9#kP3qLm7" not in json.dumps(out, ensure_ascii=False)
    assert out["summary"]["dropped"] == {"private": 1, "secret": 1}
    included = vault(records, include=["id02"])
    assert sorted(n["id"] for n in included["notes"]) == ["id02", "id03"]
    assert len(vault(records, include_secrets=True)["notes"]) == 3


def test_a_vault_and_its_folder_go_together() -> None:
    check_request("obsidian", "/tmp/v")
    for fmt, folder in (("obsidian", None), ("chatml", "/tmp/v")):
        with pytest.raises(BadArgumentError, match="--format obsidian DIR"):
            check_request(fmt, folder)


# -- alma-ctl writes it ------------------------------------------------------------------------


def _doc(*names: str) -> dict[str, object]:
    return {
        "format": "obsidian",
        "notes": [{"name": n, "id": n, "text": f"texto {n}\n"} for n in names],
        "summary": {"notes": len(names), "links": 0, "dropped": {}},
        "withheld": [],
    }


def test_alma_ctl_writes_the_vault_into_a_new_folder(tmp_path: Path) -> None:
    out = ctl._vault(_doc("Luna.md", "Año.md"), str(tmp_path / "vault"))
    assert sorted(os.listdir(tmp_path / "vault")) == ["Año.md", "Luna.md"]
    assert (tmp_path / "vault" / "Año.md").read_text(encoding="utf-8") == "texto Año.md\n"
    assert os.listdir(tmp_path) == ["vault"]  # no stage left beside it
    assert "2" in out.human


def test_an_empty_folder_is_filled_and_a_full_one_is_refused_untouched(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    ctl._vault(_doc("a.md"), str(tmp_path / "empty"))
    assert os.listdir(tmp_path / "empty") == ["a.md"]
    full = tmp_path / "full"
    full.mkdir()
    (full / "a.md").write_text("mine", encoding="utf-8")
    with pytest.raises(ConflictError, match="never written over"):
        ctl._vault(_doc("a.md", "b.md"), str(full))
    assert os.listdir(full) == ["a.md"] and (full / "a.md").read_text(encoding="utf-8") == "mine"
    (tmp_path / "file").write_text("x", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path / "empty2", target_is_directory=True)
    for taken in ("file", "link"):
        with pytest.raises(ConflictError):
            ctl._vault(_doc("a.md"), str(tmp_path / taken))
    assert sorted(os.listdir(tmp_path)) == ["empty", "file", "full", "link"]


@pytest.mark.parametrize("bad", ["../fuera.md", ".oculta.md", "a/b.md", ""])
def test_a_note_name_that_is_not_safe_writes_nothing(tmp_path: Path, bad: str) -> None:
    with pytest.raises(AlmaError):
        ctl._vault(_doc("bien.md", bad), str(tmp_path / "vault"))
    assert os.listdir(tmp_path) == []


def test_a_missing_parent_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(BadArgumentError, match="does not exist"):
        ctl._vault(_doc("a.md"), str(tmp_path / "no" / "vault"))
