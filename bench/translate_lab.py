"""Lab: does the message's translation into the person's other language help the context?

    python bench/translate_lab.py ROOT [SET]

ROOT: a store built by ``python -m tests.support.heldout_eval ROOT SET`` (the grounded set's
memories with SET's added); without SET, the grounded set's own report (``python -m
tests.support.grounded_eval ROOT``). Needs Debian's ``apertium-en-es`` (rule-based Spanish
<-> English translation, GPL, run as a program); it is not a dependency of ALMA.

A question across languages (a Spanish question whose answer the person wrote in English) is
the largest cause of the held-out sets' misses (``bench/context_misses.py``): e5-small's cosine
between two languages is lower than within one. Here the message is also translated by
apertium into the other language and embedded; a candidate written in the other language
(``i18n.message_language`` of its lexicon body) takes the better of its two cosines, and the
translation's nearest memories join the candidates. Everything after that is the product's
own code (``context.build_context`` through ``MemoryService.context``), read-only: the store's
``nearest`` is wrapped, nothing else. Printed: the evaluator's figures with the translation
off and on, in one process, and the time a translation takes.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

import agent.memory.context as context
from agent.memory import search
from policies.i18n import message_language
from state.memory.embedder import Vectors
from state.memory.store import MemoryStore
from tests.support import grounded_eval
from tests.support import heldout_eval as heldout

PAIRS = {"es": "spa-eng", "en": "eng-spa"}
_on = False
_asked: dict[str, str] = {}  # the text being searched (set as its vector is asked for)
_translated: dict[str, str] = {}
_seconds: list[float] = []


def translate(text: str) -> str:
    if text not in _translated:
        start = time.perf_counter()
        pair = PAIRS[message_language(text, "es")]
        out = subprocess.run(
            ["apertium", "-u", pair], input=text, capture_output=True, text=True, timeout=10
        )
        _translated[text] = out.stdout.strip()
        _seconds.append(time.perf_counter() - start)
    return _translated[text]


_embed_soon = search.embed_soon


def embed_soon(store: MemoryStore, query: str) -> Future[Vectors]:
    _asked["text"] = query
    return _embed_soon(store, query)


_nearest = MemoryStore.nearest


def nearest(
    self: MemoryStore, vector: Vectors, n: int, where: dict[str, Any] | None = None
) -> list[tuple[str, float, Vectors]]:
    if not _on or "text" not in _asked:
        return _nearest(self, vector, n, where)
    found = {i: (cos, vec) for i, cos, vec in _nearest(self, vector, n, where)}
    text = _asked["text"]
    lang = message_language(text, "es")
    other = self.embedder.query(translate(text))
    for i, _cos, vec in _nearest(self, other, n, where):
        found.setdefault(i, (float(np.dot(vec, vector)), vec))
    bodies = self.bodies(list(found))
    out = []
    for i, (cos, vec) in found.items():
        if message_language(bodies.get(i, ""), lang) != lang:
            cos = max(cos, float(np.dot(vec, other)))
        out.append((i, cos, vec))
    return sorted(out, key=lambda row: -row[1])


def main() -> None:
    global _on
    root = Path(sys.argv[1])
    # The context calls the name it imported: that name is the one wrapped.
    vars(context)["embed_soon"] = embed_soon
    # The lab's one change to the product, for this process only: the store's nearest wrapped.
    MemoryStore.nearest = nearest  # type: ignore[method-assign]
    if len(sys.argv) > 2:
        folder = heldout.set_folder(sys.argv[2])
        svc, _data = grounded_eval.build_store(root)
        try:
            heldout.load_heldout(svc, root, folder)
            for _on in (False, True):
                figures = heldout.evaluate(svc, folder)
                print(f"translation {'on ' if _on else 'off'}: {figures['all'].line(folder.name)}")
        finally:
            svc.close()
    else:
        for _on in (False, True):
            print(f"translation {'on' if _on else 'off'}:")
            sys.argv = [sys.argv[0], str(root)]
            grounded_eval.main()
    if _seconds:
        cut = statistics.quantiles(_seconds, n=20)
        print(
            f"a translation: median {statistics.median(_seconds) * 1000:.0f} ms, p95 {cut[-1] * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
