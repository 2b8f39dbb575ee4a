"""A student's own record for the account page: recent submissions with their verdicts, and
progress through lessons, exercises and quizzes, each counted as the page that owns it counts."""
from __future__ import annotations

from dataclasses import dataclass

from accounts.models import User
from grading.models import Submission
from lessons.selectors import learning_path
from quizzes.models import QuizAttempt
from quizzes.selectors import attempt_title, attempts_of
from workbench.selectors import exercise_entries

RECENT_SUBMISSIONS = 15
RECENT_QUIZZES = 10


@dataclass(frozen=True)
class Progress:
    lessons_read: int
    lessons_quiz_passed: int
    lessons_total: int
    exercises_accepted: int
    exercises_attempted: int
    exercises_total: int
    quizzes_finished: int


def recent_submissions(user: User, limit: int = RECENT_SUBMISSIONS) -> list[Submission]:
    """The student's latest submissions, newest first, with the exercise each was for."""
    return list(
        Submission.objects.filter(user=user)
        .select_related("exercise_version__exercise")
        .order_by("-created_at", "-id")[:limit]
    )


def recent_quiz_results(user: User, limit: int = RECENT_QUIZZES) -> list[QuizAttempt]:
    """Finished quizzes, newest first, each with the title the quiz pages give it."""
    attempts = list(attempts_of(user).filter(status__in=[QuizAttempt.Status.FINISHED, QuizAttempt.Status.EXPIRED])
                    .order_by("-finished_at", "-id")[:limit])
    for attempt in attempts:
        attempt.title = attempt_title(attempt)
    return attempts


def progress_of(user: User) -> Progress:
    """Counts as the lesson path and the exercise list show them, so the three pages agree."""
    path = learning_path(user)
    entries = exercise_entries(user)
    return Progress(
        lessons_read=sum(step["read"] for step in path),
        lessons_quiz_passed=sum(step["passed"] for step in path),
        lessons_total=len(path),
        exercises_accepted=sum(entry.state == "solved" for entry in entries),
        exercises_attempted=sum(entry.state == "attempted" for entry in entries),
        exercises_total=len(entries),
        quizzes_finished=attempts_of(user).filter(status__in=[QuizAttempt.Status.FINISHED,
                                                              QuizAttempt.Status.EXPIRED]).count(),
    )
