"""Writing lessons: syncing exercises/lessons/, progress, the lesson quiz, and queueing rate-limited
sandbox runs (a worker runs them: lessons.runs)."""
from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from grader.lessons import Lesson as LessonSpec
from grader.lessons import check_lessons
from grader.playground import MAX_CODE_BYTES as MAX_PROGRAM_BYTES
from lessons.models import Lesson, LessonProgress, LessonVersion, PlaygroundRun
from lessons.tasks import run_playground
from quizzes.models import Question, QuizAttempt
from quizzes.services import _attempt_create  # the quiz app's one way to snapshot questions into an attempt

log = logging.getLogger(__name__)

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
def _claim_run(user: User, kind: str, code: str) -> PlaygroundRun:
    """Count the user's recent runs under a lock on the user row, so two tabs cannot both slip in;
    store the new run QUEUED and send it to a worker once the row is committed."""
    User.objects.select_for_update().filter(pk=user.pk).first()
    since = timezone.now() - timedelta(seconds=WINDOW_S)
    recent = list(PlaygroundRun.objects.filter(user=user, created_at__gte=since)
                  .order_by("created_at").values_list("created_at", flat=True))
    if len(recent) >= RUNS_PER_WINDOW:
        oldest = recent[len(recent) - RUNS_PER_WINDOW]
        raise RateLimited(max(1, int((oldest + timedelta(seconds=WINDOW_S) - timezone.now()).total_seconds()) + 1))
    run = PlaygroundRun.objects.create(user=user, kind=kind, code=code)
    transaction.on_commit(lambda: run_playground.delay(run.id))
    return run


def playground_run_start(*, user: User, code: str) -> PlaygroundRun:
    """Queue ``code`` to run (not be graded) in the grading sandbox, counted against the user's rate limit."""
    if not code.strip():
        raise ValidationError(_("There is no program to run."))
    if len(code.encode("utf-8", "surrogatepass")) > MAX_PROGRAM_BYTES:
        raise ValidationError(_("The playground runs programs of at most 16 KB."))
    return _claim_run(user, PlaygroundRun.Kind.PROGRAM, code)


def compile_flow_start(*, user: User, source: str) -> PlaygroundRun:
    """Queue a student's small graph program to be built and compiled in the sandbox."""
    if not source.strip():
        raise ValidationError(_("There is no program to compile."))
    if len(source.encode("utf-8", "surrogatepass")) > 8 * 1024:
        raise ValidationError(_("The graph program may be at most 8 KB."))
    return _claim_run(user, PlaygroundRun.Kind.COMPILE_FLOW, source)


def playground_run_give_up_if_late(run: PlaygroundRun) -> PlaygroundRun:
    """End a run still waiting LESSONS_PLAYGROUND_DEADLINE_S after it was asked for (its task lost
    with a broker, a worker gone), so that its page stops waiting."""
    deadline = timezone.now() - timedelta(seconds=settings.LESSONS_PLAYGROUND_DEADLINE_S)
    late = PlaygroundRun.objects.filter(
        id=run.id, state__in=(PlaygroundRun.State.QUEUED, PlaygroundRun.State.RUNNING), created_at__lt=deadline,
    ).update(state=PlaygroundRun.State.FAILED, failure=PlaygroundRun.Failure.LATE, finished_at=timezone.now())
    if late:
        log.warning("playground run %s: no result within %s s; given up", run.id,
                    settings.LESSONS_PLAYGROUND_DEADLINE_S)
        run.refresh_from_db()
    return run
