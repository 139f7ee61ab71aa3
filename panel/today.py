"""The Today page's plots: one function from the daemon's ``report.days`` series to the three
figures the page holds (``chart-hours``, ``chart-mood``, ``chart-kinds``)."""

from __future__ import annotations

#: The figures of Today, in the order they are shown; each is the slot ``chart-KEY``.
FIGURES = ("hours", "mood", "kinds")


def today_figures(days: object) -> dict[str, str]:
    """Each figure of Today as SVG markup whose every text is escaped, by key; an empty one
    leaves its slot present and says there is no plot yet.

    The plots themselves are ``panel.charts``'s to draw from the 14 days ``report.days``
    gives (``days`` is None when the daemon has no such command): this is where they plug in.
    """
    return {key: "" for key in FIGURES}
