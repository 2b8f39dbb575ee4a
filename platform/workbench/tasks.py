"""Celery tasks: thin wrappers around workbench.practice; arguments are ids."""

from celery import Task, shared_task

from grading.jobs import JOB_TASK_OPTIONS, final_attempt
from workbench.practice import practice_run_grade, practice_runs_sweep


@shared_task(**JOB_TASK_OPTIONS)
def run_visible_checks(self: Task, practice_id: int) -> None:
    practice_run_grade(practice_id=practice_id, final_attempt=final_attempt(self))


@shared_task
def sweep_practice_runs() -> int:
    """Put back practice runs whose worker died and send them again (Celery beat runs it)."""
    return practice_runs_sweep()
