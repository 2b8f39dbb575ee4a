"""Factories for the classroom tests (courses, leaderboards): plain functions, real rows."""

from __future__ import annotations

import itertools
from datetime import timedelta

from django.utils import timezone

from accounts.models import User
from catalog.models import Exercise, ExerciseVersion
from courses.models import Assignment, AssignmentItem, Course, Membership
from courses.services import course_create
from grading.dispatch import SUBMISSION_JOB
from grading.jobs import Job, job_store
from grading.models import Submission
from grading.work import submission_verdict

_numbers = itertools.count(1)


def user(username: str | None = None, role: str = "student", **fields) -> User:
    username = username or f"user{next(_numbers)}"
    return User.objects.create_user(username=username, password="a-long-password-1", role=role, **fields)


def exercise(slug: str = "graph-ex", versions: int = 1) -> Exercise:
    """An exercise with ``versions`` versions, the last one current."""
    ex = Exercise.objects.create(slug=slug, uid=slug)
    for _ in range(versions):
        version_add(ex)
    return ex


def version_add(ex: Exercise) -> ExerciseVersion:
    number = ex.versions.count() + 1
    version = ExerciseVersion.objects.create(
        exercise=ex,
        number=number,
        declared_version=number,
        digest=f"{ex.slug}-{number}",
        title_en=f"Exercise {ex.slug}",
        title_zh=f"练习 {ex.slug}",
        summary_en="s",
        summary_zh="s",
        statement_en="s",
        statement_zh="s",
        starter="",
        difficulty="easy",
        points=10,
        files={},
    )
    ex.current_version = version
    ex.save(update_fields=["current_version"])
    return version


def course(instructor: User | None = None, students: list[User] = ()) -> Course:
    c = course_create(
        by=instructor or user(role="instructor"), title_en="Graphs 101", title_zh="计算图入门", term="Spring 2027"
    )
    for s in students:
        Membership.objects.create(course=c, user=s, role=Membership.Role.STUDENT)
    return c


def assignment(
    c: Course, ex: Exercise | None = None, *, opens=-1, due=1, late_policy="refuse", penalty=10.0, points=10
) -> tuple[Assignment, AssignmentItem | None]:
    """Opens and is due ``opens``/``due`` days from now."""
    now = timezone.now()
    a = Assignment.objects.create(
        course=c,
        title_en="Week 1",
        title_zh="第一周",
        opens_at=now + timedelta(days=opens),
        due_at=now + timedelta(days=due),
        late_policy=late_policy,
        penalty_per_day=penalty,
    )
    item = None
    if ex is not None:
        item = AssignmentItem.objects.create(
            assignment=a, kind="exercise", exercise_version=ex.current_version, points=points
        )
    return a, item


def graded(
    student: User,
    ex: Exercise,
    *,
    score: float = 1.0,
    code: str | None = None,
    ratio: float | None = None,
    interval: tuple[float, float] | None = None,
    verdict: str | None = None,
    version: ExerciseVersion | None = None,
    created_at=None,
    checks: list | None = None,
) -> Submission:
    """A submission stored through the real verdict path, with a chosen grading."""
    sub = Submission.objects.create(
        user=student,
        exercise_version=version or ex.current_version,
        code=code if code is not None else f"# {next(_numbers)}\n",
        status=Submission.Status.RUNNING,
    )
    if created_at is not None:
        Submission.objects.filter(pk=sub.pk).update(created_at=created_at)
    perf = None
    if ratio is not None:
        low, high = interval or (ratio * 0.95, ratio * 1.05)
        perf = {"cases": [{"name": "speed", "ratio": ratio, "interval": [low, high], "decision": "pass"}]}
    verdict_store(
        sub.id,
        {
            "verdict": verdict or ("ACCEPTED" if score >= 1 else "PARTIAL"),
            "score": score,
            "checks": checks or [],
            "perf": perf,
        },
    )
    sub.refresh_from_db()
    return sub


def verdict_store(submission_id: int, result: dict) -> bool:
    """Store a verdict the way the worker does, for the attempt that holds the RUNNING row: the
    one place a verdict is stored (and its signal sent)."""
    attempt = Submission.objects.values_list("attempts", flat=True).get(id=submission_id)
    return job_store(Job(SUBMISSION_JOB, submission_id, attempt), submission_verdict(result))
