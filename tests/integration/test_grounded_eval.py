"""The chat's context on the grounded set's report split, never fitted on.

Builds the set (tests/support/grounded_eval_data.py: 2,000+ memories, Spanish and some
English, near-topic distractors, questions with no answer stored) into a real store, ingested
as the daemon does, and measures ``context`` on the ``report`` split, which the selection's fit
never reads: the answer in the context for at least 90% of the questions, at most 20% of the
non-principle memories handed unrelated, at most 5 memories a question. Printed both ways.
``ALMA_GROUNDED_ROOT=DIR`` reuses a store built by ``python -m tests.support.grounded_eval DIR``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.grounded_eval import build_store, evaluate


@pytest.mark.slow  # embeds 2,000+ memories
@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="the answer reaches the context for 149 of 166 report questions (0.898 < 0.90): "
    "docs/memory.md, the grounded set",
)
def test_the_answer_reaches_the_context_and_little_else(
    tmp_path: Path, embedder_loaded: None
) -> None:
    root = Path(os.environ.get("ALMA_GROUNDED_ROOT") or tmp_path)
    svc, data = build_store(root)
    try:
        stored = svc.count()
        fig = evaluate(svc, data, "report")
        print(f"{stored} memories stored")
        print(fig.line("report"))
        assert stored >= 2000
        assert fig.recall >= 0.90, fig.line("report")
        assert fig.unrelated_share <= 0.20, fig.line("report")
        assert fig.per_question <= 5.0, fig.line("report")
        assert fig.fact_first == fig.asked, fig.line("report")
    finally:
        svc.close()
