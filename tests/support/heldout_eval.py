"""The chat's context on a held-out set (tests/data/heldout, heldout_b ... heldout_f).

``python -m tests.support.heldout_eval ROOT [SET]`` (SET: a folder of tests/data in set C's
format, ``memories.jsonl`` and ``questions.jsonl``) builds the grounded set's store in ROOT
(or reopens it), adds the set's memories to it through ``add`` (2,400+ memories in all), and
prints, overall and per language of the question: the answer among the context's items that
answer (``answers``: a memory handed, or a principle the chat quotes); the unrelated share of
those items (neither the question's answer nor a memory of its subject); and, for the questions
nothing answers, the share that get no item that answers, traps (the subject stored, the
detail asked not) and absent subjects apart. Every set was written by someone who had not
seen the ranking, and each was reported once, blind, before it was read: the first set and B
are development sets since (half of the first is among what the answer model is fitted on,
``half``; both are read by ``grounded_eval --detail``); C was run once on the frozen second
pass (docs/memory.md).
"""

from __future__ import annotations

import hashlib
import json
import runpy
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.memory.service import MemoryService
from tests.support.grounded_eval import build_store

DATA = Path(__file__).resolve().parents[1] / "data"
HELDOUT = DATA / "heldout"


@dataclass
class Tally:
    answered: int = 0
    found: int = 0
    items: int = 0
    unrelated: int = 0
    traps: int = 0
    traps_empty: int = 0
    absent: int = 0
    absent_empty: int = 0

    def line(self, name: str) -> str:
        none = self.traps + self.absent
        empty = self.traps_empty + self.absent_empty
        return (
            f"{name}: answer in context {self.found / max(1, self.answered):.3f} "
            f"({self.found} of {self.answered}), unrelated {self.unrelated / max(1, self.items):.3f} "
            f"({self.unrelated} of {self.items}), nothing handed {empty / max(1, none):.3f} "
            f"({empty} of {none}: traps {self.traps_empty} of {self.traps}, "
            f"absent {self.absent_empty} of {self.absent})"
        )


def _read(name: str, folder: Path = HELDOUT) -> list[dict[str, Any]]:
    lines = (folder / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def load_heldout(svc: MemoryService, root: Path, folder: Path = HELDOUT) -> None:
    """The held-out memories added to the store, once."""
    marker = root / f"{folder.name}-loaded"
    if marker.exists():
        return
    for m in _read("memories.jsonl", folder):
        extra = {"project": m["project"]} if m["project"] else {}
        svc.add(m["content"], tags=m["tags"], memory_type=m["type"], **extra)
    marker.write_text("yes\n")


def subjects(folder: Path = HELDOUT) -> tuple[dict[str, set[str]], set[str]]:
    """Each answer's text with the texts of its subject (the answer and its near memories),
    and the trap questions (the others nothing answers are about absent subjects): from the
    set's own source (build.py), or from each memory's ``role`` and first tag (its subject)
    and each question's ``trap``."""
    if not (folder / "build.py").exists():
        memories = _read("memories.jsonl", folder)
        by_subject: dict[str, set[str]] = defaultdict(set)
        for m in memories:
            if m["role"] in ("answer", "near"):
                by_subject[m["tags"][0]].add(m["content"])
        cases = {m["content"]: by_subject[m["tags"][0]] for m in memories if m["role"] == "answer"}
        traps = {q["question"] for q in _read("questions.jsonl", folder) if q.get("trap")}
        return cases, traps
    source = runpy.run_path(str(HELDOUT / "build.py"), run_name="heldout_source")
    texts: dict[str, set[str]] = {}
    for s in source["SUBJECTS"]:
        case = {s["answer"][2], *(n[2] for n in s["nears"])}
        texts[s["answer"][2]] = case
    return texts, {q for _lang, q in source["TRAPS"]}


def half(question: dict[str, Any]) -> str:
    """Which half of the set a question is in, ``fit`` or ``check``: by its answer (every
    wording of one answer in the same half, so the fit never sees the check half's subjects
    in other words), or by its own id when nothing answers it."""
    key = question["answer_ids"][0] if question["answer_ids"] else question["id"]
    return "fit" if int(hashlib.md5(key.encode()).hexdigest(), 16) % 2 == 0 else "check"


def heldout_questions(
    which: str, folder: Path = HELDOUT
) -> tuple[
    list[tuple[str, str, list[str]]],
    list[tuple[str, str, list[str]]],
    list[tuple[str, str, list[str]]],
]:
    """One half's questions (``which``: ``fit``, ``check`` or ``all``) as the answer model's
    fit reads them (question, answer's text, its subject's texts): those something answers,
    those about an absent subject, the traps."""
    contents = {m["id"]: m["content"] for m in _read("memories.jsonl", folder)}
    cases, traps = subjects(folder)
    asked, absent, trapped = [], [], []
    for q in _read("questions.jsonl", folder):
        if which != "all" and half(q) != which:
            continue
        if q["kind"] != "unanswerable":
            answer = contents[q["answer_ids"][0]]
            asked.append((q["question"], answer, sorted(cases[answer])))
        elif q["question"] in traps:
            trapped.append((q["question"], "", []))
        else:
            absent.append((q["question"], "", []))
    return asked, absent, trapped


def evaluate(svc: MemoryService, folder: Path = HELDOUT) -> dict[str, Tally]:
    contents = {m["id"]: m["content"] for m in _read("memories.jsonl", folder)}
    cases, traps = subjects(folder)
    out: dict[str, Tally] = defaultdict(Tally)
    for q in _read("questions.jsonl", folder):
        ctx = svc.context(q["question"], count_use=False)
        given = [str(i["content"]) for i in ctx["items"] if i["answers"]]
        for t in (out["all"], out[q["lang"]]):
            if q["kind"] == "unanswerable":
                if q["question"] in traps:
                    t.traps += 1
                    t.traps_empty += not given
                else:
                    t.absent += 1
                    t.absent_empty += not given
                t.items += len(given)
                t.unrelated += len(given)  # nothing answers: whatever is given is unrelated
                continue
            answer = contents[q["answer_ids"][0]]
            t.answered += 1
            t.found += answer in given
            t.items += len(given)
            t.unrelated += sum(g not in cases[answer] for g in given)
    return dict(out)


def set_folder(name: str | None) -> Path:
    """The held-out set's folder: tests/data/NAME, in set C's format (or the first set's)."""
    folder = DATA / name if name else HELDOUT
    missing = [f for f in ("memories.jsonl", "questions.jsonl") if not (folder / f).is_file()]
    if missing:
        raise SystemExit(f"{folder}: no held-out set there (missing {', '.join(missing)})")
    return folder


def main() -> None:
    root = Path(sys.argv[1])
    folder = set_folder(sys.argv[2] if len(sys.argv) > 2 else None)
    svc, _data = build_store(root)
    try:
        load_heldout(svc, root, folder)
        print(f"{svc.count()} memories stored (the grounded set's and {folder.name}'s)")
        figures = evaluate(svc, folder)
        for name in ("all", "es", "en"):
            print(figures[name].line(name))
    finally:
        svc.close()


if __name__ == "__main__":
    main()
