"""Reasons read for their meaning: the target rules, and what recall does with each intent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from actions.ops import Mkdir, Move, Trash
from actions.planners import PlanResult
from agent.memory import reasons as R
from agent.memory.reasons import (
    ReasonReader,
    contrasted,
    grams,
    named_file,
    packaged_model,
    target_of,
)
from agent.memory.recall import apply_recall, recall_notes, rejection_memory, taken
from state.memory import get_embedder

FOLDERS = ["user/Clases", "user/Descargas", "user/Escritorio", "user/Facturas", "user/music"]


@pytest.fixture(scope="module")
def reader() -> ReasonReader:
    return ReasonReader(get_embedder("e5-small").query)


class FakeMemory:
    def __init__(self, memories: list[dict[str, Any]]) -> None:
        self.memories = memories

    def list(self, *, limit: int = 20, memory_type: str | None = None, **_: Any) -> list[Any]:
        return [m for m in self.memories if memory_type in (None, m["memory_type"])][:limit]


def _decision(mid: str, kind: str, target: str, reason: str) -> dict[str, Any]:
    return {
        "id": mid,
        "content": rejection_memory(1, kind, target, reason),
        "memory_type": "decision",
    }


def _organize(folder: str) -> PlanResult:
    return PlanResult(
        kind="organize",
        target=folder,
        title=f"Ordenar {folder}",
        reason="archivos sueltos",
        evidence=[],
        plan=[
            Mkdir(f"{folder}/pdf"),
            Move(f"{folder}/CV.pdf", f"{folder}/pdf/CV.pdf"),
            Move(f"{folder}/b.pdf", f"{folder}/pdf/b.pdf"),
        ],
        files=2,
        fingerprint="f" * 16,
    )


def _temp(folder: str) -> PlanResult:
    return PlanResult(
        kind="temp_cleanup",
        target=folder,
        title=f"Temporales de {folder}",
        reason="temporales viejos",
        evidence=[],
        plan=[Trash(f"{folder}/a.tmp")],
        files=1,
        fingerprint="t" * 16,
    )


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("deja el CV.pdf donde está", "CV.pdf"),
        ("el 'recibo luz.jpg' no lo muevas", "recibo luz.jpg"),
        ("ese 'duplicado' foto_3.jpg es otra versión", "foto_3.jpg"),
        ("there's a file called 'Music' in here, not a folder", "Music"),
        ("no toques user/Documentos/~$acta.docx", "user/Documentos/~$acta.docx"),
        ("informe (2).pdf es el bueno", "informe (2).pdf"),
        ("el .~lock.notas.odt está abierto, déjalo", ".~lock.notas.odt"),
        ("the Dockerfile stays at the top", "Dockerfile"),
        ("it's fine", None),
        ("recibo(2).pdf es el que vale", "recibo(2).pdf"),
        ("serie.crdownload sigue bajando", "serie.crdownload"),
        ("ni siquiera los .tmp", None),
        # a copy's mark as file managers write it is part of the name
        ("IMG_3001 copy.heic has different edits", "IMG_3001 copy.heic"),
        ("la IMG_0001 (copia).jpg la edité", "IMG_0001 (copia).jpg"),
        ("acta - copia.docx es otra", "acta - copia.docx"),
        ("deja la copia.pdf", "copia.pdf"),
        # a word right after "archivo"/"file" names a file only when written as a name
        ("group by client, not file type", None),
        ("me gusta ver cada archivo suelto", None),
        ("no quiero que se borre ni un archivo de aquí", None),
        ("el archivo Notas_2 no lo toques", "Notas_2"),
        ("the file called junk stays", "junk"),
        # of several names, the one kept is said last
        ("thumbs.db whatever, but edits.xmp is mine", "edits.xmp"),
        ("refs.bib and refs_old.bib differ, keep refs_old.bib", "refs_old.bib"),
        ("bib.bib y bib_v2.bib no son iguales, deja la v2", "bib_v2.bib"),
    ],
)
def test_the_file_a_reason_names_is_read_as_written(text: str, name: str | None) -> None:
    assert named_file(text) == name


def test_the_target_is_the_folder_named_in_any_form_or_the_suggestions_own() -> None:
    own = "user/Descargas"
    for text in ("todo suelto en Descargas", "en la carpeta de descargas no", "downloads flat"):
        assert target_of(R.FLAT, text, own, FOLDERS) == own, text
    assert target_of(R.FLAT, "ahí todo suelto", own, FOLDERS) == own
    assert target_of(R.FLAT, "la carpeta Clases sin subcarpetas", own, FOLDERS) == "user/Clases"
    # a folder's name as a common noun in lower case is not that folder
    assert target_of(R.SELF_ORGANIZE, "las facturas las ordeno yo", own, FOLDERS) == own
    assert target_of(R.NEVER_DELETE, "nunca borres nada de user/Fotos/2024", own) == (
        "user/Fotos/2024"
    )
    assert target_of(R.KEEP_FILE, "el mapa.kmz de Descargas déjalo", "user/x", FOLDERS) == (
        "user/Descargas/mapa.kmz"
    )
    assert target_of(R.NOT_NOW, "hoy no", own, FOLDERS) is None
    assert target_of(R.NOT_NOW, "ahí hoy no", own, FOLDERS) == own
    assert target_of(R.STOP_KIND_INTENT, "nunca más en Descargas", own, FOLDERS) is None
    assert target_of(R.NONE, "la carpeta Clases me trae loca", own, FOLDERS) is None
    # a pronoun after "la carpeta" is no folder's name: "la carpeta" is the suggestion's
    assert target_of(R.NOT_NOW, "lo de la carpeta lo miro luego", own, FOLDERS) == own


def test_of_two_places_the_one_after_the_but_is_the_target() -> None:
    own = "user/Descargas"
    text = "descargas me da igual, pero de Clases no borres nada"
    assert target_of(R.NEVER_DELETE, text, own, FOLDERS) == "user/Clases"
    text = "downloads whatever, but keep your hands off Clases - nothing there gets deleted"
    assert target_of(R.NEVER_DELETE, text, own, FOLDERS) == "user/Clases"
    # one place named, or the same one after the "but": that place
    assert target_of(R.NEVER_DELETE, "ahí no, pero nada de borrar", own, FOLDERS) == own
    text = "Clases, pero de Clases no borres nada"
    assert target_of(R.NEVER_DELETE, text, own, FOLDERS) == "user/Clases"


def test_the_place_set_aside_is_not_the_target_whatever_its_case() -> None:
    own = "user/Descargas"
    text = "lo de descargas como sea; el escritorio sí lo quiero sin carpetas"
    assert target_of(R.FLAT, text, own, FOLDERS) == "user/Escritorio"
    text = "forget downloads. Clases is where I want everything flat"
    assert target_of(R.FLAT, text, own, FOLDERS) == "user/Clases"
    # the other place set aside: the suggestion's own
    text = "el escritorio está bien así, en descargas quiero todo suelto"
    assert target_of(R.FLAT, text, own, FOLDERS) == own
    # both or neither set aside: nothing said of which
    text = "descargas y escritorio, todo suelto"
    assert target_of(R.FLAT, text, own, FOLDERS) == own


def test_a_folder_above_the_suggestions_is_its_name_unless_the_reason_widens_to_it() -> None:
    folders = ["user/Fotos", "user/Fotos/2024", "user/Photos", "user/Photos/2023"]
    folders += ["user/proyectos", "user/proyectos/tesis"]
    own = "user/Photos/2023"
    assert target_of(R.SELF_ORGANIZE, "sorting my photos is my job", own, folders) == own
    own = "user/Fotos/2024"
    text = "no borres en ninguna carpeta de Fotos"
    assert target_of(R.NEVER_DELETE, text, own, folders) == "user/Fotos"
    # a name after "por" / "by" says how, not where
    own = "user/Descargas"
    assert target_of(R.GROUP_BY_PROJECT, "ordénalo por proyectos", own, folders) == own
    assert target_of(R.GROUP_BY_PROJECT, "en proyectos, por año", own, folders) == (
        "user/proyectos"
    )


def test_a_folder_is_named_by_its_path_below_user_and_not_by_a_word_about_it() -> None:
    own = "user/Fotos"
    folders = ["user/Fotos", "user/Fotos/2023", "user/Descargas"]
    assert target_of(R.GROUP_BY_DATE, "Fotos/2025 por semanas", own, folders) == ("user/Fotos/2025")
    # a year inside a date is not the folder of that year
    assert target_of(R.GROUP_BY_DATE, "folders like 2023-01 please", own, folders) == own
    # "la carpeta plana" says how the folder should be, not which
    assert target_of(R.FLAT, "quiero la carpeta plana y ya", own, folders) == own
    assert target_of(R.KEEP_FILE, "el Makefile no se mueve", "user/src", folders) == (
        "user/src/Makefile"
    )


@pytest.mark.parametrize(
    ("text", "read", "meant"),
    [
        ("por cliente mejor que por mes", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("a project folder each, not a year folder", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("ni por asignatura ni por extensión: por trimestres", R.GROUP_BY_PROJECT, R.GROUP_BY_DATE),
        ("by month instead of by client", R.GROUP_BY_PROJECT, R.GROUP_BY_DATE),
        # both asked, or neither turned down: the model's reading stands
        ("por proyecto y dentro por año", R.GROUP_BY_DATE, R.GROUP_BY_DATE),
        ("por meses", R.GROUP_BY_PROJECT, R.GROUP_BY_PROJECT),
        ("cada viaje aparte, mejor que por meses", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("one folder per shoot, not per month", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("según el asunto y no según la fecha", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        # only the two groupings are ever swapped
        ("no por fecha, por proyecto", R.FLAT, R.FLAT),
    ],
)
def test_a_grouping_reason_that_turns_the_other_grouping_down_asks_for_its_own(
    text: str, read: str, meant: str
) -> None:
    assert contrasted(text, read) == meant


@pytest.mark.parametrize(
    ("text", "read", "meant"),
    [
        # a grouping turned down after it is named
        ("por año no, por empresa", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("la fecha me da igual, lo que importa es el cliente", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("dates are useless here, split it by paper", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("months mean nothing to me, clients do", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("nunca busco por fecha; siempre por cliente", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("año? no. una carpeta por cada cliente", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        # the date turned down, the grouping asked named in the person's own words
        ("ni por día ni por semana, por entregable", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("instead of by month, by experiment", R.GROUP_BY_DATE, R.GROUP_BY_PROJECT),
        ("not by month, by type please", R.GROUP_BY_DATE, R.GROUP_BY_DATE),
        # "por fecha, no por tipo": the "no" opens what is turned down, the date stays asked
        ("por fecha, no por cliente", R.GROUP_BY_DATE, R.GROUP_BY_DATE),
    ],
)
def test_a_grouping_turned_down_after_it_is_named_is_turned_down(
    text: str, read: str, meant: str
) -> None:
    assert contrasted(text, read) == meant


@pytest.mark.parametrize(
    ("rule", "text", "read", "meant"),
    [
        # a grouping by project asked in so many words
        (R.by_project, "I'd rather have it by topic", R.SELF_ORGANIZE, R.GROUP_BY_PROJECT),
        (R.by_project, "ordénalo por el encargo", R.SELF_ORGANIZE, R.GROUP_BY_PROJECT),
        (R.by_project, "lo ordeno yo por proyecto", R.SELF_ORGANIZE, R.SELF_ORGANIZE),
        (R.by_project, "por cliente y dentro por año", R.GROUP_BY_DATE, R.GROUP_BY_DATE),
        # a file named by its full name is what is kept, not the folder
        (R.about_a_file, "never delete passport_scan.png", R.NEVER_DELETE, R.KEEP_FILE),
        (R.about_a_file, "tesis.aux no se borra", R.NEVER_DELETE, R.KEEP_FILE),
        (R.about_a_file, "scratch.pkl took 9 hours to compute. keep it", R.NONE, R.KEEP_FILE),
        (R.about_a_file, "no borres nada de user/Descargas", R.NEVER_DELETE, R.NEVER_DELETE),
        (R.about_a_file, "those 'duplicates' are edits", R.NEVER_DELETE, R.NEVER_DELETE),
        # the person does it themselves
        (R.by_myself, "de Proyectos me ocupo yo", R.GROUP_BY_PROJECT, R.SELF_ORGANIZE),
        (R.by_myself, "Ya sé que es un desastre. Lo arreglo yo", R.NONE, R.SELF_ORGANIZE),
        (R.by_myself, "ill do it", R.NONE, R.SELF_ORGANIZE),
        (R.by_myself, "It's not about doing it myself, no subfolders", R.FLAT, R.FLAT),
        (
            R.by_myself,
            "I read the logs myself, stop the pings",
            R.STOP_KIND_INTENT,
            R.STOP_KIND_INTENT,
        ),
        # a slip or a try asks nothing
        (R.unmeant, "le di a rechazar sin querer", R.STOP_KIND_INTENT, R.NONE),
        (R.unmeant, "testing the reject button", R.STOP_KIND_INTENT, R.NONE),
        (R.unmeant, "misclick", R.NOT_NOW, R.NONE),
        (R.unmeant, "nothing against deleting them, I clicked by mistake", R.NEVER_DELETE, R.NONE),
        (R.unmeant, "si borras algo por error lo pierdo", R.NEVER_DELETE, R.NEVER_DELETE),
        # asked to be asked again
        (
            R.asked_later,
            "dame un par de horas y me vuelves a avisar",
            R.STOP_KIND_INTENT,
            R.NOT_NOW,
        ),
        (R.asked_later, "Busy. Try again this evening?", R.NONE, R.NOT_NOW),
        (R.asked_later, "Good idea, wrong week.", R.NONE, R.NOT_NOW),
        (R.asked_later, "vuélveme a avisar cuando cierre la tienda", R.STOP_KIND_INTENT, R.NOT_NOW),
        (R.asked_later, "gimme a sec", R.NONE, R.NOT_NOW),
        (R.asked_later, "cuando acabe la reunión me lo recuerdas", R.NONE, R.NOT_NOW),
        (R.asked_later, "ping me when I'm back from the gym", R.NONE, R.NOT_NOW),
        (R.asked_later, "ni ahora ni más tarde", R.STOP_KIND_INTENT, R.STOP_KIND_INTENT),
        (R.asked_later, "tomorrow I keep it flat", R.FLAT, R.FLAT),
        # a "later" turned down is no request to be asked again
        (
            R.asked_later,
            "reminding me later won't help, drop it",
            R.STOP_KIND_INTENT,
            R.STOP_KIND_INTENT,
        ),
        (
            R.asked_later,
            "otro día, cuando sea: ya no quiero avisos",
            R.STOP_KIND_INTENT,
            R.STOP_KIND_INTENT,
        ),
        (
            R.asked_later,
            "no snooze button either, just turn it off",
            R.STOP_KIND_INTENT,
            R.STOP_KIND_INTENT,
        ),
        # a refusal for good
        (R.for_good, "ni ahora ni luego: lo de las horas, fuera", R.NOT_NOW, R.STOP_KIND_INTENT),
        (R.for_good, "kill the temp cleanup feature for good", R.NONE, R.STOP_KIND_INTENT),
        (R.for_good, "from now on skip the mood questions", R.NOT_NOW, R.STOP_KIND_INTENT),
        (R.for_good, "mañana", R.NOT_NOW, R.NOT_NOW),
    ],
)
def test_an_exact_rule_corrects_the_models_reading_only_where_it_is_exact(
    rule: Callable[[str, str], str], text: str, read: str, meant: str
) -> None:
    assert rule(text, read) == meant


@pytest.mark.parametrize(
    ("text", "kind", "read", "meant"),
    [
        ("Nothing goes in the bin, I'll say that once", "duplicates", R.NOT_NOW, R.NEVER_DELETE),
        (
            "aunque estén repetidos no quiero perder ninguno",
            "duplicates",
            R.STOP_KIND_INTENT,
            R.NEVER_DELETE,
        ),
        ("che, no me borrés nada", "temp_cleanup", R.NOT_NOW, R.NEVER_DELETE),
        # a wait for tomorrow, a plan that deletes nothing, a reading of a file: unchanged
        ("no borres nada hoy, tomorrow is fine", "temp_cleanup", R.NOT_NOW, R.NOT_NOW),
        ("no borres nada", "organize", R.SELF_ORGANIZE, R.SELF_ORGANIZE),
        ("don't delete draft.tmp", "temp_cleanup", R.KEEP_FILE, R.KEEP_FILE),
    ],
)
def test_deletion_forbidden_in_so_many_words_on_a_deleting_plan_is_never_delete(
    text: str, kind: str, read: str, meant: str
) -> None:
    assert R.forbids_deleting(text, kind, read) == meant


def test_a_rule_never_reads_an_intent_the_kind_cannot_carry(reader: ReasonReader) -> None:
    # "me ocupo yo" is the person's own sorting, which a notice cannot ask for
    assert reader.intent("de eso me ocupo yo", "long_hours")[0] in (
        R.STOP_KIND_INTENT,
        R.NOT_NOW,
        R.NONE,
    )


def test_the_ngrams_read_the_folded_words_and_are_the_same_every_time() -> None:
    assert np.array_equal(grams("Mañana NO", 64), grams("manana no", 64))
    assert np.isclose(np.linalg.norm(grams("por años", 64)), 1.0)
    assert not grams("¿?", 64).any()


def test_a_notice_is_read_as_stop_not_now_or_nothing_and_only_organize_as_flat() -> None:
    model = packaged_model()
    notice = R.possible(model.intents, "long_hours", "basta")
    assert {i for i, ok in zip(model.intents, notice, strict=True) if ok} == {
        R.STOP_KIND_INTENT,
        R.NOT_NOW,
        R.NONE,
    }
    dupes = R.possible(model.intents, "duplicates", "basta")
    assert not any(
        ok for i, ok in zip(model.intents, dupes, strict=True) if i in (R.FLAT, R.GROUP_BY_DATE)
    )


def test_keeping_one_file_is_possible_only_when_the_reason_names_a_file() -> None:
    intents = packaged_model().intents
    whole = R.possible(intents, "duplicates", "aquí no se tira nada, ni lo repetido")
    one = R.possible(intents, "duplicates", "el acta.odt se queda, es otra versión")
    assert not whole[intents.index(R.KEEP_FILE)] and whole[intents.index(R.NEVER_DELETE)]
    assert one[intents.index(R.KEEP_FILE)]


def test_a_reason_about_a_whole_place_is_never_read_as_keeping_one_file(
    reader: ReasonReader,
) -> None:
    for text in (
        "de aquí no se borra ni una copia, prefiero tenerlas",
        "removing is not an option in this folder, move things if you like",
    ):
        assert reader.read(text, "duplicates", "user/Fotos").intent != R.KEEP_FILE, text


def test_the_same_reason_reads_the_same_every_time(reader: ReasonReader) -> None:
    text = "quiero todo suelto ahí, sin carpetas"
    first = ReasonReader(reader._embed).read(text, "organize", "user/Descargas")
    again = ReasonReader(reader._embed).read(text, "organize", "user/Descargas")
    assert first == again and first.intent == R.FLAT
    vector = reader._embed(text)
    p = packaged_model().probabilities(vector, text, "organize")
    assert np.isclose(p.sum(), 1.0)


def test_keep_it_flat_in_words_no_rule_lists_leaves_no_mkdir(reader: ReasonReader) -> None:
    memory = FakeMemory(
        [_decision("r1", "organize", "user/Descargas", "quiero todo suelto ahí, sin carpetas")]
    )
    notes = recall_notes(memory, reader, FOLDERS)
    out = apply_recall(_organize("user/Descargas"), notes)
    assert out.finding is None and out.by == ["r1"]
    assert apply_recall(_organize("user/Escritorio"), notes).finding is not None
    assert apply_recall(_temp("user/Descargas"), notes).finding is not None
    (took,) = taken(notes)
    assert took["intent"] == R.FLAT and took["undo"] == "alma-ctl memory forget r1"


def test_stop_this_kind_everywhere_stops_it_in_every_folder(reader: ReasonReader) -> None:
    reason = "no me propongas ordenar ninguna carpeta más, en ningún sitio"
    notes = recall_notes(
        FakeMemory([_decision("r2", "organize", "user/Escritorio", reason)]), reader
    )
    assert apply_recall(_organize("user/Descargas"), notes).finding is None
    assert apply_recall(_temp("user/Descargas"), notes).finding is not None
    (took,) = taken(notes)
    assert took["intent"] == R.STOP_KIND_INTENT and "anywhere" in took["took"]


def test_keep_this_one_file_keeps_it_out_of_the_plan_and_the_rest_stays(
    reader: ReasonReader,
) -> None:
    reason = "vale, pero deja el CV.pdf donde está"
    notes = recall_notes(
        FakeMemory([_decision("r3", "organize", "user/Descargas", reason)]), reader
    )
    out = apply_recall(_organize("user/Descargas"), notes)
    assert out.finding is not None and out.by == ["r3"]
    moved = [op.src for op in out.finding.plan if isinstance(op, Move)]
    assert moved == ["user/Descargas/b.pdf"]


def test_a_negated_permission_is_not_never_delete(reader: ReasonReader) -> None:
    reason = "no me molesta que tires los temporales, le di al botón equivocado"
    notes = recall_notes(
        FakeMemory([_decision("r4", "temp_cleanup", "user/Descargas", reason)]), reader
    )
    assert apply_recall(_temp("user/Descargas"), notes).finding is not None
    assert taken(notes) == []


def test_without_a_reader_a_reason_is_only_shown() -> None:
    reason = "quiero todo suelto ahí, sin carpetas"
    notes = recall_notes(FakeMemory([_decision("r5", "organize", "user/Descargas", reason)]))
    out = apply_recall(_organize("user/Descargas"), notes)
    assert out.finding is not None and any(reason in e for e in out.finding.evidence)


def _by_month(folder: str) -> PlanResult:
    return PlanResult(
        kind="organize",
        target=folder,
        title=f"Ordenar {folder} por mes",
        reason="archivos sueltos de 2 meses",
        evidence=[],
        plan=[
            Mkdir(f"{folder}/2026-01"),
            Mkdir(f"{folder}/2026-02"),
            Move(f"{folder}/CV.pdf", f"{folder}/2026-01/CV.pdf"),
            Move(f"{folder}/b.pdf", f"{folder}/2026-02/b.pdf"),
        ],
        files=2,
        fingerprint="m" * 16,
    )


def test_a_reason_asking_for_dates_plans_that_folder_by_month_and_no_other(
    reader: ReasonReader,
) -> None:
    reason = "prefiero que lo agrupes por año"
    notes = recall_notes(
        FakeMemory([_decision("r6", "organize", "user/Descargas", reason)]), reader
    )
    planned: list[str] = []

    def by_month(folder: str) -> PlanResult:
        planned.append(folder)
        return _by_month(folder)

    out = apply_recall(_organize("user/Descargas"), notes, by_month=by_month)
    assert planned == ["user/Descargas"] and out.by == ["r6"]
    assert out.finding is not None and out.finding.plan == _by_month("user/Descargas").plan
    # Still the finding the detectors know by its files: decided or pending as detected.
    assert out.finding.fingerprint == _organize("user/Descargas").fingerprint
    assert any(reason in e for e in out.finding.evidence)
    assert any("month" in e and "r6" in e for e in out.finding.evidence)
    (took,) = taken(notes)
    assert took["intent"] == R.GROUP_BY_DATE and "month" in took["took"]
    assert took["undo"] == "alma-ctl memory forget r6"

    elsewhere = apply_recall(_organize("user/Clases"), notes, by_month=by_month)
    assert elsewhere.finding == _organize("user/Clases") and planned == ["user/Descargas"]
    by_month_nothing = apply_recall(_organize("user/Descargas"), notes, by_month=lambda f: None)
    assert by_month_nothing.finding is None and by_month_nothing.by == ["r6"]


def test_a_reason_asking_for_projects_is_shown_with_what_alma_can_do_about_it(
    reader: ReasonReader,
) -> None:
    reason = "mejor sepáralo por proyectos"
    notes = recall_notes(
        FakeMemory([_decision("r7", "organize", "user/Descargas", reason)]), reader
    )
    out = apply_recall(_organize("user/Descargas"), notes, by_month=lambda f: _by_month(f))
    assert out.finding is not None and out.finding.plan == _organize("user/Descargas").plan
    assert any(reason in e for e in out.finding.evidence)
    assert any("by project" in e for e in out.finding.evidence)
    assert taken(notes) == []


def test_a_reason_is_embedded_once_however_often_it_is_read(reader: ReasonReader) -> None:
    calls: list[str] = []

    def embed(text: str) -> R.Vector:
        calls.append(text)
        return reader._embed(text)

    counted = ReasonReader(embed)
    for folders in ([], FOLDERS, [*FOLDERS, "user/Nueva"]):
        counted.read("ya la ordeno yo", "organize", "user/Descargas", folders)
    assert calls == ["ya la ordeno yo"]
