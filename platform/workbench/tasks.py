"""Celery tasks: thin wrappers around workbench.practice; arguments are ids."""

from celery import Task, shared_task

from grader.host import SandboxUnavailable
from workbench.practice import practice_run_grade, practice_runs_sweep


@shared_task(
    bind=True, acks_late=True, autoretry_for=(SandboxUnavailable,), retry_backoff=2, retry_backoff_max=30,
    max_retries=3,
)
def run_visible_checks(self: Task, practice_id: int) -> None:
    practice_run_grade(practice_id=practice_id, final_attempt=self.request.retries >= (self.max_retries or 0))


@shared_task
def sweep_practice_runs() -> int:
    """Put back practice runs whose worker died and send them again (Celery beat runs it)."""
    return practice_runs_sweep()
