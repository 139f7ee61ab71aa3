"""What the benches share for reporting figures."""

from __future__ import annotations


def pct(values: list[float], q: float, *, scale: float = 1.0) -> float:
    """The ``q``-quantile of ``values`` (nearest rank), times ``scale`` (1000: seconds to ms)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * scale
