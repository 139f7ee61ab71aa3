"""Comments and docstrings say why: no measured figures, no history (tests/support/comments.py)."""

from __future__ import annotations

import pytest

from tests.support.comments import (
    FIGURE,
    HISTORY,
    findings_in_code,
    findings_in_tests,
    texts,
)


def test_the_code_quotes_no_figures_and_no_history() -> None:
    found = findings_in_code()
    assert not found, "figures go to docs/benchmarks.md, history to git log:\n" + "\n".join(found)


def test_tests_name_the_behaviour_not_the_issue() -> None:
    found = findings_in_tests()
    assert not found, "say what the test shows, not where it came from:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "text",
    [
        "the start took 40 ms",
        "about 0.2 ms a memory",
        "3.7 us a row",
        "20-30 ms of its start",
        "peaked at 443 MB",
        "a 1 GB file",
        "256 MiB of WAL",
        "64 KB of principles",
        "5.5 s of CPU",
        "30 seconds at 100,000",
        "4.5x faster",
        "3x the floor",
        "within 5%",
        "(~4 min)",
        "five times as long to build",
        "3 times faster",
    ],
)
def test_a_figure_is_found(text: str) -> None:
    assert FIGURE.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "a GGUF header is 24 bytes",
        "the floor and the engine side by side",
        "version 2 of the schema",
        "one mkdir per new folder",
        "a 4-bit weight",
        "Python 3.11",
        "asks it several times",
    ],
)
def test_what_is_no_figure_is_left_alone(text: str) -> None:
    assert not FIGURE.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "every paragraph used to become a memory",
        "Issue 10, Must show 4: the scan",
        "(issue #21)",
        "previously read every row",
        "before this change the plan was copied",
        "on main the limit was per recv",
    ],
)
def test_history_is_found(text: str) -> None:
    assert HISTORY.search(text)


@pytest.mark.parametrize(
    "text",
    ["the embedder is used to rank", "a plan that no longer applies", "the issue's sentence"],
)
def test_what_is_no_history_is_left_alone(text: str) -> None:
    assert not HISTORY.search(text)


def test_comments_and_docstrings_are_read_and_code_is_not() -> None:
    source = (
        '"""Module: 10 ms."""\n'
        "X = '20 ms'  # 30 ms\n"
        "def f() -> None:\n"
        '    """Function: 40 ms."""\n'
        "    y = 50  # fifty\n"
    )
    read = dict(texts(source))
    assert read == {1: "Module: 10 ms.", 2: "# 30 ms", 4: "Function: 40 ms.", 5: "# fifty"}
