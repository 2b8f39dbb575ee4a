"""One number for a submission's speed, read from a stored verdict document: the geometric
mean over the performance cases of the median ratio (student / baseline; lower is faster),
with the geometric means of the 95 % interval ends. Standard library only."""

from __future__ import annotations

import math
from typing import Any


def overall_ratio(result: dict[str, Any] | None) -> tuple[float, float, float] | None:
    """(ratio, low, high), or None when nothing was timed or a case has no usable ratio."""
    cases = ((result or {}).get("perf") or {}).get("cases") or []
    try:
        triples = [(float(c["ratio"]), float(c["interval"][0]), float(c["interval"][1])) for c in cases]
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    if not triples or any(not (v > 0 and math.isfinite(v)) for t in triples for v in t):
        return None
    ratio, low, high = (math.exp(sum(math.log(t[i]) for t in triples) / len(triples)) for i in range(3))
    return ratio, low, high


def ratio_text(value: float | None) -> str:
    """A ratio to two significant digits ("0.087", "0.98", "1.2", "12", "120"); "" for none.

    A 95 % interval is rarely narrower than a few percent of its ratio, so a third digit
    would be noise. The verdict page and the boards both print ratios through this."""
    if value is None or not math.isfinite(value) or value <= 0:
        return ""
    digits = 1 - math.floor(math.log10(value))
    rounded = round(value, digits)
    if rounded > 0 and math.floor(math.log10(rounded)) != math.floor(math.log10(value)):
        digits -= 1  # 0.996 rounds up to 1.0, which has one digit fewer after the point
    return f"{rounded:.{max(digits, 0)}f}" if digits > 0 else str(int(round(value, digits)))


def interval_text(ratio: float | None, low: float | None, high: float | None) -> str:
    """ "0.98× (0.85–1.1)": a ratio and its 95 % interval, each through ratio_text."""
    if not ratio_text(ratio):
        return ""
    text = f"{ratio_text(ratio)}×"
    return f"{text} ({ratio_text(low)}–{ratio_text(high)})" if ratio_text(low) and ratio_text(high) else text
