"""Where the context misses on a held-out set: every question something answers whose answer is
not handed, and every question nothing answers that gets something, each with its cause.

    .venv/bin/python bench/context_misses.py ROOT heldout_b [-v] [--without-relations]

ROOT: a store built by ``python -m tests.support.heldout_eval ROOT SET`` (read only,
``count_use=False``). The cause is told by rule, in this order, so the counts can be compared
between sets and code:

- ``relation``: the question names a relation ("mi pareja", "el peque", "my kid"; what
  ``agent.memory.relations.roles`` reads) the answer does not hold as a word: the answer names
  the person ("Amparo") or their place ("mi padre" for "el yayo");
- ``cross-language``: the question and its answer are in different languages;
- ``bound``: the answer is the first candidate and nothing, or not it, is handed (its chance
  under the bound, or under the share of a principle's);
- ``near distractor``: the answer is among the 12 candidates, 2nd-12th, not handed;
- ``retrieval``: the answer is not among the 12 candidates (a synonym, a paraphrase, the answer
  worded as an event);
- ``trap`` / ``absent``: a question nothing answers that gets something, its subject stored
  (the detail asked not) or absent.

Figures in docs/memory.md ("Where the held-out sets' misses come from").
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.memory.context import CANDIDATES, ranked, select
from agent.memory.relations import GRANDPARENT, ROLES, roles
from policies.i18n import message_language
from policies.text import fold
from tests.support.heldout_eval import DATA, _read, subjects
from tests.support.memory_eval import open_service

CAUSES = ("relation", "cross-language", "bound", "near distractor", "retrieval", "trap", "absent")


def _words(text: str) -> set[str]:
    return {fold(w).removesuffix("'s") for w in text.replace("?", " ").split()}


def cause(question: str, lang: str, answer: str, rank: int | None) -> str:
    asked = roles(question)
    relation_words = {w for role in asked for w in ROLES[role]} | set(GRANDPARENT)
    if asked and not (_words(question) & relation_words & _words(answer)):
        return "relation"
    if message_language(answer, lang) != lang:
        return "cross-language"
    if rank == 1:
        return "bound"
    if rank is not None and rank <= CANDIDATES:
        return "near distractor"
    return "retrieval"


def main() -> None:
    root, name = Path(sys.argv[1]), sys.argv[2]
    verbose = "-v" in sys.argv[3:]
    if "--without-relations" in sys.argv[3:]:  # the message searched as written
        import agent.memory.context as context_module
        from agent.memory.relations import Expansion
        from state.memory import MemoryStore

        def unexpanded(store: MemoryStore, message: str) -> Expansion:
            return Expansion(message)

        context_module.expand = unexpanded  # type: ignore[attr-defined]
    folder = DATA / name
    contents = {m["id"]: m["content"] for m in _read("memories.jsonl", folder)}
    _cases, traps = subjects(folder)
    svc = open_service(root)
    store = svc.store
    cal = store.embedder.calibration
    counts: Counter[str] = Counter()
    try:
        for q in _read("questions.jsonl", folder):
            hits = ranked(store, q["question"])
            picked = select(hits, cal.selection, cal.merge)
            ids = list(dict.fromkeys(h.id for h in hits if h.id))
            texts = {r.id: r.content for r in store.records(ids)}
            given = [texts.get(h.id, "") for h in picked]
            if q["kind"] == "unanswerable":
                if given:
                    why = "trap" if q["question"] in traps else "absent"
                    counts[why] += 1
                    if verbose:
                        print(f"{why}\t{q['question']}\t-> {given[0][:80]}")
                continue
            answer = contents[q["answer_ids"][0]]
            if answer in given:
                continue
            order = [texts.get(h.id, "") for h in hits]
            rank = order.index(answer) + 1 if answer in order else None
            why = cause(q["question"], q["lang"], answer, rank)
            counts[why] += 1
            if verbose:
                print(f"{why}\t{q['question']}\t(rank {rank})\t{answer[:80]}")
    finally:
        svc.close()
    print(name, ", ".join(f"{c} {counts[c]}" for c in CAUSES))


if __name__ == "__main__":
    main()
