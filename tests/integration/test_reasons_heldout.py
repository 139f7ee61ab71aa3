"""Reasons read for their meaning, measured on the half of a blind set the model never saw
(tests/data/heldout32; the split and the fit: tests/support/reasons_eval.py, docs/agent.md)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.memory.reasons import ReasonReader, packaged_model
from tests.support.reasons_eval import embedder, evaluate, fit, split

#: What a person must be able to count on, per intent and per language.
BOUND = 0.9


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason=(
        "reported once on the held-out half: intent 0.907 overall, Spanish 0.889, never_delete"
        " 0.84, group_by_date 0.84, stop_kind 0.88, none 0.72 (docs/agent.md); the bound stands"
        " and this mark goes the day the figures pass it"
    ),
)
def test_the_held_out_half_is_read_right_per_intent_and_per_language(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _fit, held = split()
    report = evaluate(ReasonReader(embedder()), held)
    with capsys.disabled():
        print("\n" + "\n".join(report.lines()))
    low = [
        f"{name}: intent {intent:.3f}, target {target:.3f}"
        for index in (0, 1)
        for name, (intent, target) in sorted(report.by(index).items())
        if intent < BOUND or target < BOUND
    ]
    assert not low, low


@pytest.mark.slow
def test_the_packaged_model_is_what_the_fitting_half_gives() -> None:
    fitted = fit(embedder())
    shipped = packaged_model()
    assert fitted.intents == shipped.intents and fitted.kinds == shipped.kinds
    assert np.allclose(fitted.weights, shipped.weights, atol=1e-3)
    assert np.allclose(fitted.bias, shipped.bias, atol=1e-3)
