"""Reasons read for their meaning, measured on a blind set the model never saw (the set:
``BLIND_SET``; the fit: tests/support/reasons_eval.py, docs/agent.md)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.memory.reasons import ReasonReader, packaged_model
from tests.support.reasons_eval import embedder, evaluate, fit, read_set, report_set

#: What a person must be able to count on, per intent and per language.
BOUND = 0.9
#: The blind set this test reads, under tests/data: written by someone who has not read the
#: reader, frozen before it is read, read once on the frozen model. heldout32 is not one: the
#: packaged model is fitted on all of it.
BLIND_SET = "heldout32c/reasons.jsonl"


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason=(
        "read once: intent 0.922, target 0.967; below 0.9 group_by_project 0.867, none 0.833,"
        " Spanish 0.895 (docs/agent.md); the bound stands and this mark goes the day it passes"
    ),
)
def test_the_blind_set_is_read_right_per_intent_and_per_language(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = report_set(BLIND_SET)
    assert path.is_file(), f"the blind set {BLIND_SET} is missing from this tree"
    report = evaluate(ReasonReader(embedder()), read_set(path))
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
def test_the_packaged_model_is_what_the_fitting_script_gives() -> None:
    fitted = fit(embedder())
    shipped = packaged_model()
    assert fitted.intents == shipped.intents and fitted.kinds == shipped.kinds
    assert np.allclose(fitted.weights, shipped.weights, atol=1e-3)
    assert np.allclose(fitted.bias, shipped.bias, atol=1e-3)
