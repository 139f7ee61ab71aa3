"""The Today page's plots: one function from the daemon's ``report.days`` series to the three
figures the page holds (``chart-hours``, ``chart-mood``, ``chart-kinds``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from panel.charts import hours_chart, kinds_chart, messages_chart, mood_chart

#: The figures of Today, in the order they are shown, each drawn by its chart; each is the
#: slot ``chart-KEY``.
_DRAWN: dict[str, Callable[[Sequence[Mapping[str, object]]], str]] = {
    "hours": hours_chart,
    "messages": messages_chart,
    "mood": mood_chart,
    "kinds": kinds_chart,
}
FIGURES = tuple(_DRAWN)


def today_figures(days: object) -> dict[str, str]:
    """Each figure of Today as SVG markup whose every text is escaped (``panel.charts``), by
    key; an empty one leaves its slot present and says there is no plot yet.

    ``days`` is ``report.days``'s result, or None when the daemon has no such command.
    """
    rows = days.get("days") if isinstance(days, Mapping) else None
    if not isinstance(rows, list):
        return {key: "" for key in FIGURES}
    series = [row for row in rows if isinstance(row, Mapping)]
    return {key: draw(series) for key, draw in _DRAWN.items()}
