"""What a student is told: one verdict from the checks' rows, the score, and the document we store.

The judge reports one row per check (grader/contract.py); this module turns them into one
verdict. It runs on the host and in Django, so it imports nothing but the standard library.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from grader.contract import CheckRow, Kind

# When checks fail for different reasons, the verdict names the most fundamental one:
# a crash explains a wrong answer that follows it, not the other way round.
_SEVERITY = [
    Kind.SYNTAX_ERROR,
    Kind.MEMORY_LIMIT,
    Kind.TIME_LIMIT,
    Kind.OUTPUT_LIMIT,
    Kind.RUNTIME_ERROR,
    Kind.WRONG_ANSWER,
    Kind.TOO_SLOW,
]


@dataclasses.dataclass
class Usage:
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_bytes: int = 0
    fresh_imports: list[str] = dataclasses.field(default_factory=list)  # e.g. "student:torch" (see the contract)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Verdict:
    verdict: Kind
    score: float
    checks: list[CheckRow] = dataclasses.field(default_factory=list)
    perf: dict[str, Any] | None = None  # {"cases": [...]} when the exercise has performance cases
    usage: Usage = dataclasses.field(default_factory=Usage)
    backend: str = ""
    stdout: str = ""
    stderr: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)
    exercise: dict[str, Any] = dataclasses.field(default_factory=dict)  # id, version, digest
    # For the operators only, never shown to a student: judge tracebacks (they name lines
    # of the hidden checks) and the judge's own stderr.
    operator_log: list[str] = dataclasses.field(default_factory=list)
    # Why the speed cases must be measured again before this is a verdict ("undecided": an
    # interval that did not settle; "busy": a wall-clock timing on a busy host); [] when final.
    unsettled: list[str] = dataclasses.field(default_factory=list)

    @property
    def measure_again(self) -> bool:
        return bool(self.unsettled)

    @property
    def is_internal_error(self) -> bool:
        """A platform fault: the caller retries, and the student is never charged for it."""
        return self.verdict == Kind.INTERNAL_ERROR

    @property
    def accepted(self) -> bool:
        return self.verdict == Kind.ACCEPTED

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": str(self.verdict),
            "score": self.score,
            "checks": [check.to_dict() for check in self.checks],
            "perf": self.perf,
            "usage": self.usage.to_dict(),
            "backend": self.backend,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "notes": list(self.notes),
            "exercise": dict(self.exercise),
            "operator_log": list(self.operator_log),
            "unsettled": list(self.unsettled),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        usage = data.get("usage") or {}
        return cls(
            verdict=Kind(data["verdict"]),
            score=float(data.get("score", 0.0)),
            checks=[CheckRow.from_dict(c) for c in data.get("checks", [])],
            perf=data.get("perf"),
            usage=Usage(
                wall_s=float(usage.get("wall_s", 0.0)),
                cpu_s=float(usage.get("cpu_s", 0.0)),
                max_rss_bytes=int(usage.get("max_rss_bytes", 0)),
                fresh_imports=[str(m) for m in usage.get("fresh_imports") or []],
            ),
            backend=str(data.get("backend", "")),
            stdout=str(data.get("stdout", "")),
            stderr=str(data.get("stderr", "")),
            notes=[str(n) for n in data.get("notes", [])],
            exercise=dict(data.get("exercise") or {}),
            operator_log=[str(line) for line in data.get("operator_log") or []],
            unsettled=[str(reason) for reason in data.get("unsettled") or []],
        )

    @classmethod
    def internal_error(cls, reason: str, **fields: Any) -> Verdict:
        """A verdict for when we, not the student, failed."""
        notes = [reason, *fields.pop("notes", [])]
        return cls(verdict=Kind.INTERNAL_ERROR, score=0.0, notes=notes, **fields)

    @classmethod
    def without_checks(cls, kind: Kind, reason: str, **fields: Any) -> Verdict:
        """A verdict reached before any check could report (e.g. the whole run timed out)."""
        notes = [reason, *fields.pop("notes", [])]
        return cls(verdict=kind, score=0.0, notes=notes, **fields)


def score_of(checks: Iterable[CheckRow]) -> float:
    """Points earned over points available, in [0, 1]."""
    checks = list(checks)
    available = sum(c.max_points for c in checks)
    if available <= 0:
        return 1.0 if all(c.passed for c in checks) else 0.0
    earned = sum(min(max(c.points, 0.0), c.max_points) for c in checks)
    return round(min(max(earned / available, 0.0), 1.0), 4)


def overall_kind(checks: Iterable[CheckRow]) -> Kind:
    """One verdict for a list of check results.

    All passed: ACCEPTED. Only wrong answers, some points earned: PARTIAL. Otherwise the
    most fundamental failure (see _SEVERITY).
    """
    checks = list(checks)
    failures = {c.kind or Kind.WRONG_ANSWER for c in checks if not c.passed}
    if not failures:
        return Kind.ACCEPTED
    if Kind.INTERNAL_ERROR in failures:
        return Kind.INTERNAL_ERROR
    for kind in _SEVERITY:
        if kind in failures:
            if kind == Kind.WRONG_ANSWER and any(c.passed and c.max_points > 0 for c in checks):
                return Kind.PARTIAL
            return kind
    return Kind.WRONG_ANSWER
