"""Reasons read for their meaning, measured on a blind set the packaged model never saw (the
set: ``BLIND_SET``), and on each development set by a model fitted on the other authors' (the
fit and the sets: tests/support/reasons_eval.py, docs/agent.md)."""

from __future__ import annotations

import numpy as np
import pytest

from agent.memory.reasons import ReasonModel, ReasonReader, packaged_model
from tests.support.reasons_eval import (
    Report,
    embedder,
    evaluate,
    fit_every,
    read_set,
    report_set,
)

#: What a person must be able to count on, per intent and per language.
BOUND = 0.9
#: The blind set this test reads, under tests/data: written by a hand that has not read the
#: reader, frozen before it is read, read once on the frozen model. The sets of
#: ``reasons_eval.AUTHORS`` are not ones: the packaged model is fitted on them.
BLIND_SET = "heldout32l"


def _below(report: Report) -> list[str]:
    return [
        f"{name}: intent {intent:.3f}, target {target:.3f}"
        for index in (0, 1)
        for name, (intent, target) in sorted(report.by(index).items())
        if intent < BOUND or target < BOUND
    ]


@pytest.mark.slow
def test_the_blind_set_is_read_right_per_intent_and_per_language(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = report_set(BLIND_SET)
    if not path.is_file():
        pytest.skip(f"the blind set {BLIND_SET} is not in this tree yet")
    report = evaluate(ReasonReader(embedder()), read_set(path))
    with capsys.disabled():
        print(f"\n{BLIND_SET}, read by the packaged model:\n" + "\n".join(report.lines()))
    assert not _below(report), _below(report)


@pytest.fixture(scope="module")
def fitted() -> tuple[ReasonModel, dict[str, Report]]:
    """The packaged model's fit and the cross-author reports, fitted side by side."""
    packaged, cross = fit_every(embedder())
    return packaged, dict(cross)


def _short_of(figures: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(
        strict=True,
        reason=(
            f"fitted on the other authors' sets and ALMA's phrasings, below 0.9: {figures}"
            " (docs/agent.md); the bound stands and this mark goes the day it passes"
        ),
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        pytest.param("heldout32", marks=_short_of("not_now 0.880")),
        "heldout32c",
        "heldout32d",
        "heldout32e",
        pytest.param("heldout32f", marks=_short_of("none 0.896")),
        "heldout32g",
        "heldout32h",
        pytest.param("heldout32i", marks=_short_of("keep_file's target 0.889")),
        pytest.param("heldout32j", marks=_short_of("none 0.866")),
        pytest.param("heldout32k", marks=_short_of("none 0.866")),
    ],
)
def test_each_development_set_is_read_right_by_a_model_fitted_on_the_other_authors(
    name: str, fitted: tuple[ReasonModel, dict[str, Report]], capsys: pytest.CaptureFixture[str]
) -> None:
    report = fitted[1][name]
    with capsys.disabled():
        print(f"\n{name}, read by a model fitted on the others:\n" + "\n".join(report.lines()))
    assert not _below(report), _below(report)


@pytest.mark.slow
def test_the_packaged_model_is_what_the_fitting_script_gives(
    fitted: tuple[ReasonModel, dict[str, Report]],
) -> None:
    model = fitted[0]
    shipped = packaged_model()
    assert model.intents == shipped.intents and model.kinds == shipped.kinds
    assert (model.buckets, model.gram_scale) == (shipped.buckets, shipped.gram_scale)
    assert np.allclose(model.weights, shipped.weights, atol=1e-3)
    assert np.allclose(model.bias, shipped.bias, atol=1e-3)
