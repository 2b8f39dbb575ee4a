"""What a worker does with a practice run: the visible checks, stored on the run alone."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from grader.host import SandboxUnavailable, grade, visible_only
from grading.exercises import exercise_version_spec
from grading.results import result_is_internal_error, result_of
from grading.sandboxes import grading_sandbox
from workbench.models import PracticeRun

log = logging.getLogger(__name__)


def practice_run_grade(*, practice_id: int, final_attempt: bool) -> None:
    """Run the visible checks of one practice run and keep the result on the run alone.

    A sandbox that is unavailable puts the run back for the task's retry, except on the
    last attempt: then the run ends as FAILED, and its page says to try again instead of
    waiting for ever.
    """
    claimed = PracticeRun.objects.filter(id=practice_id, status=PracticeRun.Status.QUEUED).update(
        status=PracticeRun.Status.RUNNING
    )
    if not claimed:
        return
    run = PracticeRun.objects.select_related("exercise_version").get(id=practice_id)
    try:
        spec = visible_only(exercise_version_spec(run.exercise_version))
        result = result_of(grade(spec, run.code, grading_sandbox()))
        status = PracticeRun.Status.FAILED if result_is_internal_error(result) else PracticeRun.Status.DONE
    except SandboxUnavailable:
        if not final_attempt:
            PracticeRun.objects.filter(id=practice_id).update(status=PracticeRun.Status.QUEUED)
            raise
        log.warning("practice run %s: the sandbox stayed unavailable through every retry", practice_id)
        result, status = None, PracticeRun.Status.FAILED
    except Exception:  # a bug of ours: say the run failed, never leave it spinning
        log.exception("practice run %s failed", practice_id)
        result, status = None, PracticeRun.Status.FAILED
    PracticeRun.objects.filter(id=practice_id).update(status=status, result=result, finished_at=timezone.now())


def practice_run_give_up_if_late(run: PracticeRun) -> PracticeRun:
    """End a run that is still waiting PRACTICE_RUN_DEADLINE_S after it was asked for (its
    task lost with a broker, or a worker gone), so that its page stops waiting."""
    deadline = timezone.now() - timedelta(seconds=settings.PRACTICE_RUN_DEADLINE_S)
    late = PracticeRun.objects.filter(
        id=run.id, status__in=(PracticeRun.Status.QUEUED, PracticeRun.Status.RUNNING), created_at__lt=deadline
    ).update(status=PracticeRun.Status.FAILED, finished_at=timezone.now())
    if late:
        log.warning("practice run %s: no result within %s s; given up", run.id, settings.PRACTICE_RUN_DEADLINE_S)
        run.refresh_from_db()
    return run
