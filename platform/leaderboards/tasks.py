from celery import Task, shared_task

from catalog.models import Exercise
from grading.jobs import JOB_TASK_OPTIONS, final_attempt
from leaderboards.services import stale_entries_regrade
from leaderboards.verification import verification_run, verifications_sweep


@shared_task(acks_late=True)
def stale_entries_regrade_task(exercise_id: int) -> None:
    """A new version of an exercise: grade every earlier entry's code against it."""
    exercise = Exercise.objects.filter(id=exercise_id, current_version__isnull=False).first()
    if exercise is not None:
        stale_entries_regrade(exercise)


@shared_task(**JOB_TASK_OPTIONS)
def verify_top(self: Task, verification_id: int) -> None:
    """Re-measure the top of a board in one session (idempotent: a batch runs once)."""
    verification_run(verification_id, final_attempt=final_attempt(self))


@shared_task
def verifications_sweep_task() -> dict[str, int]:
    """Beat: boards due for re-measuring, and batches lost on the way."""
    return verifications_sweep()
