"""The answer model's features (``search.answer_features``): what each candidate's row holds."""

from __future__ import annotations

import numpy as np

from agent.memory.context import select
from agent.memory.search import ANSWER_FEATURES, Hit, answer_features
from state.memory.embedder import Selection
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


def test_a_candidate_that_lacks_the_detail_asked_says_so() -> None:
    hits = [_hit(0, 0.9, 10.0, []), _hit(1, 0.8, 9.0, [])]
    hits[1].lacks = 1.0
    col = answer_features(hits, 1)[:, ANSWER_FEATURES.index("lacks")]
    assert np.allclose(col, [0.0, 1.0])


def _chance(i: int, layer: str, answering: float, fused: float) -> Hit:
    facts = RankFacts(
        f"m{i}", layer, "principle" if layer == "L-inf" else "fact", 3, None, 0, frozenset()
    )
    hit = Hit(None, 0.8, fused=fused, known=facts)
    hit.answering = answering
    return hit


def test_a_principle_competes_with_the_memories_and_a_weak_candidate_stays_out() -> None:
    rule = Selection((0.0,) * len(ANSWER_FEATURES), 0.0, bound=0.2, floor=0.01, most=3, share=0.1)
    hits = [
        _chance(0, "L1", 0.6, 30.0),
        _chance(1, "L-inf", 0.5, 29.0),  # a principle, ranked among them
        _chance(2, "L1", 0.05, 28.0),  # above the floor, under a tenth of the best
        _chance(3, "L1", 0.3, 27.0),
    ]
    assert [h.id for h in select(hits, rule, merge=2.0)] == ["m0", "m1", "m3"]
    # Nothing reaches the bound: nothing enters, principles included.
    for h in hits:
        h.answering /= 4
    assert select(hits, rule, merge=2.0) == []
