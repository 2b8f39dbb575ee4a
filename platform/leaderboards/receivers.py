from django.dispatch import receiver

from leaderboards.services import entry_record
from submissions.models import Submission
from submissions.signals import submission_graded


@receiver(submission_graded, sender=Submission, dispatch_uid="leaderboards.best_entry")
def _on_graded(sender, submission: Submission, **kwargs) -> None:
    entry_record(submission)
