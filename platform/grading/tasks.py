"""Celery tasks: thin wrappers around the job path's jobs (grading.work) and the sweeps; arguments are ids."""
from __future__ import annotations

from celery import Task, shared_task

from grading.dispatch import submissions_sweep
from grading.jobs import JOB_TASK_OPTIONS, final_attempt
from grading.logs import submission_logging
from grading.measure_again import measure_again_sweep
from grading.work import submission_grade, upload_validate


@shared_task(**JOB_TASK_OPTIONS)
def grade_submission(self: Task, submission_id: int) -> None:
    with submission_logging(submission_id):
        submission_grade(submission_id=submission_id, final_attempt=final_attempt(self))


@shared_task
def sweep_submissions() -> dict[str, int]:
    """Re-send lost grading tasks and reclaim stale RUNNING rows (Celery beat runs it)."""
    return {**submissions_sweep(), "measured_again": measure_again_sweep()}


@shared_task(**JOB_TASK_OPTIONS)
def validate_upload(self: Task, upload_id: int) -> None:
    upload_validate(upload_id=upload_id, final_attempt=final_attempt(self))
