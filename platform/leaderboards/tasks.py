from celery import shared_task

from catalog.models import Exercise
from leaderboards.services import stale_entries_regrade


@shared_task(acks_late=True)
def stale_entries_regrade_task(exercise_id: int) -> None:
    """A new version of an exercise: grade every earlier entry's code against it."""
    exercise = Exercise.objects.filter(id=exercise_id, current_version__isnull=False).first()
    if exercise is not None:
        stale_entries_regrade(exercise)
