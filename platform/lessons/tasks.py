"""Celery tasks: thin wrappers around lessons.runs; arguments are ids."""
from celery import Task, shared_task

from grading.jobs import JOB_TASK_OPTIONS, final_attempt
from lessons.runs import playground_run_execute


@shared_task(**JOB_TASK_OPTIONS)
def run_playground(self: Task, run_id: int) -> None:
    """Run one playground program or compile-flow rerun in the grading sandbox."""
    playground_run_execute(run_id=run_id, final_attempt=final_attempt(self))
