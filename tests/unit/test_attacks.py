"""Attacks on the action engine: each is refused and NOTHING changes.

Every test snapshots the whole root (ALMA's trash and data included; only the journal database,
where each attempt is recorded, is left out) and a sibling folder outside the root, byte for
byte, before and after. Plans go through the real Engine on Landlock (the policy gate, then the
confined child) and, where the parent's gate would stop them first, straight through the
executor too (``execute_in_process``), so the child's own defences are tested as well. Attacks
that happen *between* validation and execution use the executor's checkpoint hook in-process.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from actions.ops import Identity, Mkdir, Move, Op, Restore, Trash, op_from_dict
from actions.safefs import identity_of, split_relpath
from policies.decide import RunContext
from policies.errors import AlmaError, BadArgumentError, ConflictError, RefusedError
from sandbox.engine import Engine
from state.journal import Journal
from tests.support.engine import (
    REAL_BACKENDS,
    AlmaRoot,
    default_policy,
    execute_in_process,
    make_engine,
)

APPROVED = RunContext(approved_by_person=True)
FILES = {
    "user/proyecto/foto.jpg": b"\xff\xd8\xff JPEG de prueba",
    "user/proyecto/notas.txt": b"notas del proyecto\n",
    "user/proyecto/año/informe.pdf": b"%PDF-1.4 informe anual",
    "user/destino/.keep": b"",
    "user2/ajeno.txt": b"a look-alike folder beside user/: not writable\n",
}


@pytest.fixture
def alma(tmp_path: Path) -> AlmaRoot:
    return AlmaRoot(tmp_path).build(FILES)


@pytest.fixture
def engine(alma: AlmaRoot) -> Iterator[Engine]:
    eng = make_engine(alma, "landlock")
    yield eng
    eng.journal.close()


def _ident_at(path: Path) -> Identity:
    return identity_of(os.lstat(path))


def refused_by_engine(
    alma: AlmaRoot, engine: Engine, plan: list[Op], error: type[AlmaError] = RefusedError
) -> AlmaError:
    before = alma.world()
    with pytest.raises(error) as info:
        engine.execute(plan, kind="organize", ctx=APPROVED)
    assert alma.world() == before
    return info.value


def refused_by_executor(
    alma: AlmaRoot,
    plan: list[Op],
    error: type[AlmaError] = RefusedError,
    checkpoint: Callable[[str], None] | None = None,
) -> AlmaError:
    before = alma.world()
    with pytest.raises(error) as info:
        execute_in_process(alma, plan, checkpoint=checkpoint)
    assert alma.world() == before
    return info.value


def refused_everywhere(
    alma: AlmaRoot, engine: Engine, plan: list[Op], error: type[AlmaError] = RefusedError
) -> None:
    refused_by_engine(alma, engine, plan, error)
    refused_by_executor(alma, plan, error)


# -- symlinks planted in a plan's path ---------------------------------------------------------


@pytest.mark.parametrize("target", ["../system/principles.md", "<outside>/precious.txt"])
@pytest.mark.parametrize("op", ["move", "trash"])
def test_symlink_as_source_is_refused(alma: AlmaRoot, engine: Engine, target: str, op: str) -> None:
    link = alma.path("user/enlace.md")
    link.symlink_to(target.replace("<outside>", str(alma.outside)))
    expect = _ident_at(link)  # what a fooled planner saw: the link itself
    plan: list[Op] = [
        Move("user/enlace.md", "user/destino/enlace.md", expect)
        if op == "move"
        else Trash("user/enlace.md", expect)
    ]
    refused_everywhere(alma, engine, plan)


@pytest.mark.parametrize("target", ["../system", "<outside>"])
def test_symlink_as_destination_folder_is_refused(
    alma: AlmaRoot, engine: Engine, target: str
) -> None:
    alma.path("user/fuera").symlink_to(target.replace("<outside>", str(alma.outside)))
    refused_everywhere(alma, engine, [alma.move("user/proyecto/foto.jpg", "user/fuera/foto.jpg")])
    refused_everywhere(alma, engine, [Mkdir("user/fuera/nueva")])


@pytest.mark.parametrize("target", ["../system", "<outside>"])
def test_symlink_as_intermediate_folder_is_refused(
    alma: AlmaRoot, engine: Engine, target: str
) -> None:
    alma.path("user/atajo").symlink_to(target.replace("<outside>", str(alma.outside)))
    victim = "principles.md" if target == "../system" else "precious.txt"
    real = alma.root / "system" / victim if target == "../system" else alma.outside / victim
    expect = _ident_at(real)
    # out of the zone through the link, into the zone through the link, and deeper below it
    refused_everywhere(alma, engine, [Move(f"user/atajo/{victim}", "user/destino/x", expect)])
    refused_everywhere(alma, engine, [Trash(f"user/atajo/{victim}", expect)])
    refused_everywhere(
        alma,
        engine,
        [Mkdir("user/atajo/sub"), alma.move("user/proyecto/foto.jpg", "user/atajo/sub/f")],
    )


@pytest.mark.parametrize("backend", REAL_BACKENDS)
def test_planted_symlinks_are_refused_on_every_sandbox(alma: AlmaRoot, backend: str) -> None:
    """The same refusals through bubblewrap and firejail, where the zones are bind mounts and a
    move into the trash is a copy: the checks are the executor's, not the sandbox's."""
    engine = make_engine(alma, backend)
    alma.path("user/enlace.md").symlink_to("../system/principles.md")
    alma.path("user/fuera").symlink_to(alma.outside)
    alma.path("user/atajo").symlink_to("../system")
    link = _ident_at(alma.path("user/enlace.md"))
    principles = _ident_at(alma.root / "system/principles.md")
    plans: list[list[Op]] = [
        [Trash("user/enlace.md", link)],
        [alma.move("user/proyecto/foto.jpg", "user/fuera/foto.jpg")],
        [Trash("user/atajo/principles.md", principles)],
        [alma.move("user/proyecto/notas.txt", "user/destino/notas.txt"), Mkdir("user/fuera/x")],
    ]
    for plan in plans:
        refused_by_engine(alma, engine, plan)
    engine.journal.close()


# -- symlinks swapped in between validation and execution --------------------------------------


def _swap_for_link(folder: Path, target: Path) -> None:
    folder.rename(folder.with_name(folder.name + ".orig"))
    folder.symlink_to(target)


@pytest.mark.parametrize("toward", ["system", "outside"])
@pytest.mark.parametrize("which", ["src", "dst"])
def test_folder_swapped_for_symlink_after_validation_is_refused(
    alma: AlmaRoot, toward: str, which: str
) -> None:
    """The folder of the source (or of the destination) becomes a symlink once the plan was
    validated: ALMA must notice, refuse, and leave the swapped tree exactly as the attacker left
    it (nothing written through the link, nothing applied through a stale folder handle)."""
    target = alma.root / "system" if toward == "system" else alma.outside
    folder = alma.path("user/proyecto" if which == "src" else "user/destino")
    plan: list[Op] = [
        Mkdir("user/destino/fotos"),
        alma.move("user/proyecto/foto.jpg", "user/destino/fotos/foto.jpg"),
        alma.move("user/proyecto/notas.txt", "user/destino/notas.txt"),
    ]
    swapped: dict[str, dict[str, str]] = {}

    def checkpoint(label: str) -> None:
        if label == "validated":
            _swap_for_link(folder, target)
            swapped["world"] = alma.world()

    with pytest.raises((RefusedError, ConflictError)):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    assert alma.world() == swapped["world"]


@pytest.mark.parametrize("toward", ["system", "outside"])
def test_destination_swapped_for_symlink_mid_plan_is_rolled_back(
    alma: AlmaRoot, toward: str
) -> None:
    """The swap happens after the first op was applied: the op is taken back, nothing of the
    plan remains, and nothing reaches system/ or outside."""
    target = alma.root / "system" if toward == "system" else alma.outside
    before = alma.world()
    plan: list[Op] = [
        alma.move("user/proyecto/foto.jpg", "user/destino/foto.jpg"),
        alma.move("user/proyecto/notas.txt", "user/destino/notas.txt"),
    ]

    def checkpoint(label: str) -> None:
        if label == "op1":
            _swap_for_link(alma.path("user/destino"), target)

    with pytest.raises((RefusedError, ConflictError)):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    expected = {k.replace("user/destino", "user/destino.orig", 1): v for k, v in before.items()}
    expected["user/destino"] = "link:" + str(target)
    assert alma.world() == expected


@pytest.mark.parametrize("moved", ["user/destino", "user/proyecto"])
def test_folder_moved_into_system_mid_plan_stops_the_plan(alma: AlmaRoot, moved: str) -> None:
    """After an op in the same folders, when they are watched rather than looked up (see
    Tree.verify_watched): the folder is moved into system/ and a fresh one takes its name. The
    next op must not carry a file into system/ nor take one out of it."""
    plan: list[Op] = [
        alma.move("user/proyecto/foto.jpg", "user/destino/foto.jpg"),
        alma.move("user/proyecto/notas.txt", "user/destino/notas.txt"),
    ]
    notas = alma.path("user/proyecto/notas.txt").read_bytes()

    def checkpoint(label: str) -> None:
        if label == "op1":
            alma.path(moved).rename(alma.root / "system" / "movida")
            alma.path(moved).mkdir()

    # Taking op 0 back puts foto.jpg into user/proyecto: when that is the folder that moved,
    # the rollback stops and says how to finish (see the next test).
    expected = AlmaError if moved == "user/proyecto" else ConflictError
    with pytest.raises(expected):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    where = "system/movida" if moved == "user/proyecto" else "user/proyecto"
    assert (alma.root / where / "notas.txt").read_bytes() == notas  # op 1 never happened
    assert not alma.path("user/destino/notas.txt").exists()
    assert not (alma.root / "system/movida/notas.txt").exists() or moved == "user/proyecto"


def test_the_rollback_never_puts_a_file_back_into_a_folder_moved_into_system(
    alma: AlmaRoot,
) -> None:
    """The plan stops at op 1 because its source folder was moved into system/ (a fresh one in
    its place). Taking op 0 back must not carry foto.jpg into system/ through the folder handle
    kept from validation: the rollback stops and says how to finish (a fresh walk then finds
    the folder now named user/proyecto)."""
    plan: list[Op] = [
        alma.move("user/proyecto/foto.jpg", "user/destino/foto.jpg"),
        alma.move("user/proyecto/notas.txt", "user/destino/notas.txt"),
    ]
    moved: dict[str, dict[str, str]] = {}

    def checkpoint(label: str) -> None:
        if label == "op1":
            alma.path("user/proyecto").rename(alma.root / "system" / "movida")
            alma.path("user/proyecto").mkdir()
            moved["world"] = alma.world()

    with pytest.raises(AlmaError) as info:
        execute_in_process(alma, plan, checkpoint=checkpoint)
    assert "alma-ctl undo" in str(info.value)
    after = alma.world()
    system_now = {k: v for k, v in after.items() if k.startswith("system/")}
    assert system_now == {k: v for k, v in moved["world"].items() if k.startswith("system/")}


def test_source_file_swapped_for_symlink_after_validation_is_refused(alma: AlmaRoot) -> None:
    src = alma.path("user/proyecto/notas.txt")
    before = alma.world()

    def checkpoint(label: str) -> None:
        if label == "op0":
            src.unlink()
            src.symlink_to(alma.root / "system" / "principles.md")

    plan: list[Op] = [alma.trash("user/proyecto/notas.txt")]
    with pytest.raises(ConflictError):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    expected = dict(before)
    expected["user/proyecto/notas.txt"] = f"link:{alma.root}/system/principles.md"
    assert alma.world() == expected


def test_folder_moved_into_system_after_validation_is_refused(alma: AlmaRoot) -> None:
    """Not a link this time: the validated folder itself is moved into system/. A folder handle
    kept from validation must not carry ALMA's writes into system/."""
    swapped: dict[str, dict[str, str]] = {}

    def checkpoint(label: str) -> None:
        if label == "validated":
            alma.path("user/destino").rename(alma.root / "system" / "destino")
            alma.path("user/destino").mkdir()
            swapped["world"] = alma.world()

    plan: list[Op] = [
        Mkdir("user/destino/nueva"),
        alma.move("user/proyecto/foto.jpg", "user/destino/foto.jpg"),
    ]
    with pytest.raises((RefusedError, ConflictError)):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    assert alma.world() == swapped["world"]


# -- '..', absolute paths, look-alike folders, read-only zones ---------------------------------


def test_dotdot_and_absolute_paths_are_refused(alma: AlmaRoot, engine: Engine) -> None:
    principles = _ident_at(alma.root / "system/principles.md")
    precious = _ident_at(alma.outside / "precious.txt")
    foto = "user/proyecto/foto.jpg"
    plans: list[list[Op]] = [
        [Move("user/../system/principles.md", "user/destino/p.md", principles)],
        [Move(foto, "user/../system/foto.jpg", alma.ident(foto))],
        [Move(foto, "user/proyecto/../../../outside/foto.jpg", alma.ident(foto))],
        [Move(foto, str(alma.outside / "foto.jpg"), alma.ident(foto))],
        [Move(str(alma.outside / "precious.txt"), "user/destino/p.txt", precious)],
        [Trash(str(alma.root / "system/principles.md"), principles)],
        [Trash("user/./proyecto/foto.jpg", alma.ident(foto))],
        [Mkdir("user/../system/nueva")],
        [Mkdir("/tmp/alma-nueva")],
        [Move(foto, "user//destino/foto.jpg", alma.ident(foto))],
    ]
    for plan in plans:
        refused_everywhere(alma, engine, plan)


def test_look_alike_folders_are_refused(alma: AlmaRoot, engine: Engine) -> None:
    ajeno = alma.ident("user2/ajeno.txt")
    foto = "user/proyecto/foto.jpg"
    plans: list[list[Op]] = [
        [Move(foto, "user2/foto.jpg", alma.ident(foto))],
        [Trash("user2/ajeno.txt", ajeno)],
        [Move("user2/ajeno.txt", "user/destino/ajeno.txt", ajeno)],
        [Move("user/../user2/ajeno.txt", "user/destino/ajeno.txt", ajeno)],
        [Move(foto, "user/../user2/foto.jpg", alma.ident(foto))],
        [Mkdir("user2/nueva")],
        [Mkdir("user")],  # a zone itself is never a target
    ]
    for plan in plans:
        refused_everywhere(alma, engine, plan)


def test_writes_into_read_only_zones_are_refused(alma: AlmaRoot, engine: Engine) -> None:
    foto = "user/proyecto/foto.jpg"
    log = alma.ident("logs/2026-11-22.md")
    plans: list[list[Op]] = [
        [Move(foto, "system/foto.jpg", alma.ident(foto))],
        [Move(foto, ".alma/foto.jpg", alma.ident(foto))],
        [Move(foto, ".alma/trash/foto.jpg", alma.ident(foto))],
        [Move(foto, "logs/foto.jpg", alma.ident(foto))],
        [Move(foto, "docs/foto.jpg", alma.ident(foto))],
        [Trash("system/principles.md", alma.ident("system/principles.md"))],
        [Trash(".alma/daemon-data.txt", alma.ident(".alma/daemon-data.txt"))],
        [Trash("logs/2026-11-22.md", log)],
        [Move("logs/2026-11-22.md", "user/destino/log.md", log)],
        [Mkdir("system/nueva")],
        [Mkdir(".alma/trash/nueva")],
        [Mkdir("logs/nueva")],
    ]
    for plan in plans:
        refused_everywhere(alma, engine, plan)


def test_restore_only_from_alma_trash_into_a_writable_zone(alma: AlmaRoot, engine: Engine) -> None:
    foto = "user/proyecto/foto.jpg"
    done = engine.execute([alma.trash(foto)], kind="organize", ctx=APPROVED)
    entry = next(e for e in engine.trash_list() if e["action"] == done["id"])
    expect = alma.ident(entry["trash"])
    plans: list[list[Op]] = [
        [Restore(entry["trash"], "system/foto.jpg", expect)],
        [Restore(entry["trash"], ".alma/foto.jpg", expect)],
        [Restore(entry["trash"], "user2/foto.jpg", expect)],
    ]
    for plan in plans:
        refused_everywhere(alma, engine, plan)
    # a "trash entry" outside the trash: a restore is not a way to move any file anywhere
    refused_everywhere(
        alma,
        engine,
        [
            Restore(
                "user/proyecto/notas.txt",
                "user/destino/n.txt",
                alma.ident("user/proyecto/notas.txt"),
            )
        ],
    )
    refused_everywhere(
        alma,
        engine,
        [
            Restore(
                ".alma/trash/../../system/principles.md",
                "user/destino/p.md",
                alma.ident("system/principles.md"),
            )
        ],
    )


# -- hard links ----------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["system", "outside"])
@pytest.mark.parametrize("op", ["move", "trash"])
def test_hard_link_to_a_file_elsewhere_is_refused(
    alma: AlmaRoot, engine: Engine, where: str, op: str
) -> None:
    other = (
        alma.root / "system/principles.md" if where == "system" else alma.outside / "precious.txt"
    )
    os.link(other, alma.path("user/proyecto/enlace.md"))
    src = "user/proyecto/enlace.md"
    plan: list[Op] = [alma.move(src, "user/destino/enlace.md") if op == "move" else alma.trash(src)]
    refused_everywhere(alma, engine, plan)


# -- occupied destinations ----------------------------------------------------------------------


@pytest.mark.parametrize("occupant", ["file", "folder", "dangling-link", "link-to-system"])
def test_occupied_destination_is_a_conflict(alma: AlmaRoot, engine: Engine, occupant: str) -> None:
    dst = alma.path("user/destino/foto.jpg")
    if occupant == "file":
        dst.write_bytes(b"another photo with the same name")
    elif occupant == "folder":
        dst.mkdir()
    elif occupant == "dangling-link":
        dst.symlink_to("nowhere")
    else:
        dst.symlink_to(alma.root / "system/principles.md")
    plan: list[Op] = [alma.move("user/proyecto/foto.jpg", "user/destino/foto.jpg")]
    refused_everywhere(alma, engine, plan, ConflictError)


def test_two_ops_to_one_destination_is_a_conflict(alma: AlmaRoot, engine: Engine) -> None:
    plan: list[Op] = [
        alma.move("user/proyecto/foto.jpg", "user/destino/x"),
        alma.move("user/proyecto/notas.txt", "user/destino/x"),
    ]
    refused_everywhere(alma, engine, plan, ConflictError)


def test_destination_occupied_after_validation_is_rolled_back(alma: AlmaRoot) -> None:
    occupied: dict[str, dict[str, str]] = {}

    def checkpoint(label: str) -> None:
        if label == "op1":
            alma.path("user/destino/notas.txt").write_bytes(b"written by the person meanwhile")
            occupied["world"] = alma.world()

    before = alma.world()
    plan: list[Op] = [
        alma.move("user/proyecto/foto.jpg", "user/destino/foto.jpg"),
        alma.move("user/proyecto/notas.txt", "user/destino/notas.txt"),
    ]
    with pytest.raises(ConflictError):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    expected = dict(before)
    expected["user/destino/notas.txt"] = occupied["world"]["user/destino/notas.txt"]
    assert alma.world() == expected


def test_source_removed_mid_plan_rolls_back_what_was_done(alma: AlmaRoot) -> None:
    """A person removes a file the running plan is about to move: the ops already applied are
    taken back (the removed file must not stop the rollback), and the action says so."""
    aside = alma.base / "aside.txt"
    before = alma.world()

    def checkpoint(label: str) -> None:
        if label == "op2":
            alma.path("user/proyecto/notas.txt").rename(aside)

    plan: list[Op] = [
        Mkdir("user/destino/fotos"),
        alma.move("user/proyecto/foto.jpg", "user/destino/fotos/foto.jpg"),
        alma.trash("user/proyecto/notas.txt"),
        alma.move("user/proyecto/año/informe.pdf", "user/destino/informe.pdf"),
    ]
    with pytest.raises(ConflictError, match="disappeared"):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    expected = {k: v for k, v in before.items() if k != "user/proyecto/notas.txt"}
    assert alma.world() == expected
    journal = Journal(alma.layout.journal_file)
    assert journal.history()[0]["status"] == "rolled_back"
    journal.close()


def test_folder_of_a_later_mkdir_appearing_mid_plan_rolls_back(alma: AlmaRoot) -> None:
    """The folder a later mkdir creates appears meanwhile, with a person's file in it: the mkdir
    that never ran must not be "rolled back" (its folder is the person's), and the ops that did
    run are taken back."""
    before = alma.world()

    def checkpoint(label: str) -> None:
        if label == "op1":
            alma.write("user/destino/nueva/mío.txt", b"the person's own")

    plan: list[Op] = [
        alma.move("user/proyecto/foto.jpg", "user/destino/foto.jpg"),
        Mkdir("user/destino/nueva"),
        alma.move("user/proyecto/notas.txt", "user/destino/nueva/notas.txt"),
    ]
    with pytest.raises(ConflictError):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    expected = dict(before)
    expected["user/destino/nueva"] = "dir"
    expected["user/destino/nueva/mío.txt"] = _sha_entry(b"the person's own")
    assert alma.world() == expected


def test_person_saving_into_a_folder_the_plan_created_keeps_it(alma: AlmaRoot) -> None:
    """Mid-plan, a person saves a file into a folder the plan just created: the rollback takes
    back ALMA's ops and leaves that folder, now the person's, with their file in it."""
    before = alma.world()

    def checkpoint(label: str) -> None:
        if label == "op2":
            alma.write("user/destino/fotos/foto.jpg", b"the person's photo")

    plan: list[Op] = [
        Mkdir("user/destino/fotos"),
        alma.move("user/proyecto/notas.txt", "user/destino/notas.txt"),
        alma.move("user/proyecto/foto.jpg", "user/destino/fotos/foto.jpg"),
    ]
    with pytest.raises(ConflictError):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    expected = dict(before)
    expected["user/destino/fotos"] = "dir"
    expected["user/destino/fotos/foto.jpg"] = _sha_entry(b"the person's photo")
    assert alma.world() == expected
    journal = Journal(alma.layout.journal_file)
    assert journal.history()[0]["status"] == "rolled_back"
    journal.close()


def _sha_entry(data: bytes) -> str:
    return "file:" + hashlib.sha256(data).hexdigest()


# -- names -------------------------------------------------------------------------------------


def test_name_with_a_newline_is_refused(alma: AlmaRoot, engine: Engine) -> None:
    alma.write("user/proyecto/mal\nnombre.txt", b"newline in the name")
    src = "user/proyecto/mal\nnombre.txt"
    refused_everywhere(alma, engine, [alma.trash(src)])
    refused_everywhere(alma, engine, [alma.move(src, "user/destino/bien.txt")])
    foto = "user/proyecto/foto.jpg"
    refused_everywhere(alma, engine, [alma.move(foto, "user/destino/fo\nto.jpg")])
    refused_everywhere(alma, engine, [alma.move(foto, "user/destino/fo\rto.jpg")])
    refused_everywhere(alma, engine, [Mkdir("user/destino/nueva\ncarpeta")])


def test_invalid_utf8_name_is_refused(alma: AlmaRoot, engine: Engine) -> None:
    raw = os.fsencode(alma.root) + b"/user/proyecto/caf\xe9.txt"  # latin-1, not UTF-8
    with open(raw, "wb") as f:
        f.write(b"a name that is not UTF-8")
    src = os.fsdecode(b"user/proyecto/caf\xe9.txt")  # how Python reads it back
    expect = identity_of(os.lstat(raw))
    # Such a plan cannot even be journaled (the journal is UTF-8 text), so the parent refuses it
    # before the child could see it; the child's own name check is tested below it.
    foto = "user/proyecto/foto.jpg"
    bad_dst = os.fsdecode(b"user/destino/caf\xe9.jpg")
    bad_dir = os.fsdecode(b"user/destino/\xff")
    plans: list[list[Op]] = [
        [Trash(src, expect)],
        [Move(src, "user/destino/cafe.txt", expect)],
        [alma.move(foto, bad_dst)],
        [Mkdir(bad_dir)],
    ]
    for plan in plans:
        refused_by_engine(alma, engine, plan)
    for path in (src, bad_dst, bad_dir):
        with pytest.raises(RefusedError, match="UTF-8"):
            split_relpath(path)


def _name_of_bytes(n: int) -> str:
    """A legal name of exactly ``n`` UTF-8 bytes, with accents and ñ."""
    stem = ("año-canción-" * 40).encode()
    name = stem[: n - 4].decode("utf-8", errors="ignore")
    name += "x" * (n - 4 - len(name.encode())) + ".txt"
    assert len(name.encode()) == n
    return name


def test_255_byte_name_works_fully_and_undoes_byte_exact(alma: AlmaRoot, engine: Engine) -> None:
    """255 bytes is a legal name on Linux filesystems: refusing it would leave a person's file
    unmanageable for no reason, so it must work, trash and all, and undo byte for byte."""
    long_name = _name_of_bytes(255)
    other = _name_of_bytes(255).replace("x", "y")
    alma.write(f"user/proyecto/{long_name}", b"largo " * 100)
    alma.write(f"user/proyecto/{other}", b"otro largo")
    before = alma.world()
    plan: list[Op] = [
        Mkdir(f"user/destino/{_name_of_bytes(255)}"),
        alma.move(f"user/proyecto/{long_name}", f"user/destino/{_name_of_bytes(255)}/{long_name}"),
        alma.trash(f"user/proyecto/{other}"),
    ]
    done = engine.execute(plan, kind="organize", ctx=APPROVED)
    assert done["status"] == "done"
    assert (
        alma.path(f"user/destino/{long_name[:-4]}.txt/{long_name}").read_bytes() == b"largo " * 100
    )
    assert [e["original"] for e in engine.trash_list()] == [f"user/proyecto/{other}"]
    engine.undo()
    after = alma.world()
    assert {k: v for k, v in after.items() if not k.startswith(".alma/trash")} == {
        k: v for k, v in before.items() if not k.startswith(".alma/trash")
    }


def test_name_over_255_bytes_is_refused(alma: AlmaRoot, engine: Engine) -> None:
    foto = "user/proyecto/foto.jpg"
    refused_everywhere(alma, engine, [alma.move(foto, f"user/destino/{_name_of_bytes(256)}")])
    refused_everywhere(alma, engine, [Mkdir(f"user/destino/{_name_of_bytes(300)}")])


# -- a file changed after planning ----------------------------------------------------------


def _bump_mtime(path: Path, seconds: int = 5) -> None:
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 10**9))


def _append(path: Path) -> None:
    with path.open("ab") as f:
        f.write(b" more bytes")
    _bump_mtime(path)


def _rewrite_same_size(path: Path) -> None:
    path.write_bytes(b"X" * path.stat().st_size)
    _bump_mtime(path)


def _truncate(path: Path) -> None:
    path.write_bytes(b"")
    _bump_mtime(path)


CHANGES: dict[str, Callable[[Path], None]] = {
    "appended": _append,
    "same size, new content": _rewrite_same_size,
    "touched": _bump_mtime,
    "truncated": _truncate,
}


def _forge_back(path: Path, st: os.stat_result) -> None:
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_file_changed_after_planning_is_left_alone(
    alma: AlmaRoot, engine: Engine, change: str
) -> None:
    src = "user/proyecto/notas.txt"
    plans: list[list[Op]] = [[alma.trash(src)], [alma.move(src, "user/destino/notas.txt")]]
    CHANGES[change](alma.path(src))
    for plan in plans:
        refused_everywhere(alma, engine, plan, ConflictError)


def test_file_replaced_by_an_identical_looking_one_is_left_alone(
    alma: AlmaRoot, engine: Engine
) -> None:
    """Same name, size and mtime, but another inode: not the file the plan saw."""
    src = alma.path("user/proyecto/notas.txt")
    plan: list[Op] = [alma.trash("user/proyecto/notas.txt")]
    st = os.stat(src)
    src.rename(alma.path("user/proyecto/vieja.txt"))
    src.write_bytes(b"notas del proyect0\n")
    _forge_back(src, st)
    refused_everywhere(alma, engine, plan, ConflictError)


def test_content_changed_with_forged_mtime_is_caught_by_the_plans_hash(
    alma: AlmaRoot, engine: Engine
) -> None:
    """A plan that records the content hash (where content matters, as for duplicates) must be
    checked against it: size and mtime alike are not the same bytes."""
    path = alma.path("user/proyecto/notas.txt")
    plan: list[Op] = [alma.trash("user/proyecto/notas.txt", sha256=True)]
    st = os.stat(path)
    with open(path, "r+b") as f:  # in place: same inode, same size
        f.write(b"NOTAS")
    _forge_back(path, st)
    refused_everywhere(alma, engine, plan, ConflictError)


def test_file_changed_after_validation_is_rolled_back(alma: AlmaRoot) -> None:
    before = alma.world()
    changed: dict[str, str] = {}

    def checkpoint(label: str) -> None:
        if label == "op1":
            path = alma.path("user/proyecto/notas.txt")
            CHANGES["appended"](path)
            changed["digest"] = alma.world()["user/proyecto/notas.txt"]

    plan: list[Op] = [
        alma.move("user/proyecto/foto.jpg", "user/destino/foto.jpg"),
        alma.trash("user/proyecto/notas.txt"),
    ]
    with pytest.raises(ConflictError):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    expected = dict(before)
    expected["user/proyecto/notas.txt"] = changed["digest"]
    assert alma.world() == expected


# -- thresholds ----------------------------------------------------------------------------------


def _trash_plan(alma: AlmaRoot, n: int) -> list[Op]:
    for i in range(n):
        alma.write(f"user/tmp/f{i}.tmp", b"t%d" % i)
    return [alma.trash(f"user/tmp/f{i}.tmp") for i in range(n)]


def test_plan_over_max_files_is_refused_even_when_approved(alma: AlmaRoot) -> None:
    policy = default_policy(approval_files=2, max_files=3)
    engine = make_engine(alma, "landlock", policy)
    plan = _trash_plan(alma, 4)
    err = refused_by_engine(alma, engine, plan)
    assert "max_files" in str(err)
    assert engine.journal.history() == []  # refused before anything was even journaled


def test_plan_over_approval_files_needs_a_person(alma: AlmaRoot) -> None:
    policy = default_policy(approval_files=2, max_files=10)
    engine = make_engine(alma, "landlock", policy)
    plan = _trash_plan(alma, 3)
    before = alma.world()
    auto = RunContext(approved_by_person=False, effective_level="auto")
    with pytest.raises(RefusedError, match="approval"):
        engine.execute(plan, kind="temp_cleanup", ctx=auto)
    assert alma.world() == before
    # the same kind under the threshold does run on its own: the gate is not refusing everything
    small = engine.execute(plan[:2], kind="temp_cleanup", ctx=auto)
    assert small["status"] == "done" and small["auto"] is True
    # and with a person's approval a plan over the threshold runs
    alma.write("user/tmp/g.tmp", b"g")
    alma.write("user/tmp/h.tmp", b"h")
    big = [
        alma.trash("user/tmp/f2.tmp"),
        alma.trash("user/tmp/g.tmp"),
        alma.trash("user/tmp/h.tmp"),
    ]
    with pytest.raises(RefusedError, match="approval"):
        engine.execute(big, kind="temp_cleanup", ctx=auto)
    done = engine.execute(big, kind="temp_cleanup", ctx=APPROVED)
    assert done["status"] == "done" and done["auto"] is False
    assert not any(alma.path("user/tmp").iterdir())


# -- malformed plans --------------------------------------------------------------------------


GOOD_EXPECT: dict[str, Any] = {"dev": 1, "ino": 2, "kind": "file", "size": 3, "mtime_ns": 4}


@pytest.mark.parametrize(
    "data",
    [
        {"op": "delete", "path": "user/a"},
        {"op": "unlink", "path": "user/a"},
        {"op": "move", "src": "user/a", "dst": "user/b", "force": True},
        {"op": "move", "src": "user/a", "dst": "user/b", "overwrite": True},
        {"op": "trash", "path": "user/a", "permanent": True},
        {"op": "move", "src": "user/a"},
        {"op": "mkdir"},
        {"op": "mkdir", "path": 7},
        {"op": "mkdir", "path": ["user", "a"]},
        {"op": "mkdir", "path": None},
        {"path": "user/a"},
        {"op": None, "path": "user/a"},
        {"op": "move", "src": "user/a", "dst": "user/b", "expect": {**GOOD_EXPECT, "x": 1}},
        {"op": "move", "src": "user/a", "dst": "user/b", "expect": {**GOOD_EXPECT, "ino": True}},
        {"op": "move", "src": "user/a", "dst": "user/b", "expect": {**GOOD_EXPECT, "size": -1}},
        {"op": "move", "src": "user/a", "dst": "user/b", "expect": {**GOOD_EXPECT, "kind": "x"}},
        {"op": "move", "src": "user/a", "dst": "user/b", "expect": "any"},
        {"op": "trash", "path": "user/a", "expect": {"dev": 1}},
        ["mkdir", "user/a"],
        "mkdir user/a",
    ],
)
def test_malformed_op_is_refused_by_the_parser(data: Any) -> None:
    with pytest.raises(BadArgumentError):
        op_from_dict(data)


def test_well_formed_ops_round_trip() -> None:
    ops: list[Op] = [
        Mkdir("user/a"),
        Move("user/a/b", "user/c", Identity(1, 2, "file", 3, 4, "ab", "boot")),
        Trash("user/c", Identity(1, 2, "file", 3, 4)),
        Restore(".alma/trash/1/0/c", "user/c", Identity(1, 2, "file", 3, 4)),
    ]
    assert [op_from_dict(op.to_dict()) for op in ops] == ops


# -- across filesystems: the widest window is the copy ---------------------------------------


@pytest.fixture
def usb(alma: AlmaRoot) -> Iterator[Path]:
    """``user/usb``, a tmpfs of its own: moves from it to user/ copy, verify, then publish."""
    mount_point = alma.path("user/usb")
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs inside the root needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)])
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (mount_point / "vídeo.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" * 1000)
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=True)


@pytest.mark.root
def test_source_growing_while_copied_across_disks_is_left_alone(alma: AlmaRoot, usb: Path) -> None:
    before = alma.world()

    def checkpoint(label: str) -> None:
        if label == "op0:copy":
            with (usb / "vídeo.mp4").open("ab") as f:
                f.write(b"still being written")

    plan: list[Op] = [alma.move("user/usb/vídeo.mp4", "user/destino/vídeo.mp4")]
    with pytest.raises(ConflictError):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    expected = dict(before)
    expected["user/usb/vídeo.mp4"] = _sha_entry((usb / "vídeo.mp4").read_bytes())
    assert alma.world() == expected  # no temp, no copy, nothing in the trash


@pytest.mark.root
@pytest.mark.parametrize("moment", ["op0:copy", "op0:copied"])
def test_destination_swapped_for_symlink_during_a_copy_is_refused(
    alma: AlmaRoot, usb: Path, moment: str
) -> None:
    before = alma.world()

    def checkpoint(label: str) -> None:
        if label == moment:
            _swap_for_link(alma.path("user/destino"), alma.root / "system")

    plan: list[Op] = [alma.move("user/usb/vídeo.mp4", "user/destino/vídeo.mp4")]
    with pytest.raises((RefusedError, ConflictError)):
        execute_in_process(alma, plan, checkpoint=checkpoint)
    expected = {k.replace("user/destino", "user/destino.orig", 1): v for k, v in before.items()}
    expected["user/destino"] = f"link:{alma.root}/system"
    assert alma.world() == expected
