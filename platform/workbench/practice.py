"""What a worker does with a practice run: the visible checks, stored on the run alone. Claim,
lease, retry and store are the one job path's (grading.jobs)."""

from __future__ import annotations

import logging

from django.conf import settings

from grader.host import grade, visible_only
from grading.exercises import exercise_version_spec
from grading.jobs import Job, JobKind, Outcome, PlatformFault, Progress, job_expire, job_run, jobs_sweep
from grading.results import result_is_internal_error, result_of
from grading.sandboxes import grading_sandbox
from workbench.models import PracticeRun

log = logging.getLogger(__name__)

PRACTICE_JOB = JobKind(
    name="practice run",
    model=PracticeRun,
    task="workbench.tasks.run_visible_checks",
    queued=PracticeRun.Status.QUEUED,
    running=PracticeRun.Status.RUNNING,
    progress={
        PracticeRun.Status.QUEUED: Progress.QUEUED,
        PracticeRun.Status.RUNNING: Progress.RUNNING,
        PracticeRun.Status.DONE: Progress.DONE,
        PracticeRun.Status.FAILED: Progress.FAILED,  # its page says to try again
    },
    failed=lambda fault: {"status": PracticeRun.Status.FAILED, "result": None},
    max_s=lambda: settings.SUBMISSION_STALE_AFTER_S,
)


def practice_run_grade(*, practice_id: int, final_attempt: bool = True) -> None:
    """Run the visible checks of one practice run and keep the result on the run alone."""
    job_run(PRACTICE_JOB, practice_id, _visible_checks, final_attempt=final_attempt)


def _visible_checks(job: Job) -> Outcome:
    run = PracticeRun.objects.select_related("exercise_version").get(id=job.id)
    spec = visible_only(exercise_version_spec(run.exercise_version))
    result = result_of(grade(spec, run.code, grading_sandbox()))
    if result_is_internal_error(result):
        raise PlatformFault(f"INTERNAL_ERROR: {result.get('notes')}", result)
    return Outcome({"status": PracticeRun.Status.DONE, "result": result})


def practice_runs_sweep() -> int:
    """Beat: put back runs whose worker died (lease lapsed) and send them again."""
    return jobs_sweep(PRACTICE_JOB)


def practice_run_give_up_if_late(run: PracticeRun) -> PracticeRun:
    """End a run that is still waiting PRACTICE_RUN_DEADLINE_S after it was asked for (its
    task lost with a broker, or a worker gone), so that its page stops waiting."""
    if job_expire(PRACTICE_JOB, run.id, after_s=settings.PRACTICE_RUN_DEADLINE_S,
                  fields={"status": PracticeRun.Status.FAILED}):
        run.refresh_from_db()
    return run
