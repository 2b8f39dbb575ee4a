"""What an instructor needs to teach: where an exercise trips students up, and which quiz
questions measure nothing (too easy, too hard, or not separating strong from weak students)."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count, Min, Q
from django.utils.translation import gettext as _

from catalog.languages import localized
from courses.models import AssignmentItem, Course
from courses.selectors import students_of
from grader.host.performance import overall_ratio
from grading.models import Submission
from quizzes.models import AttemptItem, QuizAttempt
from workbench.messages import VERDICT_NAMES

TAIL = 0.27  # Kelley's extreme groups for the discrimination index
MIN_ANSWERS_TO_JUDGE = 5  # fewer answers than this and a share correct is noise


def histogram(values: list[float], bins: int = 10) -> dict:
    """{"labels": [...], "counts": [...]} over equal-width bins (Chart.js reads it as is)."""
    if not values:
        return {"labels": [], "counts": []}
    low, high = min(values), max(values)
    width = (high - low) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - low) / width))] += 1
    # Each bar says the range it counts ("1.1–2.1"), not a bare left edge.
    return {"labels": [f"{_short(low + i * width)}–{_short(low + (i + 1) * width)}" for i in range(bins)],
            "counts": counts}


def _short(value: float) -> str:
    return f"{value:.2g}" if abs(value) < 10 else f"{value:.0f}"


@dataclass
class ExerciseStats:
    item: AssignmentItem
    submissions: int
    verdicts: list[tuple[str, int]]
    failing_checks: list[tuple[str, int]]
    minutes_to_accept: dict
    median_minutes: float | None
    accepted_students: int
    ratios: dict


def exercise_stats(course: Course, item: AssignmentItem) -> ExerciseStats:
    submissions = Submission.objects.filter(
        user__in=students_of(course).values("id"), exercise_version_id=item.exercise_version_id
    )
    verdicts = [
        (str(VERDICT_NAMES.get(kind, kind)), n)  # what the students read, not ACCEPTED
        for kind, n in submissions.exclude(verdict="").values_list("verdict").annotate(n=Count("id")).order_by("-n")
    ]
    failing: Counter[str] = Counter()
    for checks in submissions.exclude(verdict="").values_list("result__checks", flat=True):
        for check in checks or []:
            if isinstance(check, dict) and not check.get("passed"):
                failing[str(check.get("name"))] += 1
    firsts = submissions.values("user_id").annotate(
        first=Min("created_at"), accepted=Min("created_at", filter=Q(verdict="ACCEPTED"))
    )
    minutes = [(f["accepted"] - f["first"]).total_seconds() / 60 for f in firsts if f["accepted"]]
    best: dict[int, float] = {}  # each student's fastest accepted submission
    for user_id, perf in submissions.filter(verdict="ACCEPTED").values_list("user_id", "result__perf"):
        measured = overall_ratio({"perf": perf})
        if measured and measured[0] < best.get(user_id, math.inf):
            best[user_id] = measured[0]
    ratios = list(best.values())
    return ExerciseStats(
        item,
        sum(n for _, n in verdicts),
        verdicts,
        failing.most_common(10),
        histogram(minutes),
        statistics.median(minutes) if minutes else None,
        len(minutes),
        histogram(ratios),
    )


@dataclass
class QuestionStats:
    uid: str
    text: str
    answered: int
    difficulty: float  # share correct
    discrimination: float | None  # share correct among the top 27 % minus the bottom 27 %
    wrong_choices: list[tuple[str, int]] = field(default_factory=list)

    @property
    def judged(self) -> bool:
        """Enough answers to say anything about the question (one answer at 100 % says nothing)."""
        return self.answered >= MIN_ANSWERS_TO_JUDGE

    @property
    def weak_because(self) -> str:
        """Why the item measures little ("" when it does, or when too few answered to tell)."""
        if not self.judged:
            return ""
        if self.difficulty > 0.9:
            return _("almost everyone gets it right")
        if self.difficulty < 0.2:
            return _("almost no one gets it right")
        if self.discrimination is not None and self.discrimination < 0.2:
            return _("strong and weak students do equally well")
        return ""

    @property
    def weak(self) -> bool:
        """Items that measure little: nearly all or nearly none right, or no separation."""
        return bool(self.weak_because)


def quiz_stats(course: Course, item: AssignmentItem) -> list[QuestionStats]:
    attempts = QuizAttempt.objects.filter(
        user__in=students_of(course).values("id"),
        bank_id=item.bank_id,
        status__in=[QuizAttempt.Status.FINISHED, QuizAttempt.Status.EXPIRED],
    )
    shares = {a: (s or 0) / m for a, s, m in attempts.values_list("id", "score", "max_score") if m}
    ordered = sorted(shares, key=lambda attempt: shares[attempt])
    tail = max(1, math.floor(len(ordered) * TAIL)) if len(ordered) >= 4 else 0
    bottom, top = set(ordered[:tail]), set(ordered[-tail:]) if tail else set()
    per_question: dict[str, dict] = {}
    rows = AttemptItem.objects.filter(attempt_id__in=shares.keys(), answered_at__isnull=False).values_list(
        "attempt_id", "question__uid", "correct", "response", "snapshot"
    )
    for attempt_id, uid, correct, response, snapshot in rows:
        q = per_question.setdefault(
            uid,
            {
                "text": localized(snapshot.get("text", {})),
                "n": 0,
                "right": 0,
                "top": [0, 0],
                "bottom": [0, 0],
                "wrong": Counter(),
            },
        )
        q["n"] += 1
        q["right"] += bool(correct)
        for group, name in ((top, "top"), (bottom, "bottom")):
            if attempt_id in group:
                q[name][0] += bool(correct)
                q[name][1] += 1
        if not correct:
            labels = {
                c["id"]: localized(c.get("text", {}))
                if isinstance(c.get("text"), dict)
                else str(c.get("text", c["id"]))
                for c in snapshot.get("choices", [])
            }
            picks = response if snapshot.get("type") == "multiple" and isinstance(response, list) else [response]
            for picked in picks:
                if isinstance(picked, list):  # an ordering: the order given
                    label = " › ".join(labels.get(str(p), str(p)) for p in picked)
                else:
                    label = labels.get(picked, str(picked)) if isinstance(picked, str) else str(picked)
                q["wrong"][label] += 1
    result = []
    for uid, q in per_question.items():
        discrimination = (
            q["top"][0] / q["top"][1] - q["bottom"][0] / q["bottom"][1] if q["top"][1] and q["bottom"][1] else None
        )
        result.append(
            QuestionStats(uid, q["text"], q["n"], q["right"] / q["n"], discrimination, q["wrong"].most_common(5))
        )
    return sorted(result, key=lambda s: (not s.weak, s.uid))
