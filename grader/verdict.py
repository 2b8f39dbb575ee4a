"""What a student is told: the verdict taxonomy, the score, and the document we store.

The harness reports per-check outcomes; this module turns them into one verdict. It runs
on the host and in Django, so it imports nothing but the standard library.
"""
from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from typing import Any

FEEDBACK_BYTES = 8 * 1024  # per stream: enough to debug, small enough to store per submission


class Kind(enum.StrEnum):
    ACCEPTED = "ACCEPTED"
    PARTIAL = "PARTIAL"
    WRONG_ANSWER = "WRONG_ANSWER"
    TOO_SLOW = "TOO_SLOW"
    TIME_LIMIT = "TIME_LIMIT"
    MEMORY_LIMIT = "MEMORY_LIMIT"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    RUNTIME_ERROR = "RUNTIME_ERROR"
    SYNTAX_ERROR = "SYNTAX_ERROR"
    INTERNAL_ERROR = "INTERNAL_ERROR"


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
class CheckResult:
    name: str
    passed: bool
    visible: bool
    message: str = ""
    points: float = 0.0
    max_points: float = 1.0
    kind: Kind | None = None  # why it failed; None when it passed
    # The message's stable id and parameters (grader/harness/messages.py), to translate it.
    message_id: str = ""
    message_params: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "visible": self.visible,
            "message": self.message,
            "message_id": self.message_id,
            "message_params": dict(self.message_params),
            "points": self.points,
            "max_points": self.max_points,
            "kind": str(self.kind) if self.kind else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        kind = data.get("kind")
        return cls(
            name=str(data["name"]),
            passed=bool(data["passed"]),
            visible=bool(data["visible"]),
            message=str(data.get("message", "")),
            points=float(data.get("points", 0.0)),
            max_points=float(data.get("max_points", 1.0)),
            kind=Kind(kind) if kind else None,
            message_id=str(data.get("message_id") or ""),
            message_params=dict(data.get("message_params") or {}),
        )


@dataclasses.dataclass
class Usage:
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Verdict:
    verdict: Kind
    score: float
    checks: list[CheckResult] = dataclasses.field(default_factory=list)
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
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        usage = data.get("usage") or {}
        return cls(
            verdict=Kind(data["verdict"]),
            score=float(data.get("score", 0.0)),
            checks=[CheckResult.from_dict(c) for c in data.get("checks", [])],
            perf=data.get("perf"),
            usage=Usage(
                wall_s=float(usage.get("wall_s", 0.0)),
                cpu_s=float(usage.get("cpu_s", 0.0)),
                max_rss_bytes=int(usage.get("max_rss_bytes", 0)),
            ),
            backend=str(data.get("backend", "")),
            stdout=str(data.get("stdout", "")),
            stderr=str(data.get("stderr", "")),
            notes=[str(n) for n in data.get("notes", [])],
            exercise=dict(data.get("exercise") or {}),
            operator_log=[str(line) for line in data.get("operator_log") or []],
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


def score_of(checks: Iterable[CheckResult]) -> float:
    """Points earned over points available, in [0, 1]."""
    checks = list(checks)
    available = sum(c.max_points for c in checks)
    if available <= 0:
        return 1.0 if all(c.passed for c in checks) else 0.0
    earned = sum(min(max(c.points, 0.0), c.max_points) for c in checks)
    return round(min(max(earned / available, 0.0), 1.0), 4)


def overall_kind(checks: Iterable[CheckResult]) -> Kind:
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


def cap_text(data: bytes | str, limit: int = FEEDBACK_BYTES) -> str:
    """Decode and shorten program output for feedback, saying when something was cut."""
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    text = raw[:limit].decode("utf-8", "replace")
    if len(raw) > limit:
        text += f"\n[... {len(raw) - limit} more bytes not shown]"
    return text
