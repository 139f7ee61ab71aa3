"""The panel's plots: SVG text that parses, escapes what came from ALMA, holds no script, no
outside reference and no style attribute, and draws empty days, gaps and 90 days."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import date, timedelta

import pytest

from panel.charts import hours_chart, kinds_chart, messages_chart, mood_chart
from policies.i18n import language

SVG = "{http://www.w3.org/2000/svg}"
CHARTS: dict[str, Callable[[list[dict[str, object]]], str]] = {
    "chart-hours": hours_chart,
    "chart-messages": messages_chart,
    "chart-mood": mood_chart,
    "chart-kinds": kinds_chart,
}


def _days(n: int, *, kind: str = "organize") -> list[dict[str, object]]:
    start = date(2026, 11, 28) - timedelta(days=n - 1)
    return [
        {
            "date": (start + timedelta(days=i)).isoformat(),
            "hours": (i % 12) * 0.75,
            "messages_by_hour": [(i + h) % 3 for h in range(24)],
            "mood": None if i % 5 == 0 else i / 10,
            "suggestions": {kind: {"accepted": 1, "rejected": i % 2, "undone": 1, "pending": 0}},
        }
        for i in range(n)
    ]


def _parsed(svg: str, testid: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    assert root.get("role") == "img" and root.get("data-testid") == testid
    assert root.get("aria-label")
    title = root.find(SVG + "title")
    assert title is not None and title.text == root.get("aria-label")
    return root


def _safe(svg: str, root: ET.Element) -> None:
    for element in root.iter():
        assert element.tag.removeprefix(SVG) not in ("script", "foreignObject", "image", "a")
        assert "style" not in element.attrib
        for name, value in element.attrib.items():
            assert not name.startswith("on"), name
            assert "href" not in name and "url(" not in value, (name, value)
    assert "<script" not in svg and "javascript:" not in svg


@pytest.mark.parametrize("n", [1, 14, 90])
@pytest.mark.parametrize("testid", list(CHARTS))
def test_every_chart_is_valid_svg_with_its_test_id_and_nothing_active(testid: str, n: int) -> None:
    svg = CHARTS[testid](_days(n))
    root = _parsed(svg, testid)
    _safe(svg, root)
    texts = [t.text for t in root.iter(SVG + "text")]
    assert texts, "axis labels"


@pytest.mark.parametrize("testid", list(CHARTS))
def test_no_days_is_a_chart_that_says_so(testid: str) -> None:
    svg = CHARTS[testid]([])
    root = _parsed(svg, testid)
    assert "No data for these days." in [t.text for t in root.iter(SVG + "text")]
    assert not list(root.iter(SVG + "rect"))[1:] and not list(root.iter(SVG + "polyline"))


def test_a_kind_that_holds_markup_comes_out_as_text() -> None:
    hostile = '<script>alert(1)</script>" onload="x'
    svg = kinds_chart(_days(3, kind=hostile))
    root = _parsed(svg, "chart-kinds")
    _safe(svg, root)
    shown = " ".join(t.text or "" for t in root.iter())
    assert "<script>alert(1)" in shown  # the text, read back as the text it was
    assert "&lt;script&gt;" in svg


def test_a_date_that_holds_markup_comes_out_as_text() -> None:
    days = _days(2)
    days[0]["date"] = "<img src=x onerror=alert(1)>"
    for testid, chart in CHARTS.items():
        svg = chart(days)
        _safe(svg, _parsed(svg, testid))


def test_the_mood_line_breaks_where_a_day_has_no_mood() -> None:
    days = _days(7)
    for i, day in enumerate(days):
        day["mood"] = None if i == 3 else 0.5 + i / 10
    root = _parsed(mood_chart(days), "chart-mood")
    lines = list(root.iter(SVG + "polyline"))
    assert [len(str(line.get("points")).split()) for line in lines] == [3, 3]
    assert len(list(root.iter(SVG + "circle"))) == 6
    days[1]["mood"] = None  # a day alone between two gaps: its point, no line
    root = _parsed(mood_chart(days), "chart-mood")
    assert [len(str(line.get("points")).split()) for line in root.iter(SVG + "polyline")] == [3]
    assert len(list(root.iter(SVG + "circle"))) == 5


def test_a_mood_of_no_day_is_said_not_drawn() -> None:
    days = _days(5)
    for day in days:
        day["mood"] = None
    root = _parsed(mood_chart(days), "chart-mood")
    assert not list(root.iter(SVG + "circle"))
    assert "No data for these days." in [t.text for t in root.iter(SVG + "text")]


def test_bars_are_as_tall_as_their_values() -> None:
    days = _days(2)
    days[0]["hours"], days[1]["hours"] = 2.0, 8.0
    root = _parsed(hours_chart(days), "chart-hours")
    bars = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    heights = [float(str(b.get("height"))) for b in bars]
    assert len(bars) == 2 and heights[1] == pytest.approx(4 * heights[0], rel=0.01)


def test_the_words_are_the_persons_language() -> None:
    with language("es"):
        svg = kinds_chart(_days(3))
    root = _parsed(svg, "chart-kinds")
    assert root.get("aria-label", "").startswith("Sugerencias por tipo")
    shown = [t.text for t in root.iter(SVG + "text")]
    assert "aceptada" in shown and "deshecha" in shown
    assert re.search(r"ordenar|carpeta", " ".join(str(t) for t in shown))


def test_the_charts_import_nothing_of_the_web_server() -> None:
    code = (
        "import sys, panel.charts; "
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'jinja2', 'agent', 'state', 'pydantic')]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
