"""The panel's plots as SVG text, drawn from ``report.days``'s days: pure functions, no I/O.

Everything the plots show that came from ALMA (a kind's name, a date) is escaped as text, and
the SVG holds no script, no link to anything outside it and no ``style`` attribute: colours are
presentation attributes (``fill``, ``stroke``), which a Content-Security-Policy without
``'unsafe-inline'`` allows. Each root ``<svg>`` carries ``role="img"``, a ``<title>`` and an
``aria-label`` in the person's language, and the ``data-testid`` the panel's tests look for.
Standard library and the catalog only, so it imports without the web server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape, quoteattr

from policies.i18n import N_, _
from policies.kinds import label as kind_label

WIDTH = 640
HEIGHT = 240
#: Room for the axes' labels: left, right, top, bottom.
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 16, 44
#: The outcomes ``report.days`` counts, in the order the bars stack them, and their colours.
OUTCOME_COLOURS = {
    "accepted": "#2e7d32",
    "rejected": "#c62828",
    "undone": "#ef6c00",
    "pending": "#1565c0",
    "expired": "#757575",
    "failed": "#6a1b9a",
}
OUTCOME_WORDS = {
    "accepted": N_("accepted"),
    "rejected": N_("rejected"),
    "undone": N_("undone"),
    "pending": N_("pending"),
    "expired": N_("expired"),
    "failed": N_("failed"),
}
_BAR = "#1565c0"
_AXIS = "#424242"
_GRID = "#e0e0e0"

Day = Mapping[str, object]


def hours_chart(days: Sequence[Day]) -> str:
    """Bars: the working hours of each day."""
    values = [_number(day.get("hours")) or 0.0 for day in days]
    title = _("Working hours per day")
    return _bars("chart-hours", title, _period(days), values, [_short(d) for d in days], _("hours"))


def messages_chart(days: Sequence[Day]) -> str:
    """Bars: the person's messages by the hour of the day they were written, over the days."""
    totals = [0] * 24
    for day in days:
        by_hour = day.get("messages_by_hour")
        if isinstance(by_hour, list):
            for hour, count in enumerate(by_hour[:24]):
                totals[hour] += int(_number(count) or 0)
    title = _("Messages per hour of the day")
    labels = [f"{hour:02d}" for hour in range(24)]
    if not days:
        totals = []
    return _bars(
        "chart-messages", title, _period(days), [float(t) for t in totals], labels, _("messages")
    )


def mood_chart(days: Sequence[Day]) -> str:
    """A line: the mood measure of each day (negative words per message: higher is lower),
    broken where a day has none."""
    title = _("Mood: negative words per message (higher is lower)")
    values = [_number(day.get("mood")) for day in days]
    known = [v for v in values if v is not None]
    parts = _frame("chart-mood", title, _period(days), _("negative words per message"))
    if not known:
        return _close(parts, _("No data for these days."))
    top = _axis_y(parts, max(known))
    xs = _columns(len(values))
    segment: list[str] = []
    for x, value in zip(xs, values, strict=True):
        if value is None:
            _line(parts, segment)
            segment = []
            continue
        y = _y(value, top)
        segment.append(f"{x:.1f},{y:.1f}")
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{_BAR}"/>')
    _line(parts, segment)
    _axis_x(parts, [_short(d) for d in days])
    return _close(parts)


def kinds_chart(days: Sequence[Day]) -> str:
    """Stacked bars: the suggestions of each kind over the days, by what became of them."""
    title = _("Suggestions by kind and what became of them")
    totals: dict[str, dict[str, int]] = {}
    for day in days:
        kinds = day.get("suggestions")
        if not isinstance(kinds, Mapping):
            continue
        for kind, counts in kinds.items():
            if not isinstance(counts, Mapping):
                continue
            mine = totals.setdefault(str(kind), dict.fromkeys(OUTCOME_COLOURS, 0))
            for outcome in OUTCOME_COLOURS:
                mine[outcome] += int(_number(counts.get(outcome)) or 0)
    parts = _frame("chart-kinds", title, _period(days), _("suggestions"))
    if not any(sum(c.values()) for c in totals.values()):
        return _close(parts, _("No data for these days."))
    top = _axis_y(parts, max(sum(c.values()) for c in totals.values()))
    kinds = sorted(totals, key=lambda k: (-sum(totals[k].values()), k))
    xs = _columns(len(kinds))
    width = _bar_width(len(kinds))
    for x, kind in zip(xs, kinds, strict=True):
        base = 0
        for outcome, colour in OUTCOME_COLOURS.items():
            count = totals[kind][outcome]
            if not count:
                continue
            y_top, y_base = _y(base + count, top), _y(base, top)
            parts.append(
                f'<rect x="{x - width / 2:.1f}" y="{y_top:.1f}" width="{width:.1f}" '
                f'height="{y_base - y_top:.1f}" fill="{colour}">'
                f"<title>{escape(f'{kind_label(kind)}: {_(OUTCOME_WORDS[outcome])} {count}')}"
                "</title></rect>"
            )
            base += count
    _axis_x(parts, [kind_label(k) for k in kinds])
    _legend(parts)
    return _close(parts)


# -- drawing ----------------------------------------------------------------------------------


def _frame(testid: str, title: str, period: str, y_label: str) -> list[str]:
    label = f"{title} ({period})" if period else title
    return [
        '<svg xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f"data-testid={quoteattr(testid)} aria-label={quoteattr(label)}>",
        f"<title>{escape(label)}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<text x="12" y="{_TOP + _plot_h() / 2:.1f}" font-size="11" fill="{_AXIS}" '
        f'text-anchor="middle" transform="rotate(-90 12 {_TOP + _plot_h() / 2:.1f})">'
        f"{escape(y_label)}</text>",
    ]


def _close(parts: list[str], empty: str | None = None) -> str:
    if empty is not None:
        parts.append(
            f'<text x="{WIDTH / 2:.1f}" y="{HEIGHT / 2:.1f}" font-size="13" fill="{_AXIS}" '
            f'text-anchor="middle">{escape(empty)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _bars(
    testid: str,
    title: str,
    period: str,
    values: list[float],
    labels: list[str],
    y_label: str,
) -> str:
    parts = _frame(testid, title, period, y_label)
    if not values or not any(values):
        return _close(parts, _("No data for these days."))
    top = _axis_y(parts, max(values))
    width = _bar_width(len(values))
    for x, value, name in zip(_columns(len(values)), values, labels, strict=True):
        y = _y(value, top)
        parts.append(
            f'<rect x="{x - width / 2:.1f}" y="{y:.1f}" width="{width:.1f}" '
            f'height="{_TOP + _plot_h() - y:.1f}" fill="{_BAR}">'
            f"<title>{escape(f'{name}: {_fmt(value)}')}</title></rect>"
        )
    _axis_x(parts, labels)
    return _close(parts)


def _axis_y(parts: list[str], highest: float) -> float:
    """The y axis from 0 to a round top above ``highest``, with its grid; the top."""
    top = _round_up(highest)
    bottom = _TOP + _plot_h()
    for n in range(5):
        value = top * n / 4
        y = _y(value, top)
        parts.append(
            f'<line x1="{_LEFT}" y1="{y:.1f}" x2="{WIDTH - _RIGHT}" y2="{y:.1f}" '
            f'stroke="{_GRID}" stroke-width="1"/>'
        )
        parts.append(
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" font-size="10" fill="{_AXIS}" '
            f'text-anchor="end">{escape(_fmt(value))}</text>'
        )
    parts.append(
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{bottom}" stroke="{_AXIS}"/>'
        f'<line x1="{_LEFT}" y1="{bottom}" x2="{WIDTH - _RIGHT}" y2="{bottom}" stroke="{_AXIS}"/>'
    )
    return top


def _axis_x(parts: list[str], labels: list[str]) -> None:
    """The x axis' labels: as many as fit, evenly spread (every one up to 16 columns)."""
    step = max(1, -(-len(labels) // 16))
    y = _TOP + _plot_h() + 16
    for n, (x, name) in enumerate(zip(_columns(len(labels)), labels, strict=True)):
        if n % step:
            continue
        shown = name if len(name) <= 14 else name[:13] + "…"
        parts.append(
            f'<text x="{x:.1f}" y="{y}" font-size="10" fill="{_AXIS}" '
            f'text-anchor="middle">{escape(shown)}</text>'
        )


def _legend(parts: list[str]) -> None:
    x = _LEFT
    y = HEIGHT - 10
    for outcome, colour in OUTCOME_COLOURS.items():
        word = _(OUTCOME_WORDS[outcome])
        parts.append(
            f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14}" y="{y}" font-size="10" fill="{_AXIS}">{escape(word)}</text>'
        )
        x += 22 + 7 * len(word)


def _line(parts: list[str], points: list[str]) -> None:
    if len(points) > 1:
        parts.append(
            f'<polyline points="{" ".join(points)}" fill="none" stroke="{_BAR}" stroke-width="2"/>'
        )


def _plot_w() -> float:
    return WIDTH - _LEFT - _RIGHT


def _plot_h() -> float:
    return HEIGHT - _TOP - _BOTTOM


def _columns(n: int) -> list[float]:
    """The x centre of each of ``n`` evenly spread columns."""
    return [_LEFT + _plot_w() * (i + 0.5) / n for i in range(n)] if n else []


def _bar_width(n: int) -> float:
    return max(1.0, _plot_w() / max(n, 1) * 0.7)


def _y(value: float, top: float) -> float:
    return _TOP + _plot_h() * (1 - (value / top if top else 0.0))


def _round_up(value: float) -> float:
    """A round number at or above ``value`` (1, 2, 4 or 8 times a power of ten, at least 1),
    so that its quarters, the grid's lines, are round too."""
    if value <= 1:
        return 1.0
    scale = 1.0
    while scale * 10 < value:
        scale *= 10
    for mult in (1, 2, 4, 8, 10):
        if scale * mult >= value:
            return scale * mult
    return scale * 10


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}".rstrip("0")


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def _short(day: Day) -> str:
    """A day's date as the axis shows it: MM-DD."""
    text = str(day.get("date", ""))
    return text[5:] if len(text) == 10 else text


def _period(days: Sequence[Day]) -> str:
    if not days:
        return ""
    first, last = str(days[0].get("date", "")), str(days[-1].get("date", ""))
    return _("from {first} to {last}", first=first, last=last)
