from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from catalog.models import ExerciseVersion
from grading.models import Submission
from grading.signals import submission_graded
from leaderboards.services import entry_record
from leaderboards.tasks import stale_entries_regrade_task


@receiver(submission_graded, sender=Submission, dispatch_uid="leaderboards.best_entry")
def _on_graded(sender, submission: Submission, **kwargs) -> None:
    if submission.status == Submission.Status.GRADED:  # a platform failure is no grading of the student
        entry_record(submission)


@receiver(post_save, sender=ExerciseVersion, dispatch_uid="leaderboards.new_version")
def _on_new_version(sender, instance: ExerciseVersion, created: bool, **kwargs) -> None:
    """Earlier entries are stale from now on; regrade them once the new version is current."""
    if created and instance.number > 1:
        exercise_id = instance.exercise_id
        transaction.on_commit(lambda: stale_entries_regrade_task.delay(exercise_id))
