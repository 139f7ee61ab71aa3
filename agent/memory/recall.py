"""Recall: what ALMA remembers that bears on a finding, and what it does to the proposal.

Two kinds of memory change a proposal:

- a *principle* that forbids touching a path ("Nunca toques user/proyectos/tesis", "jamás
  muevas nada de user/x", "no borres user/y"), read by rule (folded Spanish: case and accents
  ignored): a finding whose target is that path or inside it is not proposed; a plan that only
  partly touches it loses the ops that would, and its evidence names the memory;
- a *decision* memory, written by the loop's learn node when the person rejects a suggestion
  (:func:`rejection_memory` is the one writer of that text, :func:`recall_notes` its one
  reader), whose reason is read for its meaning (:mod:`agent.memory.reasons`: the intent and
  its target, whatever the words):

  - keep it flat (organize) or I organize this myself: that kind is not proposed again for
    the target folder (organizing a folder is making subfolders in it);
  - never delete here: the target folder is protected for every kind, as a principle
    protects it; keep this one file: that file is, the rest of a plan stays;
  - stop this kind everywhere: that kind is not proposed anywhere;
  - group it by date (organize): the next plan for the target folder groups its loose files
    by month (the analysis gives the planner, ``by_month``), whatever ``[monitor]
    organize_by`` says for the other folders;
  - group it by project, not now, none: shown with the next proposal of that kind there, so
    the person sees that ALMA remembers (no rule says which project a file is of).

  Forgetting the memory (``alma-ctl memory forget ID``) undoes the effect; :func:`taken`
  lists every reading with that command.

Every effect names the memory id that caused it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from actions.ops import Keep, Mkdir, Move, Op, Restore, Trash
from actions.planners.base import PlanResult
from actions.planners.organize import KIND as ORGANIZE
from agent.memory import reasons as R
from agent.memory.reasons import Reading, ReasonReader
from policies.i18n import N_, _
from policies.results import Memory, Taken
from policies.text import loose_fold

#: Memories listed per role per analysis (principles and decisions are few and short).
MAX_NOTES = 500

_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]*\w)")
_FORBID = re.compile(
    r"\b(?:nunca|jamas|no)\s+(?:(?:me\s+)?(?:toques|tocar|toca|muevas|mover|borres|borrar"
    r"|ordenes|ordenar|cambies|cambiar|limpies|limpiar|elimines|eliminar|metas|entres)\b)"
    r"|\bno\s+se\s+toca\b|\bdeja(?:r)?\s+en\s+paz\b"
)
_DECISION = re.compile(
    r"^Rechazaste la sugerencia (?P<sid>\d+) \((?P<kind>[\w-]+)\) para (?P<target>\S+)\."
    r"(?: Motivo: «(?P<reason>.*)»)?$",
    re.DOTALL,
)


class MemoryReader(Protocol):
    """The part of the memory service recall reads (agent.memory.service.MemoryService)."""

    def list(self, *, limit: int = 20, memory_type: str | None = None) -> list[Memory]: ...


@dataclass(frozen=True)
class MemoryNote:
    """A memory as recall reads it."""

    id: str
    content: str
    role: Literal["principle", "decision"]
    paths: tuple[str, ...]
    forbids: bool
    kind: str | None  # decisions: the kind rejected
    reason: str | None  # decisions: the person's reason
    reading: Reading | None = None  # decisions: what the reason asks (None: not read)
    everywhere: bool = False  # the kind is stopped wherever it is found


@dataclass
class Recall:
    """What recall did to one finding: ``finding`` is None when it is not proposed."""

    finding: PlanResult | None
    by: list[str] = field(default_factory=list)
    why: str = ""


def rejection_memory(sid: int, kind: str, target: str, reason: str | None) -> str:
    """The decision memory written when a person rejects a suggestion (read back here)."""
    text = f"Rechazaste la sugerencia {sid} ({kind}) para {target}."
    return f"{text} Motivo: «{reason.strip()}»" if reason and reason.strip() else text


def _note(
    memory: Memory,
    role: Literal["principle", "decision"],
    reader: ReasonReader | None,
    folders: Sequence[str],
) -> MemoryNote | None:
    content = memory["content"]
    if role == "decision":
        m = _DECISION.match(content.strip())
        if m is None:
            return None
        return _decision(str(memory["id"]), content, m, reader, folders)
    paths = tuple(p.rstrip("/.") for p in _PATH.findall(content))
    if not paths:
        return None
    return MemoryNote(
        id=str(memory["id"]),
        content=content,
        role=role,
        paths=paths,
        forbids=bool(_FORBID.search(loose_fold(content))),
        kind=None,
        reason=None,
    )


def _decision(
    mid: str,
    content: str,
    m: re.Match[str],
    reader: ReasonReader | None,
    folders: Sequence[str],
) -> MemoryNote:
    """A rejection as recall acts on it: what its reason asks, read by ``reader`` (without
    one, or without a reason, it is only shown with the next proposal)."""
    kind, target, reason = m["kind"], m["target"], m["reason"]
    shown = MemoryNote(mid, content, "decision", (target,), False, kind, reason)
    if reader is None or not reason or not reason.strip():
        return shown
    reading = reader.read(reason, kind, target, [*folders, target])
    place = reading.target or target
    if reading.intent in (R.NEVER_DELETE, R.KEEP_FILE):
        # That folder, or that file, is protected for every kind, as a principle protects it.
        return MemoryNote(mid, content, "principle", (place,), True, None, reason, reading)
    stops = reading.intent in (R.SELF_ORGANIZE, R.STOP_KIND_INTENT) or (
        reading.intent == R.FLAT and kind == ORGANIZE
    )
    return MemoryNote(
        mid,
        content,
        "decision",
        (place,),
        stops,
        kind,
        reason,
        reading,
        everywhere=reading.intent == R.STOP_KIND_INTENT,
    )


def recall_notes(
    memory: MemoryReader | None,
    reader: ReasonReader | None = None,
    folders: Sequence[str] = (),
) -> list[MemoryNote]:
    """The principles that name a path and the past decisions, read once per analysis;
    ``reader`` reads the decisions' reasons (``folders``: the root's folders a reason may
    name)."""
    if memory is None:
        return []
    notes: list[MemoryNote] = []
    for role in ("principle", "decision"):
        for item in memory.list(limit=MAX_NOTES, memory_type=role):
            note = _note(item, role, reader, folders)
            if note is not None:
                notes.append(note)
    return notes


def taken(notes: Sequence[MemoryNote]) -> list[Taken]:
    """What ALMA took from the reasons a person gave when rejecting (``alma-ctl stats``), each
    with the memory that holds it: forgetting that memory undoes it."""
    out: list[Taken] = []
    for note in notes:
        if note.reason is None or not (note.forbids or _by_date(note)):
            continue  # a principle written as such, or a reason only shown with the next proposal
        if note.kind is None:
            took = _(
                "nothing in {folders} is touched, whatever the suggestion",
                folders=", ".join(note.paths),
            )
        elif _by_date(note):
            took = _("{folder} is organized by month", folder=note.paths[0])
        elif note.everywhere:
            took = _("{kind} is not proposed anywhere", kind=note.kind)
        else:
            took = _("{kind} is not proposed for {folder}", kind=note.kind, folder=note.paths[0])
        out.append(
            {
                "memory": note.id,
                "reason": note.reason,
                "intent": note.reading.intent if note.reading else "",
                "took": took,
                "undo": f"alma-ctl memory forget {note.id}",
            }
        )
    return out


#: What a reason asking for the folder by project is answered with, beside the reason itself:
#: no exact rule says which project a loose file is of.
_BY_PROJECT = N_(
    "You asked for this folder by project: ALMA cannot group by project yet; reject it "
    "again or organize it yourself."
)

#: The folder's organize plan by month (agent.detectors.files.plan_organize_folder, given by
#: the analysis), None when by month there is nothing to organize there.
ByMonth = Callable[[str], PlanResult | None]


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + "/")


def _by_date(note: MemoryNote) -> bool:
    """Whether ``note`` asks for organize plans grouped by date in its folder."""
    return (
        note.kind == ORGANIZE
        and note.reading is not None
        and note.reading.intent == R.GROUP_BY_DATE
    )


def _covers(note: MemoryNote, finding: PlanResult) -> bool:
    """Whether a decision ``note`` is about ``finding``: its kind, there or everywhere."""
    return note.kind == finding.kind and (note.everywhere or _under(finding.target, note.paths[0]))


def _asked_by_date(finding: PlanResult, notes: Sequence[MemoryNote]) -> MemoryNote | None:
    """The decision asking for the finding's folder by date, unless another one stops the
    finding there (nothing to plan again then)."""
    about = [n for n in notes if n.role == "decision" and _covers(n, finding)]
    if any(n.forbids for n in about):
        return None
    return next((n for n in about if _by_date(n)), None)


def _written_folders(plan: Sequence[Op]) -> set[str]:
    """Every path a plan writes and every folder above one: a note's folder that is not in
    this set leaves the plan as it is (one look-up instead of a pass over the plan for each
    of hundreds of principles)."""
    out: set[str] = set()
    for op in plan:
        for path in op.write_paths():
            while path and path not in out:
                out.add(path)
                path = path.rpartition("/")[0]
    return out


def apply_recall(
    finding: PlanResult, notes: Sequence[MemoryNote], *, by_month: ByMonth | None = None
) -> Recall:
    """The finding as ALMA proposes it given what it remembers (or None with why not);
    ``by_month`` plans a folder by month, for a reason that asks for one by date (without
    it, that reason is only shown)."""
    asked = _asked_by_date(finding, notes) if by_month is not None else None
    if by_month is not None and asked is not None:
        regrouped = by_month(finding.target)
        if regrouped is None:
            why = _(
                "you asked for {folder} by date (memory {id}), and by month there is nothing "
                "to organize in it",
                folder=finding.target,
                id=asked.id,
            )
            return Recall(None, [asked.id], why)
        # The same files, grouped as asked: the finding is still known by its files (pending
        # or decided as detected), so the next analysis neither expires nor proposes it again.
        finding = replace(regrouped, fingerprint=finding.fingerprint)
    target = finding.target
    evidence = list(finding.evidence)
    plan = finding.plan
    written = _written_folders(plan)
    used: list[str] = []
    for note in notes:
        if note.role == "decision":
            if not _covers(note, finding):
                continue
            if note.forbids:
                why = _(
                    "you rejected a {kind} suggestion for {folder} saying «{reason}» (memory {id})",
                    kind=note.kind,
                    folder=note.paths[0],
                    reason=note.reason,
                    id=note.id,
                )
                return Recall(None, [note.id], why)
            if note.reason:
                said = _(
                    "I remember (memory {id}) that you rejected something like this: «{reason}»",
                    id=note.id,
                    reason=note.reason,
                )
            else:
                said = _(
                    "I remember (memory {id}) that you rejected something like this", id=note.id
                )
            evidence.append(said)
            if note is asked:
                evidence.append(
                    _(
                        "Grouped by month, as you asked (memory {id}); `alma-ctl memory forget "
                        "{id}` brings back the usual grouping.",
                        id=note.id,
                    )
                )
            elif note.reading is not None and note.reading.intent == R.GROUP_BY_PROJECT:
                evidence.append(_(_BY_PROJECT))
            used.append(note.id)
            continue
        if not note.forbids:
            continue
        for folder in note.paths:
            if _under(target, folder):
                why = _("memory {id} says «{text}»", id=note.id, text=note.content.strip())
                return Recall(None, [note.id], why)
            if folder not in written:
                continue
            # A keep writes nothing (it guards the copy that stays): write_paths is empty.
            kept = [op for op in plan if not any(_under(p, folder) for p in op.write_paths())]
            if len(kept) != len(plan):
                plan = kept
                evidence.append(
                    _(
                        "Leaving {folder} alone: memory {id} asks for it («{text}»)",
                        folder=folder,
                        id=note.id,
                        text=note.content.strip(),
                    )
                )
                used.append(note.id)
    if len(plan) != len(finding.plan):
        plan = _without_orphans(plan)
        if not any(isinstance(op, _FILE_OPS) for op in plan):
            why = _("everything it touched is protected by memories {ids}", ids=", ".join(used))
            return Recall(None, used, why)
    if not used:
        return Recall(finding)
    if len(plan) != len(finding.plan):
        files = sum(1 for op in plan if isinstance(op, _FILE_OPS))
        return Recall(replace(finding, plan=plan, evidence=evidence, files=files), used)
    return Recall(replace(finding, evidence=evidence), used)


#: The ops that move a file somewhere (what a plan without any of them no longer does).
_FILE_OPS = (Move, Trash, Restore)


def _without_orphans(plan: list[Op]) -> list[Op]:
    """Drop folders the plan no longer moves anything into, and kept copies with no trash."""
    dsts = [op.dst for op in plan if isinstance(op, Move)]
    trashes = any(isinstance(op, Trash) for op in plan)
    out = []
    for op in plan:
        if isinstance(op, Mkdir) and not any(_under(d, op.path) for d in dsts):
            continue
        if isinstance(op, Keep) and not trashes:
            continue
        out.append(op)
    return out
