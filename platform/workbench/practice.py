"""What a worker does with a practice run: the visible checks, stored on the run alone."""

from __future__ import annotations

import logging

from django.utils import timezone

from grader.host import SandboxUnavailable, grade, visible_only
from grading.exercises import exercise_version_spec
from grading.results import result_is_internal_error, result_of
from grading.sandboxes import grading_sandbox
from workbench.models import PracticeRun

log = logging.getLogger(__name__)


def practice_run_grade(*, practice_id: int) -> None:
    """Run the visible checks of one practice run and keep the result on the run alone."""
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
        PracticeRun.objects.filter(id=practice_id).update(status=PracticeRun.Status.QUEUED)
        raise
    except Exception:  # a bug of ours: say the run failed, never leave it spinning
        log.exception("practice run %s failed", practice_id)
        result, status = None, PracticeRun.Status.FAILED
    PracticeRun.objects.filter(id=practice_id).update(status=status, result=result, finished_at=timezone.now())
