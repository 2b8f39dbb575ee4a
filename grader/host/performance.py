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
