from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from accounts.models import User
from catalog.models import Exercise, ExerciseVersion
from grading.models import Submission
from grading.signals import submission_graded
from leaderboards.board_cache import ranking_forget
from leaderboards.models import Entry
from leaderboards.services import entry_record
from leaderboards.tasks import stale_entries_regrade_task


@receiver(submission_graded, sender=Submission, dispatch_uid="leaderboards.best_entry")
def _on_graded(sender: type[Submission], submission: Submission, **kwargs: object) -> None:
    if submission.status == Submission.Status.GRADED:  # a platform failure is no grading of the student
        entry_record(submission)


@receiver(post_save, sender=User, dispatch_uid="leaderboards.hiding")
def _on_user_saved(
    sender: type[User], instance: User, update_fields: frozenset[str] | None = None, **kwargs: object
) -> None:
    """A student hid or showed themselves: every site-wide board's ranking counts them anew."""
    if update_fields is None or "hide_from_public_boards" in update_fields:
        if Entry.objects.filter(user_id=instance.id).exists():
            ranking_forget(*Exercise.objects.exclude(current_version=None).values_list("current_version_id", flat=True))


@receiver(post_save, sender=ExerciseVersion, dispatch_uid="leaderboards.new_version")
def _on_new_version(sender: type[ExerciseVersion], instance: ExerciseVersion, created: bool, **kwargs: object) -> None:
    """Earlier entries are stale from now on; regrade them once the new version is current."""
    if created and instance.number > 1:
        exercise_id = instance.exercise_id
        transaction.on_commit(lambda: stale_entries_regrade_task.delay(exercise_id))
