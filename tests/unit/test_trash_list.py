"""`alma-ctl trash list` reads each trashed action's manifest.json, a file ALMA wrote but that
lives on the person's disk: damaged (cut short by a full disk, edited, not UTF-8, the wrong
shape) or planted as a link, it must not turn the whole listing into an internal error. The
entries are still listed; the original place says it is unknown and how to get the files
back (undo reads the journal, not the manifest)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from policies.decide import RunContext
from policies.i18n import language
from sandbox.engine import Engine
from tests.support.engine import AlmaRoot, make_engine

APPROVED = RunContext(approved_by_person=True)


@pytest.fixture
def alma(tmp_path: Path) -> AlmaRoot:
    return AlmaRoot(tmp_path).build(
        {"user/viejo.tmp": b"temporal", "user/otro.tmp": b"otro", "user/notas.txt": b"notas"}
    )


@pytest.fixture
def engine(alma: AlmaRoot) -> Iterator[Engine]:
    eng = make_engine(alma, "landlock")
    yield eng
    eng.journal.close()


def _trash_two(alma: AlmaRoot, engine: Engine) -> tuple[int, int]:
    first = engine.execute([alma.trash("user/viejo.tmp")], kind="temp_cleanup", ctx=APPROVED)
    second = engine.execute([alma.trash("user/otro.tmp")], kind="temp_cleanup", ctx=APPROVED)
    return first["id"], second["id"]


DAMAGE = {
    "cut short": b'{"action": 1, "entries": {"0": {"from": "user/vie',
    "not json": b"hola\n",
    "not utf-8": b'{"entries": {"0": {"from": "user/\xff\xfe"}}}',
    "a list": b"[1, 2, 3]",
    "entries not a map": b'{"entries": [1]}',
    "entry without from": b'{"entries": {"0": {"to": "x"}}}',
    "from not text": b'{"entries": {"0": {"from": 7}}}',
    "empty": b"",
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_manifest_still_lists_its_files(
    alma: AlmaRoot, engine: Engine, damage: str
) -> None:
    first, second = _trash_two(alma, engine)
    manifest = alma.root / ".alma/trash" / str(first) / "manifest.json"
    manifest.write_bytes(DAMAGE[damage])
    before = alma.world()
    with language("en"):
        entries = engine.trash_list()
    by_action = {e["action"]: e for e in entries}
    assert set(by_action) == {first, second}
    assert by_action[second]["original"] == "user/otro.tmp"
    broken = by_action[first]
    assert broken["original"] is None
    assert alma.path(broken["trash"]).read_bytes() == b"temporal"
    assert f"alma-ctl undo {first}" in broken["problem"]
    assert alma.world() == before  # listing changes nothing
    engine.undo(first)  # and undo does not need the manifest
    assert alma.path("user/viejo.tmp").read_bytes() == b"temporal"


def test_a_manifest_planted_as_a_link_is_not_followed(alma: AlmaRoot, engine: Engine) -> None:
    first, _second = _trash_two(alma, engine)
    manifest = alma.root / ".alma/trash" / str(first) / "manifest.json"
    secret = alma.root / "user/notas.txt"
    fake = {"entries": {"0": {"from": "user/" + secret.read_text()}}}
    elsewhere = alma.outside / "fake.json"
    elsewhere.write_text(json.dumps(fake))
    manifest.unlink()
    manifest.symlink_to(elsewhere)
    entries = {e["action"]: e for e in engine.trash_list()}
    assert entries[first]["original"] is None


def test_the_damage_is_said_in_the_persons_language(alma: AlmaRoot, engine: Engine) -> None:
    first, _second = _trash_two(alma, engine)
    (alma.root / ".alma/trash" / str(first) / "manifest.json").write_bytes(b"{")
    with language("es"):
        [broken] = [e for e in engine.trash_list() if e["action"] == first]
    assert "alma-ctl undo" in broken["problem"] and "dañad" in broken["problem"]
