"""Writing lessons: syncing exercises/lessons/, progress, the lesson quiz, and rate-limited sandbox runs."""
from __future__ import annotations

import dataclasses
import logging
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from grader.host import SandboxUnavailable
from grader.lessons import Lesson as LessonSpec
from grader.lessons import check_lessons
from lessons.jobs import UNAVAILABLE, playground_send
from lessons.models import Lesson, LessonProgress, LessonVersion, PlaygroundRun
from quizzes.models import Question, QuizAttempt
from quizzes.services import _attempt_create  # the quiz app's one way to snapshot questions into an attempt

log = logging.getLogger(__name__)
POLL_S = 0.2  # how often a waiting request looks at its run's row
# Each user may start this many sandbox runs (playground and compile flow together) per window.
RUNS_PER_WINDOW = getattr(settings, "LESSONS_PLAYGROUND_RUNS", 10)
WINDOW_S = getattr(settings, "LESSONS_PLAYGROUND_WINDOW_S", 600)


@dataclasses.dataclass
class LessonSyncReport:
    created: list[str] = dataclasses.field(default_factory=list)
    updated: list[str] = dataclasses.field(default_factory=list)
    unchanged: list[str] = dataclasses.field(default_factory=list)
    retired: list[str] = dataclasses.field(default_factory=list)
    errors: dict[str, list[str]] = dataclasses.field(default_factory=dict)


@transaction.atomic
def lesson_version_ensure(spec: LessonSpec) -> tuple[Lesson, bool]:
    """Make ``spec`` the lesson's current version, adding a version only when its content changed."""
    lesson, _created = Lesson.objects.select_for_update().get_or_create(slug=spec.slug)
    lesson.order, lesson.retired = spec.order, False
    digest = spec.digest
    version = lesson.versions.filter(digest=digest).first()
    changed = version is None
    if changed:
        last = lesson.versions.order_by("-number").first()
        version = LessonVersion.objects.create(
            lesson=lesson, number=(last.number + 1) if last else 1, digest=digest,
            title_en=spec.title["en"], title_zh=spec.title["zh-hans"],
            summary_en=spec.summary["en"], summary_zh=spec.summary["zh-hans"],
            body_en=spec.body["en"], body_zh=spec.body["zh-hans"],
            meta={key: getattr(spec, key) for key in
                  ("covers", "prerequisites", "exercises", "quiz", "topics", "interviews", "data")},
        )
    lesson.current_version = version
    lesson.save()
    return lesson, changed


def lessons_sync(content_dir: Path | None = None) -> LessonSyncReport:
    """Mirror exercises/lessons/ into the database. Idempotent; a lesson with problems keeps its
    previous version (and is not retired), so a broken edit never takes a page down."""
    result = check_lessons(Path(content_dir or settings.CONTENT_DIR))
    report = LessonSyncReport(errors={slug: found for slug, found in result.problems.items() if found})
    seen = set(report.errors)
    for spec in result.lessons:
        seen.add(spec.slug)
        if report.errors.get(spec.slug):
            continue
        existed = Lesson.objects.filter(slug=spec.slug).exists()
        _lesson, changed = lesson_version_ensure(spec)
        bucket = report.unchanged if not changed else report.updated if existed else report.created
        bucket.append(spec.slug)
    for lesson in Lesson.objects.filter(retired=False).exclude(slug__in=seen):
        lesson.retired = True
        lesson.save(update_fields=["retired"])
        report.retired.append(lesson.slug)
    return report


def lesson_mark_read(*, user: User, lesson: Lesson) -> LessonProgress:
    progress, _created = LessonProgress.objects.get_or_create(user=user, lesson=lesson)
    return progress


def lesson_quiz_start(*, user: User, lesson: Lesson) -> QuizAttempt:
    """A quiz attempt holding the lesson's short quiz, in the order the lesson lists it."""
    uids = lesson.version.meta.get("quiz", [])
    by_uid = Question.objects.filter(retired=False).in_bulk(uids, field_name="uid")
    questions = [by_uid[uid] for uid in uids if uid in by_uid]
    topics = lesson.version.meta.get("topics") or [""]
    with transaction.atomic():
        return _attempt_create(user=user, kind=QuizAttempt.Kind.CUSTOM, questions=questions, time_limit_s=None,
                               filters={"topic": topics[0], "lesson": lesson.slug})


class RateLimited(Exception):
    """The user has used up their sandbox runs for now; ``retry_after_s`` says for how long."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(retry_after_s)
        self.retry_after_s = retry_after_s


@transaction.atomic
def _claim_run(user: User, kind: str, source: str) -> PlaygroundRun:
    """Count the user's recent runs under a lock on the user row, so two tabs cannot both slip in;
    queue the run for a worker once the row is committed."""
    User.objects.select_for_update().filter(pk=user.pk).first()
    since = timezone.now() - timedelta(seconds=WINDOW_S)
    recent = list(PlaygroundRun.objects.filter(user=user, created_at__gte=since)
                  .order_by("created_at").values_list("created_at", flat=True))
    if len(recent) >= RUNS_PER_WINDOW:
        oldest = recent[len(recent) - RUNS_PER_WINDOW]
        raise RateLimited(max(1, int((oldest + timedelta(seconds=WINDOW_S) - timezone.now()).total_seconds()) + 1))
    run = PlaygroundRun.objects.create(user=user, kind=kind, source=source)
    transaction.on_commit(lambda: _send_or_fail(run.id))
    return run


def _send_or_fail(run_id: int) -> None:
    if not playground_send(run_id):  # the broker is down: the waiting request answers at once
        PlaygroundRun.objects.filter(id=run_id, state=PlaygroundRun.State.QUEUED).update(
            state=PlaygroundRun.State.FAILED, result=UNAVAILABLE, finished_at=timezone.now())


def _result_of(run: PlaygroundRun) -> dict[str, Any]:
    """Wait (at most PLAYGROUND_WAIT_S) for a worker to run ``run``; its result, or
    SandboxUnavailable when the sandbox or every worker is away. A run given up here is never
    started or stored later (the worker's claim and store are conditional)."""
    deadline = time.monotonic() + settings.PLAYGROUND_WAIT_S
    finished = (PlaygroundRun.State.DONE, PlaygroundRun.State.FAILED)
    while True:
        row = PlaygroundRun.objects.filter(id=run.id).values("state", "result").get()
        if row["state"] in finished:
            break
        if time.monotonic() > deadline:
            given_up = PlaygroundRun.objects.filter(id=run.id, state__in=[
                PlaygroundRun.State.QUEUED, PlaygroundRun.State.RUNNING]).update(
                state=PlaygroundRun.State.FAILED, result=UNAVAILABLE, finished_at=timezone.now())
            if given_up:
                log.warning("playground run %s: no worker finished it within %s s", run.id,
                            settings.PLAYGROUND_WAIT_S)
                raise SandboxUnavailable(f"no result within {settings.PLAYGROUND_WAIT_S} s")
            continue  # it finished just now
        time.sleep(POLL_S)
    if row["state"] == PlaygroundRun.State.FAILED:
        raise SandboxUnavailable("the sandbox was unavailable")
    return cast(dict[str, Any], row["result"])


def playground_run(*, user: User, code: str) -> dict[str, Any]:
    """Run (not grade) ``code`` where grading runs (a worker's sandbox), counted against the
    user's rate limit; what the page shows (grader.host.RunResult as a dict)."""
    if not code.strip():
        raise ValidationError(_("There is no program to run."))
    if len(code.encode("utf-8", "surrogatepass")) > 16 * 1024:
        raise ValidationError(_("The playground runs programs of at most 16 KB."))
    return _result_of(_claim_run(user, PlaygroundRun.Kind.PROGRAM, code))


def compile_flow_run(*, user: User, source: str) -> dict[str, Any]:
    """Build and compile a student's small graph program in the sandbox; the plan after every pass."""
    if not source.strip():
        raise ValidationError(_("There is no program to compile."))
    if len(source.encode("utf-8", "surrogatepass")) > 8 * 1024:
        raise ValidationError(_("The graph program may be at most 8 KB."))
    return _result_of(_claim_run(user, PlaygroundRun.Kind.COMPILE_FLOW, source))

