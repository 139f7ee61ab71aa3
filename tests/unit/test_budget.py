"""The noise budget: a few new suggestions a day, the most worth to the person first."""

from __future__ import annotations

from agent.loop.budget import protects, within, worth

Finding = tuple[str, int, float]  # kind, files, how welcome the kind has been


def _key(f: Finding) -> tuple[int, float, int]:
    return worth(*f)


def test_something_broken_and_what_the_person_said_come_before_their_files() -> None:
    week: list[Finding] = [
        ("organize", 18, 0.5),
        ("temp_cleanup", 3, 0.5),
        ("repeated_failure", 0, 0.5),
        ("duplicates", 4, 0.5),
        ("pending_task", 0, 0.5),
        ("low_mood", 0, 0.5),
    ]
    now, waiting = within(week, 3, _key)
    assert [k for k, _f, _w in now] == ["repeated_failure", "pending_task", "low_mood"]
    assert sorted(k for k, _f, _w in waiting) == ["duplicates", "organize", "temp_cleanup"]


def test_a_kind_the_person_keeps_turning_down_waits_behind_a_welcome_one() -> None:
    now, _waiting = within([("organize", 40, 0.0), ("organize", 16, 1.0)], 1, _key)
    assert now == [("organize", 16, 1.0)]


def test_the_order_found_is_kept_and_no_budget_proposes_all() -> None:
    week: list[Finding] = [("organize", 1, 0.5), ("repeated_failure", 0, 0.5), ("backup", 0, 0.5)]
    now, waiting = within(week, 2, _key)
    assert now == [("repeated_failure", 0, 0.5), ("backup", 0, 0.5)]
    assert waiting == [("organize", 1, 0.5)]
    assert within(week, None, _key) == (week, [])
    assert within(week, 0, _key) == ([], week)


def test_what_protects_the_data_is_never_held_back_and_takes_no_room() -> None:
    day: list[Finding] = [("organize", 9, 0.5), ("backup", 0, 0.0), ("duplicates", 3, 0.5)]

    def exempt(f: Finding) -> bool:
        return protects(f[0])

    assert within(day, 0, _key, exempt=exempt) == ([("backup", 0, 0.0)], day[::2])
    assert within(day, 1, _key, exempt=exempt) == (day[1:], [("organize", 9, 0.5)])
    assert within(day, 2, _key, exempt=exempt) == (day, [])
    assert [k for k in ("backup", "organize", "repeated_failure") if protects(k)] == ["backup"]
