"""The answer model's features (``search.answer_features``): what each candidate's row holds."""

from __future__ import annotations

import numpy as np

from agent.memory.search import ANSWER_FEATURES, Hit, answer_features
from state.memory.models import RankFacts


def _hit(i: int, cosine: float, fused: float, matched: list[str]) -> Hit:
    facts = RankFacts(f"m{i}", "L1", "fact", 3, None, 0, frozenset())
    hit = Hit(None, cosine, fused=fused, known=facts)
    hit.matched = matched
    return hit


def test_the_lead_is_the_best_over_the_second_and_the_others_below_the_best() -> None:
    hits = [
        _hit(0, 0.80, 40.0, []),
        _hit(1, 0.85, 45.0, ["alergi"]),  # the best by rank score, not first in the list
        _hit(2, 0.79, 38.0, ["alergi", "comid"]),
    ]
    rows = answer_features(hits, 2)
    col = {name: rows[:, i] for i, name in enumerate(ANSWER_FEATURES)}
    assert np.allclose(col["lead"], [-5.0, 5.0, -7.0])
    assert np.allclose(col["below_best"], [-5.0, 0.0, -7.0])
    assert np.allclose(col["matched_share"], [0.0, 0.5, 1.0])
    assert np.allclose(col["above_typical"], np.asarray([0.80, 0.85, 0.79]) - 0.80)


def test_a_lone_candidate_leads_by_nothing_and_a_message_without_terms_shares_nothing() -> None:
    rows = answer_features([_hit(0, 0.9, 10.0, [])], 0)
    assert rows.shape == (1, len(ANSWER_FEATURES))
    col = {name: rows[0, i] for i, name in enumerate(ANSWER_FEATURES)}
    assert col["lead"] == 0.0 and col["matched_share"] == 0.0
    assert answer_features([], 3).shape == (0, len(ANSWER_FEATURES))
