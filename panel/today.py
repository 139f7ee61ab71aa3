"""The Today page's plots: one function from the daemon's ``report.days`` series to the three
figures the page holds (``chart-hours``, ``chart-mood``, ``chart-kinds``)."""

from __future__ import annotations

#: The figures of Today, in the order they are shown: (test id, figure key).
FIGURES = ("hours", "mood", "kinds")


def today_figures(days: object) -> dict[str, str]:
    """Each figure of Today as escaped SVG markup, by key; an empty text leaves its slot empty.

    The plots are drawn by ``panel.charts`` from the 14 days ``report.days`` gives; until that
    module is wired here each slot stays present and empty, and the page says so.
    """
    return {key: "" for key in FIGURES}
