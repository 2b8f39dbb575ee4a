"""The site's cache lives in the broker's Redis, which may be down while the database is up.
Whoever uses it only to save work (a board's ranking, the login brake's counts) goes through
quietly(): a failure is logged and answered with a default, never raised into a request or a
transaction that stores something (issue 12: nothing lost, whatever fails)."""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


def quietly(operation: Callable[[], Any], *, default: Any = None, what: str = "cache") -> Any:
    try:
        return operation()
    except Exception:  # noqa: BLE001 - any cache backend's failure
        log.warning("%s: cache unavailable", what, exc_info=True)
        return default
