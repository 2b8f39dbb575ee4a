from celery import shared_task
from django.conf import settings

from catalog.models import Exercise
from grader.host import SandboxUnavailable
from leaderboards.services import stale_entries_regrade
from leaderboards.verification import verification_run, verifications_sweep


@shared_task(acks_late=True)
def stale_entries_regrade_task(exercise_id: int) -> None:
    """A new version of an exercise: grade every earlier entry's code against it."""
    exercise = Exercise.objects.filter(id=exercise_id, current_version__isnull=False).first()
    if exercise is not None:
        stale_entries_regrade(exercise)


@shared_task(
    acks_late=True,
    autoretry_for=(SandboxUnavailable,),
    retry_backoff=settings.GRADING_RETRY_BACKOFF_S,
    retry_backoff_max=settings.GRADING_RETRY_BACKOFF_MAX_S,
    max_retries=settings.GRADING_MAX_RETRIES,
)
def verify_top(verification_id: int) -> None:
    """Re-measure the top of a board in one session (idempotent: a batch runs once)."""
    verification_run(verification_id)


@shared_task
def verifications_sweep_task() -> dict[str, int]:
    """Beat: boards due for re-measuring, and batches lost on the way."""
    return verifications_sweep()
