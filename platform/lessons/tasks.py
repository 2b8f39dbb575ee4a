"""Celery tasks: thin wrappers around lessons.jobs; arguments are ids."""
from celery import Task, shared_task

from grader.host import SandboxUnavailable
from lessons.jobs import playground_execute


# The page waits for the result (PLAYGROUND_WAIT_S): retries of an unavailable sandbox stay short.
@shared_task(
    bind=True, acks_late=True, autoretry_for=(SandboxUnavailable,), retry_backoff=1, retry_backoff_max=4,
    retry_jitter=False, max_retries=3,
)
def run_playground(self: Task, run_id: int) -> None:
    playground_execute(run_id=run_id, final_attempt=self.request.retries >= (self.max_retries or 0))
