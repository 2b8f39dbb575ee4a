"""Every log line names the submission it concerns, from the submit view to the stored verdict."""
from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Iterator

_current: contextvars.ContextVar[int | None] = contextvars.ContextVar("submission", default=None)


@contextlib.contextmanager
def submission_logging(submission_id: int) -> Iterator[None]:
    """Lines logged inside this block (in this thread or task) carry ``submission=<id>``."""
    token = _current.set(submission_id)
    try:
        yield
    finally:
        _current.reset(token)


class SubmissionFilter(logging.Filter):
    """Adds ``record.submission`` (``-`` outside any submission) for the formatter."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "submission"):
            record.submission = _current.get() or "-"
        return True
