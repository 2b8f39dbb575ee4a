"""The platform's one reading of the grader's result document (through grader.contract):
what is a platform fault, what a student is scored."""
from __future__ import annotations

from typing import Any

from grader.contract import Kind
from grader.host import Verdict

INTERNAL_ERROR = Kind.INTERNAL_ERROR.value
VERDICT_CHOICES = [(kind.value, kind.value) for kind in Kind]


def result_of(verdict: Verdict) -> dict[str, Any]:
    """The document stored on a submission."""
    return verdict.to_dict()


def result_internal_error(error: BaseException) -> dict[str, Any]:
    """The document for a fault of ours: never charged to the student."""
    return result_of(Verdict.internal_error(repr(error)))


def result_is_internal_error(result: dict[str, Any]) -> bool:
    return result["verdict"] == INTERNAL_ERROR
