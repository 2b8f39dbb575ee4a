"""What the engines did, step by step, for the lessons' visualisations.

    with events.record() as trace:
        executable.run(feeds)          # or eager code
    trace   # [{"engine": "static", "kind": "run", "node": "wx", "value": 10, ...}, ...]

Off by default: the engines test one module global (``listener is None``) before building
an event, so code that records nothing pays one comparison per op and nothing more.
Kinds: static ``define`` (a node is added, no value), ``pass`` (a compiler pass finished),
``compiled`` (the frozen plan), ``run`` (a planned node computed its value); eager ``op``
(an op ran and, when grad is on, left an entry on the tape) and ``backward`` (the tape
entry's vector-Jacobian product ran).
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

Listener = Callable[[dict[str, Any]], None]

#: the active listener; engines read it directly, so keep it a plain module global
listener: Listener | None = None

# A value larger than this many elements is summarised (shape, dtype, a few numbers).
MAX_ELEMENTS = 16


@contextlib.contextmanager
def record() -> Iterator[list[dict[str, Any]]]:
    """Collect every event the engines emit inside the block, in order (not thread-safe)."""
    global listener
    previous = listener
    trace: list[dict[str, Any]] = []
    listener = trace.append
    try:
        yield trace
    finally:
        listener = previous


def value_summary(value: Any) -> Any:
    """A JSON-ready picture of a value: small arrays in full, large ones as shape and a head."""
    array = np.asarray(value)
    if array.size <= MAX_ELEMENTS:
        return array.tolist()
    return {"shape": list(array.shape), "dtype": array.dtype.name, "head": array.reshape(-1)[:4].tolist()}


__all__ = ["record", "value_summary", "listener", "MAX_ELEMENTS"]
