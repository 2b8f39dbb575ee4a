"""Celery tasks: thin wrappers around lessons.runs; arguments are ids."""
from celery import Task, shared_task

from grader.host import SandboxUnavailable
from lessons.runs import playground_run_execute


@shared_task(
    bind=True, acks_late=True, autoretry_for=(SandboxUnavailable,), retry_backoff=2, retry_backoff_max=30,
    max_retries=3,
)
def run_playground(self: Task, run_id: int) -> None:
    """Run one playground program or compile-flow rerun in the grading sandbox."""
    playground_run_execute(run_id=run_id, final_attempt=self.request.retries >= (self.max_retries or 0))
