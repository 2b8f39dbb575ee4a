"""Every message the judge writes into a check row: a stable id, its English template, its parameters.

A row carries ``message`` (the English text), ``message_id`` and ``message_params``, so
the platform can show the same message in another language. Standard library only.

For a hidden case the row only ever holds ``HIDDEN[kind]``: a fixed text per kind of
failure, with no parameters. Nothing the student's code chose (an exception's name or
message, an exit status, a line number, what it printed) and nothing of the hidden
inputs can reach it.
"""
from __future__ import annotations

from typing import Any

MESSAGES: dict[str, str] = {
    "check.passed": "passed",
    "check.failed": "{detail}",  # the exercise's own words about a wrong answer (visible cases)
    "error.raised": "{traceback}",  # the student's own exception, their own frames only (visible cases)
    "error.unusable_value": "the judge could not use what your code returned",
    "hidden.wrong_answer": "wrong answer on a hidden case",
    "hidden.time_limit": "time limit reached on a hidden case",
    "hidden.too_slow": "too slow on a hidden performance case",
    "hidden.memory_limit": "memory limit reached on a hidden case",
    "hidden.output_limit": "too much output on a hidden case",
    "hidden.runtime_error": "your code failed on a hidden case",
    "not_run.correctness_failed": "not run: a correctness check failed",
    "not_run.syntax_error": "not run: your code has a syntax error",
    "not_run.load_error": "not run: your code raised an error while loading",
    "not_run.stopped": "not run: {reason}",
    "stop.budget_used": "the time limit was used up by earlier checks",
    "stop.no_answer": "no answer within {seconds} s (time limit)",
    "stop.cpu_limit": "CPU time limit reached ({seconds} s)",
    "stop.memory_limit": "memory limit reached",
    "stop.output_limit": "your program printed more than {limit} bytes",
    "stop.file_too_large": "your program wrote a file larger than {limit} bytes",
    "stop.killed": "your program was killed by {signal}",
    "stop.exited": "your program exited (status {status}) in the middle of a check",
    "stop.closed_channel": "your program closed the judge's channel",
    "stop.bad_reply": "your program's reply to the judge was not valid",
    "stop.cannot_start": "your program could not be started ({reason})",
    "stop.unpausable": "your program kept running while it should have been paused",
    "perf.pass": "fast enough: {measured}; needed {threshold} the {baseline}",
    "perf.too_slow": "too slow: {measured}; needed {threshold} the {baseline}",
    "perf.within_noise": "within noise: {measured}; needed {threshold} the {baseline}; not counted against you",
    "perf.too_few_pairs": (
        "too slow: only {n} timed calls fitted in the {budget} s budget, and a decision needs {needed}; "
        "needed {threshold} the {baseline}"
    ),
}

HIDDEN: dict[str, str] = {
    "WRONG_ANSWER": "hidden.wrong_answer",
    "TIME_LIMIT": "hidden.time_limit",
    "TOO_SLOW": "hidden.too_slow",
    "MEMORY_LIMIT": "hidden.memory_limit",
    "OUTPUT_LIMIT": "hidden.output_limit",
    "RUNTIME_ERROR": "hidden.runtime_error",
}


class Message:
    """A message id with its parameters; ``str()`` is the English text."""

    def __init__(self, message_id: str, **params: Any):
        if message_id not in MESSAGES:
            raise KeyError(f"unknown message id {message_id!r}")
        self.id = message_id
        self.params = params

    def __str__(self) -> str:
        return MESSAGES[self.id].format(**self.params)

    def __repr__(self) -> str:
        return f"Message({self.id!r}, {self.params!r})"

    def row_fields(self) -> dict[str, Any]:
        return {"message": str(self), "message_id": self.id, "message_params": dict(self.params)}


def hidden(kind: str | None) -> Message:
    """The only message a hidden case may show for a failure of ``kind``."""
    return Message(HIDDEN.get(kind or "", "hidden.runtime_error"))
